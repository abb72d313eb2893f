"""Exercise 12 spec: prefix sums and moving averages of noisy series."""

import numpy as np

import minitriton as triton
from minitriton.course import Case

TITLE = "Scans: moving average"
KERNELS = ("prefix_sum_kernel", "moving_average_kernel")
MINUTES = 30
REQUIRES = ("06",)
OUTCOMES = ("tl.cumsum (a scan) inside a block", "carrying a scan across blocks")
BLOCK = 128

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "n = 1000": 1,
    "n = 700": 3,
}


def reference(x: np.ndarray, window: int) -> dict:
    """The inclusive prefix sum and the mean of the last ``window`` samples (fewer at first)."""
    prefix = np.cumsum(x.astype(np.float64))
    before = np.concatenate([np.zeros(window), prefix[:-window]])[: x.size]
    count = np.minimum(np.arange(x.size) + 1, window)
    return {
        "prefix": prefix.astype(np.float32),
        "average": ((prefix - before) / count).astype(np.float32),
    }


def launch(kernels, x: np.ndarray, window: int) -> dict:
    """The scan in one program, then the averages in parallel."""
    n = x.size
    prefix = np.full_like(x, np.nan)
    kernels.prefix_sum_kernel[(1,)](x, prefix, n, BLOCK=BLOCK)
    out = np.full_like(x, np.nan)
    kernels.moving_average_kernel[(triton.cdiv(n, BLOCK),)](prefix, out, n, W=window, BLOCK=BLOCK)
    return {"prefix": prefix, "average": out}


def cases() -> list[Case]:
    """One block, many blocks with a partial tail, a window longer than a block."""
    rng = np.random.default_rng(12)

    def series(n: int) -> np.ndarray:
        t = np.arange(n)
        return (np.sin(t / 20) + 0.3 * rng.standard_normal(n)).astype(np.float32)

    return [
        Case("n = 100, W = 5: one block", (series(100), 5), atol=1e-4, rtol=1e-4),
        Case(
            "n = 1000, W = 30: 8 blocks, the last partial", (series(1000), 30), atol=1e-3, rtol=1e-4
        ),
        Case("n = 700, W = 200: the window spans blocks", (series(700), 200), atol=1e-3, rtol=1e-4),
    ]
