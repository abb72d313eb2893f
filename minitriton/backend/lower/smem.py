"""Moving a block between threads through shared memory, for every family.

One dynamic shared buffer serves the whole kernel: each use reserves what it
needs (:meth:`~minitriton.backend.lower.context.LoweringContext.reserve`) and
starts with a barrier, so consecutive uses never race. A block is written at
each element's linear position (``strides``) and read back in another
layout (:func:`relayout`); :func:`share_from_owners` and
:func:`broadcast_from_thread0` give threads the values only some of them
computed.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod
from typing import TYPE_CHECKING

from llvmlite import ir

from minitriton.backend.layouts import Layout
from minitriton.backend.lltypes import I8, I32, ElemType, RegTile, byte_size, mem_type
from minitriton.backend.lower.control import guarded, open_loop
from minitriton.ir.types import ScalarType

if TYPE_CHECKING:
    from minitriton.backend.lower.context import LoweringContext


def row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides of ``shape``."""
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


def align16(n: int) -> int:
    """``n`` rounded up to a multiple of 16 (bytes)."""
    return (n + 15) // 16 * 16


def smem_store(ctx: LoweringContext, byte_off: ir.Value, v: ir.Value, st: ElemType) -> None:
    """Store one element at ``byte_off`` of shared memory."""
    if isinstance(st, ScalarType) and st.is_bool():
        v = ctx.b.zext(v, I8)
    ptr = ctx.b.gep(ctx.smem, [byte_off], source_etype=I8)
    ctx.b.store(v, ptr, align=byte_size(st))


def smem_load(ctx: LoweringContext, byte_off: ir.Value, st: ElemType) -> ir.Value:
    """Load one element from ``byte_off`` of shared memory."""
    ptr = ctx.b.gep(ctx.smem, [byte_off], source_etype=I8)
    v = ctx.b.load(ptr, typ=mem_type(st), align=byte_size(st))
    if isinstance(st, ScalarType) and st.is_bool():
        return ctx.b.icmp_unsigned("!=", v, ir.Constant(I8, 0))
    return v


def lin_index(
    ctx: LoweringContext, layout: Layout, strides: tuple[int, ...]
) -> tuple[ir.Value, list[int]]:
    """Linear position of each register: runtime thread part, constant register parts."""

    def make(b: ir.IRBuilder) -> ir.Value:
        total: ir.Value = ir.Constant(I32, 0)
        for off, stride in zip(ctx.thread_offsets(layout), strides):
            total = b.add(total, b.mul(off, ir.Constant(I32, stride)))
        return total

    base = ctx.cached(("lin", layout, strides), make)
    consts = [sum(c * s for c, s in zip(coord, strides)) for coord in layout.reg_coords()]
    return base, consts


def byte_offset(ctx: LoweringContext, lin: ir.Value, eb: int, base: int) -> ir.Value:
    return ctx.b.add(ctx.b.mul(lin, ir.Constant(I32, eb)), ir.Constant(I32, base))


def write_tensor(
    ctx: LoweringContext,
    t: RegTile,
    st: ElemType,
    strides: tuple[int, ...],
    base: int = 0,
    pred=None,
) -> None:
    """Write every register of ``t`` to its position (``pred``: only where it holds)."""
    lin, consts = lin_index(ctx, t.layout, strides)
    eb = byte_size(st)
    for v, c in zip(t.vals, consts):
        off = byte_offset(ctx, ctx.b.add(lin, ir.Constant(I32, c)), eb, base)
        if pred is None:
            smem_store(ctx, off, v, st)
        else:
            store_if(ctx, pred, off, v, st)


def store_if(
    ctx: LoweringContext, pred: ir.Value, off: ir.Value, v: ir.Value, st: ElemType
) -> None:
    """Store one element at ``off`` of shared memory where ``pred`` holds."""

    def store() -> list[ir.Value]:
        smem_store(ctx, off, v, st)
        return []

    guarded(ctx, pred, store, [])


def read_tensor(
    ctx: LoweringContext, layout: Layout, st: ElemType, strides: tuple[int, ...], base: int = 0
):
    """Read every register of ``layout`` from its position."""
    lin, consts = lin_index(ctx, layout, strides)
    eb = byte_size(st)
    out = []
    for c in consts:
        off = byte_offset(ctx, ctx.b.add(lin, ir.Constant(I32, c)), eb, base)
        out.append(smem_load(ctx, off, st))
    return out


def relayout(
    ctx: LoweringContext,
    src: RegTile,
    st: ElemType,
    dst: Layout,
    src_strides: tuple[int, ...],
    dst_strides: tuple[int, ...],
) -> RegTile:
    """Move ``src`` to layout ``dst`` through shared memory."""
    ctx.reserve(prod(src.layout.shape) * byte_size(st))
    ctx.barrier()
    write_tensor(ctx, src, st, src_strides)
    ctx.barrier()
    return RegTile(dst, read_tensor(ctx, dst, st, dst_strides))


def share_from_owners(ctx: LoweringContext, t: RegTile, st: ElemType) -> RegTile:
    """Give every copy-holding thread the value its owner thread computed."""
    strides = row_major(t.layout.shape)
    ctx.reserve(prod(t.layout.shape) * byte_size(st))
    ctx.barrier()
    write_tensor(ctx, t, st, strides, pred=ctx.owner_pred(t.layout))
    ctx.barrier()
    return RegTile(t.layout, read_tensor(ctx, t.layout, st, strides))


def broadcast_from_thread0(ctx: LoweringContext, v: ir.Value, st: ElemType) -> ir.Value:
    """Give every thread thread 0's value of ``v``."""
    ctx.reserve(byte_size(st))
    ctx.barrier()
    store_if(ctx, ctx.is_thread0(), ir.Constant(I32, 0), v, st)
    ctx.barrier()
    return smem_load(ctx, ir.Constant(I32, 0), st)


def counted_loop(ctx: LoweringContext, count: int, body: Callable[[ir.Value], None]) -> None:
    """Emit ``for i in range(count): body(i)`` as a real loop."""
    bld = ctx.b
    loop = open_loop(bld, "loop", [ir.Constant(I32, 0)])
    i = loop.phis[0]
    loop.enter_body(bld, bld.icmp_unsigned("<", i, ir.Constant(I32, count)))
    body(i)
    loop.close(bld, [bld.add(i, ir.Constant(I32, 1))])
