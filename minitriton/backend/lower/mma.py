"""Tensor cores with ``mma.sync`` (sm_80 and later): operand staging and the dot.

Two lowerings, for the ops :mod:`minitriton.backend.mma_plan` set up:

* ``ttg.convert_layout`` to a dot-operand layout. The operand's registers
  (a blocked layout, 16 bytes per thread along a row) are written to a
  row-major shared-memory tile whose 16-byte units are *swizzled*: unit
  ``u`` of row ``r`` is stored at unit ``u ^ phase(r)``, so the eight rows
  that one ``ldmatrix`` phase reads fall in eight different bank groups
  (:class:`MmaTile`). After a barrier, A (``[M, K]``) comes back with
  ``ldmatrix.x4`` (one m16 x k instruction fragment per call, for every
  element type), 16-bit B (``[K, N]``) with ``ldmatrix.x4.trans`` (two n8
  fragments per call: B's fragment holds K-consecutive pairs, across the
  rows of the tile). tf32 and int8 B, whose fragments ``ldmatrix.trans``
  cannot produce, are read with plain ``ld.shared`` in the fragment layout.
  A pipelined K-major B (a ring tile stored transposed, one row per ``n``)
  is read with plain ``ldmatrix.x4`` for every element type, like A.
* ``tt.dot``: for each k step, each m16 and each n8 tile of a warp, one
  ``mma.sync.aligned.m16n8k16`` (fp16, bf16), ``m16n8k8`` (tf32: the fp32 bits go
  to the tensor cores unconverted, as Triton hands them over) or ``m16n8k32`` (int8,
  int32 accumulators) as inline PTX. Fragment registers pack ``32 / bits``
  K-consecutive elements each. An fp16 accumulator (``out_dtype=tl.float16``
  or an fp16 ``acc`` of fp16 operands) takes the fp16-accumulating form,
  ``mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16``: C and D are two
  ``.f16x2`` registers (columns ``2c, 2c + 1`` of rows ``r`` and ``r + 8``,
  the lower column in the lower half), packed once before the dot's
  instructions and unpacked once after them, so the sum is rounded to fp16
  after every k16 step, as on the hardware.

When the conversion feeds the dot right after it (the usual case: a tile
loaded in a loop), it only writes the tile and the dot reads the fragments
of one k step at a time, right before their instructions: A and B share one
barrier pair per iteration (A's tile at offset 0, B's after it), and only one
step's fragments are live. A conversion used elsewhere too, or hoisted out
of the loop (attention's ``q``), reads all its fragments into registers.

The registers of a dot-operand layout are in fragment order (see the
layouts' docstring), so fragment element ``e`` of tile ``(i, j)`` is the
register whose coordinate is the fragment's ``e``-th plus the tile origin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from llvmlite import ir

from minitriton.backend.irutil import parent_block
from minitriton.backend.layouts import Layout, _combine, _fragment, mma_instr_k
from minitriton.backend.lltypes import (
    F16_T,
    F32_T,
    I8,
    I16,
    I32,
    RegTile,
    byte_size,
    ll_type,
)
from minitriton.backend.lower.f16acc import as_halves, as_packed
from minitriton.backend.lower.wgmma import _slot_base, smem_global
from minitriton.backend.mma_plan import MmaDot
from minitriton.backend.ops import LocalLoadOp
from minitriton.backend.registry import lowering
from minitriton.backend.shared_layout import MmaTile, align_tile, ring_tile
from minitriton.ir.core import Operation, use_counts
from minitriton.ir.ops import DotOp
from minitriton.ir.types import BF16, F8E4NV, F8E5, F16, F32, ScalarType, element_type
from minitriton.ir.types import I8 as S8

if TYPE_CHECKING:
    from minitriton.backend.lower.context import LoweringContext


_MMA_PTX = {
    "f16": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    "f16acc": "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
    "bf16": "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    "tf32": "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
    "s8": "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32",  # as Triton: saturating
    "e4m3": "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
    "e5m2": "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32",
}


def _c(v: int) -> ir.Constant:
    return ir.Constant(I32, v)


@dataclass(frozen=True)
class Staged:
    """A dot operand waiting in its shared-memory tile (read fragment by fragment by the dot)."""

    mma: MmaDot
    op_idx: int
    tile: MmaTile
    base: int
    #: A pipelined operand: the byte offset of its ring slot (run time), from the buffer's start.
    slot: ir.Value | None = None


def convert_to_dot_operand(ctx: LoweringContext, op: Operation) -> RegTile | Staged | None:
    """A conversion into an ``mma.sync`` operand: staged in its swizzled tile (else None)."""
    target = ctx.plan.dot_operands.get(id(op.result))
    if target is None:
        return None  # not a dot operand: an ordinary conversion
    mma, op_idx = target
    staged = stage_operand(ctx, ctx.tensor(op.operands[0]), mma, op_idx)
    if _feeds_next_op_only(ctx, op):
        return staged  # the dot reads its fragments one k step at a time
    return materialize(ctx, staged)


def _feeds_next_op_only(ctx: LoweringContext, op: Operation) -> bool:
    """True when the conversion's one user is the dot just after it (or after B's)."""
    if ctx.mma_uses is None:
        ctx.mma_uses = use_counts(ctx.kernel)
    if ctx.mma_uses.get(id(op.result), 0) != 1:
        return False
    ops = parent_block(op).ops
    for later in ops[ops.index(op) + 1 :]:
        if isinstance(later, DotOp):
            return op.result in later.operands
        if not (later.results and id(later.results[0]) in ctx.plan.dot_operands):
            return False
    return False


# ------------------------------------------------------------ pipelined rings
def alloc_mma_ring(ctx: LoweringContext, op: Operation) -> None:
    """A ``ttg.local_alloc`` of ``mma.sync``'s swizzled tiles (``tile = "swizzled"``)."""
    rings = ctx.rings
    tile = ring_tile(
        op.attrs["shape"], byte_size(ScalarType(op.attrs["dtype"])), op.attrs.get("contig", 1)
    )
    stage_bytes = (tile.nbytes + 127) // 128 * 128
    stages = op.attrs["stages"]
    offset = ctx.ring_end
    rings[op.attrs["buffer"]] = (offset, tile, stage_bytes if stages > 1 else 0)
    ctx.ring_end = offset + stages * stage_bytes
    ctx.scratch_base = 0
    ctx.reserve(ctx.ring_end)
    glob = smem_global(ctx)
    glob.align = max(glob.align or 16, 128)
    base = ctx.scratch_base = align_tile(ctx.ring_end)  # wgmma's tiles may follow
    ctx.smem = ctx.cached(("scratch", base), lambda b: b.gep(glob, [_c(base)], source_etype=I8))
    return None


@lowering(LocalLoadOp)
def lower_local_load(ctx: LoweringContext, op: Operation) -> Staged | RegTile:
    """A ring operand: an ``mma.sync`` dot reads its fragments from this iteration's slot.

    For a ``wgmma`` dot that restages its operands (tf32, int8, fp8: B
    K-major), the slot is read into registers of the value's layout.
    """
    tile, slot = _slot_base(ctx, op.attrs["buffer"], ctx.get(op.operands[0]))
    assert isinstance(tile, MmaTile)
    target = ctx.plan.dot_operands.get(id(op.result))
    if target is not None:
        return Staged(target[0], target[1], tile, 0, slot)
    assert tile.contig == 1, "a K-major ring feeds an mma.sync dot only"
    layout = ctx.layout(op.result)
    dim, run = layout.contiguous_run()
    vec = min(run, tile.unit) if dim == 1 else 1
    toff = ctx.thread_offsets(layout)
    coords = layout.reg_coords()
    st = element_type(op.result.type)
    vals: list[ir.Value] = []
    for r in range(0, layout.num_regs, vec):
        row = ctx.b.add(toff[0], _c(coords[r][0]))
        col = ctx.b.add(toff[1], _c(coords[r][1]))
        off = ctx.b.add(tile.emit_offset(ctx.b, row, col), slot)
        ptr = ctx.b.gep(smem_global(ctx), [off], source_etype=I8)
        vals += _load_vec(ctx, ptr, vec, ll_type(st), tile.eb)
    return RegTile(layout, vals)


def _load_vec(ctx: LoweringContext, ptr: ir.Value, n: int, ty: ir.Type, eb: int) -> list[ir.Value]:
    if n == 1:
        return [ctx.b.load(ptr, typ=ty, align=eb)]
    v = ctx.b.load(ptr, typ=ir.VectorType(ty, n), align=eb * n)
    return [ctx.b.extract_element(v, _c(i)) for i in range(n)]


def _staged_ptr(ctx: LoweringContext, staged: Staged, off: ir.Value) -> ir.Value:
    """Where byte ``off`` of a staged tile is (scratch, or the ring slot)."""
    if staged.slot is None:
        return ctx.b.gep(ctx.smem, [off], source_etype=I8)
    off = ctx.b.add(off, staged.slot)
    return ctx.b.gep(smem_global(ctx), [off], source_etype=I8)


# ------------------------------------------------------------ staging
def stage_operand(ctx: LoweringContext, src: RegTile, mma: MmaDot, op_idx: int) -> Staged:
    """Write an operand into its swizzled tile (A at offset 0, B after A's tile)."""
    st = mma_element(mma.kind)
    eb = byte_size(st)
    rows, cols = (mma.a if op_idx == 0 else mma.b).shape
    tile = MmaTile(rows, cols, eb)
    a_rows, a_cols = mma.a.shape
    base = 0 if op_idx == 0 else (a_rows * a_cols * eb + 15) // 16 * 16
    ctx.reserve(base + tile.nbytes)
    if not ctx.mma_pending:
        ctx.barrier()  # earlier readers of the buffer are done
    _write_tile(ctx, src, tile, base)
    ctx.mma_pending = True
    return Staged(mma, op_idx, tile, base)


def _sync_staged(ctx: LoweringContext) -> None:
    if ctx.mma_pending:
        ctx.barrier()
        ctx.mma_pending = False


def materialize(ctx: LoweringContext, staged: Staged) -> RegTile:
    """Read a whole staged operand into registers in its dot-operand layout."""
    _sync_staged(ctx)
    mma, op_idx = staged.mma, staged.op_idx
    dst = mma.a if op_idx == 0 else mma.b
    vals: list[ir.Value | None] = [None] * dst.num_regs
    steps, tiles = _tile_counts(mma, op_idx)
    for ki in range(steps):
        for ti, regs in staged_fragments(ctx, staged, ki, tiles).items():
            _scatter(ctx, mma, op_idx, regs, _origin(mma, op_idx, ki, ti), vals)
    return RegTile(dst, vals)


def _write_tile(ctx: LoweringContext, src: RegTile, tile: MmaTile, base: int) -> None:
    layout = src.layout
    dim, run = layout.contiguous_run()
    vec = min(run, tile.unit) if dim == 1 else 1
    toff = ctx.thread_offsets(layout)
    coords = layout.reg_coords()
    for r in range(0, layout.num_regs, vec):
        row = ctx.b.add(toff[0], _c(coords[r][0]))
        col = ctx.b.add(toff[1], _c(coords[r][1]))
        off = ctx.b.add(tile.emit_offset(ctx.b, row, col), _c(base))
        _store_vec(ctx, off, src.vals[r : r + vec], tile.eb)


def _store_vec(ctx: LoweringContext, off: ir.Value, vals: list[ir.Value], eb: int) -> None:
    ptr = ctx.b.gep(ctx.smem, [off], source_etype=I8)
    if len(vals) == 1:
        ctx.b.store(vals[0], ptr, align=eb)
        return
    vec = ir.Constant(ir.VectorType(vals[0].type, len(vals)), None)
    for i, v in enumerate(vals):
        vec = ctx.b.insert_element(vec, v, _c(i))
    ctx.b.store(vec, ptr, align=eb * len(vals))


# ------------------------------------------------------------ fragments from the tile
def staged_fragments(ctx: LoweringContext, staged: Staged, ki: int, tiles: int) -> dict[int, list]:
    """The packed 32-bit registers of k step ``ki`` for each m16 (A) or n8 (B) tile."""
    if staged.op_idx == 0:
        read_a = _ldmatrix_a_m_major if staged.tile.contig == 0 else _ldmatrix_a
        return {mi: read_a(ctx, staged, mi, ki) for mi in range(tiles)}
    if staged.tile.contig == 0:  # a K-major ring tile: plain ldmatrix, every element type
        return _ldmatrix_b_k_major(ctx, staged, ki, tiles)
    if staged.mma.bits == 16:
        return _ldmatrix_b(ctx, staged, ki, tiles)
    return {ni: _scalar_b(ctx, staged, ki, ni) for ni in range(tiles)}


def warp_offset(ctx: LoweringContext, layout: Layout, dim: int) -> ir.Value:
    """This warp's coordinate offset along ``dim`` (lane bits left out)."""

    def make(b: ir.IRBuilder) -> ir.Value:
        total: ir.Value = _c(0)
        for bit, basis in enumerate(layout.warp_bases):
            if basis[dim]:
                flag = b.and_(b.lshr(ctx.warp, _c(bit)), _c(1))
                total = b.or_(total, b.mul(flag, _c(basis[dim])))
        return total

    return ctx.cached(("woff", layout, dim), make)


def _ldmatrix_lane(ctx: LoweringContext) -> tuple[ir.Value, ir.Value, ir.Value]:
    """The row this lane addresses in its 8x8 matrix, and the matrix index bits."""
    r = ctx.cached("ldm_r", lambda b: b.and_(ctx.lane, _c(7)))
    j0 = ctx.cached("ldm_j0", lambda b: b.and_(b.lshr(ctx.lane, _c(3)), _c(1)))
    j1 = ctx.cached("ldm_j1", lambda b: b.lshr(ctx.lane, _c(4)))
    return r, j0, j1


def _ldmatrix(
    ctx: LoweringContext, staged: Staged, at: tuple, n: int, trans: bool
) -> list[ir.Value]:
    """``ldmatrix.x{n}`` from the lane's ``(row, col, whole rows to add)`` in the tile.

    The rows added are a multiple of 8 (a whole swizzle period), so they do
    not change the phase: they become the instruction's immediate offset
    and tiles that differ only in them share one address register.
    """
    row, col, more_rows = at
    assert more_rows % 8 == 0
    b = ctx.b
    off = staged.tile.emit_offset(b, row, col)
    imm = staged.base + more_rows * staged.tile.cols * staged.tile.eb
    # A 32-bit shared-window address: half the registers of a 64-bit one.
    ptr = b.ptrtoint(_staged_ptr(ctx, staged, off), I32)
    outs = ", ".join(f"${i}" for i in range(n))
    shape = f"x{n}.trans" if trans else f"x{n}"
    asm = f"ldmatrix.sync.aligned.m8n8.{shape}.shared.b16 {{{outs}}}, [${n}+{imm}];"
    ret = ir.LiteralStructType([I32] * n)
    fn = ir.InlineAsm(ir.FunctionType(ret, [I32]), asm, ",".join(["=r"] * n + ["r"]), True)
    res = b.call(fn, [ptr])
    return [b.extract_value(res, i) for i in range(n)]


def _ldmatrix_a(ctx: LoweringContext, staged: Staged, mi: int, ki: int) -> list[ir.Value]:
    # Matrix j of the x4: rows 8 (j & 1) of the m16 tile, 16-byte unit (j >> 1) of the k step.
    mma = staged.mma
    r, j0, j1 = _ldmatrix_lane(ctx)
    b = ctx.b
    lane_row = b.add(b.add(warp_offset(ctx, mma.a, 0), r), b.mul(j0, _c(8)))
    row0, col0 = _origin(mma, 0, ki, mi)
    col = b.add(b.mul(j1, _c(staged.tile.unit)), _c(col0))
    return _ldmatrix(ctx, staged, (lane_row, col, row0), 4, False)


def _ldmatrix_a_m_major(ctx: LoweringContext, staged: Staged, mi: int, ki: int) -> list[ir.Value]:
    """16-bit A from an M-major tile (one row per ``k``): ``ldmatrix.trans``.

    Register ``a_j`` holds rows ``8 (j & 1)`` and k ``8 (j >> 1)`` of the
    m16 x k16 fragment, two K-consecutive elements of row ``lane / 4``: in a
    tile whose rows are A's columns, ``.trans`` hands each lane exactly that
    from the 8 x 8 matrix at tile row ``k0 + 8 (j >> 1)``, unit ``m0 + 8 (j & 1)``.
    The k step's rows (a multiple of 8) go into the immediate offset.
    """
    mma = staged.mma
    r, j0, j1 = _ldmatrix_lane(ctx)
    b = ctx.b
    row0, col0 = _origin(mma, 0, ki, mi)
    k_row = b.add(r, b.mul(j1, _c(8)))
    m_col = b.add(b.add(warp_offset(ctx, mma.a, 0), _c(row0)), b.mul(j0, _c(8)))
    return _ldmatrix(ctx, staged, (k_row, m_col, col0), 4, True)


def _ldmatrix_b(ctx: LoweringContext, staged: Staged, ki: int, tiles: int) -> dict[int, list]:
    # .trans: matrix j holds k rows 8 (j & 1) of the k16 step for n8 tile ni + (j >> 1).
    mma = staged.mma
    wn = mma.params.wpc[1]
    r, j0, j1 = _ldmatrix_lane(ctx)
    b = ctx.b
    row = b.add(r, b.mul(j0, _c(8)))
    out = {}
    for ni in range(0, tiles, 2):
        pair = ni + 1 < tiles
        col = b.add(warp_offset(ctx, mma.b, 1), _c(ni * 8 * wn))
        if pair:
            col = b.add(col, b.mul(j1, _c(8 * wn)))
        regs = _ldmatrix(ctx, staged, (row, col, ki * 16), 4 if pair else 2, True)
        out[ni] = regs[:2]
        if pair:
            out[ni + 1] = regs[2:]
    return out


def _ldmatrix_b_k_major(
    ctx: LoweringContext, staged: Staged, ki: int, tiles: int
) -> dict[int, list]:
    """B from a K-major tile (one row per ``n``): ``ldmatrix`` without ``.trans``.

    B's register ``b_r`` holds ``32 / bits`` K-consecutive elements at
    ``k = (lane % 4) * 32 / bits + r * 16 / eb`` of column ``n = lane / 4``:
    in a tile whose rows are B's columns that is 32-bit word ``lane % 4``
    of row ``lane / 4``, 16-byte unit ``r`` of the k step, which is what a
    plain ``ldmatrix`` hands each lane, for 16-bit, tf32 and 8-bit elements
    alike. Matrix ``j`` of an ``x4`` is unit ``j & 1`` of n8 tile
    ``ni + (j >> 1)``; the rows of further tile pairs (multiples of 8) go
    into the immediate offset.
    """
    mma = staged.mma
    wn = mma.params.wpc[1]
    r, j0, j1 = _ldmatrix_lane(ctx)
    b = ctx.b
    row = b.add(b.add(warp_offset(ctx, mma.b, 1), r), b.mul(j1, _c(8 * wn)))
    k0 = _origin(mma, 1, ki, 0)[0]
    col = b.add(b.mul(j0, _c(staged.tile.unit)), _c(k0))
    out = {}
    for ni in range(0, tiles, 2):
        pair = ni + 1 < tiles  # lanes 16-31's addresses are ignored by an x2
        regs = _ldmatrix(ctx, staged, (row, col, ni * 8 * wn), 4 if pair else 2, False)
        out[ni] = regs[:2]
        if pair:
            out[ni + 1] = regs[2:]
    return out


def _scalar_b(ctx: LoweringContext, staged: Staged, ki: int, ni: int) -> list[ir.Value]:
    """tf32 and int8 B fragments: K-consecutive elements, one ``ld.shared`` each."""
    mma = staged.mma
    st = mma_element(mma.kind)
    toff = ctx.thread_offsets(mma.b)
    frag, _ = _fragment(1, mma.bits)
    origin = _origin(mma, 1, ki, ni)
    elems = []
    for e in range(1 << len(frag)):
        c = _combine(tuple(frag), e, 2)
        row = ctx.b.add(toff[0], _c(origin[0] + c[0]))
        col = ctx.b.add(toff[1], _c(origin[1] + c[1]))
        off = ctx.b.add(staged.tile.emit_offset(ctx.b, row, col), _c(staged.base))
        ptr = _staged_ptr(ctx, staged, off)
        elems.append(ctx.b.load(ptr, typ=ll_type(st), align=staged.tile.eb))
    kw = 32 // mma.bits
    return [_frag_pack(ctx, elems[i : i + kw], "raw") for i in range(0, len(elems), kw)]


def _scatter(
    ctx: LoweringContext, mma: MmaDot, op_idx: int, regs: list, origin, vals: list
) -> None:
    """Unpack fragment registers into the dot-operand tensor's registers."""
    layout = mma.a if op_idx == 0 else mma.b
    index = _reg_index(layout)
    frag, _ = _fragment(op_idx, mma.bits)
    kw = 32 // mma.bits
    for q, reg in enumerate(regs):
        for h, v in enumerate(_frag_unpack(ctx, reg, mma.kind)):
            c = _combine(tuple(frag), q * kw + h, 2)
            vals[index[(c[0] + origin[0], c[1] + origin[1])]] = v


def _frag_unpack(ctx: LoweringContext, reg: ir.Value, kind: str) -> list[ir.Value]:
    b = ctx.b
    if kind == "f16":
        pair = b.bitcast(reg, ir.VectorType(F16_T, 2))
        return [b.extract_element(pair, _c(i)) for i in range(2)]
    if kind == "tf32":
        return [b.bitcast(reg, F32_T)]
    width, n = (I16, 2) if kind == "bf16" else (I8, 4)
    return [b.trunc(b.lshr(reg, _c(i * width.width)), width) for i in range(n)]


# ------------------------------------------------------------ the dot
def mma_dot(ctx: LoweringContext, op: Operation, mma: MmaDot) -> RegTile:
    """Accumulate ``A @ B`` into the accumulator with ``mma.sync`` instructions.

    Staged operands are read one k step at a time, right before their
    instructions, so only one step's fragments are live at once.
    """
    a, bm = ctx.get(op.operands[0]), ctx.get(op.operands[1])
    c = ctx.tensor(op.operands[2])
    _sync_staged(ctx)
    steps, m_tiles = _tile_counts(mma, 0)
    _, n_tiles = _tile_counts(mma, 1)
    wm, wn = mma.params.wpc
    index = _reg_index(c.layout)
    out = list(c.vals)
    f16_acc = element_type(op.operands[2].type) == F16
    kind = "f16acc" if f16_acc else mma.kind
    tiles = {
        (mi, ni): [index[(mi * 16 * wm + 8 * (i >> 1), ni * 8 * wn + (i & 1))] for i in range(4)]
        for mi in range(m_tiles)
        for ni in range(n_tiles)
    }
    # An fp16 accumulator stays packed (two f16x2 registers per tile) for all k steps.
    if f16_acc:
        out = as_packed(ctx, out)
        accs = {t: [out[idx[0]], out[idx[2]]] for t, idx in tiles.items()}
    else:
        accs = {t: [out[i] for i in idx] for t, idx in tiles.items()}
    for ki in range(steps):
        a_regs = _fragments(ctx, a, mma, 0, ki, m_tiles)
        b_regs = _fragments(ctx, bm, mma, 1, ki, n_tiles)
        for mi, ni in tiles:
            accs[(mi, ni)] = _mma(ctx, kind, a_regs[mi], b_regs[ni], accs[(mi, ni)])
    for t, idx in tiles.items():
        vals = accs[t]
        if f16_acc:  # registers 2j and 2j + 1 of the layout are a column pair
            vals = [vals[0], vals[0], vals[1], vals[1]]
        for i, v in zip(idx, vals):
            out[i] = v
    if f16_acc and id(op.result) not in ctx.packed_values:
        out = as_halves(ctx, out)
    return RegTile(c.layout, out)


def _fragments(
    ctx: LoweringContext, src, mma: MmaDot, op_idx: int, ki: int, tiles: int
) -> dict[int, list]:
    """The instruction-ready registers of k step ``ki`` for every tile of one operand."""
    if isinstance(src, Staged):
        regs = staged_fragments(ctx, src, ki, tiles)
        return regs
    return {t: _pack_fragment(ctx, src, mma, op_idx, _origin(mma, op_idx, ki, t))
            for t in range(tiles)}  # fmt: skip


def _pack_fragment(
    ctx: LoweringContext, t: RegTile, mma: MmaDot, op_idx: int, origin
) -> list[ir.Value]:
    index = _reg_index(t.layout)
    frag, _ = _fragment(op_idx, mma.bits)
    kw = 32 // mma.bits
    n = 1 << len(frag)
    elems = []
    for e in range(n):
        c = _combine(tuple(frag), e, 2)
        elems.append(t.vals[index[(c[0] + origin[0], c[1] + origin[1])]])
    return [_frag_pack(ctx, elems[i : i + kw], mma.kind) for i in range(0, n, kw)]


def _frag_pack(ctx: LoweringContext, elems: list[ir.Value], kind: str) -> ir.Value:
    """Pack ``32 / bits`` elements into one register (tf32: the fp32 bits, unconverted)."""
    b = ctx.b
    if kind == "f16":
        vec = ir.Constant(ir.VectorType(F16_T, 2), None)
        for i, v in enumerate(elems):
            vec = b.insert_element(vec, v, _c(i))
        return b.bitcast(vec, I32)
    if elems[0].type == F32_T:
        return b.bitcast(elems[0], I32)
    width = elems[0].type.width
    out: ir.Value = _c(0)
    for i, v in enumerate(elems):
        out = b.or_(out, b.shl(b.zext(v, I32), _c(i * width)))
    return out


def _mma(ctx: LoweringContext, kind: str, a: list, bv: list, acc: list) -> list[ir.Value]:
    """One ``mma.sync``; ``acc`` is 4 registers (2 packed ``.f16x2`` ones for ``"f16acc"``)."""
    b = ctx.b
    acc_t = I32 if kind in ("s8", "f16acc") else F32_T
    c = "r" if kind in ("s8", "f16acc") else "f"
    nc = len(acc)
    names = [f"${i}" for i in range(2 * nc + 6)]
    asm = (
        f"{_MMA_PTX[kind]} {{{', '.join(names[0:nc])}}}, {{{', '.join(names[nc : nc + 4])}}}, "
        f"{{{', '.join(names[nc + 4 : nc + 6])}}}, {{{', '.join(names[nc + 6 :])}}};"
    )
    cons = ",".join([f"={c}"] * nc + ["r"] * 6 + [c] * nc)
    fnty = ir.FunctionType(ir.LiteralStructType([acc_t] * nc), [I32] * 6 + [acc_t] * nc)
    res = b.call(ir.InlineAsm(fnty, asm, cons), [*a, *bv, *acc])
    return [b.extract_value(res, i) for i in range(nc)]


def _tile_counts(mma: MmaDot, op_idx: int) -> tuple[int, int]:
    """``(k steps, m16 tiles per warp)`` for A, ``(k steps, n8 tiles per warp)`` for B."""
    layout = mma.a if op_idx == 0 else mma.b
    k = layout.shape[1] if op_idx == 0 else layout.shape[0]
    wm, wn = mma.params.wpc
    if op_idx == 0:
        return k // mma_instr_k(mma.bits), max(1, layout.shape[0] // (16 * wm))
    return k // mma_instr_k(mma.bits), max(1, layout.shape[1] // (8 * wn))


def _origin(mma: MmaDot, op_idx: int, ki: int, tile: int) -> tuple[int, int]:
    """Register-part coordinate of k step ``ki``, tile ``tile`` of an operand."""
    k_step = mma_instr_k(mma.bits)
    wm, wn = mma.params.wpc
    if op_idx == 0:
        return (tile * 16 * wm, ki * k_step)
    return (ki * k_step, tile * 8 * wn)


def mma_element(kind: str) -> ScalarType:
    """The IR element type of an mma kind's operands."""
    return {"f16": F16, "bf16": BF16, "tf32": F32, "s8": S8, "e4m3": F8E4NV, "e5m2": F8E5}[kind]


_INDEX: dict[Layout, dict[tuple[int, ...], int]] = {}


def _reg_index(layout: Layout) -> dict[tuple[int, ...], int]:
    """Register index of each compile-time coordinate of ``layout``."""
    if layout not in _INDEX:
        _INDEX[layout] = {c: i for i, c in enumerate(layout.reg_coords())}
    return _INDEX[layout]
