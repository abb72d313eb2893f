"""Merging repeated calls of pure, expensive builtins while lowering.

``tl.rand(seed, offsets)`` expands to a Philox-4x32 network of about a
hundred ops per call. A kernel that calls it many times with the *same*
arguments (``tl.rand(seed, offs) <= tl.rand(seed, offs) <= ...``) would
build that network once per call, and only common-subexpression
elimination, much later, would merge the copies: compile time then grows
with the number of calls times the size of the expansion. Reductions and
scans (``tl.sum(x, axis=0)`` repeated) are worse: they are ops with a
combine region, which CSE does not merge at all, so each copy goes on to
LLVM and PTX as its own shuffle tree.

A builtin listed in :data:`PURE_BUILTINS` is pure: its result depends on
its arguments only, and it has no side effects (the Philox generator is a
function of its seed and counter; a reduction of its input). So lowering
keeps a memo of such calls, keyed on the builtin, the insertion block and
the bound arguments, and a repeated call returns the first call's results.
This is what CSE would make of the copies, done before they are built.

Compile-time arguments are keyed by type and value. A run-time argument is
keyed by a *value number*: two IR values get the same number when they are
results of the same pure, region-free op applied to operands of the same
numbers (so ``tl.sum(x * 2, axis=0)`` written twice is one call, although
``x * 2`` is built twice); any other value (an argument, a load, a loop
result) is its own number.

A memo entry is used only while its results are still defined in the
insertion block, before the point of the call, so the reused values always
dominate their new uses. Arguments that cannot serve as a key (floats,
lists, anything else) simply skip the memo.
"""

from __future__ import annotations

from typing import Any

from minitriton.frontend.builder import Builder
from minitriton.frontend.semantic import Tensor
from minitriton.ir.core import Operation, OpResult, Value, freeze_attr
from minitriton.ir.traits import Pure, Terminator
from minitriton.ir.types import ScalarType

#: Builtins whose expansion is large and whose result is a function of the
#: arguments alone. Cheap builtins are left to CSE.
PURE_BUILTINS = frozenset(
    {"rand", "randn", "randint", "randint4x"}
    | {"sum", "max", "min", "argmax", "argmin", "xor_sum", "cumsum", "cumprod", "sort"}
)

#: Compile-time argument types that can be part of a key. ``float`` is left
#: out on purpose: ``0.0 == -0.0`` would merge calls that differ.
_KEY_TYPES = (bool, int, str, type(None), ScalarType)


#: How deep :meth:`PureCallMemo.number` follows operands before it treats a
#: value as its own number (a long chain is numbered piece by piece anyway,
#: as each call numbers its arguments).
MAX_DEPTH = 32


def _numbered(op: Operation) -> bool:
    """Whether equal operands make equal results: pure, no regions, not a terminator."""
    return op.has_trait(Pure) and not op.has_trait(Terminator) and not op.regions


def _results(result: Any) -> list[Any]:
    return list(result) if isinstance(result, tuple) else [result]


class PureCallMemo:
    """The calls of :data:`PURE_BUILTINS` lowered so far, in one function body."""

    def __init__(self) -> None:
        self._memo: dict[tuple[Any, ...], Any] = {}
        # id(value) -> (value, its number); the value is held so its id stays its own.
        self._numbers: dict[int, tuple[Value, int]] = {}
        self._by_op: dict[tuple[Any, ...], int] = {}  # (op, operand numbers ...) -> number

    def number(self, value: Value, depth: int = 0) -> int:
        """The value number of ``value`` (see the module docstring)."""
        known = self._numbers.get(id(value))
        if known is not None:
            return known[1]
        key: tuple[Any, ...] | None = None
        if isinstance(value, OpResult) and depth < MAX_DEPTH and _numbered(value.owner):
            op = value.owner
            operands = tuple(self.number(v, depth + 1) for v in op.operands)
            types = tuple(str(r.type) for r in op.results)
            key = (op.name, operands, freeze_attr(op.attrs), types, value.index)
        n = self._by_op.setdefault(key, len(self._by_op)) if key else len(self._by_op)
        if key is None:
            self._by_op[("own", n)] = n  # keep numbers unique
        self._numbers[id(value)] = (value, n)
        return n

    def _arg_key(self, value: Any) -> tuple[Any, ...] | None:
        """The key part of one argument, or ``None`` if it cannot be keyed."""
        if isinstance(value, Tensor):
            return ("value", self.number(value.handle))
        if type(value) in _KEY_TYPES:
            return ("const", type(value), value)
        return None

    def key(self, name: str, block: object, bound: dict[str, Any]) -> tuple[Any, ...] | None:
        """The memo key of a call, or ``None`` if the call is not merged."""
        if name not in PURE_BUILTINS:
            return None
        parts: list[Any] = [name, id(block)]
        for arg, value in bound.items():
            part = self._arg_key(value)
            if part is None:
                return None
            parts.append((arg, part))
        return tuple(parts)

    def lookup(self, key: tuple[Any, ...] | None, b: Builder) -> Any | None:
        """The earlier result for ``key``, if it is still usable at ``b``'s insertion point."""
        if key is None or key not in self._memo:
            return None
        result = self._memo[key]
        for value in _results(result):
            handle = value.handle if isinstance(value, Tensor) else None
            if not isinstance(handle, OpResult) or handle.owner.parent is not b.block:
                del self._memo[key]  # erased or moved since: build the call again
                return None
        return result

    def remember(self, key: tuple[Any, ...] | None, result: Any) -> None:
        """Record the result of a call that :meth:`lookup` did not find."""
        if key is not None and all(isinstance(v, Tensor) for v in _results(result)):
            self._memo[key] = result
