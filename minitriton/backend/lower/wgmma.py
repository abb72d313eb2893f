"""Lowering of a ``tt.dot`` to Hopper's ``wgmma.mma_async``, and the epilogue.

The dot path (:func:`~minitriton.backend.accelerate_matmul.dot_path`) picks
``wgmma`` on sm_90 for the operand types and shapes of
:mod:`~minitriton.backend.mma_v3`. A dot whose operands are ordinary block
values (registers) is lowered in five steps:

1. a barrier (the shared buffer may still be in use), then every thread
   stores its registers of A and B into swizzled tiles
   (:mod:`~minitriton.backend.shared_layout`), 16 bytes at a time where the
   tile's contiguous dimension is the registers' (A always; B row-major for
   fp16 and bf16 held row-major, K-major when its registers run along K;
   tf32 and int8 B always K-major, element by element from row-major
   registers). An fp16/bf16 A already in the accumulator layout of a
   previous dot (attention's ``P``) is not stored at all: ``wgmma`` takes
   it from registers (:class:`RegisterA`);
2. ``fence.proxy.async.shared::cta`` (the tensor cores read shared memory
   through the *async proxy*, which must see the ordinary stores), barrier;
3. ``wgmma.fence``, then per warpgroup ``m_reps x n_reps x K/k_step``
   instructions, each with a descriptor of A's and of B's tile at the
   instruction's rows, columns and K offset;
4. ``wgmma.commit_group``;
5. ``wgmma.wait_group 0``, which returns the accumulator registers (they go
   through the wait as tied operands, so nothing reads them too early).

An fp16 accumulator (fp16 or fp8 operands, ``out_dtype=tl.float16`` or an
fp16 ``acc``) takes ``wgmma ... .f16.f16.f16`` (``.f16.e4m3.e4m3``): D is
``N / 4`` ``.f16x2`` registers per thread, half the fp32 form's, and stays
packed from the first instruction through every wait that leaves groups in
flight and across the loop's back edge; the wait that ends the group unpacks
it (:mod:`~minitriton.backend.lower.f16acc`).

A dot in a pipelined loop (:mod:`~minitriton.backend.passes.software_pipeline`) skips steps 1
and 2 (its operands are already in shared memory, or A in registers) and
may wait with one group left in flight.

**Epilogue.** Converting an accumulator to a blocked layout (for the store
after the loop) goes through shared memory with vector accesses: each
thread stores its pairs of consecutive columns (8 bytes for fp32, 4 for
fp16) into a row-major buffer whose rows are padded (4 pairs' worth of
bytes) so the eight rows a warp writes at once fall into different banks,
then reads 16-byte vectors of the blocked layout back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir

from minitriton.backend import lltypes as T
from minitriton.backend.accelerate_matmul import DotPath, dot_path
from minitriton.backend.layouts import Layout
from minitriton.backend.lower.arith import contract_flags
from minitriton.backend.lower.debug import check_access
from minitriton.backend.lower.f16acc import as_halves, from_registers, packed_registers
from minitriton.backend.lower.memory import vector_width
from minitriton.backend.mma_v3 import (
    WgmmaShape,
    accumulator_layout,
    is_mma_layout,
    shape_for,
    shape_of_async_dot,
    wgmma_shape,
)
from minitriton.backend.ops import (
    AsyncCommitGroupOp,
    AsyncCopyOp,
    AsyncWaitOp,
    LocalDeallocOp,
    LocalStoreOp,
    WarpGroupDotOp,
    WarpGroupDotWaitOp,
)
from minitriton.backend.registry import lowering
from minitriton.backend.shared_layout import MmaTile, SharedTile, align_tile
from minitriton.backend.tma import dim_strides
from minitriton.ir.core import Operation, Value
from minitriton.ir.types import F16, ScalarType, element_type

if TYPE_CHECKING:
    from minitriton.backend.lower.context import LoweringContext


# ------------------------------------------------------------ small helpers
def asm(ctx: LoweringContext, text: str, cons: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
    """Inline PTX with side effects."""
    fnty = ir.FunctionType(ret, [a.type for a in args])
    return ctx.b.call(ir.InlineAsm(fnty, text, cons, side_effect=True), args)


def opaque(ctx: LoweringContext, v: ir.Value) -> ir.Value:
    """``v`` through a ``mov`` LLVM cannot see into (free once ``ptxas`` allocates registers)."""
    fnty = ir.FunctionType(v.type, [v.type])
    return ctx.b.call(ir.InlineAsm(fnty, "mov.b32 $0, $1;", "=r,r"), [v])


def fence_proxy_async(ctx: LoweringContext) -> None:
    """Make this thread's shared-memory stores visible to the tensor cores."""
    asm(ctx, "fence.proxy.async.shared::cta;", "", T.VOID, [])


def smem_global(ctx: LoweringContext) -> ir.Value:
    """The dynamic shared buffer itself (``ctx.smem`` may point past the ring buffers)."""
    if ctx.smem_base is None:
        ctx.smem_base = ctx.smem
    return ctx.smem_base


def smem_addr(ctx: LoweringContext) -> ir.Value:
    """The shared-window address of the dynamic shared buffer (i32)."""

    def make(b: ir.IRBuilder) -> ir.Value:
        return b.trunc(b.ptrtoint(smem_global(ctx), T.I64), T.I32)

    return ctx.cached("smem_addr", make)


def _i32(ctx: LoweringContext, v: int) -> ir.Constant:
    return ir.Constant(T.I32, v)


def tile_linear(ctx: LoweringContext, tile: SharedTile, row: ir.Value, col: ir.Value) -> ir.Value:
    """Unswizzled byte offset of (row, col) in ``tile`` (runtime indices)."""
    b = ctx.b
    e = tile.row_elems
    block = b.mul(b.lshr(col, _i32(ctx, e.bit_length() - 1)), _i32(ctx, tile.rows * tile.swizzle))
    inner = b.mul(b.and_(col, _i32(ctx, e - 1)), _i32(ctx, tile.eb))
    return b.add(b.add(block, b.mul(row, _i32(ctx, tile.swizzle))), inner)


def tile_physical(ctx: LoweringContext, tile: SharedTile, row: ir.Value, col: ir.Value) -> ir.Value:
    """Byte offset where (row, col) is stored (swizzled)."""
    b = ctx.b
    o = tile_linear(ctx, tile, row, col)
    chunk = b.and_(b.lshr(o, _i32(ctx, 7)), _i32(ctx, tile.mask))
    return b.xor(o, b.shl(chunk, _i32(ctx, 4)))


# ------------------------------------------------------------ staging
def stage_tile(
    ctx: LoweringContext, t: T.RegTile, st: T.ElemType, tile: SharedTile, base: int
) -> None:
    """Store every register of ``t`` into ``tile`` at byte ``base`` of shared memory."""
    layout = t.layout
    dim, run = layout.contiguous_run()
    vec = min(run, 16 // tile.eb) if dim == tile.contig else 1
    toff = ctx.thread_offsets(layout)
    coords = layout.reg_coords()
    mt = T.mem_type(st)
    for r in range(0, layout.num_regs, vec):
        c = coords[r]
        row = ctx.b.add(toff[1 - tile.contig], _i32(ctx, c[1 - tile.contig]))
        col = ctx.b.add(toff[tile.contig], _i32(ctx, c[tile.contig]))
        off = ctx.b.add(tile_physical(ctx, tile, row, col), _i32(ctx, base))
        store_shared_vector(ctx, off, t.vals[r : r + vec], mt)


def store_shared_vector(
    ctx: LoweringContext, off: ir.Value, vals: list[ir.Value], mt: ir.Type
) -> None:
    """One ``st.shared`` of ``len(vals)`` elements at byte ``off``."""
    ptr = ctx.b.gep(ctx.smem, [off], source_etype=ir.IntType(8))
    align = len(vals) * _bytes(mt)
    if len(vals) == 1:
        ctx.b.store(vals[0], ptr, align=align)
        return
    vec = ir.Constant(ir.VectorType(mt, len(vals)), None)
    for i, v in enumerate(vals):
        vec = ctx.b.insert_element(vec, v, _i32(ctx, i))
    ctx.b.store(vec, ptr, align=align)


def load_shared_vector(ctx: LoweringContext, off: ir.Value, n: int, mt: ir.Type) -> list[ir.Value]:
    """One ``ld.shared`` of ``n`` elements at byte ``off``."""
    ptr = ctx.b.gep(ctx.smem, [off], source_etype=ir.IntType(8))
    align = n * _bytes(mt)
    if n == 1:
        return [ctx.b.load(ptr, typ=mt, align=align)]
    v = ctx.b.load(ptr, typ=ir.VectorType(mt, n), align=align)
    return [ctx.b.extract_element(v, _i32(ctx, i)) for i in range(n)]


# ------------------------------------------------------------ the dot
def wgmma_dot(ctx: LoweringContext, op: Operation) -> T.RegTile | None:
    """A dot on the ``wgmma`` path (else None): operands staged, one async group, a wait."""
    if dot_path(op, ctx.arch, ctx.num_warps) is not DotPath.WGMMA:
        return None  # another path's dot
    shape = wgmma_shape(op, ctx.num_warps)
    assert shape is not None
    a, bm, c = (ctx.tensor(v) for v in op.operands)
    st = element_type(op.operands[0].type)
    a_regs = register_a_operand(shape, a.layout, ctx.num_warps)
    a_tile, b_tile = shape.a_tile(), shape.b_tile(_contig_dim(bm.layout))
    off_b = 0 if a_regs is not None else align_tile(a_tile.nbytes)
    reserve_tiles(ctx, off_b + b_tile.nbytes)
    ctx.barrier()
    if a_regs is None:
        stage_tile(ctx, a, st, a_tile, 0)
    stage_tile(ctx, bm, st, b_tile, off_b)
    fence_proxy_async(ctx)
    ctx.barrier()
    base = ctx.scratch_base
    a_arg = (a_tile, base) if a_regs is None else (a_regs, a.vals)
    f16_acc = element_type(op.operands[2].type) == F16
    imprecise = op.attrs.get("max_num_imprecise_acc")
    acc = wgmma(ctx, shape, c.vals, a_arg, (b_tile, base + off_b), None, f16_acc, imprecise)
    if imprecise is not None:
        return T.RegTile(c.layout, acc)  # complete: each part was waited for
    return T.RegTile(c.layout, wgmma_wait(ctx, acc, 0, f16_acc))


def reserve_tiles(ctx: LoweringContext, nbytes: int) -> None:
    """Reserve ``nbytes`` of tiles; ``wgmma`` tiles need a 1024-byte aligned buffer."""
    ctx.uses_wgmma = True
    smem_global(ctx).align = 1024
    ctx.reserve(nbytes)


# ------------------------------------------------------------ pipelined loops
def alloc_ring(ctx: LoweringContext, op: Operation) -> None:
    """A ``ttg.local_alloc`` of ``wgmma``'s ring of shared tiles."""
    rings = ctx.rings
    shape = tuple(op.attrs["shape"])
    eb = T.byte_size(ScalarType(op.attrs["dtype"]))
    tile = SharedTile.make(shape, op.attrs.get("contig", 1), eb)
    assert tile is not None
    stage_bytes = align_tile(tile.nbytes)
    offset = ctx.ring_end
    stages = op.attrs["stages"]
    rings[op.attrs["buffer"]] = (offset, tile, stage_bytes if stages > 1 else 0)
    ctx.ring_end = offset + stages * stage_bytes
    if op.attrs.get("keep"):  # read by later loops too: their rings start after it
        assert offset == ctx.floor, "a kept buffer is allocated before its loop's rings"
        ctx.floor = ctx.ring_end
    scratch_after_rings(ctx)


def scratch_after_rings(ctx: LoweringContext) -> None:
    """Reserve shared memory up to ``ctx.ring_end`` and put the scratch area after it."""
    ctx.scratch_base = 0
    reserve_tiles(ctx, ctx.ring_end)
    ctx.scratch_base = align_tile(ctx.ring_end)
    glob, base = smem_global(ctx), ctx.scratch_base
    ctx.smem = ctx.cached(
        ("scratch", base), lambda b: b.gep(glob, [_i32(ctx, base)], source_etype=ir.IntType(8))
    )


@lowering(LocalDeallocOp)
def lower_local_dealloc(ctx: LoweringContext, op: Operation) -> None:
    release_rings(ctx)


def release_rings(ctx: LoweringContext) -> None:
    """The rings are free: scratch space starts after the kept tiles again (if any)."""
    ctx.ring_end = ctx.floor
    if ctx.floor:
        scratch_after_rings(ctx)
        return
    ctx.scratch_base = 0
    ctx.smem = smem_global(ctx)


def _slot_base(ctx: LoweringContext, buffer: int, slot: ir.Value) -> tuple[SharedTile, ir.Value]:
    offset, tile, stage_bytes = ctx.rings[buffer]
    if stage_bytes == 0:  # a one-stage buffer
        return tile, _i32(ctx, offset)
    if slot.type != T.I32:
        slot = ctx.b.trunc(slot, T.I32)
    return tile, ctx.b.add(_i32(ctx, offset), ctx.b.mul(slot, _i32(ctx, stage_bytes)))


@lowering(AsyncCopyOp)
def lower_async_copy(ctx: LoweringContext, op: Operation) -> None:
    ptr_v = op.operands[0]
    mask_v = op.operands[3] if len(op.operands) > 3 else None
    ptrs = ctx.tensor(ptr_v)
    masks = ctx.tensor(mask_v).vals if mask_v is not None else None
    pred = ctx.get(op.operands[1])
    tile, base = _slot_base(ctx, op.attrs["buffer"], ctx.get(op.operands[2]))
    base = ctx.b.add(base, smem_addr(ctx))
    layout = ptrs.layout
    vec = vector_width(ctx, ptr_v, mask_v, layout)
    nbytes = vec * tile.eb
    if nbytes not in (4, 8, 16):
        raise ValueError(f"cp.async of {nbytes} bytes")
    cache = "cg" if nbytes == 16 else "ca"
    text = f"cp.async.{cache}.shared.global [$0], [$1], {nbytes}, $2;"
    toff = ctx.thread_offsets(layout)
    coords = layout.reg_coords()
    contig = getattr(tile, "contig", 1)  # an mma.sync ring tile is row-major
    rd, cd = 1 - contig, contig
    steps = register_steps(tile, layout, vec, (rd, cd))
    sources = _register_pointers(ctx, ptr_v, ptrs.vals, layout, vec)
    first = ctx.b.add(base, ring_offset(ctx, tile, toff[rd], toff[cd]))
    if sum(s is not None for s in steps) > 1:
        # Opaque to LLVM: otherwise it reassociates each ``first + step`` into a
        # loop-invariant register of its own plus the slot, one add per copy.
        first = opaque(ctx, first)
    for r in range(0, layout.num_regs, vec):
        c = coords[r]
        step = steps[r]
        if step is not None:  # the first register's address plus a constant (an immediate)
            dst = ctx.b.add(first, _i32(ctx, step))
        else:
            row = ctx.b.add(toff[rd], _i32(ctx, c[rd]))
            col = ctx.b.add(toff[cd], _i32(ctx, c[cd]))
            dst = ctx.b.add(base, ring_offset(ctx, tile, row, col))
        ok = pred if masks is None else ctx.b.and_(pred, masks[r])
        ok = check_access(ctx, op, layout, ptrs.vals, r, vec, ok)
        size = ctx.b.select(ok, _i32(ctx, nbytes), _i32(ctx, 0))
        asm(ctx, text, "r,l,r", T.VOID, [dst, sources[r], size])


def _register_pointers(
    ctx: LoweringContext, ptr_v: Value, vals: list[ir.Value], layout: Layout, vec: int
) -> list[ir.Value]:
    """Each copy's global pointer: the first one's plus a step, where the strides are known.

    A tile at a run-time row offset would otherwise cost each copy its own
    64-bit multiply in the loop (LLVM strength-reduces some loops, not all);
    Triton's copies likewise step one pointer per thread.
    """
    strides = dim_strides(ptr_v)
    if strides is None:
        return vals
    pointee = T.pointee_of(ptr_v.type)
    ety = T.I8 if pointee.is_bool() else T.ll_type(pointee)
    out = list(vals)
    for r, c in enumerate(layout.reg_coords()):
        if r % vec or r == 0:
            continue
        delta: ir.Value = ir.Constant(T.I64, 0)
        for d, n in enumerate(c):
            if n:
                delta = ctx.b.add(delta, _times(ctx, strides[d], n))
        out[r] = ctx.b.gep(vals[0], [delta], source_etype=ety)
    return out


def _times(ctx: LoweringContext, stride, n: int) -> ir.Value:  # noqa: ANN001
    """``stride * n`` as i64 (``stride``: an int or a scalar IR value)."""
    if isinstance(stride, int):
        return ir.Constant(T.I64, stride * n)
    v = ctx.get(stride)
    if v.type != T.I64:  # a narrower integer the analysis saw widened: widen it the same way
        unsigned = isinstance(stride.type, ScalarType) and stride.type.is_unsigned()
        v = ctx.b.zext(v, T.I64) if unsigned else ctx.b.sext(v, T.I64)
    return ctx.b.mul(v, ir.Constant(T.I64, n))


def register_steps(
    tile: SharedTile | MmaTile, layout: Layout, vec: int, dims: tuple[int, int]
) -> list[int | None]:
    """Per register (each ``vec``-th): how far its byte offset in ``tile`` is from register 0's.

    An entry is that distance where it is one constant for every thread of
    the CTA, else None. The swizzle XORs a row's phase into its 16-byte
    units, so a register ``8`` rows further on (128-byte swizzle) lands at a
    fixed distance, and the copies then share one address register plus
    immediates, as Triton's do; checked here over every thread, exactly.
    """
    rd, cd = dims
    where = tile.physical if isinstance(tile, SharedTile) else tile.offset
    threads = layout.thread_coords()
    coords = layout.reg_coords()
    starts = [where(t[rd], t[cd]) for t in threads]
    steps: list[int | None] = [None] * layout.num_regs
    for r in range(0, layout.num_regs, vec):
        c = coords[r]
        moved = {where(t[rd] + c[rd], t[cd] + c[cd]) - s for t, s in zip(threads, starts)}
        if len(moved) == 1:
            steps[r] = moved.pop()
    return steps


def ring_offset(ctx: LoweringContext, tile, row: ir.Value, col: ir.Value) -> ir.Value:  # noqa: ANN001
    """Byte offset of (row, col) in a ring tile: ``wgmma``'s, or an ``MmaTile``."""
    if isinstance(tile, SharedTile):
        return tile_physical(ctx, tile, row, col)
    return tile.emit_offset(ctx.b, row, col)


@lowering(AsyncCommitGroupOp)
def lower_async_commit_group(ctx: LoweringContext, op: Operation) -> None:
    asm(ctx, "cp.async.commit_group;", "", T.VOID, [])


@lowering(AsyncWaitOp)
def lower_async_wait(ctx: LoweringContext, op: Operation) -> None:
    asm(ctx, f"cp.async.wait_group {op.attrs['num']};", "", T.VOID, [])
    if ctx.arch.startswith("sm_90"):
        # wgmma reads through the async proxy: make the copied bytes visible to it.
        fence_proxy_async(ctx)


@lowering(WarpGroupDotOp)
def lower_warp_group_dot(ctx: LoweringContext, op: Operation) -> T.RegTile:
    acc = ctx.tensor(op.operands[0])
    slot = ctx.get(op.operands[1])
    shape = shape_of_async_dot(op, ctx.num_warps)
    # The descriptors of slot 0 do not change in the loop; a slot's are those plus
    # slot * stage bytes / 16 (the start address field), one add per operand.
    b_tile, b_offset, b_slot = _slot_parts(ctx, op.attrs["b"], slot)
    deltas = {"b": b_slot}
    a: tuple
    if op.attrs["a"] >= 0:
        a_tile, a_offset, deltas["a"] = _slot_parts(ctx, op.attrs["a"], slot)
        a = (a_tile, a_offset)
    else:
        a = _a_from_registers(ctx, shape, op.operands[2])
    f16_acc = element_type(op.operands[0].type) == F16
    imprecise = op.attrs.get("max_num_imprecise_acc")
    out = wgmma(ctx, shape, acc.vals, a, (b_tile, b_offset), deltas, f16_acc, imprecise)
    return T.RegTile(acc.layout, out)


def _slot_parts(
    ctx: LoweringContext, buffer: int, slot: ir.Value
) -> tuple[SharedTile, int, ir.Value | None]:
    """A ring's tile, its first slot's byte offset, and what ``slot`` adds to a descriptor.

    Shared memory is under 256 KB, so a descriptor's 14-bit start field (in
    16-byte units) never carries: adding ``slot * stage_bytes / 16`` moves it.
    """
    offset, tile, stage_bytes = ctx.rings[buffer]
    if stage_bytes == 0:  # a one-stage buffer
        return tile, offset, None
    if slot.type != T.I32:
        slot = ctx.b.trunc(slot, T.I32)
    units = ctx.b.mul(slot, _i32(ctx, stage_bytes // 16))
    return tile, offset, ctx.b.zext(units, T.I64)


def _a_from_registers(ctx: LoweringContext, shape: WgmmaShape, v) -> tuple:
    """A computed in the loop: used in place if its layout allows, else staged to scratch."""
    t = ctx.tensor(v)
    regs = register_a_operand(shape, t.layout, ctx.num_warps)
    if regs is not None:
        return (regs, t.vals)
    tile = shape.a_tile()
    reserve_tiles(ctx, tile.nbytes)
    ctx.barrier()
    stage_tile(ctx, t, element_type(v.type), tile, 0)
    fence_proxy_async(ctx)
    ctx.barrier()
    return (tile, ctx.scratch_base)


@lowering(LocalStoreOp)
def lower_local_store(ctx: LoweringContext, op: Operation) -> None:
    t = ctx.tensor(op.operands[0])
    offset, tile, _ = ctx.rings[op.attrs["buffer"]]
    st = element_type(op.operands[0].type)
    scratch, ctx.smem = ctx.smem, smem_global(ctx)
    stage_tile(ctx, t, st, tile, offset)
    ctx.smem = scratch
    fence_proxy_async(ctx)


@lowering(WarpGroupDotWaitOp)
def lower_warp_group_dot_wait(ctx: LoweringContext, op: Operation) -> T.RegTile:
    acc = ctx.tensor(op.operands[0])
    f16_acc = element_type(op.operands[0].type) == F16
    return T.RegTile(acc.layout, wgmma_wait(ctx, acc.vals, op.attrs["pendings"], f16_acc))


def wgmma(
    ctx: LoweringContext,
    shape: WgmmaShape,
    acc: list[ir.Value],
    a: tuple[SharedTile, int | ir.Value] | tuple[RegisterA, list[ir.Value]],
    b: tuple[SharedTile, int | ir.Value],
    deltas: dict[str, ir.Value | None] | None = None,
    f16_acc: bool = False,
    imprecise: int | None = None,
) -> list[ir.Value]:
    """Issue and commit the instructions of one dot.

    ``b`` and a shared ``a`` are (tile, byte base); a register ``a`` is
    (:class:`RegisterA`, its registers). ``deltas`` holds, per operand
    (``"a"``, ``"b"``), an i64 to add to each of its descriptors (a ring slot's).
    ``f16_acc``: an fp16 accumulator, returned packed (``.f16x2``).
    ``imprecise``: an fp8 dot's ``max_num_imprecise_acc`` (see
    :func:`_issue_in_parts`); its result comes back complete.
    """
    moved = deltas or {}

    def plus(desc: ir.Value, operand: str) -> ir.Value:
        delta = moved.get(operand)
        return desc if delta is None else ctx.b.add(desc, delta)

    g = ctx.b.lshr(ctx.uniform_warp, _i32(ctx, 2))
    g_m = ctx.b.and_(g, _i32(ctx, shape.wg_m - 1))
    g_n = ctx.b.lshr(g, _i32(ctx, shape.wg_m.bit_length() - 1))
    b_k_major = b[0].contig == 0
    # Every operand (A's registers, both descriptors) is computed before the fence:
    # ptxas would otherwise fence again ("warpgroup.arrive is injected") before each
    # wgmma whose registers were written after the last fence, serializing them.
    issues = []
    per = shape.instr_n // 2
    row_g = ctx.b.mul(g_m, _i32(ctx, 64))
    col_g = ctx.b.mul(g_n, _i32(ctx, shape.n_per_wg))
    # One descriptor per operand for the warpgroup; each instruction's is that one
    # plus a constant (as Triton does), where the tile's offsets are additive.
    a_desc = None
    a_m_major = not isinstance(a[0], RegisterA) and a[0].contig == 0
    if not isinstance(a[0], RegisterA):
        # (row, col) are (non-contiguous, contiguous) tile coordinates: (m, k), or (k, m).
        at = (_i32(ctx, 0), row_g) if a_m_major else (row_g, _i32(ctx, 0))
        assert not a_m_major or a[0].splits_at(64), "an M-major A tile too narrow for m64"
        a_desc = plus(_descriptor(ctx, a, *at), "a")
    b_split = b_k_major or shape.wg_n == 1 or b[0].splits_at(shape.n_per_wg)
    b_desc = None
    if b_split:
        b_desc = _descriptor(ctx, b, col_g, _i32(ctx, 0)) if b_k_major else \
            _descriptor(ctx, b, _i32(ctx, 0), col_g)  # fmt: skip
        b_desc = plus(b_desc, "b")
    for mi in range(shape.m_reps):
        row_c = shape.wg_m * 64 * mi
        for ni in range(shape.n_reps):
            col_c = shape.instr_n * ni
            lo = per * (ni + shape.n_reps * mi)
            for kk in range(shape.k // shape.k_step):
                k_c = kk * shape.k_step
                if isinstance(a[0], RegisterA):
                    da = _pack_a(ctx, a[0], a[1], mi, kk)
                else:
                    at_c = (k_c, row_c) if a_m_major else (row_c, k_c)
                    da = [_step(ctx, a_desc, a[0].linear(*at_c))]
                if b_desc is not None:
                    step = b[0].linear(col_c, k_c) if b_k_major else b[0].linear(k_c, col_c)
                    db = _step(ctx, b_desc, step)
                else:
                    n0 = ctx.b.add(col_g, _i32(ctx, col_c))
                    db = plus(_descriptor(ctx, b, _i32(ctx, k_c), n0), "b")
                issues.append((lo, da, db))
    if f16_acc:  # two fp16 values per register: the instructions' chunks halve
        acc, per = packed_registers(ctx, list(acc)), per // 2
        issues = [(lo // 2, da, db) for lo, da, db in issues]
    if imprecise is not None:
        return _issue_in_parts(ctx, shape, list(acc), issues, per, b_k_major, imprecise)
    asm(ctx, "wgmma.fence.sync.aligned;", "", T.VOID, [])
    out = list(acc)
    for lo, da, db in issues:
        chunk = out[lo : lo + per]
        out[lo : lo + per] = _wgmma_instr(
            ctx, shape, chunk, da, db, b_k_major, _zeros(chunk), f16_acc, a_m_major
        )
    asm(ctx, "wgmma.commit_group.sync.aligned;", "", T.VOID, [])
    return from_registers(out) if f16_acc else out


def _issue_in_parts(
    ctx: LoweringContext,
    shape: WgmmaShape,
    out: list[ir.Value],
    issues: list[tuple[int, list[ir.Value], ir.Value]],
    per: int,
    b_k_major: bool,
    limit: int,
) -> list[ir.Value]:
    """An fp8 dot whose products are summed in fp32 every ``limit`` along K.

    ``max_num_imprecise_acc``, as Triton's ``wgmma`` lowering: the tensor
    cores keep fp8 sums with fewer bits than fp32, so each run of instructions
    covering ``limit`` products along K (at least one instruction) writes fresh
    registers (scale-d 0), is waited for, and is added to the accumulator with
    one ``add.f32`` per register. The groups this leaves are all complete.
    """
    runs: dict[int, list[tuple[list[ir.Value], ir.Value]]] = {}
    for lo, da, db in issues:
        runs.setdefault(lo, []).append((da, db))
    per_run = max(1, -(-limit // shape.k_step))
    fuse = contract_flags(ctx)  # as the kernel's own adds
    for lo, instrs in runs.items():
        for start in range(0, len(instrs), per_run):
            asm(ctx, "wgmma.fence.sync.aligned;", "", T.VOID, [])
            part = out[lo : lo + per]
            for i, (da, db) in enumerate(instrs[start : start + per_run]):
                part = _wgmma_instr(ctx, shape, part, da, db, b_k_major, first=i == 0)
            asm(ctx, "wgmma.commit_group.sync.aligned;", "", T.VOID, [])
            done = wgmma_wait(ctx, out[lo : lo + per] + part, 0)
            total, part = done[:per], done[per:]
            if start == 0 and _zeros(out[lo : lo + per]):
                out[lo : lo + per] = part  # nothing to add to yet
            else:
                out[lo : lo + per] = [ctx.b.fadd(x, y, flags=fuse) for x, y in zip(total, part)]
    return out


def _zeros(chunk: list[ir.Value]) -> bool:
    """Whether an accumulator chunk is all constant zeros (a dot's first product)."""
    return all(isinstance(v, ir.Constant) and not v.constant for v in chunk)


def _descriptor(
    ctx: LoweringContext, tile_base: tuple[SharedTile, int | ir.Value], row: ir.Value, col: ir.Value
) -> ir.Value:
    tile, base = tile_base
    b = ctx.b
    base_v = base if isinstance(base, ir.Value) else _i32(ctx, base)
    addr = b.add(b.add(smem_addr(ctx), base_v), tile_linear(ctx, tile, row, col))
    start = b.and_(b.lshr(addr, _i32(ctx, 4)), _i32(ctx, 0x3FFF))
    return b.or_(b.zext(start, T.I64), ir.Constant(T.I64, tile.descriptor_bits()))


def _step(ctx: LoweringContext, desc: ir.Value | None, offset: int) -> ir.Value:
    """``desc`` moved on by ``offset`` bytes (a multiple of 16 inside shared memory).

    The start address is the descriptor's low 14 bits, in 16-byte units; shared
    memory is under 256 KB, so the sum never carries out of that field.
    """
    assert desc is not None and offset % 16 == 0
    return desc if offset == 0 else ctx.b.add(desc, ir.Constant(T.I64, offset >> 4))


def _wgmma_instr(
    ctx: LoweringContext,
    shape: WgmmaShape,
    chunk: list[ir.Value],
    da: list[ir.Value],
    db: ir.Value,
    b_k_major: bool,
    first: bool = False,
    f16_acc: bool = False,
    a_m_major: bool = False,
) -> list[ir.Value]:
    """One ``wgmma.mma_async``; ``da`` is A's descriptor, or its 4 registers.

    ``f16_acc``: ``chunk`` is the ``.f16x2`` registers of an fp16 accumulator.
    ``a_m_major``: A's tile is M-major (``tnspA`` = 1, 16-bit elements only).

    ``first``: the accumulator is zero, so the instruction does not read it
    (scale-d 0) and its registers need no zeroing; ``ptxas`` sees that only
    when the zeros stay visible to it, which a busy loop body can hide.
    """
    n = len(chunk)
    regs = ", ".join(f"${i}" for i in range(n))
    # D's registers are operands 0..n-1, then (when read) their inputs, then A and B.
    a0 = n if first else 2 * n
    nb = a0 + len(da)  # operand number of B's descriptor
    if len(da) == 1:
        a_text, a_cons = f"${a0}", ["l"]
    else:
        a_text = "{" + ", ".join(f"${a0 + i}" for i in range(len(da))) + "}"
        a_cons = ["r"] * len(da)
    tnsp_b = "0" if b_k_major else "1"
    tnsp_a = "1" if a_m_major else "0"
    trans = ", 1, 1" + ("" if len(da) > 1 else f", {tnsp_a}") + f", {tnsp_b}"
    tail = {"f16": trans, "bf16": trans, "tf32": ", 1, 1", "s8": "", "e4m3": ", 1, 1"}
    tail["e5m2"] = tail["e4m3"]
    scale_d = "0" if first else "1"  # 0: D = A * B, the registers are outputs only
    text = (
        f"wgmma.mma_async.sync.aligned.m64n{shape.instr_n}k{shape.k_step}."
        f"{shape.ptx_types(f16_acc)} {{{regs}}}, {a_text}, ${nb}, {scale_d}{tail[shape.kind]};"
    )
    con = "r" if shape.kind == "s8" or f16_acc else "f"
    tied = [] if first else [str(i) for i in range(n)]
    cons = ",".join([f"={con}"] * n + tied + a_cons + ["l"])
    ret = ir.LiteralStructType([chunk[0].type] * n)
    inputs = [] if first else chunk
    res = asm(ctx, text, cons, ret, [*inputs, *da, db])
    return [ctx.b.extract_value(res, i) for i in range(n)]


def _pack_a(
    ctx: LoweringContext, ra: RegisterA, vals: list[ir.Value], mi: int, kk: int
) -> list[ir.Value]:
    """A's four 32-bit fragment registers of instruction row block ``mi``, K step ``kk``."""
    start = ra.first_register(mi, kk)
    out = []
    for i in range(4):
        pair = vals[start + 2 * i : start + 2 * i + 2]
        vec = ir.Constant(ir.VectorType(pair[0].type, 2), None)
        for j, v in enumerate(pair):
            vec = ctx.b.insert_element(vec, v, _i32(ctx, j))
        out.append(ctx.b.bitcast(vec, T.I32))
    return out


def wgmma_wait(
    ctx: LoweringContext, acc: list[ir.Value], pending: int, f16_acc: bool = False
) -> list[ir.Value]:
    """``wgmma.wait_group pending``; the accumulator registers pass through it.

    An fp16 accumulator passes packed; once no group is left in flight
    (``pending == 0``) it comes out as one fp16 value per register.
    """
    if f16_acc:
        acc = packed_registers(ctx, list(acc))
    n = len(acc)
    con = "r" if isinstance(acc[0].type, ir.IntType) else "f"
    cons = ",".join([f"={con}"] * n + [str(i) for i in range(n)])
    ret = ir.LiteralStructType([acc[0].type] * n)
    res = asm(ctx, f"wgmma.wait_group.sync.aligned {pending};", cons, ret, list(acc))
    out = [ctx.b.extract_value(res, i) for i in range(n)]
    if not f16_acc:
        return out
    packed = from_registers(out)
    return as_halves(ctx, packed) if pending == 0 else packed


# ------------------------------------------------------------ epilogue
def convert_from_accumulator(ctx: LoweringContext, op: Operation) -> T.RegTile | None:
    """A conversion out of a ``wgmma`` accumulator, with vector accesses (else None)."""
    src = ctx.tensor(op.operands[0])
    st = element_type(op.result.type)
    # Masks (i1, a byte in memory) take the element-wise path, which converts them.
    bool_mask = isinstance(st, ScalarType) and st.is_bool()
    if not is_mma_layout(src.layout) or src.layout.rank != 2 or bool_mask:
        return None  # not an accumulator: an ordinary conversion
    return convert_accumulator(ctx, src, st, ctx.layout(op.result))


def convert_accumulator(
    ctx: LoweringContext, src: T.RegTile, st: T.ElemType, dst: Layout
) -> T.RegTile:
    """Accumulator -> ``dst`` through a padded row-major buffer, with vector accesses."""
    mt = T.mem_type(st)
    eb = T.byte_size(st)
    m, n = src.layout.shape
    _, w_run = src.layout.contiguous_run()
    w_vec = max(1, min(w_run, 16 // eb))
    pad = max(16, 4 * w_vec * eb) // eb
    stride = n + pad
    ctx.reserve(m * stride * eb)
    ctx.barrier()
    _vector_pass(
        ctx,
        src.layout,
        w_vec,
        stride,
        eb,
        lambda off, r: store_shared_vector(ctx, off, src.vals[r : r + w_vec], mt),
    )
    ctx.barrier()
    dim, run = dst.contiguous_run()
    r_vec = max(1, min(run, 16 // eb)) if dim == 1 else 1
    vals: list[ir.Value] = []
    _vector_pass(
        ctx,
        dst,
        r_vec,
        stride,
        eb,
        lambda off, r: vals.extend(load_shared_vector(ctx, off, r_vec, mt)),
    )
    return T.RegTile(dst, vals)


def _vector_pass(
    ctx: LoweringContext, layout: Layout, vec: int, stride: int, eb: int, access
) -> None:
    toff = ctx.thread_offsets(layout)
    base = ctx.b.add(ctx.b.mul(toff[0], _i32(ctx, stride)), toff[1])
    coords = layout.reg_coords()
    for r in range(0, layout.num_regs, vec):
        c = coords[r]
        lin = ctx.b.add(base, _i32(ctx, c[0] * stride + c[1]))
        access(ctx.b.mul(lin, _i32(ctx, eb)), r)


class RegisterA:
    """Where the A fragments of a ``wgmma`` with A in registers sit in A's registers.

    A block in an accumulator layout (attention's ``P``, computed by the
    previous dot) already holds, in each thread, the A fragment of
    ``wgmma``: the eight registers of columns ``16 kk .. 16 kk + 15`` of
    row block ``mi`` are ``a0..a3`` in order (pairs of columns, rows
    ``l/4`` and ``l/4 + 8``), so no data moves.
    """

    def __init__(self, layout_shape: WgmmaShape) -> None:
        self.src = layout_shape

    def first_register(self, mi: int, kk: int) -> int:
        """Index of the first of the eight registers of (mi, kk)."""
        src = self.src
        col = 16 * kk
        ni, within = divmod(col, src.instr_n)
        return src.instr_n // 2 * (ni + src.n_reps * mi) + 8 * (within // 16)


def register_a_operand(shape: WgmmaShape, layout: Layout, num_warps: int) -> RegisterA | None:
    """A :class:`RegisterA` if A (in ``layout``) can feed ``wgmma`` from registers."""
    if shape.kind not in ("f16", "bf16") or not is_mma_layout(layout):
        return None
    src = shape_for(shape.m, shape.k, 16, shape.kind, num_warps)
    if src is None or src.wg_n != 1 or src.wg_m != shape.wg_m or src.m_reps != shape.m_reps:
        return None
    return RegisterA(src) if accumulator_layout(src) == layout else None


def _contig_dim(layout: Layout) -> int:
    dim, run = layout.contiguous_run()
    return dim if run > 1 else 1


def _bytes(mt: ir.Type) -> int:
    if isinstance(mt, ir.IntType):
        return max(1, mt.width // 8)
    if isinstance(mt, ir.HalfType):
        return 2
    if isinstance(mt, ir.FloatType):
        return 4
    return 8
