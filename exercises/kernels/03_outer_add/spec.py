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
}


def reference(x: np.ndarray, y: np.ndarray, transposed: bool) -> np.ndarray:
    """``x[:, None] + y[None, :]``."""
    return x[:, None] + y[None, :]


def launch(kernels, x: np.ndarray, y: np.ndarray, transposed: bool) -> np.ndarray:
    """A 2D grid of BLOCK_M x BLOCK_N tiles; ``transposed`` stores into a column-major view."""
    M, N = x.size, y.size
    out = (
        np.full((N, M), np.nan, np.float32).T if transposed else np.full((M, N), np.nan, np.float32)
    )
    s_m, s_n = (s // out.itemsize for s in out.strides)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    kernels.outer_add_kernel[grid](x, y, out, M, N, s_m, s_n, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out


def cases() -> list[Case]:
    """Full tiles, partial tiles, and a column-major output (stride_on != 1)."""
    rng = np.random.default_rng(3)

    def vecs(m: int, n: int, transposed: bool = False) -> tuple:
        return (
            rng.standard_normal(m, dtype=np.float32),
            rng.standard_normal(n, dtype=np.float32),
            transposed,
        )

    return [
        Case("32 x 64: full tiles", vecs(32, 64)),
        Case("50 x 70: partial tiles on both axes", vecs(50, 70)),
        Case("40 x 24, column-major out: strides (1, 40)", vecs(40, 24, True)),
    ]
