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

from math import prod
from typing import TYPE_CHECKING

from llvmlite import ir

from minitriton.backend.lltypes import I32, RegTile, byte_size, const
from minitriton.backend.lower.mma import Staged, convert_to_dot_operand
from minitriton.backend.lower.smem import (
    align16,
    byte_offset,
    lin_index,
    relayout,
    row_major,
    smem_load,
    write_tensor,
)
from minitriton.backend.lower.wgmma import convert_from_accumulator
from minitriton.backend.ops import ConvertLayoutOp
from minitriton.backend.registry import lowering
from minitriton.ir.core import Operation
from minitriton.ir.ops import (
    BroadcastOp,
    ExpandDimsOp,
    GatherOp,
    MakeRangeOp,
    ReshapeOp,
    SplatOp,
    TransOp,
)
from minitriton.ir.types import ScalarType, element_type

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


@lowering(GatherOp)
def lower_gather(ctx: LoweringContext, op: Operation) -> RegTile:
    """``tt.gather``: ``src`` written to shared memory, then each result element reads
    the one its index names (0 for an index out of range)."""
    axis = op.attrs["axis"]
    src, idx = ctx.tensor(op.operands[0]), ctx.tensor(op.operands[1])
    st, it = element_type(op.operands[0].type), element_type(op.operands[1].type)
    assert isinstance(st, ScalarType) and isinstance(it, ScalarType)
    strides = row_major(src.layout.shape)
    n, eb, b = src.layout.shape[axis], byte_size(st), ctx.b
    ctx.reserve(align16(prod(src.layout.shape) * eb))
    ctx.barrier()  # earlier readers of the scratch area are done
    write_tensor(ctx, src, st, strides)
    ctx.barrier()
    # Each result element's position beyond the axis, from the index block's layout.
    beyond = tuple(0 if d == axis else s for d, s in enumerate(strides))
    lin, consts = lin_index(ctx, idx.layout, beyond)
    zero = const(st, 0)
    out = []
    for c, raw in zip(consts, idx.vals):
        k = _index_i32(b, raw, it)
        inside = b.and_(b.icmp_signed(">=", k, ir.Constant(I32, 0)),
                        b.icmp_signed("<", k, ir.Constant(I32, n)))  # fmt: skip
        k = b.select(inside, k, ir.Constant(I32, 0))
        pos = b.add(b.add(lin, ir.Constant(I32, c)), b.mul(k, ir.Constant(I32, strides[axis])))
        out.append(b.select(inside, smem_load(ctx, byte_offset(ctx, pos, eb, 0), st), zero))
    return RegTile(idx.layout, out)


def _index_i32(b: ir.IRBuilder, v: ir.Value, it: ScalarType) -> ir.Value:
    """An index of any integer type as i32 (wider ones clamped first, so they stay outside)."""
    if it.bitwidth <= 32:
        wide = b.sext(v, I32) if it.is_signed() and it.bitwidth < 32 else v
        return b.zext(v, I32) if not it.is_signed() and it.bitwidth < 32 else wide
    big = ir.Constant(v.type, 2**31 - 1)
    clamped = b.select(b.icmp_unsigned(">", v, big) if not it.is_signed()
                       else b.icmp_signed(">", v, big), big, v)  # fmt: skip
    if it.is_signed():
        low = ir.Constant(v.type, -(2**31))
        clamped = b.select(b.icmp_signed("<", clamped, low), low, clamped)
    return b.trunc(clamped, I32)
