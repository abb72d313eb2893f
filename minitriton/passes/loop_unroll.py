"""Loop unrolling: ``tl.range(..., loop_unroll_factor=F)`` runs ``F`` bodies per iteration.

Triton's ``tl.range`` takes ``loop_unroll_factor=F``; the frontend puts it on
the ``scf.for`` as the attribute ``loop_unroll_factor``, and this pass (as
Triton's ``TritonLoopUnroll``) rewrites such a loop into two:

* a main loop of step ``F * step`` whose body is ``F`` copies of the old
  body, the ``k``-th for induction value ``iv + k * step``, each copy
  taking the values the one before it yields;
* a remainder loop, the old body as it was, for the ``0 .. F-1``
  iterations left over, which starts where the main loop ends.

The main loop stops at ``lb + (n / F) * F * step``, where ``n`` is the trip
count ``max(0, (ub - lb + step - 1) / step)``: an ``scf.for`` steps up, so
``step`` is positive. The values are the same as the loop's; what changes
is the code: fewer branches and counter updates, and a longer straight
body for the schedulers (LLVM, then ``ptxas``) to interleave. A factor of 1
(or none) leaves the loop alone; the attribute is dropped either way, so
the pass runs once per loop.

Example
-------

Before::

    tt.func @kernel(%p: ptr<i32>, %n: i32) -> (i32) {
      %zero = arith.constant() {value = 0} : i32
      %one = arith.constant() {value = 1} : i32
      %r = scf.for(%zero, %n, %one, %zero) {loop_unroll_factor = 2} : i32 {
      ^(%i: i32, %acc: i32):
        %s = arith.add(%acc, %i) : i32
        scf.yield(%s)
      }
      tt.return(%r)
    }

After::

    tt.func @kernel(%p: ptr<i32>, %n: i32) -> (i32) {
      %zero = arith.constant() {value = 0} : i32
      %one = arith.constant() {value = 1} : i32
      %0 = arith.sub(%n, %zero) : i32
      %1 = arith.add(%0, %one) : i32
      %2 = arith.constant() {value = 1} : i32
      %3 = arith.sub(%1, %2) : i32
      %4 = arith.div(%3, %one) : i32
      %5 = arith.constant() {value = 0} : i32
      %6 = arith.max(%4, %5) : i32
      %7 = arith.constant() {value = 2} : i32
      %8 = arith.div(%6, %7) : i32
      %9 = arith.mul(%one, %7) : i32
      %10 = arith.mul(%8, %9) : i32
      %11 = arith.add(%zero, %10) : i32
      %12 = scf.for(%zero, %11, %9, %zero) : i32 {
      ^(%i: i32, %acc: i32):
        %s = arith.add(%acc, %i) : i32
        %13 = arith.constant() {value = 1} : i32
        %14 = arith.mul(%one, %13) : i32
        %15 = arith.add(%i, %14) : i32
        %s_1 = arith.add(%s, %15) : i32
        scf.yield(%s_1)
      }
      %r = scf.for(%11, %n, %one, %12) : i32 {
      ^(%i_1: i32, %acc_1: i32):
        %s_2 = arith.add(%acc_1, %i_1) : i32
        scf.yield(%s_2)
      }
      tt.return(%r)
    }

(``canonicalize`` then folds the constant arithmetic.)

Conditions
----------

Precondition: verified IR. Postcondition: verified IR; no ``scf.for`` keeps
a ``loop_unroll_factor``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from minitriton.ir.clone import clone_op
from minitriton.ir.core import Block, Operation, Region, Value
from minitriton.ir.ops import (
    AddOp,
    ConstantOp,
    DivOp,
    ForOp,
    FuncOp,
    MaxOp,
    MulOp,
    SubOp,
    YieldOp,
)
from minitriton.passes.base import FunctionPass, register_pass
from minitriton.passes.rewriting import insert_before, make_constant

#: The ``scf.for`` attribute that asks for unrolling (``tl.range``'s keyword).
ATTR = "loop_unroll_factor"


@register_pass
@dataclass(frozen=True)
class LoopUnroll(FunctionPass):
    """Unroll each ``scf.for`` by its ``loop_unroll_factor``, with a remainder loop."""

    name: ClassVar[str] = "loop-unroll"

    def apply_to_function(self, func: FuncOp) -> None:
        loops = [op for op in func.walk() if isinstance(op, ForOp) and ATTR in op.attrs]
        for loop in loops:
            factor = int(loop.attrs.pop(ATTR))
            if factor > 1:
                unroll(loop, factor)


def unroll(loop: ForOp, factor: int) -> None:
    """Split ``loop`` into a main loop of ``factor`` bodies and the remainder loop."""
    lb, ub, step = loop.operands[:3]
    main_ub, main_step = _main_bounds(loop, factor)
    body = loop.regions[0].block
    main = ForOp(
        [lb, main_ub, main_step, *loop.operands[3:]],
        [r.type for r in loop.results],
        dict(loop.attrs),
        [Region(_unrolled_body(body, step, factor))],
        loop.loc,
    )
    insert_before(loop, main)
    # The old loop runs what is left: from where the main loop stopped, with its values.
    loop.operands = [main_ub, ub, step, *main.results]


def _main_bounds(loop: ForOp, factor: int) -> tuple[Value, Value]:
    """``lb + (max(0, ceil((ub - lb) / step)) / F) * (step * F)``, and ``step * F``."""
    lb, ub, step = loop.operands[:3]
    t = lb.type

    def emit(cls: type[Operation], a: Value, b: Value) -> Value:
        return insert_before(loop, cls([a, b], [t], {}, loc=loop.loc)).result

    span = emit(SubOp, ub, lb)
    up = emit(SubOp, emit(AddOp, span, step), make_constant(1, t, loop))
    trips = emit(MaxOp, emit(DivOp, up, step), make_constant(0, t, loop))
    f = make_constant(factor, t, loop)
    groups = emit(DivOp, trips, f)
    main_step = emit(MulOp, step, f)
    return emit(AddOp, lb, emit(MulOp, groups, main_step)), main_step


def _unrolled_body(body: Block, step: Value, factor: int) -> Block:
    """``factor`` copies of ``body``: copy ``k`` for ``iv + k * step``, chained by their yields."""
    block = Block([a.type for a in body.args], [a.name_hint for a in body.args])
    iv = block.args[0]
    carried: list[Value] = list(block.args[1:])
    for k in range(factor):
        mapping: dict[Value, Value] = dict(zip(body.args[1:], carried))
        mapping[body.args[0]] = iv if k == 0 else _shifted(block, iv, step, k)
        for op in body.ops[:-1]:
            block.append(clone_op(op, mapping))
        carried = [mapping.get(v, v) for v in body.ops[-1].operands]
    block.append(YieldOp(carried, [], {}, loc=body.ops[-1].loc))
    return block


def _shifted(block: Block, iv: Value, step: Value, k: int) -> Value:
    """``iv + k * step``, appended to ``block``."""
    t = iv.type
    const = block.append(ConstantOp([], [t], {"value": k}))
    times = block.append(MulOp([step, const.result], [t], {}))
    return block.append(AddOp([iv, times.result], [t], {})).result
