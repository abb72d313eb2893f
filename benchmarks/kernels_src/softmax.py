"""Fused softmax (Triton tutorial 02, one program per row): 1823 rows of 781."""

from __future__ import annotations

import numpy as np

from kernels_src.lang import Case, device, tl, triton


@triton.jit
def softmax_kernel(
    output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols, BLOCK_SIZE: tl.constexpr
):
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    input_ptrs = row_start_ptr + col_offsets
    mask = col_offsets < n_cols
    row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    output_row_start_ptr = output_ptr + row_idx * output_row_stride
    output_ptrs = output_row_start_ptr + col_offsets
    tl.store(output_ptrs, softmax_output, mask=mask)


def setup(rng: np.random.Generator) -> Case:
    """A random fp32 matrix of 1823 x 781; each row is one program."""
    n_rows, n_cols = 1823, 781
    x = rng.standard_normal((n_rows, n_cols), dtype=np.float32)
    y = np.zeros_like(x)
    block_size = triton.next_power_of_2(n_cols)
    args = (device(y), device(x), n_cols, n_cols, n_cols)

    def launch() -> None:
        softmax_kernel[(n_rows,)](*args, BLOCK_SIZE=block_size)

    def check() -> None:
        z = np.exp(x - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(y, z / z.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)

    return Case(launch, check)
