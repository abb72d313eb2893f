"""The MiniTriton frontend: kernel source -> located AST.

``parse_function`` parses one kernel or helper (as ``inspect.getsource``
returns it); ``parse_expression`` parses one expression; ``dump`` prints an
AST; ``NodeVisitor`` is the base class for passes over it. They are imported
on first use: a launch whose kernel is in the disk cache never loads the
parser or its grammar.
"""

from typing import TYPE_CHECKING

from minitriton.lazy import lazy_attributes

if TYPE_CHECKING:
    from minitriton.frontend import ast
    from minitriton.frontend.ast import NodeVisitor, dump
    from minitriton.frontend.parser import (
        UnsupportedConstruct,
        load_grammar,
        parse_expression,
        parse_function,
    )

__all__ = [
    "NodeVisitor",
    "UnsupportedConstruct",
    "ast",
    "dump",
    "load_grammar",
    "parse_expression",
    "parse_function",
]

_PARSER = "minitriton.frontend.parser"
__getattr__ = lazy_attributes(
    __name__,
    {
        "ast": "minitriton.frontend.ast",
        "NodeVisitor": "minitriton.frontend.ast",
        "dump": "minitriton.frontend.ast",
        "UnsupportedConstruct": _PARSER,
        "load_grammar": _PARSER,
        "parse_expression": _PARSER,
        "parse_function": _PARSER,
    },
)
