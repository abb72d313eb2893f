"""Exercise 08 spec: leaky_relu(A @ W + bias)."""

import numpy as np

import minitriton as triton
from minitriton.course import TF32_TOLERANCE, Case

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
}


def reference(a: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """``leaky_relu(a @ w + bias)`` with slope 0.01."""
    z = a.astype(np.float64) @ w.astype(np.float64) + bias
    return np.where(z > 0, z, 0.01 * z).astype(np.float32)


def launch(kernels, a: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """A 2D grid of output tiles."""
    (M, K), (_, N) = a.shape, w.shape
    c = np.full((M, N), np.nan, np.float32)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    strides = [s // 4 for arr in (a, w, c) for s in arr.strides]
    kernels.linear_leaky_relu_kernel[grid](
        a, w, bias, c, M, N, K, *strides, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K
    )
    return c


def cases() -> list[Case]:
    """A bias that flips signs, ragged sizes, a bias shorter than a tile."""
    rng = np.random.default_rng(8)

    def layer(m: int, k: int, n: int) -> tuple:
        return (
            rng.standard_normal((m, k), dtype=np.float32),
            rng.standard_normal((k, n), dtype=np.float32) / np.sqrt(k).astype(np.float32),
            rng.standard_normal(n, dtype=np.float32),
        )

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
    ]
