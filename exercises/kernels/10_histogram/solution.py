"""Exercise 10, reference solution: a histogram with atomic adds."""

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
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)
