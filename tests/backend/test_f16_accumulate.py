"""fp16 accumulation on the tensor cores: the instructions in the PTX, and ``ptxas``.

A dot of fp16 operands with an fp16 result (``out_dtype=tl.float16``, or an
fp16 ``acc``) accumulates in fp16, as Triton's does:
``mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16`` on sm_80 and
``wgmma.mma_async.sync.aligned.m64nNk16.f16.f16.f16`` on sm_90a. An fp32
result keeps the fp32 forms. PTX generation needs no GPU.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.backend.test_mma_lowering import assemble, build  # noqa: E402
from tests.kernels import f16_acc_kernels as kernels  # noqa: E402

#: Triton's ``test_dot`` check for fp16 inputs and an fp16 result.
TRITON_F16 = r"[mma|wgmma.mma_async].sync.aligned.m\d+n\d+k16(?:.row.col)?.f16.f16.f16"
TRITON_F32 = r"[mma|wgmma.mma_async].sync.aligned.m\d+n\d+k16(?:.row.col)?.f32.f16.f16"
MMA_F16 = "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"
MATMUL = "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, 128, 128, 64"


def single(arch: str, f16: bool, chain: bool = False, shape: str = "64, 64, 64", warps: int = 4):
    sig = f"*fp16:16, *fp16:16, *{'fp16' if f16 else 'fp32'}:16, {shape}, {int(f16)}, {int(chain)}"
    return build(kernels.dot_out_kernel, sig, arch=arch, num_warps=warps)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_an_fp16_result_accumulates_in_fp16(arch, tmp_path):
    k = single(arch, True)
    assert re.search(TRITON_F16, k.ptx)
    assert not re.search(TRITON_F32, k.ptx)
    if arch == "sm_80":
        assert MMA_F16 in k.ptx
    else:
        # D is N / 4 = 16 .f16x2 registers, half the fp32 form's 32
        m = re.search(r"wgmma\.mma_async\S*m64n64k16\.f16\.f16\.f16 \{([^}]*)\}", k.ptx)
        assert m and len(m.group(1).split(",")) == 16
    assemble(k, tmp_path)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_an_fp32_result_keeps_fp32_accumulation(arch, tmp_path):
    k = single(arch, False)
    assert re.search(TRITON_F32, k.ptx)
    assert not re.search(TRITON_F16, k.ptx)
    assemble(k, tmp_path)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_a_chained_fp16_dot_accumulates_in_fp16_twice(arch, tmp_path):
    k = single(arch, True, chain=True)
    one = len(re.findall(TRITON_F16, single(arch, True).ptx))
    assert len(re.findall(TRITON_F16, k.ptx)) == 2 * one  # N = K: the second dot is the same size
    assemble(k, tmp_path)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_small_and_odd_warp_counts_assemble(arch, tmp_path):
    for shape, warps in (("16, 16, 16", 1), ("32, 32, 32", 2), ("128, 64, 32", 8)):
        k = single(arch, True, shape=shape, warps=warps)
        assert re.search(TRITON_F16, k.ptx), (shape, warps)
        assemble(k, tmp_path)


def _loop(ptx: str) -> str:
    """The PTX of the innermost K loop (from its first tensor-core instruction to its branch)."""
    start = re.search(r"(wgmma\.mma_async|mma\.sync)", ptx).start()
    return ptx[start : re.compile(r"\bbra").search(ptx, start).start()]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_pipelined_loop_carries_the_accumulator_packed(arch, tmp_path):
    k = build(kernels.matmul_f16_acc_kernel, MATMUL, arch=arch, num_warps=4)
    assert "cp.async" in k.ptx or "cp.async.bulk" in k.ptx
    assert re.search(TRITON_F16, k.ptx)
    # no fp16 halves are unpacked or packed inside the loop: the phis are .f16x2 registers
    assert not re.search(r"mov\.b32\s+(\{%rs|%r\d+, \{%rs)", _loop(k.ptx))
    if arch == "sm_90a":
        assert "wgmma.wait_group.sync.aligned 1;" in k.ptx
    assert "spill" not in assemble(k, tmp_path).replace("0 bytes spill", "")


def test_wgmma_fp8_with_an_fp16_accumulator(tmp_path):
    sig = "*fp8e4nv:16, *fp8e4nv:16, *fp16:16, 64, 64, 64, 1, 0"
    k = build(kernels.dot_out_kernel, sig, arch="sm_90a", num_warps=4)
    assert "wgmma.mma_async.sync.aligned.m64n64k32.f16.e4m3.e4m3" in k.ptx
    assemble(k, tmp_path)


def test_bf16_with_an_fp16_result_stays_off_the_tensor_cores():
    sig = "*bf16:16, *bf16:16, *fp16:16, 64, 64, 64, 1, 0"
    for arch in ("sm_80", "sm_90a"):
        k = build(kernels.dot_out_kernel, sig, arch=arch, num_warps=4)
        assert "mma" not in k.ptx


@pytest.mark.parametrize("wpc", [(1, 1), (2, 2), (4, 1), (1, 4), (8, 1)])
@pytest.mark.parametrize("shape", [(64, 64), (128, 32), (128, 256)])
def test_register_pairs_are_column_pairs_of_one_row_in_mma_layouts(wpc, shape):
    # A packed .f16x2 accumulator register holds registers 2j and 2j + 1 of the layout: that
    # is right only if register bit 0 steps one column (the PTX ISA's c0/c1 pair; the f32
    # layouts' fragment tables are checked in test_mma_layouts.py).
    from minitriton.backend.layouts import MmaParams, mma_layout

    layout = mma_layout(MmaParams(wpc), shape)
    assert layout.reg_bases[0] == (0, 1)


@pytest.mark.parametrize("n", [64, 128, 256])
@pytest.mark.parametrize("warps", [4, 8])
def test_register_pairs_are_column_pairs_of_one_row_in_wgmma_layouts(n, warps):
    from minitriton.backend.mma_v3 import accumulator_layout, shape_for

    shape = shape_for(64 * warps // 4, n, 64, "f16", warps)
    assert shape is not None
    assert accumulator_layout(shape).reg_bases[0] == (0, 1)
