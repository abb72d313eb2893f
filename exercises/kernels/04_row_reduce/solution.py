"""Exercise 04, reference solution: centre every row (broadcasting and row sums)."""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def center_rows_kernel(
    x_ptr, out_ptr, M, N, stride_xm, stride_om,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(axis=0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=0.0)
    mean = tl.sum(x, axis=1) / N
    out = x - mean[:, None]
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], out, mask=mask)
