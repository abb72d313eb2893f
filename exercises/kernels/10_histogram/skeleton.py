"""Exercise 10: a histogram (see README.md).

Run ``minitriton exercises check 10``.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def histogram_kernel(
    x_ptr, hist_ptr, n, lo, inv_width, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr
):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    bins = ((x - lo) * inv_width).to(tl.int32)
    bins = tl.minimum(tl.maximum(bins, 0), NUM_BINS - 1)
    # TODO: this read-modify-write loses counts: when several lanes (or
    #       several programs) hit the same bin, they all read the same old
    #       count and all write old + 1. Make the increment indivisible.
    old = tl.load(hist_ptr + bins, mask=mask)
    tl.store(hist_ptr + bins, old + 1, mask=mask)
