"""Exercise 12, reference solution: moving average from a prefix sum (a scan)."""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def prefix_sum_kernel(x_ptr, p_ptr, n, BLOCK: tl.constexpr):
    carry = 0.0
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(p_ptr + offs, tl.cumsum(x, axis=0) + carry, mask=mask)
        carry += tl.sum(x, axis=0)


@triton.jit
def moving_average_kernel(p_ptr, out_ptr, n, W: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p_now = tl.load(p_ptr + offs, mask=mask, other=0.0)
    p_before = tl.load(p_ptr + (offs - W), mask=mask & (offs >= W), other=0.0)
    count = tl.minimum(offs + 1, W).to(tl.float32)
    tl.store(out_ptr + offs, (p_now - p_before) / count, mask=mask)
