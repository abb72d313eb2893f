"""Puzzle-style kernels (outer products, long reductions, conv2d, int4 matmul)."""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
from tests.kernels.puzzles import (
    conv2d_kernel,
    int4_matmul_kernel,
    long_softmax_kernel,
    long_sum_kernel,
    outer_add_kernel,
    outer_mul_relu_bwd_kernel,
    outer_mul_relu_kernel,
)

N0, N1, B0, B1 = 45, 37, 16, 16
GRID_2D = (triton.cdiv(N0, B0), triton.cdiv(N1, B1))


def test_outer_add(backend: str, rng: np.random.Generator) -> None:
    x = rng.standard_normal(N0, dtype=np.float32)
    y = rng.standard_normal(N1, dtype=np.float32)
    z = np.zeros((N1, N0), dtype=np.float32)
    outer_add_kernel[GRID_2D](x, y, z, N0, N1, B0=B0, B1=B1, backend=backend)
    np.testing.assert_allclose(z, x[None, :] + y[:, None], rtol=1e-6)


def test_outer_mul_relu_forward(backend: str, rng: np.random.Generator) -> None:
    x = rng.standard_normal((N1, N0), dtype=np.float32)
    y = rng.standard_normal(N1, dtype=np.float32)
    z = np.full((N1, N0), np.nan, dtype=np.float32)
    outer_mul_relu_kernel[GRID_2D](x, y, z, N0, N1, B0=B0, B1=B1, backend=backend)
    np.testing.assert_allclose(z, np.maximum(x * y[:, None], 0), rtol=1e-6)


def test_outer_mul_relu_backward(backend: str, rng: np.random.Generator) -> None:
    x = rng.standard_normal((N1, N0), dtype=np.float32)
    y = rng.standard_normal(N1, dtype=np.float32)
    dz = rng.standard_normal((N1, N0), dtype=np.float32)
    dx = np.full((N1, N0), np.nan, dtype=np.float32)
    outer_mul_relu_bwd_kernel[GRID_2D](x, y, dz, dx, N0, N1, B0=B0, B1=B1, backend=backend)
    expected = np.where(x * y[:, None] > 0, y[:, None] * dz, 0)
    np.testing.assert_allclose(dx, expected, rtol=1e-6)


@pytest.mark.parametrize(("rows", "T", "b0", "b1"), [(7, 200, 4, 32), (3, 1000, 1, 128)])
def test_long_sum(
    backend: str, rng: np.random.Generator, rows: int, T: int, b0: int, b1: int
) -> None:
    x = rng.standard_normal((rows, T), dtype=np.float32)
    z = np.zeros(rows, dtype=np.float32)
    long_sum_kernel[(triton.cdiv(rows, b0),)](x, z, rows, T, B0=b0, B1=b1, backend=backend)
    np.testing.assert_allclose(z, x.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-4)


def test_long_softmax(backend: str, rng: np.random.Generator) -> None:
    rows, T, b0, b1 = 6, 200, 4, 32
    x = rng.standard_normal((rows, T), dtype=np.float32) * 4
    z = np.zeros_like(x)
    long_softmax_kernel[(triton.cdiv(rows, b0),)](x, z, rows, T, B0=b0, B1=b1, backend=backend)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(z, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def conv2d_ref(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    B, C, H, W = x.shape
    F, _, KH, KW = w.shape
    out = np.zeros((B, F, H - KH + 1, W - KW + 1), dtype=np.float64)
    for kh in range(KH):
        for kw in range(KW):
            patch = x[:, :, kh : kh + H - KH + 1, kw : kw + W - KW + 1].astype(np.float64)
            out += np.einsum("bchw,fc->bfhw", patch, w[:, :, kh, kw].astype(np.float64))
    return out


def test_conv2d(backend: str, rng: np.random.Generator) -> None:
    B, C, H, W, F, KH, KW, BH, BW = 2, 3, 13, 11, 4, 3, 3, 8, 8
    OH, OW = H - KH + 1, W - KW + 1
    x = rng.standard_normal((B, C, H, W), dtype=np.float32)
    w = rng.standard_normal((F, C, KH, KW), dtype=np.float32)
    out = np.full((B, F, OH, OW), np.nan, dtype=np.float32)
    grid = (B * F, triton.cdiv(OH, BH), triton.cdiv(OW, BW))
    conv2d_kernel[grid](x, w, out, C, H, W, F, OH, OW, KH=KH, KW=KW, BH=BH, BW=BW, backend=backend)
    np.testing.assert_allclose(out, conv2d_ref(x, w), rtol=1e-5, atol=1e-5)


def pack_int4(q: np.ndarray) -> np.ndarray:
    """Pack signed int4 values (K, N), K even, two per int8 along K (even row = low nibble)."""
    low = q[0::2].astype(np.int16) & 0xF
    high = q[1::2].astype(np.int16) & 0xF
    return ((high << 4) | low).astype(np.uint8).view(np.int8)


def test_pack_int4_roundtrip() -> None:
    q = np.arange(-8, 8, dtype=np.int8).reshape(16, 1).repeat(3, axis=1)
    packed = pack_int4(q)
    low = (packed.astype(np.int8) << 4).astype(np.int8) >> 4
    high = packed >> 4
    np.testing.assert_array_equal(low, q[0::2])
    np.testing.assert_array_equal(high, q[1::2])


@pytest.mark.parametrize(("M", "N", "K"), [(50, 40, 100), (33, 70, 64)])
def test_int4_matmul(backend: str, rng: np.random.Generator, M: int, N: int, K: int) -> None:
    a = rng.standard_normal((M, K)).astype(np.float16)
    q = rng.integers(-8, 8, size=(K, N), dtype=np.int8)
    scale = rng.uniform(0.01, 0.1, N).astype(np.float32)
    bq = pack_int4(q)
    c = np.zeros((M, N), dtype=np.float32)
    BM, BN, BK = 16, 32, 32
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    int4_matmul_kernel[grid](
        a, bq, scale, c, M, N, K,
        a.strides[0] // 2, 1, bq.strides[0], 1, c.strides[0] // 4, 1,
        BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, backend=backend,
    )  # fmt: skip
    expected = (a.astype(np.float64) @ q.astype(np.float64)) * scale
    np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-4)
