"""Exercise 04 spec: centre the rows of matrices, some of them row-strided."""

import numpy as np

import minitriton as triton
from minitriton.course import Case

TITLE = "Broadcasting and row reductions"
KERNELS = ("center_rows_kernel",)
MINUTES = 20
REQUIRES = ("03",)
OUTCOMES = ("tl.sum along an axis", "broadcasting a reduction back", "masked lanes and other=")
BLOCK_M, BLOCK_N = 4, 128

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "37 x 100: partial": 2,
}


def reference(x: np.ndarray) -> np.ndarray:
    """``x - x.mean(axis=1, keepdims=True)``."""
    return (x - x.astype(np.float64).mean(axis=1, keepdims=True)).astype(np.float32)


def launch(kernels, x: np.ndarray) -> np.ndarray:
    """BLOCK_M rows per program; a row must fit in BLOCK_N = 128."""
    M, N = x.shape
    out = np.full((M, N), np.nan, np.float32)
    grid = (triton.cdiv(M, BLOCK_M),)
    kernels.center_rows_kernel[grid](
        x, out, M, N, x.strides[0] // 4, out.strides[0] // 4, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N
    )
    return out


def cases() -> list[Case]:
    """Full blocks, partial rows and columns, a view with a row stride of 200."""
    rng = np.random.default_rng(4)
    big = rng.standard_normal((37, 200), dtype=np.float32) + 3.0
    return [
        Case("8 x 128: full blocks", (rng.standard_normal((8, 128), dtype=np.float32) + 1.0,)),
        Case("37 x 100: partial rows and columns", (big[:, :100].copy(),), atol=1e-5),
        Case("37 x 100 view of a 37 x 200 array: stride_xm = 200", (big[:, 50:150],)),
    ]
