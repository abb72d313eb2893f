"""fp8 K loops on ``wgmma`` (sm_90a) take the pipeline's descriptor form, without a GPU.

``wgmma`` reads fp8 tiles K-major only, so tutorial 03's matmul is fed B
column-major (``stride_bk = 1``), as Triton's tutorial does for fp8. Its K
loop must then be software-pipelined into two rings read by ``wgmma``
descriptors, A row-major and B K-major, and the carried pointers of B must
take the K-major copy's layout: a layout conversion of a block of pointers in
the loop goes through shared memory every iteration (it cost 12x on an H200).
"""

from __future__ import annotations

import re

import pytest

from tests.backend.test_mma_lowering import assemble, build
from tests.kernels import tc_kernels

STRIDES = "i32:16, i32:16, i32:16, i32:16"


def fp8_matmul(b_k_major: bool, dtype: str = "fp8e4nv", bn: int = 128, warps: int = 8):
    b_strides = "i32:1, i32:16" if b_k_major else "i32:16, i32:1"
    sig = (f"*{dtype}:16, *{dtype}:16, *fp16:16, {STRIDES}, i32:1, {b_strides}, i32:16, i32:1, "
           f"128, {bn}, 128, 8")  # fmt: skip
    return build(tc_kernels.matmul_kernel, sig, arch="sm_90a", num_warps=warps)


def loop_body(ttgir: str) -> str:
    start = ttgir.index("scf.for")
    return ttgir[start : ttgir.index("scf.yield", start)]


@pytest.mark.parametrize("dtype", ["fp8e4nv", "fp8e5"])
@pytest.mark.parametrize("bn", [128, 256])
def test_k_major_b_takes_the_descriptor_form(dtype: str, bn: int) -> None:
    k = fp8_matmul(True, dtype, bn)
    body = loop_body(k.ttgir)
    assert "ttng.warp_group_dot" in body and "tt.dot" not in body
    assert body.count("ttg.async_copy_global_to_local") == 2
    assert re.search(r"async_copy_global_to_local\([^)]*\) \{buffer = 1, contig = 0\}", body)
    assert "convert_layout" not in body  # B's carried pointers are K-major already
    kind = "e4m3" if dtype == "fp8e4nv" else "e5m2"
    assert f"wgmma.mma_async.sync.aligned.m64n{bn}k32.f32.{kind}.{kind}" in k.ptx


def test_row_major_b_is_restaged() -> None:
    # wgmma cannot read a row-major fp8 B: its ring is read into registers and restaged.
    body = loop_body(fp8_matmul(False).ttgir)
    assert "ttg.local_load" in body and "ttng.warp_group_dot" not in body


def test_assembles_without_spills(tmp_path) -> None:
    report = assemble(fp8_matmul(True), tmp_path)
    assert " 0 bytes spill stores" in report
    registers = int(re.search(r"Used (\d+) registers", report).group(1))
    assert registers < 200, report  # 237 with the pointers converted in the loop


def test_fp16_result_is_stored_a_16_byte_vector_a_row() -> None:
    # The plan's width is 16 fp8 elements; the fp16 result takes 8 a thread (16 bytes),
    # so that each store instruction writes whole 32-byte sectors (Triton's coalescing).
    k = fp8_matmul(True)
    store_layout = re.search(r"convert_layout\(%c\) \{layout = \"([^\"]+)\"", k.ttgir).group(1)
    assert store_layout.startswith("blocked<spt=[1, 8], tpw=[2, 16]"), store_layout
    assert "blocked<spt=[1, 16]" in k.ttgir  # the fp8 loads keep 16 a thread
    epilogue = k.ptx[k.ptx.rindex("wgmma.wait_group") :]
    assert epilogue.count("st.global.v4.b32") == 8  # 128 x 128 fp16 over 256 threads
    assert epilogue.count("ld.shared.v4.b32") == 8
