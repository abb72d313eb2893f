"""Exercise 10 spec: histograms with heavy contention on some bins."""

import numpy as np

import minitriton as triton
from minitriton.course import Case

TITLE = "Atomics: histogram"
KERNELS = ("histogram_kernel",)
MINUTES = 20
REQUIRES = ("02",)
OUTCOMES = ("races between lanes and programs", "tl.atomic_add")
BLOCK = 128
NUM_BINS = 16
LO, HI = -4.0, 4.0

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "n = 1000": 1,
    "n = 640": 1,
}


def _bins(x: np.ndarray) -> np.ndarray:
    inv_width = np.float32(NUM_BINS / (HI - LO))
    # The same fp32 operations as the kernel, so values on a bin edge agree.
    return np.clip(((x - np.float32(LO)) * inv_width).astype(np.int32), 0, NUM_BINS - 1)


def reference(x: np.ndarray) -> np.ndarray:
    """Counts of 16 equal bins over [-4, 4); values outside go to the end bins."""
    return np.bincount(_bins(x), minlength=NUM_BINS).astype(np.int32)


def launch(kernels, x: np.ndarray) -> np.ndarray:
    """``cdiv(n, BLOCK)`` programs all adding into the same 16 counters."""
    hist = np.zeros(NUM_BINS, np.int32)
    n = x.size
    kernels.histogram_kernel[(triton.cdiv(n, BLOCK),)](
        x, hist, n, LO, NUM_BINS / (HI - LO), NUM_BINS=NUM_BINS, BLOCK=BLOCK
    )
    return hist


def cases() -> list[Case]:
    """Spread-out values, a partial block, and every value in one bin."""
    rng = np.random.default_rng(10)
    return [
        Case(
            "n = 1000 normal samples: 8 programs, the last partial",
            (rng.standard_normal(1000, dtype=np.float32),),
        ),
        Case("n = 77: one partial block", (rng.uniform(-5, 5, 77).astype(np.float32),)),
        Case("n = 640, all equal: every lane hits one bin", (np.full(640, 0.3, dtype=np.float32),)),
    ]
