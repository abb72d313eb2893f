"""Exercise 08 spec: leaky_relu(A @ W + bias)."""

import numpy as np

import minitriton as triton
from minitriton.course import (
    TF32_TOLERANCE,
    Case,
    accumulation_tolerance,
    fp16_exact,
    fp32_matmul,
)

TITLE = "Fused matmul + bias + activation"
KERNELS = ("linear_leaky_relu_kernel",)
MINUTES = 25
REQUIRES = ("07",)
OUTCOMES = ("epilogue fusion", "tl.where for piecewise functions")
BLOCK_M = BLOCK_N = BLOCK_K = 16

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "32 x 32 x 32": 3,
    "M=33": 1,
    "K = 1024": 4,
}


def reference(
    a: np.ndarray, w: np.ndarray, bias: np.ndarray, c_columns: bool = False
) -> np.ndarray:
    """``leaky_relu(a @ w + bias)`` with slope 0.01."""
    z = a.astype(np.float64) @ w.astype(np.float64) + bias
    return np.where(z > 0, z, 0.01 * z).astype(np.float32)


def launch(
    kernels, a: np.ndarray, w: np.ndarray, bias: np.ndarray, c_columns: bool = False
) -> np.ndarray:
    """A 2D grid of output tiles; ``c_columns``: C is column-major (stride_cm = 1)."""
    (M, K), (_, N) = a.shape, w.shape
    c = np.full((N, M), np.nan, np.float32).T if c_columns else np.full((M, N), np.nan, np.float32)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    strides = [s // 4 for arr in (a, w, c) for s in arr.strides]
    kernels.linear_leaky_relu_kernel[grid](
        a, w, bias, c, M, N, K, *strides, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K
    )
    return c


def cases() -> list[Case]:
    """A bias that flips signs, ragged sizes, strided A, W and C, and a long K."""
    rng = np.random.default_rng(8)

    def layer(m: int, k: int, n: int) -> tuple:
        return (
            rng.standard_normal((m, k), dtype=np.float32),
            rng.standard_normal((k, n), dtype=np.float32) / np.sqrt(k).astype(np.float32),
            rng.standard_normal(n, dtype=np.float32),
        )

    a, w, bias = layer(24, 40, 36)
    return [
        Case(
            "32 x 32 x 32: the bias flips signs; negative z are scaled by 0.01",
            layer(32, 32, 32),
            **TF32_TOLERANCE,
        ),
        Case(
            "M=33, K=40, N=20: ragged, N not a multiple of 16",
            layer(33, 40, 20),
            **TF32_TOLERANCE,
        ),
        Case(
            "strided: A column-major (stride_am = 1), W every other row and column",
            (np.asfortranarray(a), np.repeat(np.repeat(w, 2, axis=0), 2, axis=1)[::2, ::2], bias),
            **TF32_TOLERANCE,
        ),
        Case(
            "C column-major: stride_cm = 1, stride_cn = 33",
            (*layer(33, 24, 20), True),
            **TF32_TOLERANCE,
        ),
        long_k_case(),
    ]


def long_k_case() -> Case:
    """K = 1024 with inputs fp16 holds exactly: the tolerance is the fp32 reference's error.

    The epilogue (bias, slope 0.01) scales errors by at most 1, so an fp32
    accumulator passes and an fp16 one (11 significant bits) does not.
    """
    a, w = fp16_exact((32, 1024), seed=80), fp16_exact((1024, 32), seed=81)
    bias = fp16_exact((32,), seed=82)
    z32 = fp32_matmul(a, w) + bias
    z64 = a.astype(np.float64) @ w.astype(np.float64) + bias
    out32 = np.where(z32 > 0, z32, np.float32(0.01) * z32)
    out64 = np.where(z64 > 0, z64, 0.01 * z64)
    return Case(
        "K = 1024: an fp32 accumulator is exact to within 64 times fp32's own rounding",
        (a, w, bias),
        **accumulation_tolerance(out32, out64),
    )
