"""Software pipelining on the ``mma.sync`` path (sm_80..sm_89, sm_120), without a GPU.

The K loop of ``tests/kernels/dot_kernels.py``'s matmul is compiled for
sm_80-class archs: with ``num_stages >= 2`` its loads become ``cp.async``
copies into rings of swizzled tiles, read back with ``ldmatrix`` by the dot;
with ``num_stages = 1`` the loop is the unpipelined one.
"""

from __future__ import annotations

import re

import pytest

from minitriton.ir.ttgir_text import readable
from tests.backend.test_mma_lowering import assemble, build, dot
from tests.kernels import dot_kernels

INT8_SIG = "*i8:16, *i8:16, *i32:16, i32:16, i32:16, i32:16, " + ", ".join(["i32:16, i32:1"] * 3)


def int8_dot(tile: str = "64, 64, 64", **kw):
    return build(dot_kernels.int8_dot_kernel, f"{INT8_SIG}, {tile}", **kw)


def loop_lines(ttgir: str) -> list[str]:
    """The ttgir lines of the pipeline's ops and the dot, in order."""
    keep = r"ttg\.(local|async)|tt\.barrier|scf\.for|tt\.dot"
    return [line.strip().split(" {")[0] for line in ttgir.splitlines() if re.search(keep, line)]


def test_pipelined_ttgir_golden(golden):
    golden(readable(dot("fp16").ttgir), "dot_fp16_64x64x32_sm80_pipelined.ttgir")


def test_the_loop_waits_refills_then_reads_the_slot():
    lines = loop_lines(dot("fp16").ttgir)
    body = lines[lines.index(next(x for x in lines if "scf.for" in x)) + 1 :]
    assert [x.split("(")[0].split("= ")[-1] for x in body[:9]] == [
        "ttg.async_wait", "tt.barrier",
        "ttg.async_copy_global_to_local", "ttg.async_copy_global_to_local",
        "ttg.async_commit_group",
        "ttg.local_load", "ttg.local_load", "tt.dot",
        "ttg.async_wait",
    ]  # fmt: skip
    # Prologue: num_stages - 1 = 2 groups of copies before the loop.
    assert sum("async_commit_group" in x for x in lines[: lines.index(body[0]) - 1]) == 2


@pytest.mark.parametrize("stages", [2, 3, 4])
def test_num_stages_sets_the_ring_and_the_wait(stages):
    k = dot("fp16", num_stages=stages)
    assert k.ttgir.count(f"stages = {stages}") == 2
    assert f"cp.async.wait_group {stages - 2};" in k.ptx
    assert "cp.async.wait_group 0;" in k.ptx


def test_one_stage_keeps_the_unpipelined_loop():
    k = dot("fp16", num_stages=1)
    assert "cp.async" not in k.ptx and "ttg.local_load" not in k.ttgir
    assert "ldmatrix" in k.ptx and "mma.sync" in k.ptx


def test_ptx_reads_rings_with_ldmatrix_and_no_async_proxy_fence():
    k = dot("fp16")
    assert "cp.async.cg.shared.global" in k.ptx  # 16-byte copies of row-major tiles
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in k.ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in k.ptx
    assert "fence.proxy.async" not in k.ptx  # wgmma's proxy only; sm_80 has no such fence
    assert ".target sm_80" in k.ptx


def test_k_major_b_is_pipelined_into_a_transposed_ring():
    # B transposed in memory (stride_bk = 1): a K-major ring (see test_mma_kmajor.py).
    sig = ("*fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, i32:16, i32:1, "
           "i32:1, i32:16, i32:16, i32:1, 64, 64, 32, \"tf32\"")  # fmt: skip
    k = build(dot_kernels.dot_kernel, sig)
    assert "cp.async" in k.ptx and "mma.sync" in k.ptx and "contig = 0" in k.ttgir


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_120"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32", "int8"])
def test_ptxas_accepts_pipelined_dots(arch, dtype, tmp_path):
    # tf32 at 128x128 with 4 warps spills with or without the pipeline: 64x64 for it.
    tile = "64, 64, 32" if dtype == "fp32" else "128, 128, 32"
    k = int8_dot(arch=arch) if dtype == "int8" else dot(dtype, tile=tile, arch=arch)
    assert "cp.async" in k.ptx and "mma.sync" in k.ptx
    info = assemble(k, tmp_path)
    assert " 0 bytes spill stores" in info


# ------------------------------------------------------------------ wgmma kinds without a transpose


@pytest.mark.parametrize("dtype", ["fp32", "int8", "fp8e4nv", "fp8e5"])
def test_wgmma_tf32_int8_fp8_loops_are_pipelined_and_restaged(dtype, tmp_path):
    # cp.async into row-major rings; each iteration reads its slot into registers, and the
    # dot stages them K-major (fp32 bits unconverted, as Triton does) for wgmma.
    kw = {"arch": "sm_90a", "num_warps": 8}
    k = int8_dot("128, 128, 64", **kw) if dtype == "int8" else dot(dtype, tile="128, 128, 64", **kw)
    lines = loop_lines(k.ttgir)
    loop = lines.index(next(x for x in lines if "scf.for" in x))
    assert [x.split("(")[0].split("= ")[-1] for x in lines[loop + 1 : loop + 9]] == [
        "ttg.async_wait", "tt.barrier",
        "ttg.async_copy_global_to_local", "ttg.async_copy_global_to_local",
        "ttg.async_commit_group", "ttg.local_load", "ttg.local_load", "tt.dot",
    ]  # fmt: skip
    assert 'layout = "blocked<' in next(x for x in k.ttgir.splitlines() if "ttg.local_load" in x)
    assert "cp.async.cg.shared.global" in k.ptx and "wgmma.mma_async" in k.ptx
    assert "cvt.rna" not in k.ptx  # fp32 bits go to the tensor cores as Triton gives them
    assert " 0 bytes spill stores" in assemble(k, tmp_path)


def test_wgmma_fp16_keeps_its_own_pipeline():
    k = dot("fp16", tile="128, 128, 64", arch="sm_90a", num_warps=8)
    assert "ttng.warp_group_dot" in k.ttgir and "ttg.local_load" not in k.ttgir


@pytest.mark.parametrize(("arch", "stages"), [("sm_86", 2), ("sm_89", 2), ("sm_120", 2),
                                              ("sm_80", 3), ("sm_90a", 4)])  # fmt: skip
def test_num_stages_shrinks_to_fit_the_archs_shared_memory(arch, stages):
    # 128x256x64 fp16: 48 KB of rings per stage; 99 KB per block on sm_86/89/120, 163 on sm_80.
    k = dot("fp16", tile="128, 256, 64", arch=arch, num_warps=8, num_stages=4)
    assert k.ttgir.count(f"stages = {stages}") == 2
    limit = {"sm_80": 163, "sm_90a": 227}.get(arch, 99) << 10
    assert stages * (48 << 10) <= limit < (stages + 1) * (48 << 10) or stages == 4


def test_rings_that_never_fit_leave_the_loop_unpipelined():
    # 256x128x128 fp16 on sm_86: 96 KB per stage, two stages cannot fit in 99 KB.
    k = dot("fp16", tile="256, 128, 128", arch="sm_86", num_warps=8)
    assert "cp.async" not in k.ptx and "mma.sync" in k.ptx
