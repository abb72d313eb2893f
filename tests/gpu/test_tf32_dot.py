"""The emulator's TF32 ``tl.dot`` against the GPU's tensor cores, on the same inputs.

The GPU test (marked ``gpu``) runs one fp32 matmul kernel on both backends.
It needs the GPU to lower the dot to TF32 tensor-core instructions
(``mma.sync ... .tf32`` or ``wgmma ... .tf32`` in the PTX); on a dot path
without them (FMAs: exact products) it skips and says why.

Agreement means: within one fp32 ULP per accumulation step. The emulator
adds 8 values of K per step with one rounding, as ``mma.m16n8k8`` and
``wgmma`` for TF32 do; the hardware may round inside a step differently, so
each step may differ by up to one ULP of the largest partial sum, which is
at most ``sum_k |a_ik| |b_kj|`` of the rounded inputs. The bound is much
tighter than the effect of TF32 rounding itself, so a GPU that does not round
its inputs, or truncates them, fails it (the CPU tests below check that the
bound rejects both).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator.tf32 import K_STEP, round_to_tf32, tf32_dot, truncate_to_tf32
from minitriton.jit import gpu_available

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


def run_matmul(a: np.ndarray, b: np.ndarray, backend: str) -> np.ndarray:
    c = np.full((M, N), np.nan, np.float32)
    grid = (M // BLOCK_M, N // BLOCK_N)
    matmul_kernel[grid](a, b, c, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, backend=backend)
    return c


def accumulation_bound(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One fp32 ULP of the largest possible partial sum, per accumulation step."""
    steps = a.shape[1] // K_STEP
    magnitude = np.abs(round_to_tf32(a)).astype(np.float64) @ np.abs(round_to_tf32(b))
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
    emulated = tf32_dot(a, b, zero)
    once = (round_to_tf32(a).astype(np.float64) @ round_to_tf32(b)).astype(np.float32)
    assert agrees(emulated, once, a, b)
    assert not np.array_equal(emulated, once)  # the steps' roundings are visible


def test_the_bound_rejects_unrounded_and_truncated_inputs():
    a, b = inputs()
    emulated = tf32_dot(a, b, np.zeros((M, N), np.float32))
    exact_fp32 = (a.astype(np.float64) @ b).astype(np.float32)
    truncated_inputs = tf32_dot(a, b, np.zeros((M, N), np.float32), truncate_to_tf32)
    assert not agrees(exact_fp32, emulated, a, b)
    assert not agrees(truncated_inputs, emulated, a, b)


def test_the_kernel_on_the_emulator_is_one_tf32_dot_over_all_of_k():
    a, b = inputs()
    want = tf32_dot(a, b, np.zeros((M, N), np.float32))  # K / BLOCK_K dots, same steps
    np.testing.assert_array_equal(run_matmul(a, b, "emulator"), want)


def test_the_ptx_pattern_finds_tf32_tensor_core_instructions_only():
    assert TF32_MMA.search("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1}, ...")
    assert TF32_MMA.search("wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {...}")
    assert not TF32_MMA.search("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {...}")
    assert not TF32_MMA.search("fma.rn.f32 %f3, %f1, %f2, %f3;")


# ---------------------------------------------------------------- emulator against GPU


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs an NVIDIA GPU and cuda-python")
def test_emulator_tf32_matmul_agrees_with_the_gpu():
    a, b = inputs()
    compiled = matmul_kernel.warmup(a, b, a, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, backend="gpu")
    if not TF32_MMA.search(compiled.asm.get("ptx", "")):
        pytest.skip("the GPU's dot path has no TF32 tensor-core instructions (exact FMAs)")
    gpu = run_matmul(a, b, "gpu")
    emulated = run_matmul(a, b, "emulator")
    if agrees(gpu, emulated, a, b):
        return
    zero = np.zeros((M, N), np.float32)
    models = {
        "unrounded fp32 inputs": (a.astype(np.float64) @ b).astype(np.float32),
        "truncated inputs": tf32_dot(a, b, zero, truncate_to_tf32),
    }
    like = [name for name, want in models.items() if agrees(gpu, want, a, b)]
    worst = np.max(np.abs(gpu.astype(np.float64) - emulated) / accumulation_bound(a, b))
    pytest.fail(
        f"GPU and emulator differ by up to {worst:.1f}x the bound; "
        f"the GPU matches: {', '.join(like) or 'no model tried'}"
    )
