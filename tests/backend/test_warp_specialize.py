"""The ``warp-specialize`` pass: where it splits a loop, what the PTX holds, where it declines.

No GPU needed (llvmlite; ``ptxas`` where it is on PATH). The golden ttgir
before and after the pass is in ``goldens/gpu_passes/warp-specialize`` (see
``test_gpu_passes.py``); the GPU runs are in ``tests/gpu/test_warp_specialize_gpu.py``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from minitriton.backend.build import PTXModule
from minitriton.backend.ops import WarpSpecializeOp
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.diagnostics import CompileError
from minitriton.ir import parse_module, print_module, verify_module
from minitriton.signature import descriptor_spec, parse_signature
from minitriton.tools.tensor_descriptor import TensorDescriptor
from tests.kernels.persistent_matmul import persistent_desc_matmul
from tests.kernels.tma_matmul import ws_block_ptr_matmul, ws_desc_matmul

GOLDEN = Path(__file__).parent / "goldens" / "gpu_passes" / "warp-specialize"


def _sig(ws: int, bn: int = 128) -> str:
    descs = f"tensordesc<fp16[128, 64]>:16, tensordesc<fp16[{bn}, 64]>:16, "
    return descs + f"tensordesc<fp16[128, {bn}]>:16, i32:16, i32:16, i32:16, 128, {bn}, 64, {ws}"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    monkeypatch.setenv("MINITRITON_WARP_SPECIALIZE", "1")
    monkeypatch.delenv("MINITRITON_TMA", raising=False)
    monkeypatch.delenv("MINITRITON_TMA_FORMS", raising=False)


def _compile(kernel, sig: str, warps: int = 4, arch: str = "sm_90a", debug: bool = False,  # noqa: ANN001
             maxnreg: int | None = None) -> PTXModule:  # fmt: skip
    specs = parse_signature(sig, kernel.params)
    options = CompileOptions(num_warps=warps, num_stages=3, arch=arch, debug=debug,
                             maxnreg=maxnreg)  # fmt: skip
    return compile_kernel(kernel.source, specs, options, stop_after="ptx").binary


def _split(binary: PTXModule) -> bool:
    return "ttng.warp_specialize" in binary.ttgir or "setmaxnreg" in binary.ptx


@pytest.mark.parametrize(("warps", "entry_regs"), [(4, 232), (8, 168)])
def test_the_ptx_has_a_producer_warpgroup(warps: int, entry_regs: int) -> None:
    binary = _compile(ws_desc_matmul, _sig(1, 256 if warps == 8 else 128), warps)
    ptx = binary.ptx
    assert binary.num_warps == warps + 4  # the launcher's block size
    assert f".maxntid {32 * (warps + 4)}" in ptx and f".maxnreg {entry_regs}" in ptx
    dec = ptx.index("setmaxnreg.dec.sync.aligned.u32 40;")
    inc = ptx.index("setmaxnreg.inc.sync.aligned.u32 232;")
    # The producer waits for empty stages and issues the copies; the consumers only wait.
    producer, consumer = ptx[dec:inc], ptx[inc:]
    assert "cp.async.bulk.tensor" in producer and "mbarrier.arrive.expect_tx" in producer
    assert "cp.async.bulk.tensor" not in consumer and "wgmma.mma_async" in consumer
    assert "mbarrier.arrive.shared::cta.b64" in consumer
    # Past the split, no CTA-wide barrier: the producer has exited.
    assert "bar.sync \t0" not in consumer and f"barrier.sync \t1, {32 * warps};" in consumer
    inits = re.findall(r"mbarrier\.init\.shared::cta\.b64 \[%r\d+\], (\d+);", ptx)
    assert sorted(inits) == sorted(["1"] * 3 + [str(warps)] * 3)  # full, and empty per warp


def test_a_lower_maxnreg_lowers_the_count_at_entry_only() -> None:
    # maxnreg caps what every thread starts with; the consumers still raise theirs.
    ptx = _compile(ws_desc_matmul, _sig(1), 4, maxnreg=128).ptx
    assert ".maxnreg 128" in ptx and ".maxnreg 232" not in ptx
    assert "setmaxnreg.inc.sync.aligned.u32 232;" in ptx


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not on PATH")
@pytest.mark.parametrize("warps", [4, 8])
def test_ptxas_assembles_it(tmp_path: Path, warps: int) -> None:
    ptx = tmp_path / "k.ptx"
    ptx.write_text(_compile(ws_desc_matmul, _sig(1, 256 if warps == 8 else 128), warps).ptx)
    run = subprocess.run(["ptxas", "-v", "-arch=sm_90a", str(ptx), "-o", str(tmp_path / "k.o")],
                         capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "setmaxnreg ignored" not in run.stderr  # ptxas knows the count at entry


def test_a_row_stride_of_eight_halves_keeps_the_tma_loop() -> None:
    # K = 72: the descriptors' row strides are not multiples of 16 elements, but a host
    # descriptor's strides are multiples of 16 bytes, all that TMA needs.
    m, n, k = 129, 256, 72
    arrays = [np.zeros(shape, np.float16) for shape in ((m, k), (n, k), (m, n))]
    blocks = [[128, 64], [128, 64], [128, 128]]
    descs = [TensorDescriptor.from_tensor(x, blk) for x, blk in zip(arrays, blocks)]
    names = [p.name for p in ws_desc_matmul.params]
    specs = [descriptor_spec(name, d) for name, d in zip(names, descs)]
    assert specs[0].value[2] == (False, False, False)  # M, K and the stride 72: not multiples of 16
    specs += parse_signature("i32, i32:16, i32, 128, 128, 64, 1", ws_desc_matmul.params[3:])
    options = CompileOptions(num_warps=4, num_stages=3, arch="sm_90a")
    binary = compile_kernel(ws_desc_matmul.source, specs, options, stop_after="ptx").binary
    assert "cp.async.bulk.tensor" in binary.ptx and _split(binary)


def test_no_flag_no_split() -> None:
    binary = _compile(ws_desc_matmul, _sig(0))
    assert not _split(binary) and binary.num_warps == 4
    assert "cp.async.bulk.tensor" in binary.ptx  # still the TMA pipeline


def test_off_without_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MINITRITON_WARP_SPECIALIZE")
    assert not _split(_compile(ws_desc_matmul, _sig(1)))


@pytest.mark.parametrize(
    ("env", "arch", "debug"),
    [("MINITRITON_TMA", "sm_90a", False), (None, "sm_80", False), (None, "sm_90a", True)],
    ids=["cp.async loop", "sm_80", "debug mode"],
)
def test_declines_without_a_tma_loop(monkeypatch, env: str | None, arch: str, debug: bool) -> None:  # noqa: ANN001
    if env:
        monkeypatch.setenv(env, "0")
    binary = _compile(ws_desc_matmul, _sig(1), arch=arch, debug=debug)
    assert not _split(binary) and binary.num_warps == 4
    assert "cp.async.bulk" not in binary.ptx


def test_declines_loop_carried_coordinates() -> None:
    sig = ("*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:16, i32:16, "
           "128, 128, 64")  # fmt: skip
    binary = _compile(ws_block_ptr_matmul, sig)
    assert "cp.async.bulk.tensor" in binary.ptx  # a TMA loop, but tl.advance carries its tiles
    assert not _split(binary)


def test_declines_a_flag_on_the_tile_loop() -> None:
    # Tutorial 09's persistent kernel asks on its tile loop; the K loop inside is the TMA one.
    descs = _sig(0).split(", i32:16")[0]
    sig = descs + ", i32:16, i32:16, i32:16, 128, 128, 64, 8, 0, 132, 1"
    binary = _compile(persistent_desc_matmul, sig)
    assert "{warp_specialize = true}" in binary.ttgir  # the flag reached the IR
    assert "cp.async.bulk.tensor" in binary.ptx and not _split(binary)


def test_the_op_checks_its_register_counts() -> None:
    text = (GOLDEN / "ws-descriptor-matmul-sm90a.out").read_text()
    module = parse_module(text)
    verify_module(module)
    assert print_module(module) == text
    (op,) = [o for o in module.walk() if isinstance(o, WarpSpecializeOp)]
    op.attrs["producer_regs"] = 36  # setmaxnreg takes multiples of 8
    with pytest.raises(CompileError, match="multiple of 8 in 24..256"):
        verify_module(module)


def test_the_emulator_ignores_the_flag() -> None:
    rng = np.random.default_rng(5)
    m, n, k = 40, 24, 56  # ragged: none a multiple of its block
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((n, k)).astype(np.float16)
    c = np.zeros((m, n), np.float16)
    descs = [TensorDescriptor.from_tensor(a, [32, 16]), TensorDescriptor.from_tensor(b, [32, 16]),
             TensorDescriptor.from_tensor(c, [32, 32])]  # fmt: skip
    ws_desc_matmul[(2, 2)](*descs, m, n, k, 32, 32, 16, True, backend="emulator")
    want = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=1e-2, atol=2e-2)
