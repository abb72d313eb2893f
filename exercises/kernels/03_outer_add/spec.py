"""Exercise 03 spec: outer add into contiguous and transposed outputs."""

import numpy as np

import minitriton as triton
from minitriton.course import Case

TITLE = "2D outer add"
KERNELS = ("outer_add_kernel",)
MINUTES = 20
REQUIRES = ("02",)
OUTCOMES = ("2D blocks from [:, None] and [None, :]", "strides", "2D masks")
BLOCK_M, BLOCK_N = 16, 32

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "50 x 70": 3,
    "40 x 24": 2,
    "20 x 36": 2,
}


def reference(x: np.ndarray, y: np.ndarray, layout: str) -> np.ndarray:
    """``x[:, None] + y[None, :]``."""
    return x[:, None] + y[None, :]


def launch(kernels, x: np.ndarray, y: np.ndarray, layout: str) -> np.ndarray:
    """A 2D grid of BLOCK_M x BLOCK_N tiles.

    ``layout``: the output is ``"rows"`` (row-major), ``"columns"`` (a
    column-major view) or ``"sliced"`` (every other row and column of a
    larger array: no stride is 1).
    """
    M, N = x.size, y.size
    if layout == "columns":
        out = np.full((N, M), np.nan, np.float32).T
    elif layout == "sliced":
        out = np.full((2 * M, 2 * N), np.nan, np.float32)[::2, ::2]
    else:
        out = np.full((M, N), np.nan, np.float32)
    s_m, s_n = (s // out.itemsize for s in out.strides)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    kernels.outer_add_kernel[grid](x, y, out, M, N, s_m, s_n, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


def cases() -> list[Case]:
    """Full tiles, partial tiles, and column-major and sliced outputs (stride_on != 1)."""
    rng = np.random.default_rng(3)

    def vecs(m: int, n: int, layout: str = "rows") -> tuple:
        return (
            rng.standard_normal(m, dtype=np.float32),
            rng.standard_normal(n, dtype=np.float32),
            layout,
        )

    return [
        Case("32 x 64: full tiles", vecs(32, 64)),
        Case("50 x 70: partial tiles on both axes", vecs(50, 70)),
        Case("40 x 24, column-major out: strides (1, 40)", vecs(40, 24, "columns")),
        Case(
            "20 x 36, out = every other row and column: strides (144, 2)",
            vecs(20, 36, "sliced"),
        ),
    ]
