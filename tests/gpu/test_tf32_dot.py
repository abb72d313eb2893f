"""The emulator's TF32 ``tl.dot`` against the GPU's tensor cores, on the same inputs.

The GPU tests (marked ``gpu``) run fp32 dots on both backends, for sm_90a
(``wgmma``) and sm_80 (``mma.sync``, which the H200 JIT-compiles). They
need the GPU to lower the dot to TF32 tensor-core instructions
(``mma.sync ... .tf32`` or ``wgmma ... .tf32`` in the PTX); on a dot path
without them (FMAs: exact products) they skip and say why.

* **Bitwise** where the accumulation order cannot matter: operands with one
  nonzero per row of A and per column of B (``tests/kernels/tf32_kernels.py``),
  so each output is one product, exact once its inputs are TF32; what the
  tensor cores do to the fp32 bits shows alone.
* **Within one fp32 ULP per accumulation step** for a full matmul. The
  emulator adds 8 values of K per step with one rounding, as ``mma.m16n8k8``
  and ``wgmma`` for TF32 do; the hardware may round inside a step
  differently, so each step may differ by up to one ULP of the largest
  partial sum, at most ``sum_k |a_ik| |b_kj|`` of the TF32 inputs. The bound
  is much tighter than the effect of the inputs' conversion, so a GPU that
  reads its inputs otherwise than the model (rounded, or exact) fails it
  (the CPU tests below check that the bound rejects both).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator.tf32 import K_STEP, round_to_tf32, tf32_dot, truncate_to_tf32
from minitriton.jit import gpu_available
from tests.kernels.tf32_kernels import tf32_probe_kernel

M, N, K = 64, 64, 256
BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32

#: A TF32 tensor-core instruction in PTX (NVVM's ``mma.sync`` or inline ``wgmma``).
TF32_MMA = re.compile(r"\b(?:mma\.sync|wgmma\.mma_async)\S*\.tf32\b")


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):  # fmt: skip
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)  # input_precision "tf32", Triton's default
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def run_matmul(a: np.ndarray, b: np.ndarray, backend: str, arch: str = "sm_90") -> np.ndarray:
    c = np.full((M, N), np.nan, np.float32)
    grid = (M // BLOCK_M, N // BLOCK_N)
    matmul_kernel[grid](a, b, c, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, backend=backend, arch=arch)
    return c


def accumulation_bound(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One fp32 ULP of the largest possible partial sum, per accumulation step."""
    steps = a.shape[1] // K_STEP
    magnitude = np.abs(round_to_tf32(a)).astype(np.float64) @ np.abs(round_to_tf32(b))  # >= rz
    return steps * 2.0**-23 * magnitude


def agrees(got: np.ndarray, want: np.ndarray, a: np.ndarray, b: np.ndarray) -> bool:
    """True when ``got`` is within :func:`accumulation_bound` of ``want`` everywhere."""
    return bool((np.abs(got.astype(np.float64) - want) <= accumulation_bound(a, b)).all())


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2026)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    return a, b


# ---------------------------------------------------------------- the checker, on the CPU


def test_the_bound_accepts_the_emulator_and_one_rounding_of_the_exact_sum():
    a, b = inputs()
    zero = np.zeros((M, N), np.float32)
    emulated = tf32_dot(a, b, zero, truncate_to_tf32)
    once = (truncate_to_tf32(a).astype(np.float64) @ truncate_to_tf32(b)).astype(np.float32)
    assert agrees(emulated, once, a, b)
    assert not np.array_equal(emulated, once)  # the steps' roundings are visible


def test_the_bound_rejects_unconverted_and_rounded_inputs():
    a, b = inputs()
    emulated = tf32_dot(a, b, np.zeros((M, N), np.float32), truncate_to_tf32)
    exact_fp32 = (a.astype(np.float64) @ b).astype(np.float32)
    rounded_inputs = tf32_dot(a, b, np.zeros((M, N), np.float32), round_to_tf32)
    assert not agrees(exact_fp32, emulated, a, b)
    assert not agrees(rounded_inputs, emulated, a, b)


def test_the_kernel_on_the_emulator_is_one_tf32_dot_over_all_of_k():
    a, b = inputs()
    want = tf32_dot(a, b, np.zeros((M, N), np.float32), truncate_to_tf32)  # same steps
    np.testing.assert_array_equal(run_matmul(a, b, "emulator"), want)
    np.testing.assert_array_equal(run_matmul(a, b, "emulator", "sm_80"), want)


def test_the_ptx_pattern_finds_tf32_tensor_core_instructions_only():
    assert TF32_MMA.search("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1}, ...")
    assert TF32_MMA.search("wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {...}")
    assert not TF32_MMA.search("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {...}")
    assert not TF32_MMA.search("fma.rn.f32 %f3, %f1, %f2, %f3;")


# ---------------------------------------------------------------- single products


def probe_operands(which: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(A, B, x)``: ``x`` in operand ``which``, a 0/1 selection in the other; each output
    is one ``x`` (or 0). ``x`` has dropped bits above half a TF32 ULP, or exactly half."""
    rng = np.random.default_rng(32)
    kept = rng.integers(0, 1 << 23, 64).astype(np.uint32) & np.uint32(0xFFFFE000)
    dropped = np.where(np.arange(64) % 2 == 0, np.uint32(0x1800), np.uint32(0x1000))
    exponent = (rng.integers(-6, 7, 64) + 127).astype(np.uint32) << np.uint32(23)
    x = (exponent | kept | dropped).astype(np.uint32).view(np.float32) * np.where(
        np.arange(64) % 3 == 0, -1, 1
    ).astype(np.float32)
    select = np.zeros((64, 16), np.float32)
    select[np.arange(64), np.arange(64) % 16] = 1.0
    if which == "A":
        a = np.zeros((64, 16), np.float32)
        a[np.arange(64), np.arange(64) % 16] = x
        return a, select.T.copy(), x
    b = np.zeros((16, 64), np.float32)
    b[np.arange(64) % 16, np.arange(64)] = x
    return select, b, x


def run_probe(a: np.ndarray, b: np.ndarray, backend: str, arch: str) -> tuple[np.ndarray, str]:
    c = np.full((64, 64), np.nan, np.float32)
    compiled = tf32_probe_kernel[(1,)](a, b, c, 64, 64, 16, backend=backend, arch=arch)
    return c, compiled.asm.get("ptx", "") if backend == "gpu" else ""


def read_by_output(which: str, got: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The outputs that read a product, and the index of the ``x`` each one read."""
    rows, cols = np.nonzero((np.arange(64)[:, None] % 16) == (np.arange(64)[None, :] % 16))
    return got[rows, cols], rows if which == "A" else cols


def test_the_probe_reads_one_product_per_output():
    for which in ("A", "B"):
        a, b, x = probe_operands(which)
        got, _ = run_probe(a, b, "emulator", "sm_90")
        read, index = read_by_output(which, got)
        assert np.count_nonzero(got) == read.size == 64 * 4  # each x: 4 outputs share its k
        assert (read.view(np.uint32) == truncate_to_tf32(x)[index].view(np.uint32)).all()
        assert (read.view(np.uint32) != round_to_tf32(x)[index].view(np.uint32)).all()


# ---------------------------------------------------------------- emulator against GPU

ARCHS = ["sm_90a", "sm_80"]


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs an NVIDIA GPU and cuda-python")
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("which", ["A", "B"])
def test_single_products_agree_with_the_gpu_bit_for_bit(arch: str, which: str):
    a, b, x = probe_operands(which)
    gpu, ptx = run_probe(a, b, "gpu", arch)
    if not TF32_MMA.search(ptx):
        pytest.skip("the GPU's dot path has no TF32 tensor-core instructions (exact FMAs)")
    emulated, _ = run_probe(a, b, "emulator", arch.rstrip("a"))
    if np.array_equal(gpu.view(np.uint32), emulated.view(np.uint32)):
        return
    read, index = read_by_output(which, gpu)
    models = {"truncated": truncate_to_tf32, "rounded": round_to_tf32, "exact": lambda v: v}
    like = [
        name
        for name, model in models.items()
        if (read.view(np.uint32) == model(x)[index].view(np.uint32)).all()
    ]
    pytest.fail(
        f"{arch}: the GPU's products differ from the emulator's; "
        f"they read their inputs {', '.join(like) or 'as no model tried'}"
    )


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs an NVIDIA GPU and cuda-python")
@pytest.mark.parametrize("arch", ARCHS)
def test_emulator_tf32_matmul_agrees_with_the_gpu(arch: str):
    a, b = inputs()
    compiled = matmul_kernel.warmup(
        a, b, a, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, backend="gpu", arch=arch
    )
    if not TF32_MMA.search(compiled.asm.get("ptx", "")):
        pytest.skip("the GPU's dot path has no TF32 tensor-core instructions (exact FMAs)")
    gpu = run_matmul(a, b, "gpu", arch)
    emulated = run_matmul(a, b, "emulator", arch.rstrip("a"))
    if agrees(gpu, emulated, a, b):
        return
    zero = np.zeros((M, N), np.float32)
    models = {
        "unconverted fp32 inputs": (a.astype(np.float64) @ b).astype(np.float32),
        "rounded inputs": tf32_dot(a, b, zero, round_to_tf32),
        "truncated inputs": tf32_dot(a, b, zero, truncate_to_tf32),
    }
    like = [name for name, want in models.items() if agrees(gpu, want, a, b)]
    worst = np.max(np.abs(gpu.astype(np.float64) - emulated) / accumulation_bound(a, b))
    pytest.fail(
        f"{arch}: GPU and emulator differ by up to {worst:.1f}x the bound; "
        f"the GPU matches: {', '.join(like) or 'no model tried'}"
    )
