"""Exercise 11, reference solution: a least-squares gradient summed with atomics."""

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
    partial = tl.sum(x * err[:, None], axis=0) * (2.0 / n_samples)
    tl.atomic_add(grad_ptr + cols, partial)


@triton.jit
def sgd_update_kernel(w_ptr, grad_ptr, lr, D: tl.constexpr):
    cols = tl.arange(0, D)
    w = tl.load(w_ptr + cols)
    g = tl.load(grad_ptr + cols)
    tl.store(w_ptr + cols, w - lr * g)
