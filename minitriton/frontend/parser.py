"""Kernel source -> AST, with located syntax diagnostics.

The grammar lives in ``grammar/minitriton.lark``; this module runs it and
turns the Lark parse tree into :mod:`minitriton.frontend.ast` nodes. Every
Lark error (unexpected character or token, bad indentation, unbalanced
brackets) and every construct outside the kernel language becomes a
:class:`~minitriton.diagnostics.CompileError` located in the real source
file, never a traceback.

Public API:

* :func:`parse_function` - one kernel or helper, as ``inspect.getsource``
  returns it;
* :func:`parse_expression` - one expression (the debugger's ``p EXPR``);
* :func:`load_grammar` - the grammar text; :func:`lark_parser` - the parser.
"""

from __future__ import annotations

import ast as pyast
import importlib.resources
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from lark import Lark, Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.indenter import Indenter

from minitriton.diagnostics import CompileError, Diagnostic, Location, error
from minitriton.frontend import ast, lalr

GRAMMAR_FILE = "minitriton.lark"
T = TypeVar("T")

# ---------------------------------------------------------------------------
# Loading the grammar
# ---------------------------------------------------------------------------


@cache
def load_grammar() -> str:
    """Return the text of ``minitriton.lark``.

    It is package data of ``minitriton.grammar`` once installed; in a source
    checkout it is ``grammar/`` at the repository root.
    """
    try:
        resource = importlib.resources.files("minitriton.grammar").joinpath(GRAMMAR_FILE)
        if resource.is_file():
            return resource.read_text(encoding="utf-8")
    except (ImportError, TypeError, OSError):
        pass  # not installed: fall back to the source tree
    path = Path(__file__).resolve().parents[2] / "grammar" / GRAMMAR_FILE
    return path.read_text(encoding="utf-8")


class IndentationProblem(LarkError):
    """Raised by :class:`KernelIndenter` with a message and a position."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


class KernelIndenter(Indenter):
    """Python-style indenter: emits _INDENT/_DEDENT, ignores newlines in brackets.

    Unlike Lark's ``PythonIndenter`` it places indent tokens at the first
    character of the indented line (so "unexpected indent" points there),
    raises :class:`IndentationProblem` instead of a bare ``DedentError``, and
    tolerates an unmatched closing bracket (the parser reports it).
    """

    NL_type = "_NEWLINE"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8
    alt_level: list[int]

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        """Indent the token stream of one parse (resets all state)."""
        self.paren_level = 0
        self.indent_level = [0]
        self.alt_level = [0]  # the same indents with tabs counted as 1 column
        return self._process(stream)

    def handle_NL(self, token: Token) -> Iterator[Token]:
        """Yield the newline, then any indent or dedent tokens it implies.

        Like CPython, indents are measured twice, with tabs to the next
        multiple of 8 and with tabs as 1 column; when the two disagree on
        the nesting, tabs and spaces are mixed inconsistently.
        """
        if self.paren_level > 0:
            return
        yield token
        indent_str = token.rsplit("\n", 1)[1]
        col, alt = _indent_columns(indent_str)
        here = _end_of(token)
        if col > self.indent_level[-1]:
            self._check_tabs(alt > self.alt_level[-1], here)
            self.indent_level.append(col)
            self.alt_level.append(alt)
            yield _positioned(self.INDENT_type, indent_str, here)
            return
        while col < self.indent_level[-1]:
            self.indent_level.pop()
            self.alt_level.pop()
            yield _positioned(self.DEDENT_type, indent_str, here)
        if col != self.indent_level[-1]:
            raise IndentationProblem("unindent does not match any outer indentation level", *here)
        self._check_tabs(alt == self.alt_level[-1], here)

    @staticmethod
    def _check_tabs(consistent: bool, here: tuple[int, int]) -> None:
        if not consistent:
            raise IndentationProblem("inconsistent use of tabs and spaces in indentation", *here)

    def _process(self, stream: Iterator[Token]) -> Iterator[Token]:
        last: Token | None = None
        for token in stream:
            last = token
            if token.type == self.NL_type:
                yield from self.handle_NL(token)
            else:
                yield token
            if token.type in self.OPEN_PAREN_types:
                self.paren_level += 1
            elif token.type in self.CLOSE_PAREN_types:
                self.paren_level = max(self.paren_level - 1, 0)
        end = _end_of(last) if last is not None else (1, 1)
        while len(self.indent_level) > 1:
            self.indent_level.pop()
            yield _positioned(self.DEDENT_type, "", end)


def _indent_columns(indent: str) -> tuple[int, int]:
    """Width of an indent with tabs to the next multiple of 8, and with tabs as 1."""
    col = 0
    for char in indent:
        col = (col // 8 + 1) * 8 if char == "\t" else col + 1
    return col, len(indent)


def _start_of(token: Token) -> tuple[int, int]:
    """Where ``token`` starts: (line, column). Lexed tokens always know."""
    assert token.line is not None and token.column is not None
    return token.line, token.column


def _end_of(token: Token) -> tuple[int, int]:
    """Where ``token`` ends: (line, column). Lexed tokens always know."""
    assert token.end_line is not None and token.end_column is not None
    return token.end_line, token.end_column


def _positioned(type_: str, value: str, pos: tuple[int, int]) -> Token:
    """A token at ``pos`` = (line, column)."""
    line, column = pos
    return Token(type_, value, None, line, column, line, column, None)


@cache
def lark_parser() -> Lark:
    """The LALR parser for the grammar (built once).

    The basic lexer (rather than Lark's contextual one) always lexes keywords
    as keywords, so ``x = lambda`` cannot slip through as a name.
    """
    parser = Lark(
        load_grammar(),
        parser="lalr",
        lexer="basic",
        postlex=KernelIndenter(),
        start=["function_input", "expression_input"],
        propagate_positions=True,
        maybe_placeholders=True,
        # Building the LALR tables takes ~300 ms; Lark caches them in the temp
        # dir, keyed by the grammar's hash, so later processes start in ~25 ms.
        cache=True,
    )
    _skip_inlined_positions(parser)
    return parser


def warm_up() -> None:
    """Build the parser and its lexer now rather than in the first parse.

    Lark compiles its lexer's regular expressions on the first text it lexes
    (tens of milliseconds); :func:`minitriton.compiler.preload` calls this at
    the first ``@jit`` definition so that the first launch does not pay it.
    """
    lalr.parse(lark_parser(), fast_driver(), _WARM_UP, "function_input")


@cache
def fast_driver() -> lalr.FastLALR | None:
    """The fast driver over :func:`lark_parser`'s tables (:mod:`minitriton.frontend.lalr`)."""
    return lalr.driver(lark_parser())


#: A small function using the common tokens (names, numbers, operators, calls).
_WARM_UP = """@jit
def _warm_up(x_ptr, n, BLOCK: tl.constexpr = 4):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if n > 1.5:
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
"""


class _SkipInlinedPositions:
    """Lark's position tracking for a ``?rule``, minus the work when it is inlined.

    Every token climbs the whole precedence chain (``test`` ... ``atom``): a
    kernel of 1,700 tokens makes 52,000 reductions, and Lark's
    ``PropagatePositions`` recomputes the positions of each, even when the
    rule returns its one child unchanged, whose positions are already right.
    Skipping those left parse trees and positions identical and made parsing
    about a quarter faster (165 -> 122 ms for tutorial 06's two functions and
    tutorial 03's matmul on a loaded 2-core machine).
    """

    __slots__ = ("build", "track")

    def __init__(self, track: Callable[[list], object]) -> None:
        self.track = track
        self.build = track.node_builder  # type: ignore[attr-defined]

    def __call__(self, children: list) -> object:
        if len(children) == 1:
            result = self.build(children)
            if result is children[0]:
                return result
        return self.track(children)


def _skip_inlined_positions(parser: Lark) -> None:
    """Wrap the callbacks of ``?rules`` (nothing happens if Lark's internals differ)."""
    try:
        from lark.parse_tree_builder import PropagatePositions

        callbacks = parser.parser.parser.parser.callbacks
    except (ImportError, AttributeError):
        return
    for rule, callback in list(callbacks.items()):
        if getattr(rule.options, "expand1", False) and type(callback) is PropagatePositions:
            callbacks[rule] = _SkipInlinedPositions(callback)


@cache
def _token_lexer() -> Lark:
    """A lexer without the indenter, to check brackets after a parse error."""
    return Lark(load_grammar(), parser="lalr", lexer="basic", start="expression_input", cache=True)


# ---------------------------------------------------------------------------
# Source text and locations
# ---------------------------------------------------------------------------


@dataclass
class _Source:
    """Dedented source text and the map from its positions to the real file."""

    text: str
    filename: str
    first_line: int
    shifts: list[int]  # columns removed from each line by dedenting

    @classmethod
    def dedent(cls, source: str, filename: str, first_line: int, col_offset: int) -> _Source:
        """Remove the common indentation of ``source`` (that of its first line)."""
        # Split on "\n" only: Lark counts lines that way (str.splitlines does not).
        lines = source.split("\n")
        first = next((line for line in lines if line.strip()), "")
        indent = len(first) - len(first.lstrip(" \t"))
        shifts: list[int] = []
        out: list[str] = []
        for line in lines:
            cut = min(indent, len(line) - len(line.lstrip(" \t")))
            shifts.append(cut + col_offset)
            out.append(line[cut:])
        text = "\n".join(out)
        if not text.endswith("\n"):
            text += "\n"
        return cls(text, filename, first_line, shifts)

    def loc(self, line: int | None, column: int | None) -> Location:
        """The real-file location of (line, column) in the dedented text."""
        line = max(line or 1, 1)
        shift = self.shifts[line - 1] if line <= len(self.shifts) else 0
        return Location(self.filename, line + self.first_line - 1, max(column or 1, 1) + shift)


# ---------------------------------------------------------------------------
# Public entry points
# ---------------------------------------------------------------------------


def parse_function(
    source: str, filename: str, first_line: int = 1, col_offset: int = 0
) -> ast.FunctionDef:
    """Parse one function (decorators included) into a :class:`ast.FunctionDef`.

    ``source`` is the function's text as ``inspect.getsource`` returns it,
    possibly indented (a method or a nested definition): it is dedented, and
    locations point into the real file, whose line ``first_line`` holds the
    first line of ``source``. ``col_offset`` adds columns removed by the
    caller, if any. Raises :class:`CompileError` on any syntax error or
    unsupported construct.
    """
    src = _Source.dedent(source, filename, first_line, col_offset)
    tree = _parse(src, "function_input")
    return _guarded(lambda: _Builder(src).function_input(tree), src)


def parse_expression(text: str, filename: str = "<expr>") -> ast.Expr:
    """Parse a single expression, e.g. ``x[:, None] + 1``.

    Subscripts may hold any expression (``x[3]`` in the debugger, ``t[i]`` on
    a tuple); lowering decides, by the indexed value, what a kernel allows.
    """
    src = _Source.dedent(text.strip() + "\n", filename, 1, 0)
    tree = _parse(src, "expression_input")
    builder = _Builder(src)
    return _guarded(lambda: builder.expr(tree.children[-1]), src)


def _guarded(build: Callable[[], T], src: _Source) -> T:
    """Run ``build()``, turning runaway recursion into a diagnostic."""
    try:
        return build()
    except RecursionError:
        raise error(src.loc(1, 1), "expression is nested too deeply") from None


def _parse(src: _Source, start: str) -> Tree:
    """Run Lark, converting its errors into located diagnostics."""
    # Python rejects a backslash continuation that joins the last line with
    # the end of the file; Lark's ignore rule alone would accept it.
    if re.search(r"\\[\t \f]*\r?\n\Z", src.text):
        line = src.text.count("\n")
        raise error(src.loc(line, 1), "line continuation ('\\') at the end of the file")
    try:
        return lalr.parse(lark_parser(), fast_driver(), src.text, start)
    except IndentationProblem as e:
        raise error(src.loc(e.line, e.column), e.message) from None
    except UnexpectedInput as e:
        raise _syntax_error(src, e) from None
    except RecursionError:
        raise error(src.loc(1, 1), "expression is nested too deeply") from None


# ---------------------------------------------------------------------------
# Syntax errors
# ---------------------------------------------------------------------------

_CLOSING = {"RPAR": "LPAR", "RSQB": "LSQB", "RBRACE": "LBRACE"}


def _syntax_error(src: _Source, e: UnexpectedInput) -> CompileError:
    """Map a Lark error to a friendly diagnostic (brackets are checked first)."""
    where = (e.line if e.line and e.line > 0 else 1, e.column if e.column else 1)
    bracket = _bracket_problem(src.text)
    if bracket is not None and bracket[1] <= where:
        message, pos = bracket
        return error(src.loc(*pos), message)
    if isinstance(e, UnexpectedCharacters):
        return error(src.loc(*where), _bad_character_message(e.char))
    if isinstance(e, UnexpectedToken):
        message, help_ = _unexpected_token_message(e)
        return error(src.loc(*where), message, help_)
    return error(src.loc(*where), "invalid syntax")


def _bad_character_message(char: str) -> str:
    if char in "\"'":
        return "unterminated string literal"
    return f"invalid character {char!r}"


def _unexpected_token_message(e: UnexpectedToken) -> tuple[str, str | None]:
    """The message (and help) for a token the grammar did not expect."""
    token = e.token
    expected = set(e.expected or ())
    if token.type == "_INDENT":
        return "unexpected indent", None
    if "_INDENT" in expected:
        return "expected an indented block", "indent the body of the statement"
    if "COLON" in expected and token.type in ("_NEWLINE", "$END"):
        return "expected ':'", None
    if token.type == "EQUAL":
        return "invalid syntax: unexpected '='", "use '==' to compare values"
    return f"invalid syntax: unexpected {_describe(token)}", None


def _describe(token: Token) -> str:
    """How a token reads in a message: ``name 'x'``, ``'else'``, ..."""
    kinds = {
        "$END": "end of input",
        "_NEWLINE": "end of line",
        "_DEDENT": "dedent",
    }
    if token.type in kinds:
        return kinds[token.type]
    if token.type == "NAME":
        return f"name '{token.value}'"
    if token.type.endswith("_NUMBER"):
        return f"number {token.value}"
    if token.type in ("STRING", "LONG_STRING"):
        return "string literal"
    return f"'{token.value}'"


def _bracket_problem(text: str) -> tuple[str, tuple[int, int]] | None:
    """The first unbalanced bracket in ``text``, as (message, (line, col))."""
    stack: list[Token] = []
    try:
        for token in _token_lexer().lex(text):
            if token.type in ("LPAR", "LSQB", "LBRACE"):
                stack.append(token)
            elif token.type in _CLOSING:
                problem = _close_bracket(stack, token)
                if problem is not None:
                    return problem
    except LarkError:
        pass  # the lexer stopped at a bad character: judge what came before
    if not stack:
        return None
    opener = stack[-1]
    return f"'{opener.value}' was never closed", _start_of(opener)


def _close_bracket(stack: list[Token], token: Token) -> tuple[str, tuple[int, int]] | None:
    """Pop the bracket ``token`` closes, or describe why it cannot."""
    pos = _start_of(token)
    if not stack:
        return f"unmatched '{token.value}'", pos
    opener = stack.pop()
    if _CLOSING[token.type] == opener.type:
        return None
    return f"closing bracket '{token.value}' does not match '{opener.value}'", pos


# ---------------------------------------------------------------------------
# Unsupported constructs: what they are called and what to write instead
# ---------------------------------------------------------------------------

_NO_BREAK = (
    "Triton does not support 'break' or 'continue'; use a while loop whose condition "
    "includes the exit test, or mask the remaining work with tl.where"
)
_HELPER = "define a separate @triton.jit helper function at module level and call it"
_NO_GENERATOR = "kernels cannot be generators; tl.store the results instead"
_WHOLE_BLOCKS = "compute on whole blocks (e.g. tl.sum(x, axis=0)) or write a tl.static_range loop"
_NO_EXCEPTIONS = "kernels have no exceptions; check conditions with masks or tl.device_assert"
_AS_ARGUMENT = "pass the value as a kernel argument (a tl.constexpr if it is a constant)"
_NO_COROUTINE = "kernels are not coroutines; remove '{}'"
_BLOCKS_NOT_LISTS = "build blocks with tl.arange and broadcasting, or write a tl.static_range loop"

_ONE_FOR = (
    "a comprehension maps each item of a tuple, [f(v) for v in values]; "
    "for more, write a tl.static_range loop"
)

UNSUPPORTED_STATEMENTS: dict[str, tuple[str, str]] = {
    "break_stmt": ("break", _NO_BREAK),
    "continue_stmt": ("continue", _NO_BREAK),
    "classdef": ("class definition", "kernels cannot define classes; " + _HELPER),
    "try_stmt": ("try/except", _NO_EXCEPTIONS),
    "with_stmt": ("with statement", "write the body of the 'with' block directly"),
    "global_stmt": ("global statement", _AS_ARGUMENT),
    "nonlocal_stmt": ("nonlocal statement", "pass the value as an argument and return it"),
    "import_stmt": ("import inside a kernel", "move the import to module level"),
    "async_stmt": ("async", _NO_COROUTINE.format("async")),
    "yield_stmt": ("yield", _NO_GENERATOR),
    "del_stmt": ("del statement", "remove it; kernel values need no freeing"),
    "funcdef": ("nested function definition", _HELPER),
    "decorated": ("decorator inside a kernel body", _HELPER),
}

UNSUPPORTED_EXPRESSIONS: dict[str, tuple[str, str]] = {
    "lambdef": ("lambda", _HELPER.replace("separate ", "")),
    "set_comp": ("set comprehension", "kernels have no sets; use blocks built with tl.arange"),
    "dict_comp": ("dict comprehension", "kernels have no dicts; use separate variables"),
    "generator": ("generator expression", _WHOLE_BLOCKS),
    # `f(x for x in y)`: a bare generator as the whole argument list.
    "genexp_argument": ("generator expression", _WHOLE_BLOCKS),
    "star_expr": ("starred expression '*x'", "name each element explicitly"),
    "kwstararg": ("keyword unpacking '**kwargs'", "pass each keyword argument explicitly"),
    "yield_expr": ("yield", _NO_GENERATOR),
    "await_expr": ("await", _NO_COROUTINE.format("await")),
    "set": ("set literal", "kernels have no sets; use a tuple"),
    "star_param": ("keyword-only marker '*'", "list each parameter explicitly"),
    "kwstar_param": ("'**kwargs' parameter", "list each parameter explicitly"),
    "slash_param": ("positional-only marker '/'", "remove the '/'"),
}

_INDEX_HELP = (
    "only None and ':' are allowed in kernel subscripts (e.g. x[:, None]); to read "
    "element i of a pointer, use pointer arithmetic: tl.load(p + i)"
)


# x[labels == c], NumPy's boolean-mask indexing, would give a data-dependent shape.
_MASK_INDEX_HELP = (
    "a block's shape is fixed at compile time, so a mask cannot select elements: keep the "
    "shape and zero the others with tl.where(m, x, 0), then reduce, e.g. "
    "tl.sum(tl.where(m, x, 0))"
)


class UnsupportedConstruct(CompileError):
    """Valid Python outside the kernel language (``lambda``, ``break``, ...)."""


def _unsupported(loc: Location, construct: str, help_: str) -> NoReturn:
    diagnostic = Diagnostic(loc, f"unsupported construct: {construct}", help=help_)
    raise UnsupportedConstruct([diagnostic])


# ---------------------------------------------------------------------------
# Parse tree -> AST
# ---------------------------------------------------------------------------

# Binary operators whose Lark rule lists only operands (the operator is fixed).
_FIXED_OPS = {"or_expr": "|", "xor_expr": "^", "and_expr": "&"}
# Rules that alternate operand, operator token, operand, ...
_CHAIN_RULES = {"shift_expr", "arith_expr", "term"}


class _Builder:
    """Walks a Lark parse tree top-down and builds AST nodes.

    Top-down (rather than a Lark ``Transformer``) so that context is known:
    decorators may contain dicts and arbitrary indexing, kernel bodies not.
    """

    def __init__(self, src: _Source) -> None:
        self.src = src
        self.in_decorator = False

    # -- locations ---------------------------------------------------------

    def loc(self, item: Tree | Token) -> Location:
        """Location of the first token of ``item``."""
        if isinstance(item, Token):
            return self.src.loc(item.line, item.column)
        if not item.meta.empty:
            return self.src.loc(item.meta.line, item.meta.column)
        first = next(item.scan_values(lambda v: isinstance(v, Token)), None)
        return self.loc(first) if first is not None else self.src.loc(1, 1)

    # -- functions ---------------------------------------------------------

    def function_input(self, tree: Tree) -> ast.FunctionDef:
        *decorators, definition = tree.children
        if definition.data == "funcdef":
            return self.funcdef(definition, [self.decorator(d) for d in decorators])
        if definition.data == "async_stmt":
            _unsupported(
                self.loc(definition), "async def", "remove 'async'; kernels are plain functions"
            )
        _unsupported(self.loc(definition), "class definition", "a kernel is a function; " + _HELPER)

    def decorator(self, tree: Tree) -> ast.Decorator:
        expr_tree = tree.children[0]
        text = self._text_of(expr_tree)
        self.in_decorator = True
        try:
            expr = self.expr(expr_tree)
        except UnsupportedConstruct:
            expr = None  # e.g. a lambda in @triton.heuristics: Python runs it anyway
        finally:
            self.in_decorator = False
        return ast.Decorator(text, expr, loc=self.loc(tree))

    def _text_of(self, item: Tree | Token) -> str:
        if isinstance(item, Token):
            return str(item.value)
        return self.src.text[item.meta.start_pos : item.meta.end_pos]

    def funcdef(self, tree: Tree, decorators: list[ast.Decorator]) -> ast.FunctionDef:
        name, params_tree, returns, suite = tree.children
        params = self.parameters(params_tree) if params_tree is not None else []
        body = self.suite(suite)
        docstring = _docstring(body)
        if docstring is not None:
            body = body[1:]
        return ast.FunctionDef(
            str(name),
            params,
            decorators,
            body,
            docstring,
            self.expr(returns) if returns is not None else None,
            loc=self.loc(tree),
        )

    def parameters(self, tree: Tree) -> list[ast.Param]:
        params = [self.param(p) for p in tree.children]
        seen: set[str] = set()
        for param in params:
            if param.name in seen:
                raise error(param.loc, f"duplicate parameter '{param.name}'")
            seen.add(param.name)
        for before, after in zip(params, params[1:]):
            if before.star:
                _unsupported(after.loc, "parameters after '*args' (keyword-only) are not supported",
                             "put '*args' last")  # fmt: skip
            if before.default is not None and after.default is None:
                raise error(after.loc, "parameter without a default follows a parameter with one")
        return params

    def param(self, tree: Tree) -> ast.Param:
        if tree.data == "star_param" and tree.children and tree.children[0] is not None:
            return ast.Param(str(tree.children[0]), None, None, star=True, loc=self.loc(tree))
        if tree.data != "param":
            construct, help_ = UNSUPPORTED_EXPRESSIONS[tree.data]
            _unsupported(self.loc(tree), construct, help_)
        name, annotation, default = tree.children
        return ast.Param(str(name), self._opt(annotation), self._opt(default), loc=self.loc(tree))

    def _opt(self, item: Tree | Token | None) -> ast.Expr | None:
        return None if item is None else self.expr(item)

    # -- statements --------------------------------------------------------

    def suite(self, tree: Tree) -> list[ast.Stmt]:
        return [self.stmt(child) for child in tree.children]

    def stmt(self, tree: Tree) -> ast.Stmt:
        if tree.data in UNSUPPORTED_STATEMENTS:
            construct, help_ = UNSUPPORTED_STATEMENTS[tree.data]
            if tree.data == "funcdef":
                construct += f" '{tree.children[0]}'"
            _unsupported(self.loc(tree), construct, help_)
        return getattr(self, "s_" + tree.data)(tree)

    def _reject_bare_walrus(self, *trees: Tree | Token | None) -> None:
        """Python refuses ``x := v`` unparenthesized at the top of a statement
        (``x := v`` alone, ``y = x := v``, ``return x := v``, ``a, b := v``): so does the
        parser, where the grammar's one ``test`` rule would take it."""
        for tree in trees:
            if not isinstance(tree, Tree) or self._parenthesized(tree):
                continue
            if tree.data == "tuple" and not self._text_of(tree).startswith("("):
                self._reject_bare_walrus(*tree.children)
            elif tree.data == "assign_expr":
                raise error(
                    self.loc(tree),
                    "invalid syntax: an assignment expression (:=) must be in parentheses here",
                    help=f"write ({self._text_of(tree)})",
                )

    def _parenthesized(self, tree: Tree) -> bool:
        """Whether ``tree``'s text is the inside of a pair of parentheses."""
        if tree.meta.empty:
            return False
        before = self.src.text[: tree.meta.start_pos].rstrip()
        after = self.src.text[tree.meta.end_pos :].lstrip()
        return before.endswith("(") and after.startswith(")")

    def s_expr_stmt(self, tree: Tree) -> ast.ExprStmt:
        self._reject_bare_walrus(tree.children[0])
        return ast.ExprStmt(self.expr(tree.children[0]), loc=self.loc(tree))

    def s_assign(self, tree: Tree) -> ast.Assign:
        self._reject_bare_walrus(*tree.children)
        *target_trees, value_tree = tree.children
        for target_tree in target_trees:
            self._reject_store(target_tree)
        targets = [self.expr(t) for t in target_trees]
        for target in targets:
            self._check_target(target)
        return ast.Assign(targets, self.expr(value_tree), loc=self.loc(tree))

    def s_augassign(self, tree: Tree) -> ast.AugAssign:
        target_tree, op_tree, value_tree = tree.children
        self._reject_bare_walrus(target_tree, value_tree)
        self._reject_store(target_tree)
        target = self.expr(target_tree)
        if isinstance(target, ast.Tuple):
            raise error(target.loc, "a tuple cannot be the target of an augmented assignment")
        self._check_target(target)
        op = str(op_tree.children[0])[:-1]  # "+=" -> "+"
        return ast.AugAssign(target, op, self.expr(value_tree), loc=self.loc(tree))

    def s_annassign(self, tree: Tree) -> ast.AnnAssign:
        target_tree, annotation, value = tree.children
        self._reject_bare_walrus(target_tree, annotation, value)
        target = self.expr(target_tree)
        if not isinstance(target, ast.Name):
            raise error(target.loc, "only a plain name can have an annotation")
        return ast.AnnAssign(target, self.expr(annotation), self._opt(value), loc=self.loc(tree))

    def s_raise_stmt(self, tree: Tree) -> ast.Raise:
        exc = tree.children[0] if tree.children else None
        return ast.Raise(self.expr(exc) if exc is not None else None, loc=self.loc(tree))

    def s_pass_stmt(self, tree: Tree) -> ast.PassStmt:
        return ast.PassStmt(loc=self.loc(tree))

    def s_return_stmt(self, tree: Tree) -> ast.Return:
        self._reject_bare_walrus(tree.children[0])
        return ast.Return(self._opt(tree.children[0]), loc=self.loc(tree))

    def s_assert_stmt(self, tree: Tree) -> ast.Assert:
        test, msg = tree.children
        self._reject_bare_walrus(test, msg)
        return ast.Assert(self.expr(test), self._opt(msg), loc=self.loc(tree))

    def s_if_stmt(self, tree: Tree) -> ast.If:
        test, suite, *elifs, else_clause = tree.children
        orelse = self._else(else_clause)
        # Build the elif chain from the innermost (last) one outwards.
        for clause in reversed(elifs):
            elif_test, elif_suite = clause.children
            node = ast.If(
                self.expr(elif_test), self.suite(elif_suite), orelse, loc=self.loc(clause)
            )
            orelse = [node]
        return ast.If(self.expr(test), self.suite(suite), orelse, loc=self.loc(tree))

    def _else(self, clause: Tree | None) -> list[ast.Stmt]:
        return [] if clause is None else self.suite(clause.children[0])

    def s_for_stmt(self, tree: Tree) -> ast.For:
        target_tree, iter_tree, suite, else_clause = tree.children
        self._reject_loop_else(else_clause, "for")
        target = self.expr(target_tree)
        self._check_target(target, "cannot use {} as a loop variable")
        return ast.For(target, self.expr(iter_tree), self.suite(suite), loc=self.loc(tree))

    def s_while_stmt(self, tree: Tree) -> ast.While:
        test, suite, else_clause = tree.children
        self._reject_loop_else(else_clause, "while")
        return ast.While(self.expr(test), self.suite(suite), loc=self.loc(tree))

    def _reject_loop_else(self, clause: Tree | None, loop: str) -> None:
        if clause is None:
            return
        _unsupported(
            self.loc(clause),
            f"'else' clause on a '{loop}' loop",
            "without 'break' the else block always runs: move it after the loop",
        )

    def _reject_store(self, tree: Tree) -> None:
        """Reject ``x[i] = v`` and ``a.b = v`` before their parts are checked."""
        if tree.data == "tuple":
            for child in tree.children:
                self._reject_store(child)
        elif tree.data == "subscript":
            _unsupported(
                self.loc(tree),
                "assignment to a subscript",
                "blocks are immutable values: build a new block with "
                "tl.where(mask, new_values, x), or write memory with tl.store(ptr + offs, value)",
            )
        elif tree.data == "attribute":
            _unsupported(self.loc(tree), "assignment to an attribute", "assign to a plain variable")
        elif tree.data == "star_expr":  # Triton's words for it
            _unsupported(
                self.loc(tree),
                "starred assignment targets are not supported",
                "name each element explicitly, or index the tuple: rest = t[1:]",
            )

    def _check_target(self, target: ast.Expr, misuse: str = "cannot assign to {}") -> None:
        """Assignment and loop targets: names and (nested) tuples of names.

        Anything else is reported with ``misuse``, ``{}`` naming the node.
        """
        if isinstance(target, ast.Name):
            return
        if isinstance(target, ast.Tuple):
            for elt in target.elts:
                self._check_target(elt, misuse)
            return
        raise error(target.loc, misuse.format(_describe_node(target)))

    # -- expressions -------------------------------------------------------

    def expr(self, item: Tree | Token) -> ast.Expr:
        """Build the expression node for a parse-tree item."""
        if isinstance(item, Token):  # defensive: expressions are always trees
            raise error(self.loc(item), f"invalid syntax: unexpected {_describe(item)}")
        if item.data in UNSUPPORTED_EXPRESSIONS:
            construct, help_ = UNSUPPORTED_EXPRESSIONS[item.data]
            _unsupported(self.loc(item), construct, help_)
        if item.data in _FIXED_OPS:
            return self._fold_fixed(item, _FIXED_OPS[item.data])
        if item.data in _CHAIN_RULES:
            return self._fold_chain(item)
        return getattr(self, "e_" + item.data)(item)

    def _fold_fixed(self, tree: Tree, op: str) -> ast.Expr:
        operands = [self.expr(c) for c in tree.children]
        result = operands[0]
        for right in operands[1:]:
            result = ast.BinOp(result, op, right, loc=operands[0].loc)
        return result

    def _fold_chain(self, tree: Tree) -> ast.Expr:
        result = self.expr(tree.children[0])
        items = tree.children[1:]
        for op, right in zip(items[::2], items[1::2]):
            result = ast.BinOp(result, str(op), self.expr(right), loc=result.loc)
        return result

    def e_name(self, tree: Tree) -> ast.Name:
        return ast.Name(str(tree.children[0]), loc=self.loc(tree))

    def e_const_none(self, tree: Tree) -> ast.Constant:
        return ast.Constant(None, loc=self.loc(tree))

    def e_const_true(self, tree: Tree) -> ast.Constant:
        return ast.Constant(True, loc=self.loc(tree))

    def e_const_false(self, tree: Tree) -> ast.Constant:
        return ast.Constant(False, loc=self.loc(tree))

    def e_number(self, tree: Tree) -> ast.Constant:
        token = tree.children[0]
        assert isinstance(token, Token)  # a number literal is one token
        loc = self.loc(token)
        if token.type == "IMAG_NUMBER":
            _unsupported(loc, f"complex literal {token.value}", "kernels have no complex numbers")
        try:
            value: int | float = (
                float(token.value) if token.type == "FLOAT_NUMBER" else int(token.value, 0)
            )
        except ValueError:
            raise error(loc, f"invalid number literal {token.value}") from None
        return ast.Constant(value, loc=loc)

    def e_strings(self, tree: Tree) -> ast.Constant | ast.JoinedStr:
        loc = self.loc(tree)
        parts: list[Any] = []
        for child in tree.children:
            string = child.children[0]
            assert isinstance(string, Token)  # each part of a string literal is one token
            part = self._string(string)
            for piece in part if isinstance(part, list) else [ast.Constant(part, loc=loc)]:
                both_constant = isinstance(piece, ast.Constant) and isinstance(
                    parts[-1] if parts else None, ast.Constant
                )
                if both_constant:  # adjacent constants join, as in Python's AST
                    piece = ast.Constant(parts.pop().value + piece.value, loc=loc)
                parts.append(piece)
        # Any f-string part makes the whole an f-string, as in Python's AST (so a
        # docstring cannot be one: `""f"text"""` is no docstring).
        has_f = any("f" in _prefix(str(c.children[0])) for c in tree.children)
        if not has_f and all(isinstance(p, ast.Constant) for p in parts):
            return ast.Constant("".join(p.value for p in parts), loc=loc)
        # An empty constant part leaves no trace in an f-string, as in Python's AST.
        parts = [p for p in parts if not (isinstance(p, ast.Constant) and p.value == "")]
        return ast.JoinedStr(parts, loc=loc)

    def _string(self, token: Token) -> str | list[Any]:
        text = str(token.value)
        prefix = _prefix(text)
        loc = self.loc(token)
        if "f" in prefix:
            return self._fstring(token, text, loc)
        if "b" in prefix:
            _unsupported(loc, "bytes literal", "use a str literal")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return str(pyast.literal_eval(text))
        except (SyntaxError, ValueError):
            raise error(loc, "invalid string literal") from None

    def _fstring(self, token: Token, text: str, loc: Location) -> list[Any]:
        """An f-string's parts: constants, and values parsed as kernel expressions."""
        try:
            joined = pyast.parse(text, mode="eval").body
        except SyntaxError:
            raise error(loc, "invalid f-string") from None
        parts: list[Any] = []
        for piece in joined.values:  # type: ignore[attr-defined]
            if isinstance(piece, pyast.Constant) and isinstance(piece.value, str):
                parts.append(ast.Constant(piece.value, loc=loc))
                continue
            parts.append(self._formatted(token, text, piece, loc))
        return parts

    def _formatted(self, token: Token, text: str, piece: Any, loc: Location) -> ast.FormattedValue:
        spec = piece.format_spec
        if spec is not None and not all(isinstance(v, pyast.Constant) for v in spec.values):
            _unsupported(loc, "a nested f-string format spec", "write the format spec literally")
        segment = pyast.get_source_segment(text, piece.value) or ""
        line = loc.line + piece.value.lineno - 1
        col = (loc.col - 1 if piece.value.lineno == 1 else 0) + piece.value.col_offset
        src = _Source(segment + "\n", loc.file, line, [col])
        value = _Builder(src).expr(_parse(src, "expression_input").children[-1])
        conversion = "" if piece.conversion == -1 else chr(piece.conversion)
        text_spec = "".join(str(v.value) for v in spec.values) if spec is not None else ""
        return ast.FormattedValue(value, conversion, text_spec, loc=src.loc(1, 1))

    def e_tuple(self, tree: Tree) -> ast.Tuple:
        return ast.Tuple([self.expr(c) for c in tree.children], loc=self.loc(tree))

    def e_list_comp(self, tree: Tree) -> ast.ListComp:
        elt_tree, *fors = tree.children[0].children
        if len(fors) != 1:
            _unsupported(self.loc(fors[1]), "nested comprehension", _ONE_FOR)
        target_tree, iter_tree, *if_trees = fors[0].children
        target = self.expr(target_tree)
        self._check_target(target, "cannot use {} as a comprehension variable")
        elt, iter_ = self.expr(elt_tree), self.expr(iter_tree)
        ifs = [self.expr(t.children[0]) for t in if_trees]
        return ast.ListComp(elt, target, iter_, ifs, loc=self.loc(tree))

    def e_assign_expr(self, tree: Tree) -> ast.NamedExpr:
        name_tok, value_tree = tree.children
        target = ast.Name(str(name_tok), loc=self.loc(name_tok))
        return ast.NamedExpr(target, self.expr(value_tree), loc=self.loc(tree))

    def e_list(self, tree: Tree) -> ast.List:
        return ast.List([self.expr(c) for c in tree.children], loc=self.loc(tree))

    def e_dict(self, tree: Tree) -> ast.Dict:
        loc = self.loc(tree)
        if not self.in_decorator:
            _unsupported(loc, "dict literal", "kernels have no dicts; use separate variables")
        pairs = [(self.expr(kv.children[0]), self.expr(kv.children[1])) for kv in tree.children]
        return ast.Dict([k for k, _ in pairs], [v for _, v in pairs], loc=loc)

    def e_ifexp(self, tree: Tree) -> ast.IfExp:
        body, test, orelse = (self.expr(c) for c in tree.children)
        return ast.IfExp(test, body, orelse, loc=body.loc)

    def e_or_test(self, tree: Tree) -> ast.BoolOp:
        return ast.BoolOp("or", [self.expr(c) for c in tree.children], loc=self.loc(tree))

    def e_and_test(self, tree: Tree) -> ast.BoolOp:
        return ast.BoolOp("and", [self.expr(c) for c in tree.children], loc=self.loc(tree))

    def e_not_(self, tree: Tree) -> ast.UnaryOp:
        return ast.UnaryOp("not", self.expr(tree.children[0]), loc=self.loc(tree))

    def e_unary(self, tree: Tree) -> ast.UnaryOp:
        op, operand = tree.children
        return ast.UnaryOp(str(op), self.expr(operand), loc=self.loc(tree))

    def e_power(self, tree: Tree) -> ast.BinOp:
        base, exponent = (self.expr(c) for c in tree.children)
        return ast.BinOp(base, "**", exponent, loc=base.loc)

    def e_comparison(self, tree: Tree) -> ast.Compare:
        left, *rest = tree.children
        ops = [" ".join(str(t) for t in op.children) for op in rest[::2]]
        comparators = [self.expr(c) for c in rest[1::2]]
        return ast.Compare(self.expr(left), ops, comparators, loc=self.loc(tree))

    def e_attribute(self, tree: Tree) -> ast.Attribute:
        value, attr = tree.children
        return ast.Attribute(self.expr(value), str(attr), loc=self.loc(tree))

    def e_call(self, tree: Tree) -> ast.Call:
        func_tree, arguments = tree.children
        func = self.expr(func_tree)
        args, keywords = self._arguments(arguments)
        return ast.Call(func, args, keywords, loc=func.loc)

    def _arguments(self, tree: Tree | None) -> tuple[list[ast.Expr], list[ast.Keyword]]:
        if tree is None:
            return [], []
        if tree.data == "genexp_argument":
            self.expr(tree)  # raises: generator expressions are rejected
        args: list[ast.Expr] = []
        keywords: list[ast.Keyword] = []
        for child in tree.children:
            if child.data == "kwarg":
                keywords.append(self._keyword(child, keywords))
                continue
            if child.data == "stararg":  # f(*t): t's items, when t is a tuple
                arg: ast.Expr = ast.Starred(self.expr(child.children[0]), loc=self.loc(child))
            else:
                arg = self.expr(child)
            if keywords:
                raise error(arg.loc, "positional argument follows keyword argument")
            args.append(arg)
        return args, keywords

    def _keyword(self, tree: Tree, previous: list[ast.Keyword]) -> ast.Keyword:
        name_tree, value = tree.children
        if name_tree.data != "name":
            raise error(
                self.loc(name_tree),
                "invalid keyword argument: only a name may stand before '='",
                "use '==' to compare values",
            )
        name = str(name_tree.children[0])
        if any(k.name == name for k in previous):
            raise error(self.loc(tree), f"keyword argument repeated: {name}")
        return ast.Keyword(name, self.expr(value), loc=self.loc(tree))

    def e_subscript(self, tree: Tree) -> ast.Subscript:
        value_tree, index_tree = tree.children
        value = self.expr(value_tree)
        items = index_tree.children if index_tree.data == "subscript_tuple" else [index_tree]
        index = [self._index(item) for item in items]
        if len(index) == 1 and isinstance(index[0], ast.Tuple):
            index = index[0].elts  # x[(a, b)] is x[a, b], as in Python
        return ast.Subscript(value, index, loc=value.loc)

    def _index(self, item: Tree) -> ast.Expr:
        if item.data != "slice":
            return self.expr(item)
        lower, upper, step = item.children
        step_expr = self._opt(step.children[0]) if step is not None else None
        return ast.Slice(self._opt(lower), self._opt(upper), step_expr, loc=self.loc(item))


def _prefix(literal: str) -> str:
    """A string literal's prefix letters, lower-cased (``rb`` in ``Rb"..."``)."""
    return literal[: len(literal) - len(literal.lstrip("rRuUbBfF"))].lower()


def check_block_index(index: list[ast.Expr]) -> None:
    """Reject a block's (or pointer block's) subscript items other than ``None`` and slices.

    Blocks have no elements to pick: ``x[0]``, ``p[i]`` and ``x[mask]`` are
    errors with what to write instead. Tuples, by contrast, are indexed with
    compile-time integers (lowering checks those).
    """
    for item in index:
        if isinstance(item, ast.Slice):
            continue
        if isinstance(item, ast.Constant) and item.value is None:
            continue
        _unsupported(
            item.loc,
            f"indexing a block or pointer with {_describe_node(item)}",
            _MASK_INDEX_HELP if isinstance(item, ast.Compare) else _INDEX_HELP,
        )


def _docstring(body: list[ast.Stmt]) -> str | None:
    """The docstring if ``body`` starts with a string expression statement."""
    if not body or not isinstance(body[0], ast.ExprStmt):
        return None
    value = body[0].value
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    return None


_NODE_NAMES = {
    ast.Name: "a variable",
    ast.Constant: "a literal",
    ast.Call: "a function call",
    ast.BinOp: "an expression",
    ast.UnaryOp: "an expression",
    ast.BoolOp: "an expression",
    ast.Compare: "a comparison",
    ast.IfExp: "a conditional expression",
    ast.Subscript: "a subscript",
    ast.Attribute: "an attribute",
    ast.Tuple: "a tuple",
    ast.List: "a list",
    ast.Dict: "a dict",
    ast.Slice: "a slice",
}


def _describe_node(node: ast.Expr) -> str:
    """How an expression reads in a message: ``an integer '3'``, ``variable 'i'``."""
    if isinstance(node, ast.Name):
        return f"a variable '{node.id}'"
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return f"an integer '{node.value}'"
    return _NODE_NAMES.get(type(node), "an expression")
