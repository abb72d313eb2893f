"""Tutorial 06's attention forward on ``wgmma`` (sm_90a): what its inner loop costs, without a GPU.

Two things made the loop a third longer than Triton's on an H200, and each
has a check here:

* ``exp2`` on fp32 is ``ex2.approx.ftz.f32``, as in Triton: without ``.ftz``
  ptxas wraps each ``ex2`` in a compare and two multiplies for subnormals;
* every operand of a ``wgmma`` group (``P``'s registers, the descriptors) is
  computed before the group's ``wgmma.fence``: otherwise ptxas injects a
  ``warpgroup.arrive`` before each instruction whose registers were written
  after it (its note C7519), serializing the group.
"""

from __future__ import annotations

import functools

import pytest

from tests.backend.test_mma_lowering import assemble, build
from tests.kernels import tc_kernels

STRIDES = ", ".join(["i32:16, i32:16, i32:16, i32:1"] * 4)


@functools.cache
def attention(head_dim: int, stage: int):
    warps, block_n = (4, 64) if head_dim == 64 else (8, 128)
    sig = (f"*fp16:16, *fp16:16, *fp16:16, fp32, *fp32:16, *fp16:16, {STRIDES}, i32, i32, "
           f"4096, {head_dim}, 128, {block_n}, {stage}")  # fmt: skip
    return build(tc_kernels._attn_fwd, sig, arch="sm_90a", num_warps=warps)


CASES = [(64, 1), (128, 3)]  # D=64 non-causal, D=128 causal (two loops)


@pytest.mark.parametrize(("head_dim", "stage"), CASES)
def test_exp2_flushes_subnormals_as_triton(head_dim: int, stage: int) -> None:
    ptx = attention(head_dim, stage).ptx
    assert "ex2.approx.ftz.f32" in ptx
    assert "ex2.approx.f32" not in ptx


@pytest.mark.parametrize(("head_dim", "stage"), CASES)
def test_no_fence_is_injected_into_wgmma_groups(tmp_path, head_dim: int, stage: int) -> None:
    k = attention(head_dim, stage)
    assert "wgmma.mma_async" in k.ptx
    report = assemble(k, tmp_path)
    assert "C7519" not in report and "warpgroup.arrive is injected" not in report
    assert " 0 bytes spill stores" in report
