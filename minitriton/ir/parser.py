"""The IR parser: reads the text that :mod:`minitriton.ir.printer` writes.

``print_module(parse_module(text)) == text`` holds for every printed module,
and the tests check it on every golden file. Errors are ordinary located
diagnostics that point into the IR text (``file.ir:3:14: error: ...``).
"""

from __future__ import annotations

import json
import linecache
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from minitriton.diagnostics import CompileError, Location, error
from minitriton.ir.core import OP_REGISTRY, Attr, Block, Operation, Region, Value
from minitriton.ir.ops import FuncOp, Module
from minitriton.ir.types import Type, parse_type

T = TypeVar("T")

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+|//[^\n]*)
  | (?P<value>%[A-Za-z0-9_.]+)
  | (?P<symbol>@[A-Za-z0-9_.]+)
  | (?P<type>tensor<[^<>]*(?:<[^<>]*>)?>|ptr<\w+(?:,[ ]const)?>)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<number>-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+|inf)|nan)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<arrow>->)
  | (?P<punct>[(){}\[\],:=^])
    """,
    re.VERBOSE,
)


@dataclass
class Token:
    """One lexical token with its position in the text."""

    kind: str
    text: str
    line: int
    col: int


def tokenize(text: str, filename: str) -> list[Token]:
    """Split IR text into tokens; whitespace and ``//`` comments are dropped.

    Line by line (no token spans lines), with ``finditer``: loading a cached
    kernel tokenizes thousands of tokens, so this loop is kept tight.
    """
    tokens: list[Token] = []
    number = 0
    for number, line in enumerate(text.split("\n"), 1):
        pos = 0
        for m in _TOKEN.finditer(line):
            if m.start() != pos:
                break  # a character no token matches
            pos = m.end()
            kind = m.lastgroup
            if kind != "ws":
                tokens.append(Token(kind, m.group(), number, m.start() + 1))  # type: ignore[arg-type]
        if pos != len(line):
            loc = Location(filename, number, pos + 1)
            raise error(loc, f"unexpected character {line[pos]!r} in IR")
    tokens.append(Token("eof", "", max(number, 1), len(text) - text.rfind("\n")))
    return tokens


class Parser:
    """Recursive-descent parser over the token list."""

    def __init__(self, text: str, filename: str = "<ir>") -> None:
        self.filename = filename
        _remember_source(text, filename)
        self.tokens = tokenize(text, filename)
        self.pos = 0
        self.scopes: list[dict[str, Value]] = []

    # -- token helpers --------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def loc(self, tok: Token | None = None) -> Location:
        t = tok or self.tok
        return Location(self.filename, t.line, t.col)

    def fail(self, message: str) -> CompileError:
        return error(self.loc(), message)

    def next(self) -> Token:
        tok = self.tok
        self.pos += 1
        return tok

    def accept(self, text: str) -> bool:
        if self.tok.text == text and self.tok.kind in ("punct", "arrow", "ident"):
            self.pos += 1
            return True
        return False

    def expect(self, text: str) -> Token:
        if self.tok.text != text:
            raise self.fail(f"expected '{text}', found '{self.tok.text or 'end of input'}'")
        return self.next()

    def expect_kind(self, kind: str) -> Token:
        if self.tok.kind != kind:
            raise self.fail(f"expected a {kind}, found '{self.tok.text or 'end of input'}'")
        return self.next()

    def parse_list(self, close: str, item: Callable[[], T]) -> list[T]:
        """Comma-separated items up to ``close`` (consumed); the opening bracket is read."""
        items: list[T] = []
        while not self.accept(close):
            if items:
                self.expect(",")
            items.append(item())
        return items

    # -- values ---------------------------------------------------------
    def define(self, name_tok: Token, value: Value) -> None:
        name = name_tok.text[1:]
        value.name_hint = None if name.isdigit() else name
        self.scopes[-1][name] = value

    def lookup(self, tok: Token) -> Value:
        name = tok.text[1:]
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        raise error(self.loc(tok), f"use of undefined value %{name}")

    # -- grammar --------------------------------------------------------
    def parse_module(self) -> Module:
        funcs = []
        while self.tok.kind != "eof":
            funcs.append(self.parse_func())
        return Module(funcs)

    def parse_func(self) -> FuncOp:
        start = self.expect("tt.func")
        private = self.accept("private")
        name = self.expect_kind("symbol").text[1:]
        self.scopes = [{}]
        self.expect("(")
        args = self.parse_list(")", self.parse_func_arg)
        arg_toks = [tok for tok, _, _ in args]
        arg_types = [t for _, t, _ in args]
        arg_attrs = [a for _, _, a in args]
        results: list[Type] = []
        if self.accept("->"):
            results = self.parse_paren_types()
        block = Block(arg_types)
        for tok, arg in zip(arg_toks, block.args):
            self.define(tok, arg)
        attrs: dict[str, Attr] = {"sym_name": name, "result_types": results}
        if private:
            attrs["private"] = True
        if any(arg_attrs):
            attrs["arg_attrs"] = arg_attrs
        if self.accept("attributes"):  # `attributes {fp_fusion = false}`
            attrs.update(self.parse_attrs())
        self.expect("{")
        loc = self.parse_loc() or self.loc(start)
        func = FuncOp(attrs=attrs, regions=[Region(block)], loc=loc)
        self.parse_ops_until_close(block)
        return func

    def parse_typed_arg(self) -> tuple[Token, Type]:
        """A block argument ``%name: type``."""
        tok = self.expect_kind("value")
        self.expect(":")
        return tok, self.parse_type()

    def parse_func_arg(self) -> tuple[Token, Type, dict[str, Attr]]:
        """A function argument ``%name: type``, maybe with ``{attrs}``."""
        tok, t = self.parse_typed_arg()
        return tok, t, self.parse_optional_attrs()

    def parse_paren_types(self) -> list[Type]:
        self.expect("(")
        return self.parse_list(")", self.parse_type)

    def parse_type(self) -> Type:
        tok = self.next()
        try:
            return parse_type(tok.text)
        except ValueError:
            raise error(self.loc(tok), f"unknown type '{tok.text}'") from None

    def parse_ops(self, block: Block) -> None:
        """Append ops to ``block`` up to the ``}`` that closes it (not consumed)."""
        while self.tok.text != "}":
            if self.tok.kind == "eof":
                raise self.fail("missing '}'")
            block.append(self.parse_op())

    def parse_ops_until_close(self, block: Block) -> None:
        self.parse_ops(block)
        self.expect("}")

    def parse_op(self) -> Operation:
        start = self.tok
        result_toks = []
        if self.tok.kind == "value":
            result_toks.append(self.next())
            while self.accept(","):
                result_toks.append(self.expect_kind("value"))
            self.expect("=")
        name_tok = self.expect_kind("ident")
        cls = OP_REGISTRY.get(name_tok.text)
        if cls is None:
            raise error(self.loc(name_tok), f"unknown op '{name_tok.text}'")
        operands = self.parse_operands()
        attrs = self.parse_optional_attrs()
        types: list[Type] = []
        if self.accept(":"):
            types.append(self.parse_type())
            while self.accept(","):
                types.append(self.parse_type())
        if len(types) != len(result_toks):
            raise error(self.loc(start), f"{len(result_toks)} results but {len(types)} types")
        regions = []
        while self.tok.text == "{":
            regions.append(self.parse_region())
            if not self.accept("}") and self.tok.text != "{":
                raise self.fail("expected '{' or '}' after a region")
        loc = self.parse_loc() or self.loc(start)
        op = cls(operands, types, attrs, regions, loc)
        for tok, res in zip(result_toks, op.results):
            self.define(tok, res)
        return op

    def parse_operands(self) -> list[Value]:
        self.expect("(")
        return self.parse_list(")", lambda: self.lookup(self.expect_kind("value")))

    def _attr_ahead(self) -> bool:
        nxt = self.tokens[self.pos + 1]
        return nxt.kind == "ident" and self.tokens[self.pos + 2].text == "="

    def parse_optional_attrs(self) -> dict[str, Attr]:
        """``{key = value, ...}`` if it follows, else no attributes."""
        return self.parse_attrs() if self.tok.text == "{" and self._attr_ahead() else {}

    def parse_attrs(self) -> dict[str, Attr]:
        self.expect("{")
        return dict(self.parse_list("}", self.parse_attr))

    def parse_attr(self) -> tuple[str, Attr]:
        key = self.expect_kind("ident").text
        self.expect("=")
        return key, self.parse_attr_value()

    def parse_attr_value(self) -> Attr:
        tok = self.next()
        if tok.kind == "number":
            return _number(tok.text)
        if tok.kind == "string":
            return json.loads(tok.text)
        if tok.text in ("true", "false"):
            return tok.text == "true"
        if tok.text == "[":
            return self.parse_list("]", self.parse_attr_value)
        raise error(self.loc(tok), f"bad attribute value '{tok.text}'")

    def parse_region(self) -> Region:
        # The '{' was seen by the caller; regions close with the '}' that the
        # caller consumes, so that "} {" can separate two regions.
        self.expect("{")
        self.expect("^")
        self.expect("(")
        args = self.parse_list(")", self.parse_typed_arg)
        self.expect(":")
        block = Block([t for _, t in args])
        self.scopes.append({})
        for (tok, _), arg in zip(args, block.args):
            self.define(tok, arg)
        self.parse_ops(block)
        self.scopes.pop()
        return Region(block)

    def parse_loc(self) -> Location | None:
        if self.tok.text != "loc":
            return None
        self.next()
        self.expect("(")
        file = json.loads(self.expect_kind("string").text)
        self.expect(":")
        line = int(self.expect_kind("number").text)
        self.expect(":")
        col = int(self.expect_kind("number").text)
        self.expect(")")
        return Location(file, line, col)


def _number(text: str) -> int | float:
    if text in ("inf", "-inf", "nan") or any(c in text for c in ".eE"):
        return float(text)
    return int(text)


def _remember_source(text: str, filename: str) -> None:
    # Lets diagnostics quote lines of IR that never lived in a file.
    lines = text.splitlines(keepends=True)
    linecache.cache[filename] = (len(text), None, lines, filename)


def parse_module(text: str, filename: str = "<ir>") -> Module:
    """Parse a whole module of IR text.

    A ``ttgir`` dump that declares its layouts as aliases (``#blocked = ...``,
    :mod:`minitriton.ir.ttgir_text`) parses too: its layouts become the ops'
    ``layout`` attributes again.
    """
    from minitriton.ir import ttgir_text

    if ttgir_text.has_aliases(text):
        text = ttgir_text.attribute_form(text)  # line for line: locations stay right
    return Parser(text, filename).parse_module()
