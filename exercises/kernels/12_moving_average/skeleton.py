"""Exercise 12: moving average with a scan (see README.md).

Run ``minitriton exercises check 12``.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def prefix_sum_kernel(x_ptr, p_ptr, n, BLOCK: tl.constexpr):
    # One program scans the whole array, block by block.
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        # TODO: tl.cumsum scans one block; the blocks before it are missing.
        #       Carry their total from one iteration to the next.
        tl.store(p_ptr + offs, tl.cumsum(x, axis=0), mask=mask)


@triton.jit
def moving_average_kernel(p_ptr, out_ptr, n, W: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p_now = tl.load(p_ptr + offs, mask=mask, other=0.0)
    # TODO: the mean of x[i-W+1 .. i] is (p[i] - p[i-W]) / W. Load p[i-W]
    #       (for i < W there is nothing before the window: use 0, and
    #       divide by the i + 1 samples there are).
    p_before = 0.0
    count = W
    tl.store(out_ptr + offs, (p_now - p_before) / count, mask=mask)
