"""Exercise 06, reference solution: softmax of long rows, looping over blocks.

Pass 1 keeps a running max ``m`` and a running sum ``denom`` of ``exp(x - m)``
(rescaled whenever the max grows: the "online softmax"); pass 2 writes.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def long_softmax_kernel(x_ptr, out_ptr, N, stride_xm, stride_om, BLOCK: tl.constexpr):
    row = tl.program_id(axis=0)
    x_row = x_ptr + row * stride_xm
    m = -float("inf")
    denom = 0.0
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < N, other=-float("inf"))
        m_new = tl.maximum(m, tl.max(x, axis=0))
        denom = denom * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < N, other=-float("inf"))
        tl.store(out_ptr + row * stride_om + cols, tl.exp(x - m) / denom, mask=cols < N)
