"""The ``shape`` family: ranges, splats, broadcasts, ``expand_dims``, reshapes, transposes
and layout conversions.

``tt.splat``, ``tt.broadcast`` and ``tt.expand_dims`` only rename registers
(the layout pass gave the operand a layout that makes them free).
``ttg.convert_layout``, ``tt.reshape`` and ``tt.trans`` move a block between
threads through shared memory (:func:`~minitriton.backend.lower.smem.relayout`):
every thread writes its registers at the element's row-major position, a
barrier, and every thread reads the positions its new layout holds. Two
conversions are the tensor cores' own and are tried first: a dot operand
staged for ``mma.sync``
(:func:`~minitriton.backend.lower.mma.convert_to_dot_operand`) and a
``wgmma`` accumulator leaving for the epilogue
(:func:`~minitriton.backend.lower.wgmma.convert_from_accumulator`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir

from minitriton.backend.lltypes import I32, RegTile
from minitriton.backend.lower.mma import Staged, convert_to_dot_operand
from minitriton.backend.lower.smem import relayout, row_major
from minitriton.backend.lower.wgmma import convert_from_accumulator
from minitriton.backend.ops import ConvertLayoutOp
from minitriton.backend.registry import lowering
from minitriton.ir.core import Operation
from minitriton.ir.ops import BroadcastOp, ExpandDimsOp, MakeRangeOp, ReshapeOp, SplatOp, TransOp
from minitriton.ir.types import element_type

if TYPE_CHECKING:
    from minitriton.backend.lower.context import LoweringContext


@lowering(MakeRangeOp)
def lower_make_range(ctx: LoweringContext, op: Operation) -> RegTile:
    """``tl.arange``: this thread's offsets plus each register's coordinate."""
    layout = ctx.layout(op.result)
    (off,) = ctx.thread_offsets(layout)
    base = ctx.b.add(off, ir.Constant(I32, op.attrs["start"]))
    vals = [ctx.b.add(base, ir.Constant(I32, c[0])) for c in layout.reg_coords()]
    return RegTile(layout, vals)


@lowering(SplatOp)
def lower_splat(ctx: LoweringContext, op: Operation) -> RegTile:
    """A scalar in every register of the block."""
    layout = ctx.layout(op.result)
    return RegTile(layout, [ctx.get(op.operands[0])] * layout.num_regs)


@lowering(BroadcastOp)
def lower_broadcast(ctx: LoweringContext, op: Operation) -> RegTile:
    """Each register takes the one of the operand at the stretched coordinate."""
    src = ctx.tensor(op.operands[0])
    in_shape = op.operands[0].shape
    index = {c: i for i, c in enumerate(src.layout.reg_coords())}
    layout = ctx.layout(op.result)
    vals = []
    for coord in layout.reg_coords():
        key = tuple(c if s > 1 else 0 for c, s in zip(coord, in_shape))
        vals.append(src.vals[index[key]])
    return RegTile(layout, vals)


@lowering(ExpandDimsOp)
def lower_expand_dims(ctx: LoweringContext, op: Operation) -> RegTile:
    """The same registers in the layout with the new dimension."""
    return RegTile(ctx.layout(op.result), ctx.tensor(op.operands[0]).vals)


@lowering(ConvertLayoutOp)
def lower_convert_layout(ctx: LoweringContext, op: Operation) -> RegTile | Staged:
    """The tensor cores' conversions first (each None if not its kind), else shared memory."""
    for special in (convert_to_dot_operand, convert_from_accumulator):
        out = special(ctx, op)
        if out is not None:
            return out
    src = ctx.tensor(op.operands[0])
    strides = row_major(src.layout.shape)
    st = element_type(op.result.type)
    return relayout(ctx, src, st, ctx.layout(op.result), strides, strides)


@lowering(ReshapeOp)
def lower_reshape(ctx: LoweringContext, op: Operation) -> RegTile:
    """Through shared memory, row-major on both sides."""
    src = ctx.tensor(op.operands[0])
    dst = ctx.layout(op.result)
    st = element_type(op.result.type)
    return relayout(ctx, src, st, dst, row_major(src.layout.shape), row_major(dst.shape))


@lowering(TransOp)
def lower_trans(ctx: LoweringContext, op: Operation) -> RegTile:
    """Through shared memory, read back with the permuted strides."""
    src = ctx.tensor(op.operands[0])
    strides = row_major(src.layout.shape)
    dst_strides = tuple(strides[o] for o in op.attrs["order"])
    st = element_type(op.result.type)
    return relayout(ctx, src, st, ctx.layout(op.result), strides, dst_strides)
