"""Dots that accumulate in fp16 agree with NumPy, on the GPU and the emulator.

fp16 operands with an fp16 result run on fp16-accumulating tensor cores
(``mma.sync ... .f16.f16.f16.f16``, ``wgmma ... .f16.f16.f16``), which round
the running sum to fp16 after every k16 step; the emulator does the same. Both
stay within Triton's ``test_dot`` tolerance of the exact product.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.kernels.f16_acc_kernels import dot_out_kernel, matmul_f16_acc_kernel  # noqa: E402


def _exact(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.matmul(x.astype(np.float64), y.astype(np.float64))


def _stepped(x: np.ndarray, y: np.ndarray, acc: np.ndarray | None = None) -> np.ndarray:
    """The product summed 16 values of K at a time, rounded to fp16 after each step."""
    total = np.zeros((x.shape[0], y.shape[1]), np.float16) if acc is None else acc
    for k in range(0, x.shape[1], 16):
        part = _exact(x[:, k : k + 16], y[k : k + 16])
        total = (total.astype(np.float64) + part).astype(np.float16)
    return total


@pytest.mark.parametrize(("m", "n", "k", "warps"), [(64, 64, 64, 4), (128, 128, 64, 8),
                                                   (32, 32, 32, 2), (16, 16, 16, 1)])  # fmt: skip
@pytest.mark.parametrize("chain", [False, True])
def test_fp16_out_dot(backend, m, n, k, warps, chain):
    rng = np.random.default_rng(3)
    x = (0.1 * rng.standard_normal((m, k))).astype(np.float16)
    y = (0.1 * rng.standard_normal((max(k, n), n))).astype(np.float16)
    z = np.zeros((m, n), np.float16)
    dot_out_kernel[(1,)](x, y, z, m, n, k, True, chain, num_warps=warps, backend=backend)
    ref = _exact(x, y[:k])
    if chain:
        ref = _exact(ref.astype(np.float16), y[:n])
    np.testing.assert_allclose(z.astype(np.float64), ref, rtol=1e-2, atol=1e-2)
    if backend == "emulator" and not chain:  # the emulator models the fp16 steps exactly
        np.testing.assert_array_equal(z, _stepped(x, y[:k]))


@pytest.mark.parametrize("num_stages", [1, 3])
@pytest.mark.parametrize(("bm", "bn", "bk", "warps"), [(128, 128, 64, 4), (64, 64, 32, 4),
                                                       (128, 256, 64, 8)])  # fmt: skip
def test_fp16_accumulator_loop(backend, bm, bn, bk, warps, num_stages):
    rng = np.random.default_rng(5)
    M, N, K = 256, 256, 512
    a = (0.1 * rng.standard_normal((M, K))).astype(np.float16)
    b = (0.1 * rng.standard_normal((K, N))).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    grid = (M // bm, N // bn)
    matmul_f16_acc_kernel[grid](a, b, c, M, N, K, bm, bn, bk, num_warps=warps,
                                num_stages=num_stages, backend=backend)  # fmt: skip
    exact = _exact(a, b)
    np.testing.assert_allclose(c.astype(np.float64), exact, rtol=1e-2, atol=1e-2)
    # fp16 accumulation: about 1e-3 relative from the exact product, no more
    err = np.abs(c.astype(np.float64) - exact).max() / np.abs(exact).max()
    assert err < 5e-3
    if backend == "emulator":
        np.testing.assert_array_equal(c, _stepped(a, b))
