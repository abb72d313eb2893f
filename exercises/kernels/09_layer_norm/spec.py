"""Exercise 09 spec: layer norm of rows of 50 to 700 elements (BLOCK = 128)."""

import numpy as np

from minitriton.course import Case

TITLE = "Layer norm"
KERNELS = ("layer_norm_kernel",)
MINUTES = 35
REQUIRES = ("06",)
OUTCOMES = ("multi-pass reductions over long rows", "masking values, not just memory")
BLOCK = 128
EPS = 1e-5

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "4 x 50": 2,
    "3 x 200": 2,
    "2 x 300": 2,
}


def reference(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(x - mean) / sqrt(var + eps) * w + b`` along each row, in float64."""
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=1, keepdims=True)
    return ((x64 - mean) / np.sqrt(var + EPS) * w + b).astype(np.float32)


def launch(kernels, x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One program per row."""
    M, N = x.shape
    y = np.full((M, N), np.nan, np.float32)
    kernels.layer_norm_kernel[(M,)](
        x, y, w, b, N, x.strides[0] // 4, y.strides[0] // 4, EPS, BLOCK=BLOCK
    )
    return y


def _spread(args: tuple, mean: float, spread: float) -> tuple:
    """``args`` with x rescaled to ``mean + spread * x``."""
    x, w, b = args
    return (mean + np.float32(spread) * x).astype(np.float32), w, b


def _view(args: tuple, n: int) -> tuple:
    """``args`` with x a view of its first ``n`` columns (the row stride stays)."""
    x, w, b = args
    return x[:, :n], w[:n].copy(), b[:n].copy()


def cases() -> list[Case]:
    """A partial block, several blocks, an offset mean (padding must not count)."""
    rng = np.random.default_rng(9)

    def rows(m: int, n: int, shift: float = 0.0) -> tuple:
        return (
            rng.standard_normal((m, n), dtype=np.float32) + np.float32(shift),
            rng.standard_normal(n, dtype=np.float32),
            rng.standard_normal(n, dtype=np.float32),
        )

    return [
        Case("4 x 50: one partial block, 78 padding lanes", rows(4, 50), atol=1e-4, rtol=1e-4),
        Case("3 x 700: six blocks, the last partial", rows(3, 700), atol=1e-4, rtol=1e-4),
        Case(
            "3 x 200, values around 10: padding lanes must not count",
            rows(3, 200, 10.0),
            atol=1e-4,
            rtol=1e-4,
        ),
        Case(
            "2 x 300, values 1000 +- 0.1: a large mean with a small spread",
            _spread(rows(2, 300), 1000.0, 0.1),
            # An fp32 mean of values near 1000 is off by about 1e-4, 1e-3 of the spread; the
            # GPU's summation order adds as much again. E[x^2] - E[x]^2 is off by 100%.
            atol=5e-3,
            rtol=5e-3,
        ),
        Case(
            "3 x 100, spread 1e-3: eps inside the square root matters",
            _spread(rows(3, 100), 0.0, 1e-3),
            atol=1e-3,
            rtol=1e-3,
        ),
        Case(
            "3 x 129 view of a 3 x 256 array: stride_xm = 256, one past a power of two",
            _view(rows(3, 256), 129),
            atol=1e-4,
            rtol=1e-4,
        ),
    ]
