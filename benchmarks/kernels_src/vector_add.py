"""Vector add (Triton tutorial 01): 97 programs of 1024 elements."""

from __future__ import annotations

import numpy as np

from kernels_src.lang import Case, device, library, triton

BLOCK_SIZE = 1024


add_kernel = library("vector_add").add_kernel


def setup(rng: np.random.Generator) -> Case:
    """Two random fp32 vectors of 98,432 elements."""
    n = 98_432
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    args = (device(x), device(y), device(out), n)
    grid = (triton.cdiv(n, BLOCK_SIZE),)

    def launch() -> None:
        add_kernel[grid](*args, BLOCK_SIZE=BLOCK_SIZE)

    def check() -> None:
        np.testing.assert_array_equal(out, x + y)

    def respecialize() -> None:
        add_kernel[(triton.cdiv(n, 512),)](*args, BLOCK_SIZE=512)

    return Case(launch, check, respecialize)
