"""Vector add (Triton tutorial 01): 97 programs of 1024 elements."""

from __future__ import annotations

import numpy as np

from kernels_src.lang import Case, device, tl, triton

BLOCK_SIZE = 1024


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


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
