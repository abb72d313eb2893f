"""A dot with an fp16 result adds in fp32 and rounds once, on both backends.

Batched (3-D) dots take the FMA path on the GPU. With ``out_dtype=tl.float16``
it used to round each of K partial sums to fp16, which drifts from the exact
product by about 1e-2 for K = 64 and standard-normal inputs; the emulator (and
the tensor cores) round once. Both backends are checked against the exact
product rounded once.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl


@triton.jit
def batched_dot(x_ptr, y_ptr, o_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr,
                K: tl.constexpr, OUT: tl.constexpr):  # fmt: skip
    b = tl.arange(0, B)[:, None, None]
    m = tl.arange(0, M)[None, :, None]
    n = tl.arange(0, N)[None, None, :]
    k = tl.arange(0, K)
    x = tl.load(x_ptr + b * M * K + m * K + k[None, None, :])
    y = tl.load(y_ptr + b * K * N + k[None, :, None] * N + n)
    tl.store(o_ptr + b * M * N + m * N + n, tl.dot(x, y, out_dtype=OUT))


@pytest.mark.parametrize("out", [tl.float16, tl.float32])
def test_a_batched_fp16_dot_rounds_once(backend, out):
    rng = np.random.default_rng(17)
    B, M, N, K = 2, 32, 32, 64
    x = (4 * rng.standard_normal((B, M, K))).astype(np.float16)
    y = (4 * rng.standard_normal((B, K, N))).astype(np.float16)
    o = np.zeros((B, M, N), np.float16 if out == tl.float16 else np.float32)
    batched_dot[(1,)](x, y, o, B, M, N, K, out, backend=backend)
    exact = np.matmul(x.astype(np.float64), y.astype(np.float64))
    # once-rounded fp16 is within half an ulp (plus fp32's own rounding)
    ulp = np.spacing(np.abs(exact).astype(o.dtype)).astype(np.float64)
    assert np.all(np.abs(o.astype(np.float64) - exact) <= 0.5 * ulp + 1e-4 * np.abs(exact) + 1e-3)
