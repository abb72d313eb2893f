"""Exercise 06 spec: softmax of rows of up to 1000 elements with BLOCK = 128."""

import numpy as np

from minitriton.course import Case

TITLE = "Long softmax: looping over blocks"
KERNELS = ("long_softmax_kernel",)
MINUTES = 35
REQUIRES = ("05",)
OUTCOMES = ("loops with loop-carried scalars", "the online softmax (rescaling a running sum)")
BLOCK = 128

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "4 x 256": 2,
    "2 x 1000": 2,
}


def reference(x: np.ndarray) -> np.ndarray:
    """Softmax along axis 1, computed in float64."""
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def launch(kernels, x: np.ndarray) -> np.ndarray:
    """One program per row; it loops over the row in blocks of 128."""
    M, N = x.shape
    out = np.full((M, N), np.nan, np.float32)
    kernels.long_softmax_kernel[(M,)](
        x, out, N, x.strides[0] // 4, out.strides[0] // 4, BLOCK=BLOCK
    )
    return out


def cases() -> list[Case]:
    """Rows of 1, 2 and 8 blocks, partial last blocks, a max that appears late."""
    rng = np.random.default_rng(6)
    rising = np.linspace(0, 60, 1000, dtype=np.float32)[None, :].repeat(2, axis=0)
    return [
        Case(
            "3 x 100: one partial block, 28 padding lanes",
            (rng.standard_normal((3, 100), dtype=np.float32),),
            atol=1e-6,
        ),
        Case(
            "4 x 256: two full blocks, the max changes between them",
            (3 * rng.standard_normal((4, 256), dtype=np.float32),),
            atol=1e-6,
        ),
        Case("2 x 1000, rising values: the max is in the last block", (rising,), atol=1e-6),
        Case(
            "5 x 300 logits around 80",
            (80 + rng.standard_normal((5, 300), dtype=np.float32),),
            atol=1e-6,
        ),
        Case(
            "4 x 200 negative logits around -80: padding must be -inf, not 0",
            (-80 + rng.standard_normal((4, 200), dtype=np.float32),),
            atol=1e-6,
        ),
        Case(
            "3 x 257 view of a 3 x 400 array: stride_xm = 400, one past a power of two",
            (rng.standard_normal((3, 400), dtype=np.float32)[:, 100:357],),
            atol=1e-6,
        ),
    ]
