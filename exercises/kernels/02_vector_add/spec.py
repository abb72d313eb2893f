"""Exercise 02 spec: vector add; sizes that are not multiples of BLOCK."""

import numpy as np

import minitriton as triton
from minitriton.course import Case

TITLE = "Vector add with masks"
KERNELS = ("add_kernel",)
MINUTES = 15
REQUIRES = ("01",)
OUTCOMES = ("masks for partial blocks", "reading the emulator's out-of-bounds report")
BLOCK = 128

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "n = 1000": 2,
    "n = 129": 2,
    "n = 5": 2,
}


def reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x + y``."""
    return x + y


def launch(kernels, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``cdiv(n, BLOCK)`` programs: the last one is partial unless BLOCK divides n."""
    out = np.full_like(x, np.nan)
    n = x.size
    kernels.add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK)
    return out


def cases() -> list[Case]:
    """A multiple of BLOCK (passes without a mask), then sizes that need one."""
    rng = np.random.default_rng(2)

    def vectors(n: int) -> tuple[np.ndarray, np.ndarray]:
        return rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)

    return [
        Case("n = 1024: a multiple of BLOCK = 128", vectors(1024)),
        Case("n = 1000: the last block is partial", vectors(1000)),
        Case("n = 129: one element in the last block", vectors(129)),
        Case("n = 5: smaller than one block", vectors(5)),
    ]
