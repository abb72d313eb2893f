"""The ``control`` family: the program grid, structured control flow and barriers.

``scf.for`` becomes a header block with one ``phi`` per register carried
(the loop's iteration variable first), a body, and an exit; ``scf.if`` and
``scf.while`` likewise, their results ``phi`` nodes in the merge block.
Regions are lowered in place
(:meth:`~minitriton.backend.lower.context.LoweringContext.lower_region`):
their terminators (``scf.yield``, ``scf.condition``) have no lowering of
their own. :func:`guarded` runs code on a predicate, for the other families,
and :func:`open_loop` (a :class:`Loop`) builds every loop the backend emits:
these, the FMA dot's K loop and :func:`~minitriton.backend.lower.smem.counted_loop`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from llvmlite import ir

from minitriton.backend.accelerate_matmul import arch_number
from minitriton.backend.lltypes import Lowered, scalar_of
from minitriton.backend.lower.f16acc import pack_inits, unpack_results
from minitriton.backend.registry import lowering
from minitriton.ir.core import Operation
from minitriton.ir.ops import (
    BarrierOp,
    ForOp,
    GridDependencyOp,
    IfOp,
    NumProgramsOp,
    ProgramIdOp,
    ReturnOp,
    WhileOp,
)

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


@lowering(ForOp)
def lower_for(ctx: LoweringContext, op: Operation) -> list[Lowered]:
    """``scf.for``: a header with a ``phi`` per carried register, the body, an exit."""
    bld = ctx.b
    lb, ub, step = (ctx.get(v) for v in op.operands[:3])
    st = scalar_of(op.operands[0].type)
    # fp16 tensor-core accumulators are carried as packed .f16x2 registers
    inits = pack_inits(ctx, op, [ctx.get(v) for v in op.operands[3:]])
    loop = open_loop(bld, "for", [lb, *ctx.flatten(inits)])
    iv, phis = loop.phis[0], loop.phis[1:]
    cond = bld.icmp_signed("<", iv, ub) if st.is_signed() else bld.icmp_unsigned("<", iv, ub)
    loop.enter_body(bld, cond)
    carried = ctx.unflatten(op.regions[0].args[1:], list(phis))
    yielded = ctx.lower_region(op.regions[0], [iv, *carried])
    nxt = ctx.b.add(iv, step)
    loop.close(ctx.b, [nxt, *ctx.flatten(yielded)])
    return unpack_results(ctx, op, ctx.unflatten(op.results, list(phis)))


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
    inits = [ctx.get(v) for v in op.operands]
    loop = open_loop(ctx.b, "while", ctx.flatten(inits), ("before", "after", "exit"))
    carried = ctx.unflatten(op.regions[0].args, list(loop.phis))
    cond_vals = ctx.lower_region(op.regions[0], carried)
    loop.enter_body(ctx.b, cond_vals[0])
    yielded = ctx.lower_region(op.regions[1], cond_vals[1:])
    loop.close(ctx.b, ctx.flatten(yielded))
    return cond_vals[1:]


@lowering(ReturnOp)
def lower_return(ctx: LoweringContext, op: Operation) -> None:
    """The kernel's return: the code generator adds ``ret void`` after the body."""
    return None


@lowering(BarrierOp)
def lower_barrier(ctx: LoweringContext, op: Operation) -> None:
    """``tl.debug_barrier``: ``bar.sync 0``."""
    ctx.barrier()


@lowering(GridDependencyOp)
def lower_grid_dependency(ctx: LoweringContext, op: Operation) -> None:
    """``griddepcontrol.wait`` / ``.launch_dependents`` on sm_90 and later; nothing before,
    where no launch can depend on another."""
    if arch_number(ctx.arch) < 90:
        return
    text = f"griddepcontrol.{op.attrs['kind']};"
    fty = ir.FunctionType(ir.VoidType(), [])
    ctx.b.call(ir.InlineAsm(fty, text, "~{memory}", side_effect=True), [])


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


@dataclass(frozen=True)
class Loop:
    """A loop being emitted: its header, body and exit blocks, and the header's ``phi`` nodes.

    :func:`open_loop` branches into the header and makes the ``phi`` nodes;
    the caller emits the test there, :meth:`enter_body`, the body, and
    :meth:`close` with the values for the next iteration. Every loop of the
    backend (``scf.for``, ``scf.while``, the FMA dot's K loop,
    :func:`~minitriton.backend.lower.smem.counted_loop`) is built so.
    """

    header: ir.Block
    body: ir.Block
    exit: ir.Block
    phis: list[ir.PhiInstr]

    def enter_body(self, b: ir.IRBuilder, cond: ir.Value) -> None:
        """End the header: run the body while ``cond`` holds, else leave."""
        b.cbranch(cond, self.body, self.exit)
        b.position_at_end(self.body)

    def close(self, b: ir.IRBuilder, nexts: list[ir.Value]) -> None:
        """End the body: ``nexts`` (one per ``phi``) go round again; continue after the loop."""
        latch = b.block
        b.branch(self.header)
        for phi, v in zip(self.phis, nexts):
            phi.add_incoming(v, latch)
        b.position_at_end(self.exit)


def open_loop(
    b: ir.IRBuilder,
    name: str,
    inits: list[ir.Value],
    parts: tuple[str, str, str] = ("header", "body", "exit"),
) -> Loop:
    """Branch into a new loop ``name`` whose header has one ``phi`` per value of ``inits``.

    The blocks are named ``<name>.<part>``; the builder is left in the header.
    """
    entry = b.block
    header, body, exit_ = (b.append_basic_block(f"{name}.{part}") for part in parts)
    b.branch(header)
    b.position_at_end(header)
    phis = [b.phi(v.type) for v in inits]
    for phi, v in zip(phis, inits):
        phi.add_incoming(v, entry)
    return Loop(header, body, exit_, phis)
