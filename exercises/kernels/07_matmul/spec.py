"""Exercise 07 spec: C = A @ B with ragged sizes and a transposed B."""

import numpy as np

import minitriton as triton
from minitriton.course import (
    TF32_TOLERANCE,
    Case,
    accumulation_tolerance,
    fp16_exact,
    fp32_matmul,
)

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
    "A column-major": 1,
    "A = every other": 1,
    "C column-major": 1,
    "K = 1024": 4,
}


def reference(a: np.ndarray, b: np.ndarray, c_layout: str = "rows") -> np.ndarray:
    """``a @ b`` in float64, rounded to fp32."""
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def launch(kernels, a: np.ndarray, b: np.ndarray, c_layout: str = "rows") -> np.ndarray:
    """A 2D grid of BLOCK_M x BLOCK_N tiles of C.

    ``c_layout``: ``"rows"`` (row-major), ``"view"`` (the first N columns of a
    wider array) or ``"columns"`` (column-major: stride_cm = 1).
    """
    (M, K), (_, N) = a.shape, b.shape
    if c_layout == "columns":
        c = np.full((N, M), np.nan, np.float32).T
    else:
        c = np.full((M, N + 9 if c_layout == "view" else N), np.nan, np.float32)[:, :N]
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    strides = [s // 4 for arr in (a, b, c) for s in arr.strides]
    kernels.matmul_kernel[grid](
        a, b, c, M, N, K, *strides, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K
    )
    return c


def cases() -> list[Case]:
    """Full tiles, ragged M, N and K, strided A, B and C, and a long K."""
    rng = np.random.default_rng(7)

    def mats(m: int, k: int, n: int, b_transposed: bool = False) -> tuple:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = (
            rng.standard_normal((n, k), dtype=np.float32).T
            if b_transposed
            else rng.standard_normal((k, n), dtype=np.float32)
        )
        return a, b

    def sliced(m: int, k: int, n: int) -> tuple:
        """A and B as every other row and column of twice-as-large arrays."""
        a = rng.standard_normal((2 * m, 2 * k), dtype=np.float32)[::2, ::2]
        b = rng.standard_normal((2 * k, 2 * n), dtype=np.float32)[::2, ::2]
        return a, b

    a_cols, b = mats(24, 40, 20)
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
            "A column-major (the transpose of a 40 x 24 array): stride_am = 1, stride_ak = 24",
            (np.asfortranarray(a_cols), b),
            **TF32_TOLERANCE,
        ),
        Case(
            "A = every other row and column of a 36 x 56 array, B likewise: no stride is 1",
            sliced(18, 28, 20),
            **TF32_TOLERANCE,
        ),
        Case(
            "C is a view of a 24 x 41 array: stride_cm = 41",
            (*mats(24, 16, 32), "view"),
            **TF32_TOLERANCE,
        ),
        Case(
            "C column-major: stride_cm = 1, stride_cn = 24",
            (*mats(24, 16, 40), "columns"),
            **TF32_TOLERANCE,
        ),
        long_k_case(),
    ]


def long_k_case() -> Case:
    """K = 1024 with inputs fp16 holds exactly: the tolerance is the fp32 reference's error.

    The inputs are exact in TF32 too, so a right kernel differs from the exact
    product only by its fp32 additions; an accumulator kept in fp16 (11
    significant bits) drifts 40 times further than the tolerance.
    """
    a, b = fp16_exact((32, 1024), seed=70), fp16_exact((1024, 32), seed=71)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    tolerance = accumulation_tolerance(fp32_matmul(a, b), exact)
    return Case(
        "K = 1024: an fp32 accumulator is exact to within 64 times fp32's own rounding",
        (a, b),
        **tolerance,
    )
