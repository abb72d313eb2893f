"""
Moving average with ``tl.cumsum``
=================================

The moving average of a time series over a window of ``W`` samples is a
difference of prefix sums: ``avg[i] = (P[i] - P[i - W]) / W``, where
``P[i] = x[0] + ... + x[i]``. Two kernels compute it:

* ``prefix_sum_kernel`` scans the series one block at a time with
  ``tl.cumsum``, carrying the running total from block to block;
* ``moving_average_kernel`` loads ``P[i]`` and ``P[i - W]`` and divides.
"""

import matplotlib.pyplot as plt
import numpy as np

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
    # Before the first full window, P[i - W] is the empty sum: 0.
    p_before = tl.load(p_ptr + (offs - W), mask=mask & (offs >= W), other=0.0)
    count = tl.minimum(offs + 1, W).to(tl.float32)
    tl.store(out_ptr + offs, (p_now - p_before) / count, mask=mask)


def moving_average(x, W, BLOCK=256):
    """The mean of the last ``W`` samples (fewer at the start) at each point."""
    n = x.size
    prefix = np.empty_like(x)
    prefix_sum_kernel[(1,)](x, prefix, n, BLOCK=BLOCK)
    out = np.empty_like(x)
    moving_average_kernel[(triton.cdiv(n, BLOCK),)](prefix, out, n, W=W, BLOCK=BLOCK)
    return prefix, out


# %%
# A noisy daily series with a trend and a seasonal cycle.

rng = np.random.default_rng(0)
n, W = 2000, 30
t = np.arange(n)
x = (0.002 * t + np.sin(2 * np.pi * t / 365) + 0.5 * rng.standard_normal(n)).astype(np.float32)
prefix, avg = moving_average(x, W)

np.testing.assert_allclose(prefix, np.cumsum(x, dtype=np.float64), rtol=1e-4, atol=1e-3)
expected = np.array([x[max(0, i - W + 1) : i + 1].mean() for i in range(n)])
np.testing.assert_allclose(avg, expected, rtol=1e-3, atol=1e-3)
print("max error:", np.abs(avg - expected).max())

# %%
# The series and its 30-day moving average.

fig, ax = plt.subplots(figsize=(7, 3))
ax.plot(t, x, lw=0.5, alpha=0.5, label="series")
ax.plot(t, avg, lw=2, label=f"{W}-sample moving average")
ax.legend()
ax.set_title("moving average from tl.cumsum")
plt.show()
