"""Exercise 05 spec: softmax of rows that fit in one block."""

import numpy as np

from minitriton.course import Case

TITLE = "Softmax"
KERNELS = ("softmax_kernel",)
MINUTES = 25
REQUIRES = ("04",)
OUTCOMES = ("numerically stable softmax", "-inf padding for max reductions")
BLOCK = 128

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "5 x 100": 2,
    "3 x 64": 1,
    "4 x 120 logits spread": 1,
    "3 x 80 logits around -200": 1,
    "3 x 128, one logit": 1,
}


def reference(x: np.ndarray) -> np.ndarray:
    """Softmax along axis 1, computed in float64."""
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def launch(kernels, x: np.ndarray) -> np.ndarray:
    """One program per row."""
    M, N = x.shape
    out = np.full((M, N), np.nan, np.float32)
    kernels.softmax_kernel[(M,)](x, out, N, x.strides[0] // 4, out.strides[0] // 4, BLOCK=BLOCK)
    return out


def cases() -> list[Case]:
    """Partial rows (padding must not count), large logits (overflow), a strided view."""
    rng = np.random.default_rng(5)
    wide = rng.standard_normal((6, 300), dtype=np.float32)
    return [
        Case(
            "4 x 128, small values", (rng.standard_normal((4, 128), dtype=np.float32),), atol=1e-6
        ),
        Case(
            "5 x 100: 28 padding lanes per row",
            (rng.standard_normal((5, 100), dtype=np.float32),),
            atol=1e-6,
        ),
        Case(
            "3 x 64 logits around 100: exp overflows without the max",
            (100.0 + 5 * rng.standard_normal((3, 64), dtype=np.float32),),
            atol=1e-6,
        ),
        Case("6 x 90 view of a 6 x 300 array", (wide[:, 7:97],), atol=1e-6),
        *unsafe_shift_cases(rng),
    ]


def unsafe_shift_cases(rng: np.random.Generator) -> list[Case]:
    """Rows that only the max shift survives: fp32 exp overflows past 88.7, underflows below -103.

    Subtracting the row's mean (or 0) leaves an exponent past 88 in a spread
    row or a row with one huge value (inf / inf = NaN), and every exponent
    below -103 in a row of very negative logits (0 / 0 = NaN).
    """
    huge = rng.standard_normal((3, 128), dtype=np.float32)
    huge[np.arange(3), [5, 64, 127]] = 1e4
    return [
        Case(
            "4 x 120 logits spread over +-300: exp overflows unless the row max is subtracted",
            (100 * rng.standard_normal((4, 120), dtype=np.float32),),
            atol=1e-6,
        ),
        Case(
            "3 x 80 logits around -200: every exp underflows to 0 unless the max is subtracted",
            (-200 + 3 * rng.standard_normal((3, 80), dtype=np.float32),),
            atol=1e-6,
        ),
        Case("3 x 128, one logit 1e4 per row: the rest must come out 0", (huge,), atol=1e-6),
    ]
