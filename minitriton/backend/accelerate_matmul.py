"""Choose how each ``tt.dot`` runs on the GPU: its *dot path*.

The arch picks the best path the hardware has, and the operands' types and
shapes must fit it; otherwise the next path down is taken:

* ``wgmma``: Hopper warpgroup MMA (``wgmma.mma_async``, sm_90a);
* ``mma_v2``: warp-level ``mma.sync`` tensor-core instructions (sm_80 and later);
* ``fma``: every thread accumulates its own results with FMAs (any arch,
  exact fp32 products).

The layout plan (:mod:`minitriton.backend.prepare`) asks :func:`dot_path` for
the accumulator and operand layouts a dot needs, and the code generator asks
it which lowering to run, so both always agree.
"""

from __future__ import annotations

from enum import Enum

from minitriton.backend.layouts import Layout
from minitriton.backend.mma_plan import FP8_KINDS, mma_v2_kind
from minitriton.backend.mma_v3 import accumulator_layout, wgmma_shape
from minitriton.ir.core import Operation


class DotPath(Enum):
    """How one ``tt.dot`` is lowered."""

    FMA = "fma"
    MMA_V2 = "mma_v2"
    WGMMA = "wgmma"


def arch_number(arch: str) -> int:
    """``"sm_90a"`` -> 90."""
    return int(arch[3:].rstrip("a"))


def dot_path(op: Operation, arch: str, num_warps: int) -> DotPath:
    """The path ``op`` (a ``tt.dot``) takes on ``arch`` with ``num_warps`` warps."""
    if arch_number(arch) == 90 and wgmma_shape(op, num_warps) is not None:
        return DotPath.WGMMA
    kind = mma_v2_kind(op) if arch_number(arch) >= 80 else None
    if kind is not None and (kind not in FP8_KINDS or arch_number(arch) >= 89):
        return DotPath.MMA_V2
    return DotPath.FMA


def dot_result_layout(op: Operation, arch: str, num_warps: int) -> Layout | None:
    """The accumulator layout a tensor-core path needs (``None``: any layout, FMA)."""
    if dot_path(op, arch, num_warps) is DotPath.WGMMA:
        shape = wgmma_shape(op, num_warps)
        assert shape is not None
        return accumulator_layout(shape)
    return None


def target_arch(arch: str, uses_wgmma: bool) -> str:
    """The PTX target: ``wgmma`` needs the arch-specific ``sm_90a``."""
    if uses_wgmma and not arch.endswith("a"):
        return arch + "a"
    return arch
