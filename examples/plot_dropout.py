"""
Dropout
=======

Dropout with a seed, as in Triton's low-memory dropout tutorial: instead of
storing a mask, the kernel draws ``tl.rand(seed, offsets)`` (Philox-4x32,
keyed by the seed and counted by the element offset), keeps an element when
its draw exceeds ``p`` and scales the survivors by ``1 / (1 - p)``. The same
seed gives the same mask, so the backward pass can regenerate it.
"""

import matplotlib.pyplot as plt
import numpy as np

import minitriton as triton
import minitriton.language as tl


@triton.jit
def dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    r = tl.rand(seed, offsets)
    keep = r > p
    out = tl.where(keep, x / (1 - p), 0.0)
    tl.store(out_ptr + offsets, out, mask=mask)


def dropout(x, p, seed):
    """Drop each element of ``x`` with probability ``p``."""
    out = np.empty_like(x)
    n = x.size
    dropout_kernel[(triton.cdiv(n, 1024),)](x, out, n, p, seed, BLOCK=1024)
    return out


# %%
# Apply it to a 64 x 64 array of ones. Every survivor must equal
# ``1 / (1 - p)``, about ``p`` of the elements must be dropped, and the same
# seed must give the same mask while another seed gives another.

p = 0.3
x = np.ones((64, 64), dtype=np.float32)
out = dropout(x, p, seed=123)
kept = out != 0
np.testing.assert_allclose(out[kept], x[kept] / (1 - p), rtol=1e-6)
dropped = 1 - kept.mean()
assert abs(dropped - p) < 0.03, dropped
assert np.array_equal(dropout(x, p, seed=123), out)
assert not np.array_equal(dropout(x, p, seed=7) != 0, kept)
print(f"dropped {dropped:.3f} of the elements (p = {p})")
print("max error:", np.abs(out[kept] - x[kept] / (1 - p)).max())

# %%
# The mask: white elements are kept.

fig, ax = plt.subplots(figsize=(4, 4))
ax.imshow(kept, cmap="gray", interpolation="nearest")
ax.set_title(f"dropout mask, p = {p}, seed = 123")
ax.set_axis_off()
plt.show()
