"""The IR printer: one canonical text form for every module.

Every op prints in one generic shape::

    %res = dialect.op(%operand, ...) {attr = value, ...} : result-type, ...

followed by its regions, each opened by a block header that names the
block's arguments::

    %acc = scf.for(%c0, %n, %c1, %zero) : f32 {
    ^(%i: i32, %acc_1: f32):
      %s = arith.add(%acc_1, %x) : f32
      scf.yield(%s)
    }

A function prints as ``tt.func [private] @name(%arg: type {arg attrs}, ...)
-> (result types)``, and its other attributes after ``attributes``
(``attributes {fp_fusion = false}`` for a kernel compiled with
``enable_fp_fusion=False``).

Values keep the names of the source variables they came from (``%offsets``);
values with no name are numbered per function (``%0``, ``%1``). Attributes
print sorted by key. Locations print only on request (``with_locs=True``), as
a trailing ``loc("file.py":12:5)``, so golden files stay stable.
:func:`minitriton.ir.parser.parse_module` reads this text back exactly.
"""

from __future__ import annotations

import json
import re

from minitriton.ir.core import Attr, Block, Operation, Region, Value
from minitriton.ir.ops import FuncOp, Module

_NAME_OK = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def format_attr(value: Attr) -> str:
    """The text of one attribute value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_attr(v) for v in value) + "]"
    raise TypeError(f"cannot print attribute {value!r}")


def format_attrs(attrs: dict[str, Attr]) -> str:
    """``{a = 1, b = "x"}``, sorted by key, or ``""`` when empty."""
    if not attrs:
        return ""
    items = ", ".join(f"{k} = {format_attr(attrs[k])}" for k in sorted(attrs))
    return " {" + items + "}"


#: The attributes of a ``tt.func`` that its syntax shows; others print after ``attributes``.
_FUNC_SYNTAX_ATTRS = ("sym_name", "result_types", "private", "arg_attrs")


class Printer:
    """Prints one module; names values as it meets their definitions."""

    def __init__(self, with_locs: bool = False) -> None:
        self.with_locs = with_locs
        self.lines: list[str] = []
        self._names: dict[int, str] = {}
        self._used: set[str] = set()
        self._counter = 0
        self._suffixes: dict[str, int] = {}  # hint -> the next suffix to try

    # -- naming ---------------------------------------------------------
    def _define(self, value: Value) -> str:
        hint = value.name_hint
        if hint is None or not _NAME_OK.fullmatch(hint):
            name = self._fresh_number()
        else:
            name = self._fresh_hint(hint)
        self._names[id(value)] = name
        self._used.add(name)
        return "%" + name

    def _fresh_number(self) -> str:
        while str(self._counter) in self._used:
            self._counter += 1
        self._counter += 1
        return str(self._counter - 1)

    def _fresh_hint(self, hint: str) -> str:
        if hint not in self._used:
            return hint
        # Names are never freed: every suffix below the last one given is taken,
        # so the search resumes there (linear for a hint used thousands of times).
        i = self._suffixes.get(hint, 1)
        while f"{hint}_{i}" in self._used:
            i += 1
        self._suffixes[hint] = i + 1
        return f"{hint}_{i}"

    def ref(self, value: Value) -> str:
        """The name of an already defined value (``%?`` if undefined)."""
        return "%" + self._names.get(id(value), "<undefined>")

    # -- printing -------------------------------------------------------
    def print_module(self, module: Module) -> str:
        """Text of the whole module."""
        for func in module.funcs:
            self.print_func(func)
        return "\n".join(self.lines) + "\n"

    def print_func(self, func: FuncOp) -> None:
        """Print one ``tt.func``; value numbering restarts per function."""
        self._names, self._used, self._counter, self._suffixes = {}, set(), 0, {}
        arg_attrs = func.attrs.get("arg_attrs") or [{} for _ in func.body.args]
        args = ", ".join(
            f"{self._define(a)}: {a.type}{format_attrs(attrs)}"
            for a, attrs in zip(func.body.args, arg_attrs)
        )
        private = "private " if func.attrs.get("private") else ""
        results = func.attrs.get("result_types") or []
        ret = f" -> ({', '.join(str(t) for t in results)})" if results else ""
        extra = {k: v for k, v in func.attrs.items() if k not in _FUNC_SYNTAX_ATTRS}
        ret += f" attributes{format_attrs(extra)}" if extra else ""
        self.lines.append(f"tt.func {private}@{func.sym_name}({args}){ret} {{{self._loc(func)}")
        self._print_ops(func.body.block, 1)
        self.lines.append("}")

    def _print_ops(self, block: Block, depth: int) -> None:
        for op in block.ops:
            self.print_op(op, depth)

    def print_op(self, op: Operation, depth: int) -> None:
        """Print ``op`` (and its regions) at indentation ``depth``."""
        pad = "  " * depth
        operands = ", ".join(self.ref(v) for v in op.operands)
        head = f"{op.name}({operands}){format_attrs(op.attrs)}"
        if op.results:
            types = ", ".join(str(r.type) for r in op.results)
            names = ", ".join(self._define(r) for r in op.results)
            head = f"{names} = {head} : {types}"
        if not op.regions:
            self.lines.append(pad + head + self._loc(op))
            return
        self.lines.append(pad + head + " {")
        for i, region in enumerate(op.regions):
            self._print_region(region, depth)
            closing = "} {" if i + 1 < len(op.regions) else "}" + self._loc(op)
            self.lines.append(pad + closing)

    def _print_region(self, region: Region, depth: int) -> None:
        pad = "  " * depth
        args = ", ".join(f"{self._define(a)}: {a.type}" for a in region.args)
        self.lines.append(f"{pad}^({args}):")
        self._print_ops(region.block, depth + 1)

    def _loc(self, op: Operation) -> str:
        if not self.with_locs:
            return ""
        loc = op.loc
        return f" loc({json.dumps(loc.file)}:{loc.line}:{loc.col})"


def print_module(module: Module, with_locs: bool = False) -> str:
    """The canonical text of ``module``."""
    return Printer(with_locs).print_module(module)


def print_op(op: Operation, with_locs: bool = False) -> str:
    """The text of a single op (operands named as the op has never seen them)."""
    printer = Printer(with_locs)
    printer.print_op(op, 0)
    return "\n".join(printer.lines)
