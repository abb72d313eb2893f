"""
Layer normalization
===================

The forward pass of layer normalization, as in Triton's tutorial: one program
per row computes the row's mean and variance in a first loop over blocks of
columns, then normalizes, scales and shifts in a second loop::

    y = (x - mean) / sqrt(var + eps) * w + b
"""

import matplotlib.pyplot as plt
import numpy as np

import minitriton as triton
import minitriton.language as tl


@triton.jit
def layer_norm_fwd(
    x_ptr,
    y_ptr,
    w_ptr,
    b_ptr,
    mean_ptr,
    rstd_ptr,
    stride,
    N,
    eps,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    x_ptr += row * stride
    y_ptr += row * stride
    # Mean.
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    # Variance.
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        acc += x * x
    var = tl.sum(acc, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    # Normalize, then scale and shift.
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(y_ptr + cols, y, mask=mask)


def layer_norm(x, w, b, eps=1e-5):
    """Normalize each row of the 2-D array ``x``."""
    M, N = x.shape
    y = np.empty_like(x)
    mean = np.empty(M, dtype=np.float32)
    rstd = np.empty(M, dtype=np.float32)
    layer_norm_fwd[(M,)](x, y, w, b, mean, rstd, x.strides[0] // 4, N, eps, BLOCK=128)
    return y, mean, rstd


# %%
# Check against NumPy on rows of 300 features (not a multiple of the block).

rng = np.random.default_rng(0)
M, N = 16, 300
x = (rng.standard_normal((M, N)) * 3 + 2).astype(np.float32)
w = rng.random(N).astype(np.float32)
b = rng.random(N).astype(np.float32)
y, mean, rstd = layer_norm(x, w, b)

mu = x.mean(axis=1, keepdims=True)
sigma = np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
expected = (x - mu) / sigma * w + b
np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)
np.testing.assert_allclose(mean, mu[:, 0], rtol=1e-5, atol=1e-5)
print("max error:", np.abs(y - expected).max())

# %%
# The values before and after normalization, using the mean and ``1/std`` that
# the kernel stored for each row.

fig, ax = plt.subplots(figsize=(6, 3))
ax.hist(x.ravel(), bins=50, alpha=0.6, label="x")
ax.hist(((x - mean[:, None]) * rstd[:, None]).ravel(), bins=50, alpha=0.6, label="normalized")
ax.legend()
ax.set_title("layer norm: values before and after")
plt.show()
