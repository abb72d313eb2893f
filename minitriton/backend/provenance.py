"""Pointer provenance: which kernel argument each pointer value derives from.

Debug mode (:mod:`~minitriton.backend.lower.debug`) checks every access
against the buffer its pointer was derived from, so it needs, for each
pointer-typed IR value, the index of the kernel argument it came from.

A pointer keeps its argument's provenance through ``tt.addptr`` (any
offset), ``tt.splat``, ``tt.broadcast``, ``tt.expand_dims``,
``tt.reshape``, ``tt.trans``, ``ttg.convert_layout``, ``tt.hint`` and a
pointer-to-pointer ``arith.bitcast``. Block pointers are plain pointer
arithmetic by the time the GPU backend sees them, so they are covered. At a
merge (``arith.select``, the results of ``scf.if``, the iter args of
``scf.for`` and ``scf.while``) the provenance is kept when every incoming
pointer has the same one. Anything else is *unknown* (:data:`UNKNOWN`): a
pointer made from an integer (``int_to_ptr``), loaded from memory, or
merged from two different arguments. Accesses through an unknown pointer
are not checked.
"""

from __future__ import annotations

from collections.abc import Sequence

from minitriton.ir.core import Block, Operation, Value
from minitriton.ir.ops import ForOp, FuncOp, IfOp, SelectOp, WhileOp
from minitriton.ir.traits import ViewLike
from minitriton.ir.types import PointerType, element_type

#: The provenance of a pointer whose argument cannot be told at compile time.
UNKNOWN = -1
_MAX_ROUNDS = 16


def _is_pointer(v: Value) -> bool:
    return isinstance(element_type(v.type), PointerType)


def _join(a: int | None, b: int | None) -> int | None:
    """``None`` is "not seen yet"; two different arguments give :data:`UNKNOWN`."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    return UNKNOWN


class Provenance:
    """The provenance of every pointer value of one kernel (see the module docstring)."""

    def __init__(self, kernel: FuncOp) -> None:
        self._of: dict[int, int | None] = {}
        for i, arg in enumerate(kernel.body.args):
            if _is_pointer(arg):
                self._of[id(arg)] = i
        # Loops carry pointers around: iterate to a fixed point (a few rounds suffice).
        for _ in range(_MAX_ROUNDS):
            self._changed = False
            self._block(kernel.body.block)
            if not self._changed:
                break

    def of(self, v: Value) -> int:
        """The argument index ``v`` derives from, or :data:`UNKNOWN`."""
        p = self._of.get(id(v))
        return UNKNOWN if p is None else p

    # ------------------------------------------------------------ the walk
    def _get(self, v: Value) -> int | None:
        return self._of.get(id(v))

    def _set(self, v: Value, p: int | None) -> None:
        if not _is_pointer(v) or p is None:
            return
        new = _join(self._of.get(id(v)), p)
        if new != self._of.get(id(v)):
            self._of[id(v)] = new
            self._changed = True

    def _block(self, block: Block) -> None:
        for op in block.ops:
            self._op(op)

    def _op(self, op: Operation) -> None:
        if op.has_trait(ViewLike) and op.operands:  # a view: its first operand's buffer
            for r in op.results:
                self._set(r, self._get(op.operands[0]))
        elif isinstance(op, SelectOp):
            for r in op.results:
                self._set(r, _join(self._get(op.operands[1]), self._get(op.operands[2])))
        elif isinstance(op, ForOp):
            self._for(op)
        elif isinstance(op, IfOp):
            self._if(op)
        elif isinstance(op, WhileOp):
            self._while(op)
        else:
            for r in op.results:
                if _is_pointer(r):
                    self._of[id(r)] = UNKNOWN
            for region in op.regions:
                self._block(region.block)

    def _carry(self, args: Sequence[Value], values: Sequence[Value]) -> None:
        for a, v in zip(args, values):
            self._set(a, self._get(v))

    def _for(self, op: Operation) -> None:
        body = op.regions[0].block
        inits = op.operands[3:]
        self._carry(body.args[1:], inits)
        self._block(body)
        yielded = body.terminator.operands if body.terminator else []
        self._carry(body.args[1:], yielded)
        self._carry(op.results, body.args[1:])

    def _if(self, op: Operation) -> None:
        for region in op.regions:
            self._block(region.block)
            term = region.block.terminator
            self._carry(op.results, term.operands if term else [])

    def _while(self, op: Operation) -> None:
        before, after = op.regions[0].block, op.regions[1].block
        self._carry(before.args, op.operands)
        self._block(before)
        cond = before.terminator
        passed = cond.operands[1:] if cond else []
        self._carry(after.args, passed)
        self._carry(op.results, passed)
        self._block(after)
        term = after.terminator
        self._carry(before.args, term.operands if term else [])
