"""Exercise 04: subtract each row's mean (see README.md).

Run ``minitriton exercises check 4``.
"""

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
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :], mask=mask)
    # TODO: the mean of each row (tl.sum along axis 1, divided by N), then
    #       subtract it from every element of its row (broadcast it back).
    out = x
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], out, mask=mask)
