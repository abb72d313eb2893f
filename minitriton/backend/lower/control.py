"""The ``control`` family: the program grid, structured control flow and barriers.

``scf.for`` becomes a header block with one ``phi`` per register carried
(the loop's iteration variable first), a body, and an exit; ``scf.if`` and
``scf.while`` likewise, their results ``phi`` nodes in the merge block.
Regions are lowered in place
(:meth:`~minitriton.backend.lower.context.LoweringContext.lower_region`):
their terminators (``scf.yield``, ``scf.condition``) have no lowering of
their own. :func:`guarded` runs code on a predicate, for the other families.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from llvmlite import ir

from minitriton.backend.lltypes import Lowered, scalar_of
from minitriton.backend.registry import lowering
from minitriton.ir.core import Operation
from minitriton.ir.ops import BarrierOp, ForOp, IfOp, NumProgramsOp, ProgramIdOp, ReturnOp, WhileOp

if TYPE_CHECKING:
    from minitriton.backend.lower.context import LoweringContext


_SREG = ("x", "y", "z")


@lowering(ProgramIdOp)
def lower_program_id(ctx: LoweringContext, op: Operation) -> ir.Value:
    """``ctaid.x/y/z``: the program is the CTA."""
    return ctx.sreg(f"ctaid.{_SREG[op.attrs['axis']]}")


@lowering(NumProgramsOp)
def lower_num_programs(ctx: LoweringContext, op: Operation) -> ir.Value:
    """``nctaid.x/y/z``: the grid's size."""
    return ctx.sreg(f"nctaid.{_SREG[op.attrs['axis']]}")


def _phis(ctx: LoweringContext, like: list[Lowered]) -> list[ir.PhiInstr]:
    return [ctx.b.phi(v.type) for v in ctx.flatten(like)]


@lowering(ForOp)
def lower_for(ctx: LoweringContext, op: Operation) -> list[Lowered]:
    """``scf.for``: a header with a ``phi`` per carried register, the body, an exit."""
    bld = ctx.b
    lb, ub, step = (ctx.get(v) for v in op.operands[:3])
    st = scalar_of(op.operands[0].type)
    inits = [ctx.get(v) for v in op.operands[3:]]
    entry = bld.block
    header = bld.append_basic_block("for.header")
    body = bld.append_basic_block("for.body")
    exit_ = bld.append_basic_block("for.exit")
    bld.branch(header)
    bld.position_at_end(header)
    iv = bld.phi(lb.type)
    phis = _phis(ctx, inits)
    iv.add_incoming(lb, entry)
    for phi, v in zip(phis, ctx.flatten(inits)):
        phi.add_incoming(v, entry)
    cond = bld.icmp_signed("<", iv, ub) if st.is_signed() else bld.icmp_unsigned("<", iv, ub)
    bld.cbranch(cond, body, exit_)
    bld.position_at_end(body)
    carried = ctx.unflatten(op.regions[0].args[1:], list(phis))
    yielded = ctx.lower_region(op.regions[0], [iv, *carried])
    nxt = ctx.b.add(iv, step)
    latch = ctx.b.block
    ctx.b.branch(header)
    iv.add_incoming(nxt, latch)
    for phi, v in zip(phis, ctx.flatten(yielded)):
        phi.add_incoming(v, latch)
    ctx.b.position_at_end(exit_)
    return ctx.unflatten(op.results, list(phis))


@lowering(IfOp)
def lower_if(ctx: LoweringContext, op: Operation) -> list[Lowered]:
    """``scf.if``: two blocks and a merge block with a ``phi`` per result register."""
    bld = ctx.b
    cond = ctx.get(op.operands[0])
    then_bb = bld.append_basic_block("if.then")
    else_bb = bld.append_basic_block("if.else")
    merge = bld.append_basic_block("if.end")
    bld.cbranch(cond, then_bb, else_bb)
    ends = []
    for region, bb in zip(op.regions, (then_bb, else_bb)):
        ctx.b.position_at_end(bb)
        flat = ctx.flatten(ctx.lower_region(region, []))
        ends.append((ctx.b.block, flat))
        ctx.b.branch(merge)
    ctx.b.position_at_end(merge)
    if not op.results:
        return []
    phis = [ctx.b.phi(v.type) for v in ends[0][1]]
    for block, flat in ends:
        for phi, v in zip(phis, flat):
            phi.add_incoming(v, block)
    return ctx.unflatten(op.results, list(phis))


@lowering(WhileOp)
def lower_while(ctx: LoweringContext, op: Operation) -> list[Lowered]:
    """``scf.while``: the condition region, then the body, looping back."""
    bld = ctx.b
    inits = [ctx.get(v) for v in op.operands]
    entry = bld.block
    before = bld.append_basic_block("while.before")
    after = bld.append_basic_block("while.after")
    exit_ = bld.append_basic_block("while.exit")
    bld.branch(before)
    bld.position_at_end(before)
    phis = _phis(ctx, inits)
    for phi, v in zip(phis, ctx.flatten(inits)):
        phi.add_incoming(v, entry)
    carried = ctx.unflatten(op.regions[0].args, list(phis))
    cond_vals = ctx.lower_region(op.regions[0], carried)
    ctx.b.cbranch(cond_vals[0], after, exit_)
    ctx.b.position_at_end(after)
    yielded = ctx.lower_region(op.regions[1], cond_vals[1:])
    latch = ctx.b.block
    ctx.b.branch(before)
    for phi, v in zip(phis, ctx.flatten(yielded)):
        phi.add_incoming(v, latch)
    ctx.b.position_at_end(exit_)
    return cond_vals[1:]


@lowering(ReturnOp)
def lower_return(ctx: LoweringContext, op: Operation) -> None:
    """The kernel's return: the code generator adds ``ret void`` after the body."""
    return None


@lowering(BarrierOp)
def lower_barrier(ctx: LoweringContext, op: Operation) -> None:
    """``tl.debug_barrier``: ``bar.sync 0``."""
    ctx.barrier()


# ------------------------------------------------------------ utilities
def guarded(
    ctx: LoweringContext, pred: ir.Value, fn: Callable[[], list[ir.Value]], defaults: list[ir.Value]
) -> list[ir.Value]:
    """Run ``fn`` only where ``pred`` holds; elsewhere the results are ``defaults``."""
    b = ctx.b
    start = b.block
    then_bb = b.append_basic_block("guard.then")
    merge = b.append_basic_block("guard.end")
    b.cbranch(pred, then_bb, merge)
    b.position_at_end(then_bb)
    vals = fn()
    then_end = b.block
    b.branch(merge)
    b.position_at_end(merge)
    out = []
    for v, d in zip(vals, defaults):
        phi = b.phi(v.type)
        phi.add_incoming(v, then_end)
        phi.add_incoming(d, start)
        out.append(phi)
    return out
