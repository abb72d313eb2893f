"""The library kernels that the benchmarks time, run small on the emulator against NumPy.

``tests/kernels/tc_kernels.py`` (the tensor-core benchmark's matmuls, attention
and descriptor matmul), ``tma_matmul.bp_matmul_kernel`` (the TMA benchmark's
block-pointer matmul) and ``silu_mul.py`` (the emulator benchmark's
elementwise row): each at a size with ragged tails where the kernel masks
them, so a benchmark times a kernel that computes the right thing.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
from minitriton.tools.tensor_descriptor import TensorDescriptor
from tests.kernels import silu_mul, tc_kernels, tma_matmul


def _elements(a: np.ndarray) -> tuple[int, ...]:
    """``a``'s strides in elements."""
    return tuple(s // a.itemsize for s in a.strides)


@pytest.mark.parametrize("out_dtype", [np.float16, np.float32])
@pytest.mark.parametrize("plus_equals", [False, True])
def test_the_tensor_core_matmul(
    rng: np.random.Generator, out_dtype: type, plus_equals: bool
) -> None:
    M, N, K = 72, 80, 48  # noqa: N806 - tails in every dimension over 32 x 32 x 16 tiles
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, dtype=out_dtype)  # the output takes c_ptr's element type
    grid = (triton.cdiv(M, 32) * triton.cdiv(N, 32),)
    tc_kernels.matmul_kernel[grid](
        a, b, c, M, N, K, *_elements(a), *_elements(b), *_elements(c),
        BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=16, GROUP_SIZE_M=2,
        PLUS_EQUALS=plus_equals, backend="emulator",
    )  # fmt: skip
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=1e-2, atol=2e-2)


def _attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    """Softmax(q k^T / sqrt(d)) v in float32, masked above the diagonal when ``causal``."""
    q32, k32, v32 = (t.astype(np.float32) for t in (q, k, v))
    s = q32 @ k32.swapaxes(-1, -2) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v32


@pytest.mark.parametrize("causal", [False, True])
def test_the_tensor_core_attention(rng: np.random.Generator, causal: bool) -> None:
    z, h, n, d, block = 2, 2, 64, 32, 16
    q, k, v = (rng.standard_normal((z, h, n, d)).astype(np.float16) for _ in range(3))
    out = np.full_like(q, np.nan)
    m = np.zeros((z * h, n), dtype=np.float32)
    tc_kernels._attn_fwd[(n // block, z * h)](
        q, k, v, d**-0.5, m, out, *_elements(q), *_elements(k), *_elements(v), *_elements(out),
        z, h, N_CTX=n, HEAD_DIM=d, BLOCK_M=block, BLOCK_N=block, STAGE=3 if causal else 1,
        backend="emulator",
    )  # fmt: skip
    want = _attention(q, k, v, causal)
    np.testing.assert_allclose(out.astype(np.float32), want, rtol=1e-2, atol=1e-2)


def test_the_descriptor_matmul_with_the_benchmarks_block_shapes(rng: np.random.Generator) -> None:
    M, N, K, bm, bn, bk = 72, 80, 48, 32, 32, 16  # noqa: N806
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)  # N x K: C = A @ B.T
    c = np.full((M, N), np.nan, dtype=np.float16)
    descs = [TensorDescriptor.from_tensor(t, s) for t, s in ((a, [bm, bk]), (b, [bn, bk]),
                                                               (c, [bm, bn]))]  # fmt: skip
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    tc_kernels.matmul_kernel_tma[grid](
        *descs, M, N, K, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=2,
        backend="emulator",
    )  # fmt: skip
    want = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=1e-2, atol=2e-2)


def test_the_block_pointer_matmul(rng: np.random.Generator) -> None:
    M, N, K, bm, bn, bk = 72, 80, 48, 32, 32, 32  # noqa: N806 - K's tail is bounds-checked
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, dtype=np.float16)
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    tma_matmul.bp_matmul_kernel[grid](
        a, b, c, M, N, K, *_elements(a), *_elements(b), *_elements(c), BM=bm, BN=bn, BK=bk,
        backend="emulator",
    )  # fmt: skip
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=1e-2, atol=2e-2)


def test_silu_mul(rng: np.random.Generator) -> None:
    n = 300  # five programs of 64, the last one partial
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    out = np.full(n + 7, -5.0, dtype=np.float32)  # past n: must stay as it is
    silu_mul.silu_mul_kernel[(triton.cdiv(n, 64),)](x, y, out, n, BLOCK_SIZE=64,
                                                     backend="emulator")  # fmt: skip
    np.testing.assert_allclose(out[:n], x / (1 + np.exp(-x)) * y, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[n:], -5.0)
