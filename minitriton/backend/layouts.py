"""Distributed layouts: which thread of a CTA holds which element of a block.

A program instance runs as one CTA of ``num_warps`` warps of 32 threads. A
block value is spread over those threads by a *layout*. MiniTriton writes
layouts the way Triton does (``blocked<spt=..., tpw=..., wpc=..., order=...>``
and ``slice<dim=..., parent=...>``), and represents them internally as
*linear layouts*: the bits of a thread's register index, lane id and warp id
each move the element coordinate by a fixed basis vector::

    coord(reg, lane, warp) = XOR of reg_bases[i]  for each set bit i of reg
                           + XOR of lane_bases[i] for each set bit i of lane
                           + XOR of warp_bases[i] for each set bit i of warp

Every basis vector is zero or a power of two in exactly one dimension, and
the non-zero ones of a layout never overlap, so XOR is the same as addition.
A zero lane or warp basis means *replication*: the threads that differ in
that bit hold the same elements (a block smaller than the CTA). Register
bases are never zero: a thread holds each of its elements once.

This one representation makes every layout operation a few lines:
``restrict`` (the same layout on a smaller shape, for broadcasts), ``slice``
(drop a dimension, for reduction results), ``expand`` (insert a unit
dimension, for ``expand_dims``). Two layouts are equal when their bases are,
whatever their printed names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Coord = tuple[int, ...]
WARP_SIZE = 32


@dataclass(frozen=True)
class Layout:
    """A linear distributed layout of a block of ``shape``."""

    shape: tuple[int, ...]
    reg_bases: tuple[Coord, ...]
    lane_bases: tuple[Coord, ...]
    warp_bases: tuple[Coord, ...]
    #: Printed form, e.g. ``blocked<spt=[4], tpw=[32], wpc=[4], order=[0]>``.
    desc: str = field(default="", compare=False)

    @property
    def rank(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def num_regs(self) -> int:
        """Elements each thread holds."""
        return 1 << len(self.reg_bases)

    def reg_coords(self) -> list[Coord]:
        """The compile-time coordinate part of every register, in index order."""
        return [_combine(self.reg_bases, r, self.rank) for r in range(self.num_regs)]

    def thread_coords(self) -> list[Coord]:
        """The run-time coordinate part of every thread of the CTA, in thread-id order."""
        bases = self.lane_bases + self.warp_bases  # lane bits, then warp bits: the thread id's
        return [_combine(bases, t, self.rank) for t in range(1 << len(bases))]

    def replicated_lane_mask(self) -> int:
        """Lane-id bits whose basis is zero (threads holding copies)."""
        return sum(1 << i for i, b in enumerate(self.lane_bases) if not any(b))

    def replicated_warp_mask(self) -> int:
        """Warp-id bits whose basis is zero."""
        return sum(1 << i for i, b in enumerate(self.warp_bases) if not any(b))

    def lane_bits_along(self, dim: int) -> list[int]:
        """Lane-id bits that move the coordinate along ``dim``."""
        return [i for i, b in enumerate(self.lane_bases) if b[dim]]

    def warp_bits_along(self, dim: int) -> list[int]:
        """Warp-id bits that move the coordinate along ``dim``."""
        return [i for i, b in enumerate(self.warp_bases) if b[dim]]

    def contiguous_run(self) -> tuple[int, int]:
        """``(dim, n)``: registers ``0..n-1`` hold ``n`` consecutive elements along ``dim``."""
        if not self.reg_bases:
            return (self.rank - 1, 1)
        first = self.reg_bases[0]
        dim = next(d for d, v in enumerate(first) if v)
        n = 1
        for basis in self.reg_bases:
            if basis[dim] != n or sum(1 for v in basis if v) != 1:
                break
            n *= 2
        return (dim, n)

    def __str__(self) -> str:
        return self.desc or repr(self)


def _combine(bases: tuple[Coord, ...], bits: int, rank: int) -> Coord:
    coord = [0] * rank
    for i, basis in enumerate(bases):
        if bits >> i & 1:
            coord = [c ^ b for c, b in zip(coord, basis)]
    return tuple(coord)


def _unit(rank: int, dim: int, value: int) -> Coord:
    return tuple(value if d == dim else 0 for d in range(rank))


def _fmt(values: list[int] | tuple[int, ...]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


# ------------------------------------------------------------------ blocked


@dataclass(frozen=True)
class BlockedParams:
    """Triton's blocked encoding: sizePerThread, threadsPerWarp, warpsPerCTA, order."""

    spt: tuple[int, ...]
    tpw: tuple[int, ...]
    wpc: tuple[int, ...]
    order: tuple[int, ...]  # fastest-varying dimension first

    def __str__(self) -> str:
        return (
            f"blocked<spt={_fmt(self.spt)}, tpw={_fmt(self.tpw)}, "
            f"wpc={_fmt(self.wpc)}, order={_fmt(self.order)}>"
        )


def blocked(params: BlockedParams, shape: tuple[int, ...]) -> Layout:
    """The blocked layout ``params`` applied to ``shape``.

    Register bits first walk ``spt`` (fastest dimension first), then the
    repetitions of the CTA tile; lane and warp bits walk ``tpw`` and ``wpc``.
    A basis reaching past the shape becomes zero (replication) — for
    registers it is dropped.
    """
    rank = len(shape)

    def bases(counts: tuple[int, ...], start: tuple[int, ...]) -> list[Coord]:
        out = []
        for d in params.order:
            value = start[d]
            while value < start[d] * counts[d]:
                out.append(_unit(rank, d, value) if value < shape[d] else (0,) * rank)
                value *= 2
        return out

    ones = (1,) * rank
    regs = bases(params.spt, ones)
    lane_start = params.spt
    lanes = bases(params.tpw, lane_start)
    warp_start = tuple(s * t for s, t in zip(params.spt, params.tpw))
    warps = bases(params.wpc, warp_start)
    tile = tuple(w * c for w, c in zip(warp_start, params.wpc))
    for d in params.order:
        value = tile[d]
        while value < shape[d]:
            regs.append(_unit(rank, d, value))
            value *= 2
    regs = [b for b in regs if any(b)]
    return Layout(tuple(shape), tuple(regs), tuple(lanes), tuple(warps), str(params))


def default_params(
    shape: tuple[int, ...], num_warps: int, vec: int, order: tuple[int, ...] | None = None
) -> BlockedParams:
    """Triton's default blocked encoding with ``vec`` elements per thread along the fastest dim.

    ``order`` lists the dimensions fastest first (default: the last dim
    fastest, row-major). Lanes, then warps, fill the dimensions fastest
    first; what is left over goes to the slowest dimension (replicating when
    the block is small).
    """
    rank = len(shape)
    order = order or tuple(reversed(range(rank)))
    spt = [1] * rank
    spt[order[0]] = max(1, min(vec, shape[order[0]]))
    tpw, wpc = [1] * rank, [1] * rank
    lanes, warps, threads = WARP_SIZE, num_warps, WARP_SIZE * num_warps
    used_lanes = used_warps = 1
    for d in order[:-1]:
        per_cta = max(1, min(threads, shape[d] // spt[d]))
        tpw[d] = max(1, min(per_cta, lanes))
        wpc[d] = max(1, min(per_cta // tpw[d], warps))
        lanes //= tpw[d]
        warps //= wpc[d]
        threads //= per_cta
        used_lanes *= tpw[d]
        used_warps *= wpc[d]
    tpw[order[-1]] = WARP_SIZE // used_lanes
    wpc[order[-1]] = num_warps // used_warps
    return BlockedParams(tuple(spt), tuple(tpw), tuple(wpc), order)


# ------------------------------------------------------------------ transforms


def restrict(layout: Layout, shape: tuple[int, ...]) -> Layout:
    """The same layout on a shape that is no larger in any dimension.

    Used for the operand of a broadcast: coordinates past ``shape`` wrap, so
    each thread holds exactly the operand elements its result elements need.
    """
    if shape == layout.shape:
        return layout

    def cut(basis: Coord) -> Coord:
        return tuple(v if v < s else 0 for v, s in zip(basis, shape))

    regs = tuple(b for b in (cut(b) for b in layout.reg_bases) if any(b))
    lanes = tuple(cut(b) for b in layout.lane_bases)
    warps = tuple(cut(b) for b in layout.warp_bases)
    return Layout(tuple(shape), regs, lanes, warps, layout.desc)


def slice_layout(layout: Layout, dim: int) -> Layout:
    """Drop dimension ``dim``: the layout of a reduction's result along ``dim``."""

    def drop(basis: Coord) -> Coord:
        return basis[:dim] + basis[dim + 1 :]

    shape = layout.shape[:dim] + layout.shape[dim + 1 :]
    regs = tuple(b for b in (drop(b) for b in layout.reg_bases) if any(b))
    lanes = tuple(drop(b) for b in layout.lane_bases)
    warps = tuple(drop(b) for b in layout.warp_bases)
    return Layout(shape, regs, lanes, warps, f"slice<dim={dim}, parent={layout.desc}>")


def expand_layout(layout: Layout, dim: int) -> Layout:
    """Insert a unit dimension at ``dim`` (the layout of ``expand_dims``)."""

    def insert(basis: Coord) -> Coord:
        return basis[:dim] + (0,) + basis[dim:]

    shape = layout.shape[:dim] + (1,) + layout.shape[dim:]
    prefix = f"slice<dim={dim}, parent="
    desc = layout.desc
    # expand_dims undoes a slice: name the parent again.
    desc = desc[len(prefix) : -1] if desc.startswith(prefix) else f"expand<dim={dim}, {desc}>"
    return Layout(
        shape,
        tuple(insert(b) for b in layout.reg_bases),
        tuple(insert(b) for b in layout.lane_bases),
        tuple(insert(b) for b in layout.warp_bases),
        desc,
    )


def squeeze_layout(layout: Layout, dim: int) -> Layout:
    """Inverse of :func:`expand_layout`: drop ``dim`` after restricting it to size 1."""
    return slice_layout(restrict(layout, _with_dim(layout.shape, dim, 1)), dim)


def _with_dim(shape: tuple[int, ...], dim: int, size: int) -> tuple[int, ...]:
    return shape[:dim] + (size,) + shape[dim + 1 :]


# ------------------------------------------------------------------ mma_v2, dot_operand
#
# The tensor-core layouts of ``mma.sync`` (sm_80 and later). One warp computes
# an m16n8 accumulator tile per instruction; ``wpc = [wm, wn]`` warps tile the
# block (warp id = n index + wn * m index, N fastest, as Triton's row-major
# warp order), and the CTA tile of ``16 wm x 8 wn`` repeats over the block in
# registers (N first, then M). In each m16n8 tile, with ``g = lane / 4`` and
# ``t = lane % 4``, the PTX ISA gives register ``c_i`` the element
# ``(g + 8 (i >> 1), 2 t + (i & 1))``.
#
# The operands of one instruction are fragments of the A tile (m16 x kI) and
# the B tile (kI x n8), with kI = 256 bits / element bits (16 for fp16 and
# bf16, 8 for tf32, 32 for int8). Each thread holds ``kWidth = 32 / bits``
# consecutive K elements per 32-bit register. The operand layouts follow the
# accumulator's warps: A is spread over the ``wm`` warps and replicated over
# ``wn``, B the other way round. Their repetitions go along K first, so the
# accumulator of an m x 16 tile *is* the A fragment of an m x k16 tile for
# 16-bit types (the register bases coincide), which lets an attention
# kernel's P feed the second dot without moving.


@dataclass(frozen=True)
class MmaParams:
    """``nvidia_mma<versionMajor=2, warpsPerCTA=[wm, wn], instrShape=[16, 8]>``."""

    wpc: tuple[int, int]

    def __str__(self) -> str:
        return f"nvidia_mma<versionMajor=2, warpsPerCTA={_fmt(self.wpc)}, instrShape=[16, 8]>"


def mma_instr_k(bits: int) -> int:
    """K of one ``mma.sync`` for operands of ``bits`` bits: m16n8k16, m16n8k8 (tf32), m16n8k32."""
    return 256 // bits


def _repeat(bases: list[Coord], shape: tuple[int, ...], tile: tuple[int, ...], order) -> list:
    """Append register bases repeating ``tile`` over ``shape``, dims in ``order``."""
    for d in order:
        value = tile[d]
        while value < shape[d]:
            bases.append(_unit(2, d, value))
            value *= 2
    return bases


def _warp_bases(params: MmaParams, shape, along: tuple[bool, bool], tile) -> list[Coord]:
    """Warp bases: N index bits first, then M; a dim not in ``along`` (or full) replicates."""
    wm, wn = params.wpc
    out = []
    for d, count in ((1, wn), (0, wm)):
        value = tile[d]
        while value < tile[d] * count:
            ok = along[d] and value < shape[d]
            out.append(_unit(2, d, value) if ok else (0, 0))
            value *= 2
    return out


def _clip(bases: list[Coord], shape: tuple[int, ...]) -> tuple[Coord, ...]:
    return tuple(b if all(v < s for v, s in zip(b, shape)) else (0, 0) for b in bases)


_ACC_LANES = ((0, 2), (0, 4), (1, 0), (2, 0), (4, 0))


def mma_layout(params: MmaParams, shape: tuple[int, int]) -> Layout:
    """The accumulator layout of an ``[M, N]`` dot result (fp32 or int32)."""
    regs: list[Coord] = [(0, 1), (8, 0)]
    regs = _repeat(regs, shape, (16 * params.wpc[0], 8 * params.wpc[1]), (1, 0))
    warps = _warp_bases(params, shape, (True, True), (16, 8))
    regs = [b for b in _clip(regs, shape) if any(b)]
    return Layout(
        tuple(shape), tuple(regs), _clip(list(_ACC_LANES), shape), tuple(warps), str(params)
    )


def _fragment(op_idx: int, bits: int) -> tuple[list[Coord], list[Coord]]:
    """Register and lane bases of one operand fragment, as ``(row, col)`` of A or ``(k, n)`` of B.

    From the PTX ISA's fragment tables (``g = lane / 4``, ``t = lane % 4``):

    * 16-bit A (m16k16): ``a_i`` at ``(g + 8 ((i >> 1) & 1), 2 t + (i & 1) + 8 (i >> 2))``;
      B (k16n8): ``b_i`` at ``(2 t + (i & 1) + 8 (i >> 1), g)``;
    * tf32 A (m16k8): ``a_i`` at ``(g + 8 (i & 1), t + 4 (i >> 1))``;
      B: ``b_i`` at ``(t + 4 i, g)``;
    * int8 A (m16k32): ``a_i`` at ``(g + 8 ((i >> 2) & 1), 4 t + (i & 3) + 16 (i >> 3))``;
      B (k32n8): ``b_i`` at ``(4 t + (i & 3) + 16 (i >> 2), g)``.
    """
    kw = 32 // bits  # consecutive K elements in one 32-bit register
    k_in = [1 << i for i in range(kw.bit_length() - 1)]
    k_lanes = [kw, 2 * kw]
    regs: list[Coord]
    lanes: list[Coord]
    if op_idx == 0:
        regs = [(0, k) for k in k_in]
        regs += [(8, 0), (0, 4 * kw)]
        lanes = [(0, k) for k in k_lanes]
        lanes += [(1, 0), (2, 0), (4, 0)]
    else:
        regs = [(k, 0) for k in k_in]
        regs += [(4 * kw, 0)]
        lanes = [(k, 0) for k in k_lanes]
        lanes += [(0, 1), (0, 2), (0, 4)]
    return regs, lanes


def dot_operand_layout(params: MmaParams, op_idx: int, bits: int, shape: tuple[int, int]) -> Layout:
    """The layout of operand ``op_idx`` (0: A ``[M, K]``, 1: B ``[K, N]``) of an mma_v2 dot."""
    regs, lanes = _fragment(op_idx, bits)
    k_tile = mma_instr_k(bits)
    wm, wn = params.wpc
    if op_idx == 0:
        tile, order, along, warp_tile = (16 * wm, k_tile), (1, 0), (True, False), (16, k_tile)
    else:
        tile, order, along, warp_tile = (k_tile, 8 * wn), (0, 1), (False, True), (k_tile, 8)
    regs = _repeat(regs, shape, tile, order)
    warps = _warp_bases(params, shape, along, warp_tile)
    regs = [b for b in _clip(regs, shape) if any(b)]
    desc = f"dot_op<opIdx={op_idx}, parent={params}, kWidth={32 // bits}>"
    return Layout(tuple(shape), tuple(regs), _clip(lanes, shape), tuple(warps), desc)


def mma_warps(shape: tuple[int, int], num_warps: int, chained: bool) -> tuple[int, int]:
    """Triton's ``warpsPerTile`` for mma_v2: warps over M and N.

    A dot whose result feeds another dot (attention) puts every warp along M,
    so its accumulator can become the next dot's A operand in registers.
    """
    m, n = shape
    if chained:
        return (num_warps, 1)
    wm, wn = 1, 1
    while wm * wn < num_warps:
        if m // 16 // wm >= n // 16 // wn and wm < m // 16:
            wm *= 2
        else:
            wn *= 2
    return (wm, wn)
