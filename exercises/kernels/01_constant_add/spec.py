"""Exercise 01 spec: add a constant (n is a multiple of BLOCK here)."""

import numpy as np

import minitriton as triton
from minitriton.course import Case

TITLE = "Add a constant"
KERNELS = ("add_constant_kernel",)
MINUTES = 15
REQUIRES = ()
OUTCOMES = ("program ids, blocks and the grid", "pointer arithmetic, tl.load, tl.store")
BLOCK = 128


def reference(x: np.ndarray, value: float) -> np.ndarray:
    """``x + value`` in fp32."""
    return (x + np.float32(value)).astype(np.float32)


def launch(kernels, x: np.ndarray, value: float) -> np.ndarray:
    """One program per block of BLOCK elements."""
    out = np.full_like(x, np.nan)  # NaN marks elements the kernel never wrote
    n = x.size
    kernels.add_constant_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, value, BLOCK=BLOCK)
    return out


def cases() -> list[Case]:
    """One block, several blocks, and a negative constant."""
    rng = np.random.default_rng(1)
    return [
        Case("n = 128: one program", (rng.standard_normal(128, dtype=np.float32), 1.5)),
        Case(
            "n = 4096: 32 programs, value = -2.25",
            (rng.standard_normal(4096, dtype=np.float32), -2.25),
        ),
        Case("n = 512, value = 0.1", (np.arange(512, dtype=np.float32), 0.1)),
    ]
