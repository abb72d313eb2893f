"""
SGD with atomic gradient accumulation
=====================================

Linear regression trained by gradient descent. Each program takes a block of
samples, computes its share of the mean-squared-error gradient, and adds it
into one shared gradient vector with ``tl.atomic_add``: many programs write
the same addresses, and atomics make the sum correct whatever order the
programs run in. A second kernel applies the update ``w -= lr * grad``.
"""

import matplotlib.pyplot as plt
import numpy as np

import minitriton as triton
import minitriton.language as tl


@triton.jit
def grad_kernel(x_ptr, y_ptr, w_ptr, grad_ptr, n_samples, D: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    rows = pid * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, D)
    row_mask = rows < n_samples
    x = tl.load(x_ptr + rows[:, None] * D + cols[None, :], mask=row_mask[:, None], other=0.0)
    y = tl.load(y_ptr + rows, mask=row_mask, other=0.0)
    w = tl.load(w_ptr + cols)
    err = tl.sum(x * w[None, :], axis=1) - y
    # d/dw of mean((x.w - y)^2) = 2/n * sum_i err_i * x_i, this block's share of it.
    partial = tl.sum(x * err[:, None], axis=0) * (2.0 / n_samples)
    tl.atomic_add(grad_ptr + cols, partial)


@triton.jit
def sgd_update_kernel(w_ptr, grad_ptr, lr, D: tl.constexpr):
    cols = tl.arange(0, D)
    w = tl.load(w_ptr + cols)
    g = tl.load(grad_ptr + cols)
    tl.store(w_ptr + cols, w - lr * g)


# %%
# Train on synthetic data with a known answer, checking every step's
# gradient against NumPy.

rng = np.random.default_rng(0)
n_samples, D, BLOCK = 500, 8, 64
true_w = rng.standard_normal(D).astype(np.float32)
x = rng.standard_normal((n_samples, D)).astype(np.float32)
y = (x @ true_w + 0.01 * rng.standard_normal(n_samples)).astype(np.float32)

w = np.zeros(D, dtype=np.float32)
lr, losses, max_err = 0.1, [], 0.0
for _ in range(25):
    grad = np.zeros(D, dtype=np.float32)
    grad_kernel[(triton.cdiv(n_samples, BLOCK),)](x, y, w, grad, n_samples, D=D, BLOCK=BLOCK)
    expected = 2.0 / n_samples * x.T @ (x @ w - y)
    np.testing.assert_allclose(grad, expected, rtol=1e-4, atol=1e-5)
    max_err = max(max_err, float(np.abs(grad - expected).max()))
    sgd_update_kernel[(1,)](w, grad, lr, D=D)
    losses.append(float(np.mean((x @ w - y) ** 2)))

np.testing.assert_allclose(w, true_w, atol=0.05)
print("max error:", max_err)
print("final loss:", losses[-1])

# %%
# The loss falls as the weights approach the true ones.

fig, ax = plt.subplots(figsize=(6, 3))
ax.semilogy(losses, marker="o")
ax.set_xlabel("step")
ax.set_ylabel("mean squared error")
ax.set_title("SGD with atomic gradient accumulation")
plt.show()
