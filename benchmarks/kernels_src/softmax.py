"""Fused softmax (Triton tutorial 02's kernel, launched one program per row): 1823 rows of 781."""

from __future__ import annotations

import numpy as np

from kernels_src.lang import Case, device, library, triton

#: Tutorial 02's kernel, as the GPU benchmark runs it (``gpu_bench.py``), from the library.
softmax_kernel = library("fused_softmax").softmax_kernel


def setup(rng: np.random.Generator) -> Case:
    """A random fp32 matrix of 1823 x 781; each row is one program."""
    n_rows, n_cols = 1823, 781
    x = rng.standard_normal((n_rows, n_cols), dtype=np.float32)
    y = np.zeros_like(x)
    block_size = triton.next_power_of_2(n_cols)
    args = (device(y), device(x), n_cols, n_cols, n_rows, n_cols)

    def launch() -> None:
        softmax_kernel[(n_rows,)](*args, block_size, 1)  # BLOCK_SIZE, num_stages

    def check() -> None:
        z = np.exp(x - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(y, z / z.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)

    return Case(launch, check)
