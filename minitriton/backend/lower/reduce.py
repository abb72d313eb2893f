"""The ``reduce`` family: reductions, scans and sorts, with warp shuffles and shared memory.

* ``tt.reduce``: combine in-thread (in index order), then across lanes with
  butterfly shuffles (``shfl.sync.bfly``; the lower lane's value stays the
  left operand), then across warps through shared memory;
* ``tt.scan``: Hillis–Steele rounds through shared memory (log2(n) rounds,
  earlier elements always the left operand);
* ``tt.sort``: a bitonic network through shared memory;
* ``tt.histogram``: bins zeroed in shared memory, one ``atom.shared.add`` of 1
  per value in range (by the one owner of a replicated element), read back;
* ``tt.map_elementwise``: its region lowered inline once per register.

The combiner region is lowered inline for each pair of values
(:func:`combine`). Every use of shared memory starts with a barrier, so
consecutive uses of the one dynamic buffer never race
(:mod:`~minitriton.backend.lower.smem`).
"""

from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING

from llvmlite import ir

from minitriton.backend.bitpack import pack_bits
from minitriton.backend.layouts import Layout, slice_layout
from minitriton.backend.lltypes import (
    I1,
    I8,
    I32,
    I64,
    RegTile,
    byte_size,
)
from minitriton.backend.lower.arith import compare
from minitriton.backend.lower.control import guarded
from minitriton.backend.lower.smem import (
    align16,
    byte_offset,
    lin_index,
    row_major,
    smem_load,
    smem_store,
    store_if,
)
from minitriton.backend.registry import lowering
from minitriton.ir.core import Operation, Region
from minitriton.ir.ops import HistogramOp, MapElementwiseOp, ReduceOp, ScanOp, SortOp
from minitriton.ir.types import I32 as INT32
from minitriton.ir.types import BlockType, element_type, shape_of

if TYPE_CHECKING:
    from minitriton.backend.lower.context import LoweringContext


Vals = tuple[ir.Value, ...]


def shfl_xor(ctx: LoweringContext, v: ir.Value, mask: int) -> ir.Value:
    """``v`` of the lane whose id differs from ours by ``mask``."""
    b = ctx.b
    ty = v.type
    if isinstance(ty, ir.PointerType):
        return b.inttoptr(shfl_xor(ctx, b.ptrtoint(v, I64), mask), ty)
    bits = _bits(ty)
    as_int = v if isinstance(ty, ir.IntType) else b.bitcast(v, ir.IntType(bits))
    if bits == 64:
        halves = b.bitcast(as_int, ir.VectorType(I32, 2))
        parts = [_shfl32(ctx, b.extract_element(halves, ir.Constant(I32, i)), mask) for i in (0, 1)]
        vec = ir.Constant(ir.VectorType(I32, 2), None)
        for i, p in enumerate(parts):
            vec = b.insert_element(vec, p, ir.Constant(I32, i))
        out = b.bitcast(vec, I64)
    elif bits < 32:
        out = b.trunc(_shfl32(ctx, b.zext(as_int, I32), mask), ir.IntType(bits))
    else:
        out = _shfl32(ctx, as_int, mask)
    return out if isinstance(ty, ir.IntType) else b.bitcast(out, ty)


def _shfl32(ctx: LoweringContext, v: ir.Value, mask: int) -> ir.Value:
    args = [ir.Constant(I32, -1), v, ir.Constant(I32, mask), ir.Constant(I32, 31)]
    return ctx.call_intrinsic("llvm.nvvm.shfl.sync.bfly.i32", I32, args)


def combine(ctx: LoweringContext, region: Region, x: Vals, y: Vals) -> Vals:
    """Apply a reduce/scan combiner region to two tuples of scalars."""
    saved = ctx.b.debug_metadata
    out = tuple(ctx.lower_region(region, [*x, *y]))
    ctx.b.debug_metadata = saved
    return out


@lowering(MapElementwiseOp)
def lower_map_elementwise(ctx: LoweringContext, op: Operation) -> list:
    """``tt.map_elementwise``: the region on each register's scalars (all share one layout)."""
    layout = ctx.layout(op.results[0])
    columns = [ctx.tensor(v).vals for v in op.operands]
    outs: list[list[ir.Value]] = [[] for _ in op.results]
    for i in range(layout.num_regs):
        for out, value in zip(outs, combine(ctx, op.regions[0], tuple(c[i] for c in columns), ())):
            out.append(value)
    return [RegTile(layout, out) for out in outs]


def _bit_set(ctx: LoweringContext, src: ir.Value, bit: int) -> ir.Value:
    masked = ctx.b.and_(src, ir.Constant(I32, 1 << bit))
    return ctx.b.icmp_unsigned("!=", masked, ir.Constant(I32, 0))


# ------------------------------------------------------------ reduce
@lowering(ReduceOp)
def lower_reduce(ctx: LoweringContext, op: Operation) -> list:
    """``tt.reduce``: in-thread, then across lanes, then across warps."""
    axis = op.attrs["axis"]
    srcs = [ctx.tensor(v) for v in op.operands]
    layout = srcs[0].layout
    sts = [element_type(v.type) for v in op.operands]
    region = op.regions[0]
    acc = _reduce_in_thread(ctx, srcs, layout, axis, region)
    for bit in layout.lane_bits_along(axis):
        acc = _reduce_lanes(ctx, acc, bit, region)
    wbits = layout.warp_bits_along(axis)
    if wbits:
        acc = _reduce_warps(ctx, acc, layout, axis, wbits, sts, region)
    if not isinstance(op.results[0].type, BlockType):
        return list(acc[()])
    out = ctx.layout(op.results[0])
    coords = out.reg_coords()
    return [RegTile(out, [acc[c][i] for c in coords]) for i in range(len(srcs))]


def _reduce_in_thread(
    ctx: LoweringContext, srcs: list[RegTile], layout: Layout, axis: int, region: Region
):
    coords = layout.reg_coords()
    acc: dict[tuple[int, ...], Vals] = {}
    for r in sorted(range(len(coords)), key=lambda r: coords[r][axis]):
        key = coords[r][:axis] + coords[r][axis + 1 :]
        val = tuple(s.vals[r] for s in srcs)
        acc[key] = val if key not in acc else combine(ctx, region, acc[key], val)
    return acc


def _reduce_lanes(ctx: LoweringContext, acc: dict, bit: int, region: Region) -> dict:
    upper = _bit_set(ctx, ctx.lane, bit)
    out = {}
    for key, mine in acc.items():
        other = tuple(shfl_xor(ctx, v, 1 << bit) for v in mine)
        first = tuple(ctx.b.select(upper, o, m) for m, o in zip(mine, other))
        second = tuple(ctx.b.select(upper, m, o) for m, o in zip(mine, other))
        out[key] = combine(ctx, region, first, second)
    return out


def _reduce_warps(ctx: LoweringContext, acc, layout, axis, wbits, sts, region) -> dict:
    nw = 1 << len(wbits)
    widx = pack_bits(ctx.b, ctx.warp, [(bit, 1 << j) for j, bit in enumerate(wbits)])
    out_layout = slice_layout(layout, axis)
    strides = row_major(out_layout.shape)
    lin, consts = lin_index(ctx, out_layout, strides)
    const_of = dict(zip(out_layout.reg_coords(), consts))
    slots = prod(out_layout.shape) * nw
    bases, total = [], 0
    for st in sts:
        bases.append(total)
        total = align16(total + slots * byte_size(st))
    ctx.reserve(total)
    ctx.barrier()
    for key, vals in acc.items():
        row = ctx.b.add(lin, ir.Constant(I32, const_of[key]))
        slot = ctx.b.add(ctx.b.mul(row, ir.Constant(I32, nw)), widx)
        for v, st, base in zip(vals, sts, bases):
            smem_store(ctx, byte_offset(ctx, slot, byte_size(st), base), v, st)
    ctx.barrier()
    out = {}
    for key in acc:
        row = ctx.b.mul(ctx.b.add(lin, ir.Constant(I32, const_of[key])), ir.Constant(I32, nw))
        result = None
        for w in range(nw):
            slot = ctx.b.add(row, ir.Constant(I32, w))
            vals = tuple(
                smem_load(ctx, byte_offset(ctx, slot, byte_size(st), base), st)
                for st, base in zip(sts, bases)
            )
            result = vals if result is None else combine(ctx, region, result, vals)
        out[key] = result
    return out


# ------------------------------------------------------------ scan
@lowering(ScanOp)
def lower_scan(ctx: LoweringContext, op: Operation) -> list:
    """``tt.scan``: Hillis-Steele rounds through shared memory."""
    axis = op.attrs["axis"]
    reverse = bool(op.attrs.get("reverse", False))
    srcs = [ctx.tensor(v) for v in op.operands]
    layout = srcs[0].layout
    sts = [element_type(v.type) for v in op.operands]
    n = layout.shape[axis]
    strides = row_major(layout.shape)
    bases, total = [], 0
    for st in sts:
        bases.append(total)
        total = align16(total + prod(layout.shape) * byte_size(st))
    ctx.reserve(total)
    positions = _positions(ctx, layout, axis)
    lin, consts = lin_index(ctx, layout, strides)
    vals = [tuple(s.vals[r] for s in srcs) for r in range(layout.num_regs)]
    step = 1
    while step < n:
        vals = _scan_round(
            ctx, op, vals, sts, bases, positions, lin, consts, step, strides[axis], n, reverse
        )
        step *= 2
    return [RegTile(layout, [v[i] for v in vals]) for i in range(len(srcs))]


def _positions(ctx: LoweringContext, layout: Layout, axis: int) -> list[ir.Value]:
    toff = ctx.thread_offsets(layout)[axis]
    return [ctx.b.add(toff, ir.Constant(I32, c[axis])) for c in layout.reg_coords()]


def _scan_round(
    ctx: LoweringContext, op, vals, sts, bases, positions, lin, consts, step, stride, n, reverse
):
    b = ctx.b
    ctx.barrier()
    for r, tup in enumerate(vals):
        idx = b.add(lin, ir.Constant(I32, consts[r]))
        for v, st, base in zip(tup, sts, bases):
            smem_store(ctx, byte_offset(ctx, idx, byte_size(st), base), v, st)
    ctx.barrier()
    out = []
    for r, mine in enumerate(vals):
        idx = b.add(lin, ir.Constant(I32, consts[r]))
        if reverse:
            valid = b.icmp_signed("<", positions[r], ir.Constant(I32, n - step))
            src = b.add(idx, ir.Constant(I32, step * stride))
        else:
            valid = b.icmp_signed(">=", positions[r], ir.Constant(I32, step))
            src = b.sub(idx, ir.Constant(I32, step * stride))
        src = b.select(valid, src, idx)
        other = tuple(
            smem_load(ctx, byte_offset(ctx, src, byte_size(st), base), st)
            for st, base in zip(sts, bases)
        )
        combined = combine(ctx, op.regions[0], other, mine)
        out.append(tuple(b.select(valid, c, m) for c, m in zip(combined, mine)))
    return out


# ------------------------------------------------------------ histogram
@lowering(HistogramOp)
def lower_histogram(ctx: LoweringContext, op: Operation) -> RegTile:
    """``tt.histogram``: counts in shared memory, one atomic increment per value.

    Values outside ``[0, bins)`` fail one unsigned compare (negative ones
    too). ``ptxas`` turns the increments into ``ATOMS.POPC.INC``, which adds
    once per group of lanes hitting the same bin.
    """
    b = ctx.b
    x = ctx.tensor(op.operands[0])
    masks = ctx.tensor(op.operands[1]).vals if len(op.operands) == 2 else [None] * len(x.vals)
    bins = shape_of(op.result.type)[0]
    ctx.reserve(align16(bins * 4))
    ctx.barrier()  # earlier readers of the scratch area are done
    _zero_words(ctx, bins)
    ctx.barrier()
    owner = ctx.owner_pred(x.layout)
    for v, m in zip(x.vals, masks):
        pred = b.icmp_unsigned("<", v, ir.Constant(I32, bins))
        for extra in (owner, m):
            pred = pred if extra is None else b.and_(pred, extra)
        slot = b.gep(ctx.smem, [b.mul(v, ir.Constant(I32, 4))], source_etype=I8)

        def bump(slot: ir.Value = slot) -> list[ir.Value]:
            word = b.bitcast(slot, I32.as_pointer(3))
            b.atomic_rmw("add", word, ir.Constant(I32, 1), "monotonic")
            return []

        guarded(ctx, pred, bump, [])
    ctx.barrier()
    out = ctx.layout(op.result)
    lin, consts = lin_index(ctx, out, (1,))
    vals = [smem_load(ctx, byte_offset(ctx, b.add(lin, ir.Constant(I32, c)), 4, 0), INT32)
            for c in consts]  # fmt: skip
    return RegTile(out, vals)


def _zero_words(ctx: LoweringContext, n: int) -> None:
    """Zero the first ``n`` 32-bit words of the scratch area, a word per thread at a time."""
    b = ctx.b
    threads = ctx.num_warps * 32
    for start in range(0, n, threads):
        idx = b.add(ctx.tid, ir.Constant(I32, start))
        off, zero = byte_offset(ctx, idx, 4, 0), ir.Constant(I32, 0)
        if start + threads <= n:
            smem_store(ctx, off, zero, INT32)
        else:  # the last round: only the threads with a word left
            store_if(ctx, b.icmp_unsigned("<", idx, ir.Constant(I32, n)), off, zero, INT32)


# ------------------------------------------------------------ sort
@lowering(SortOp)
def lower_sort(ctx: LoweringContext, op: Operation) -> RegTile:
    """``tt.sort``: a bitonic network through shared memory."""
    dim = op.attrs["dim"]
    descending = bool(op.attrs["descending"])
    src = ctx.tensor(op.operands[0])
    layout = src.layout
    st = element_type(op.result.type)
    strides = row_major(layout.shape)
    n = layout.shape[dim]
    ctx.reserve(prod(layout.shape) * byte_size(st))
    positions = _positions(ctx, layout, dim)
    lin, consts = lin_index(ctx, layout, strides)
    vals = list(src.vals)
    k = 2
    while k <= n:
        j = k // 2
        while j >= 1:
            vals = _sort_step(ctx, vals, st, positions, lin, consts, k, j, strides[dim], descending)
            j //= 2
        k *= 2
    return RegTile(layout, vals)


def _sort_step(ctx: LoweringContext, vals, st, positions, lin, consts, k, j, stride, descending):
    b = ctx.b
    eb = byte_size(st)
    ctx.barrier()
    for r, v in enumerate(vals):
        smem_store(ctx, byte_offset(ctx, b.add(lin, ir.Constant(I32, consts[r])), eb, 0), v, st)
    ctx.barrier()
    out = []
    for r, mine in enumerate(vals):
        pos = positions[r]
        idx = b.add(lin, ir.Constant(I32, consts[r]))
        lower = b.not_(_bit_set(ctx, pos, j.bit_length() - 1))
        delta = b.select(lower, ir.Constant(I32, j * stride), ir.Constant(I32, -j * stride))
        other = smem_load(ctx, byte_offset(ctx, b.add(idx, delta), eb, 0), st)
        up = b.not_(_bit_set(ctx, pos, k.bit_length() - 1)) if k < (1 << 31) else ir.Constant(I1, 1)
        want_min = b.icmp_unsigned("==", lower, up)
        if descending:
            want_min = b.not_(want_min)
        less = compare(ctx, "lt", st, other, mine)
        lo = b.select(less, other, mine)
        hi = b.select(less, mine, other)
        out.append(b.select(want_min, lo, hi))
    return out


def _bits(ty: ir.Type) -> int:
    if isinstance(ty, ir.IntType):
        return ty.width
    if isinstance(ty, ir.HalfType):
        return 16
    if isinstance(ty, ir.FloatType):
        return 32
    return 64
