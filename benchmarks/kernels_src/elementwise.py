"""A large grid: SiLU-and-multiply over 100,000 programs of 64 elements.

Each program does little work, so this row measures the cost per program,
where an interpreter that runs programs one by one pays the most.
"""

from __future__ import annotations

import numpy as np

from kernels_src.lang import Case, device, library, triton

BLOCK_SIZE = 64


#: From the kernel library.
silu_mul_kernel = library("silu_mul").silu_mul_kernel


def setup(rng: np.random.Generator) -> Case:
    """Random fp32 vectors; the last program is partial (the mask matters)."""
    n = 100_000 * BLOCK_SIZE - 37
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    out = np.zeros_like(x)
    args = (device(x), device(y), device(out), n)
    grid = (triton.cdiv(n, BLOCK_SIZE),)

    def launch() -> None:
        silu_mul_kernel[grid](*args, BLOCK_SIZE=BLOCK_SIZE)

    def check() -> None:
        expected = x / (1 + np.exp(-x)) * y
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)

    return Case(launch, check)
