"""The MiniTriton frontend: kernel source -> located AST.

``parse_function`` parses one kernel or helper (as ``inspect.getsource``
returns it); ``parse_expression`` parses one expression; ``dump`` prints an
AST; ``NodeVisitor`` is the base class for passes over it.
"""

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
