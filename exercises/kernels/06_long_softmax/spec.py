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
    "3 x 700 logits spread": 2,
    "3 x 500 logits around -200": 2,
    "3 x 600, one logit": 2,
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
        *unsafe_shift_cases(rng),
    ]


def unsafe_shift_cases(rng: np.random.Generator) -> list[Case]:
    """Rows that only a running max started at -inf survives (fp32 exp: 88.7 up, -103 down).

    A shift by the row's mean, or a running max started at 0, leaves an
    exponent past 88 in a spread row or a row with one huge value (inf / inf
    = NaN), and every exponent below -103 in a row of very negative logits:
    the sum is 0, and 0 / 0 = NaN.
    """
    huge = rng.standard_normal((3, 600), dtype=np.float32)
    huge[np.arange(3), [0, 300, 599]] = 1e4
    return [
        Case(
            "3 x 700 logits spread over +-300: exp overflows unless shifted by the max",
            (100 * rng.standard_normal((3, 700), dtype=np.float32),),
            atol=1e-6,
        ),
        Case(
            "3 x 500 logits around -200: the running max must start at -inf, not 0",
            (-200 + 3 * rng.standard_normal((3, 500), dtype=np.float32),),
            atol=1e-6,
        ),
        Case("3 x 600, one logit 1e4 per row: the rest must come out 0", (huge,), atol=1e-6),
    ]
