"""Tutorial 09's descriptor matmul on sm_90a: host descriptors, ``A @ B.T``, the cp.async ring.

No GPU needed (llvmlite; ``ptxas`` where it is on PATH). The GPU runs of the
same kernel are in ``tests/e2e/test_host_descriptors.py``.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.signature import parse_signature
from tests.e2e.test_host_descriptors import matmul_kernel_tma

SIGNATURE = ("tensordesc<fp16[128, 64]>:16, tensordesc<fp16[128, 64]>:16, "
             "tensordesc<fp16[128, 128]>:16, i32:16, i32:16, i32:16, 128, 128, 64, 8")  # fmt: skip


def _compile(arch: str, warps: int = 8) -> dict[str, str]:
    fn = matmul_kernel_tma.fn
    specs = parse_signature(SIGNATURE, fn.params)
    options = CompileOptions(num_warps=warps, num_stages=3, arch=arch)
    ck = compile_kernel(fn.source, specs, options, stop_after="ptx")
    return {"ttgir": ck.asm["ttgir"], "ptx": ck.asm["ptx"]}


def _loop(ttgir: str) -> str:
    start = ttgir.index("scf.for")
    return ttgir[start : ttgir.index("\n  }", start)]


def test_descriptor_arguments_become_base_sizes_and_strides() -> None:
    head = _compile("sm_90a")["ttgir"].splitlines()[0]
    assert (
        "%a_desc: ptr<f16> {divisibility = 16}, %a_desc_shape0: i32 {divisibility = 16}, "
        "%a_desc_shape1: i32 {divisibility = 16}, %a_desc_stride0: i64 {divisibility = 16}, "
        "%b_desc: ptr<f16>"
    ) in head


def test_b_transposed_is_copied_k_major_into_the_ring(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("MINITRITON_TMA", "0")  # the cp.async ring (tests/backend/test_tma.py: TMA)
    out = _compile("sm_90a")
    ttgir, ptx = out["ttgir"], out["ptx"]
    rings = re.findall(r"ttg\.local_alloc\(\) \{buffer = (\d), contig = (\d).*shape = (\[[^]]*\]), "
                       r"stages = 3\}", ttgir)  # fmt: skip
    assert rings == [("0", "1", "[128, 64]"), ("1", "0", "[64, 128]")]  # A row-major, B K-major
    loop = _loop(ttgir)
    assert loop.count("ttg.async_copy_global_to_local") == 2
    assert "tt.load" not in loop and "tt.trans" not in ttgir  # no transpose moves data
    # tnspB = 0: B is K-major in shared memory; no pointer block goes through shared memory.
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.f16\.f16 .*, 1, 1, 0, 0;",
                     ptx)  # fmt: skip
    assert "cp.async.cg.shared.global" in ptx and "st.shared.b64" not in ptx


def test_sm80_copies_b_transposed_into_a_k_major_ring_too() -> None:
    # mma.sync: the same K-major B ring, read with ldmatrix without .trans.
    out = _compile("sm_80", warps=4)
    ttgir, ptx = out["ttgir"], out["ptx"]
    assert "tt.trans" not in ttgir and _loop(ttgir).count("ttg.async_copy_global_to_local") == 2
    assert 'contig = 0, dtype = "f16", encoding = "swizzled_shared<vec=8, perPhase=1, ' in ttgir
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx and ".trans" not in ptx


def test_sm75_keeps_the_transpose() -> None:
    ttgir = _compile("sm_75", warps=4)["ttgir"]
    assert "tt.trans" in ttgir and "ttg.async_copy_global_to_local" not in ttgir


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_ptxas_accepts_it(tmp_path, arch: str) -> None:  # noqa: ANN001
    ptx = tmp_path / "k.ptx"
    ptx.write_text(_compile(arch, warps=8 if arch == "sm_90a" else 4)["ptx"])
    run = subprocess.run(["ptxas", f"-arch={arch}", "-v", str(ptx), "-o", str(tmp_path / "k.o")],
                         capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 0, run.stderr
    if arch == "sm_90a":
        assert "0 bytes spill stores" in run.stderr
