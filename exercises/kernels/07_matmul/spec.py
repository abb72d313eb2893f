"""Exercise 07 spec: C = A @ B with ragged sizes and a transposed B."""

import numpy as np

import minitriton as triton
from minitriton.course import TF32_TOLERANCE, Case

TITLE = "Tiled matmul"
KERNELS = ("matmul_kernel",)
MINUTES = 40
REQUIRES = ("03", "04")
OUTCOMES = ("tl.dot on tiles", "the K loop and its masks", "data reuse in tiles")
BLOCK_M = BLOCK_N = BLOCK_K = 16

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "M = 40": 3,
    "K = 50": 2,
    "B = transpose": 1,
}


def reference(a: np.ndarray, b: np.ndarray, c_view: bool = False) -> np.ndarray:
    """``a @ b`` in float64, rounded to fp32."""
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def launch(kernels, a: np.ndarray, b: np.ndarray, c_view: bool = False) -> np.ndarray:
    """A 2D grid of BLOCK_M x BLOCK_N tiles of C; ``c_view``: C is a view of a wider array."""
    (M, K), (_, N) = a.shape, b.shape
    c = np.full((M, N + 9 if c_view else N), np.nan, np.float32)[:, :N]
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    strides = [s // 4 for arr in (a, b, c) for s in arr.strides]
    kernels.matmul_kernel[grid](
        a, b, c, M, N, K, *strides, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K
    )
    return c


def cases() -> list[Case]:
    """Full tiles, ragged M, N and K, and B given as the transpose of a row-major array."""
    rng = np.random.default_rng(7)

    def mats(m: int, k: int, n: int, b_transposed: bool = False) -> tuple:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = (
            rng.standard_normal((n, k), dtype=np.float32).T
            if b_transposed
            else rng.standard_normal((k, n), dtype=np.float32)
        )
        return a, b

    return [
        Case("32 x 32 x 32: full tiles", mats(32, 32, 32), **TF32_TOLERANCE),
        Case("M = 40, N = 24: ragged M and N, K = 32", mats(40, 32, 24), **TF32_TOLERANCE),
        Case("K = 50: a ragged K, the last step is partial", mats(32, 50, 32), **TF32_TOLERANCE),
        Case(
            "B = transpose of a 20 x 33 array: stride_bk = 1",
            mats(17, 33, 20, True),
            **TF32_TOLERANCE,
        ),
        Case(
            "C is a view of a 24 x 41 array: stride_cm = 41",
            (*mats(24, 16, 32), True),
            **TF32_TOLERANCE,
        ),
    ]
