"""Hopper warpgroup MMA (``wgmma``): which dots fit, and the accumulator layout.

A *warpgroup* is 4 consecutive warps (128 threads). One
``wgmma.mma_async.m64nNkK`` multiplies a 64xK tile of A by a KxN tile of B
into a 64xN fp32 (or s32) accumulator held in the registers of the
warpgroup. Supported inputs here:

====================  ========  ======  ==========================
operands              acc       K step  B in shared memory
====================  ========  ======  ==========================
fp16 x fp16           fp32      16      row-major (``tnspB`` = 1)
fp16 x fp16           fp16      16      row-major (``tnspB`` = 1)
bf16 x bf16           fp32      16      row-major (``tnspB`` = 1)
fp32 x fp32 ("tf32")  fp32      8       K-major (no transpose)
int8 x int8           int32     32      K-major (no transpose)
fp8 x fp8             fp32      32      K-major (no transpose)
fp8 x fp8             fp16      32      K-major (no transpose)
====================  ========  ======  ==========================

An fp16 accumulator (``.f16`` dtype) holds the same elements in the same
threads, two per 32-bit register (:mod:`~minitriton.backend.lower.f16acc`).

A dot of MxN with ``num_warps`` warps (a multiple of 4) puts its warpgroups
along M first (64 rows each), the rest along N. Each warpgroup covers
``N / wg_n`` columns with instructions of at most 256 columns, and the
M and N repetitions are more instructions.

The accumulator layout (Triton's ``nvidia_mma<versionMajor=3>``), as a
linear layout: warp ``w`` of a warpgroup holds rows ``16w .. 16w+15`` of the
warpgroup's 64; lane ``l`` holds row ``l/4`` and ``l/4 + 8``, columns
``2*(l%4) + {0, 1} + 8j``::

    reg bits:  (0,1) (8,0) (0,8) (0,16) ... (0,N/2)  | N reps | M reps
    lane bits: (0,2) (0,4) (1,0) (2,0) (4,0)
    warp bits: (16,0) (32,0) | warpgroups along M (64, 128, ...) then along N

so register ``i`` of instruction (mi, ni) is register
``i + N/2 * (ni + n_reps * mi)`` of the block value, in the order
``wgmma`` writes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from minitriton.backend.layouts import Layout
from minitriton.backend.mma_plan import OPERAND_BITS
from minitriton.backend.shared_layout import SharedTile
from minitriton.ir.core import Operation
from minitriton.ir.types import BF16, F8E4NV, F8E5, F16, F32, ScalarType, element_type

I8 = ScalarType("i8")
I32 = ScalarType("i32")
#: Accumulator layouts print with this prefix.
MMA_PREFIX = "nvidia_mma<"


@dataclass(frozen=True)
class WgmmaShape:
    """How one ``tt.dot`` maps onto ``wgmma`` instructions."""

    m: int
    n: int
    k: int
    kind: str  # "f16", "bf16", "tf32" or "s8"
    wg_m: int
    wg_n: int
    instr_n: int

    @property
    def eb(self) -> int:
        """Bytes per operand element."""
        return OPERAND_BITS[self.kind] // 8

    @property
    def k_step(self) -> int:
        """K of one instruction: always 32 bytes of K."""
        return 32 // self.eb

    @property
    def n_per_wg(self) -> int:
        """Columns of one warpgroup."""
        return self.n // self.wg_n

    @property
    def m_reps(self) -> int:
        """Instructions along M per warpgroup."""
        return self.m // (64 * self.wg_m)

    @property
    def n_reps(self) -> int:
        """Instructions along N per warpgroup."""
        return self.n_per_wg // self.instr_n

    @property
    def b_k_major(self) -> bool:
        """tf32, int8 and fp8 have no transpose: B is staged K-major."""
        return self.kind not in ("f16", "bf16")

    def a_tile(self) -> SharedTile:
        """A (M x K) is stored K-major (row-major)."""
        tile = SharedTile.make((self.m, self.k), 1, self.eb)
        assert tile is not None
        return tile

    def b_tile(self, contig: int = 1) -> SharedTile:
        """B (K x N): K-major for tf32 and int8, else contiguous along ``contig``."""
        tile = SharedTile.make((self.k, self.n), 0 if self.b_k_major else contig, self.eb)
        assert tile is not None
        return tile

    def ptx_types(self, f16_acc: bool = False) -> str:
        """The ``.dtype.atype.btype`` part of the instruction (``.f16`` D for ``f16_acc``)."""
        if f16_acc:
            assert self.kind in ("f16", *F16_ACC_FP8)
            return f"f16.{self.kind}.{self.kind}"
        return {
            "f16": "f32.f16.f16",
            "bf16": "f32.bf16.bf16",
            "tf32": "f32.tf32.tf32",
            "s8": "s32.s8.s8",
            "e4m3": "f32.e4m3.e4m3",
            "e5m2": "f32.e5m2.e5m2",
        }[self.kind]


#: fp8 kinds that also accumulate in fp16 (``wgmma ... .f16.e4m3.e4m3``).
F16_ACC_FP8 = ("e4m3", "e5m2")


def _kind(op: Operation) -> str | None:
    ta, tb, tc = (element_type(v.type) for v in op.operands)
    if ta != tb:
        return None
    if tc == F16 and ta == F16:  # fp16 accumulation
        return "f16"
    if tc == F16 and ta in (F8E4NV, F8E5):
        return "e4m3" if ta == F8E4NV else "e5m2"
    if tc == F32 and ta in (F16, BF16):
        return "f16" if ta == F16 else "bf16"
    if tc == F32 and ta == F32 and op.attrs.get("input_precision", "tf32") == "tf32":
        return "tf32"
    if tc == I32 and ta == I8:
        return "s8"
    if tc == F32 and ta in (F8E4NV, F8E5):
        return "e4m3" if ta == F8E4NV else "e5m2"
    return None


def wgmma_shape(op: Operation, num_warps: int) -> WgmmaShape | None:
    """The ``wgmma`` mapping of ``op`` (a ``tt.dot``), or ``None`` if it does not fit."""
    kind = _kind(op)
    if kind is None or len(op.operands[0].shape) != 2:
        return None
    (m, k), n = op.operands[0].shape, op.operands[1].shape[1]
    return shape_for(m, n, k, kind, num_warps)


def shape_of_async_dot(op: Operation, num_warps: int) -> WgmmaShape:
    """The mapping of a ``ttng.warp_group_dot`` (from its ``shape`` and ``kind``)."""
    m, n, k = op.attrs["shape"]
    shape = shape_for(m, n, k, op.attrs["kind"], num_warps)
    assert shape is not None
    return shape


def shape_for(m: int, n: int, k: int, kind: str, num_warps: int) -> WgmmaShape | None:
    """The mapping of an MxNxK dot of ``kind`` operands, or ``None`` if it does not fit."""
    if num_warps % 4:
        return None
    groups = num_warps // 4
    if m % 64:
        return None
    wg_m = min(groups, m // 64)
    wg_n = groups // wg_m
    if n % (8 * wg_n):
        return None
    shape = WgmmaShape(m, n, k, kind, wg_m, wg_n, min(256, n // wg_n))
    if k % shape.k_step or shape.n_per_wg % shape.instr_n:
        return None
    b = SharedTile.make((k, n), 0 if shape.b_k_major else 1, shape.eb)
    if b is None:
        return None
    # A row-major B tile: each warpgroup's columns start at a swizzled row.
    if not shape.b_k_major and shape.n_per_wg % min(b.row_elems, n):
        return None
    return shape


def accumulator_layout(shape: WgmmaShape) -> Layout:
    """The MMA v3 accumulator layout of ``shape`` (see the module docstring)."""
    regs = [(0, 1), (8, 0)]
    col = 8
    while col < shape.instr_n:
        regs.append((0, col))
        col *= 2
    regs += [(0, shape.instr_n << i) for i in range(shape.n_reps.bit_length() - 1)]
    m_step = 64 * shape.wg_m
    regs += [(m_step << i, 0) for i in range(shape.m_reps.bit_length() - 1)]
    lanes = [(0, 2), (0, 4), (1, 0), (2, 0), (4, 0)]
    warps = [(16, 0), (32, 0)]
    warps += [(64 << i, 0) for i in range(shape.wg_m.bit_length() - 1)]
    warps += [(shape.n_per_wg << i, 0)[::-1] for i in range(shape.wg_n.bit_length() - 1)]
    desc = (
        f"{MMA_PREFIX}versionMajor=3, warpsPerCTA=[{4 * shape.wg_m}, {shape.wg_n}], "
        f"instrShape=[16, {shape.instr_n}, {shape.k_step}]>"
    )
    return Layout((shape.m, shape.n), tuple(regs), tuple(lanes), tuple(warps), desc)


def is_mma_layout(layout: Layout | None) -> bool:
    """True for tensor-core accumulator layouts."""
    return layout is not None and layout.desc.startswith(MMA_PREFIX)
