"""Exercise 06: softmax of rows longer than a block (see README.md).

Run ``minitriton exercises check 6``.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def long_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK: tl.constexpr):
    row = tl.program_id(axis=0)
    x_row = x_ptr + row * stride_xm
    m = -float("inf")  # running max of the row so far
    denom = 0.0  # running sum of exp(x - m) so far
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < N, other=-float("inf"))
        # TODO: update m and denom with this block. When the max grows from m to
        #       m_new, the old sum must be rescaled by exp(m - m_new).
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < N, other=-float("inf"))
        tl.store(out_ptr + row * stride_om + cols, tl.exp(x - m) / denom, mask=cols < N)
