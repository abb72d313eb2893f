"""Exercise 11: one SGD step of least squares, gradient summed with atomics (see README.md).

Run ``minitriton exercises check 11``.
"""

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
    # TODO 1: err = x @ w - y for these rows (one value per row), and this
    #         program's share of the gradient, one value per column:
    #         partial = (2 / n_samples) * sum over the rows of x * err
    partial = tl.zeros((D,), dtype=tl.float32)
    # TODO 2: every program adds its partial gradient into the same D floats
    #         of grad: with a plain store, the last program wins.
    tl.store(grad_ptr + cols, partial)


@triton.jit
def sgd_update_kernel(w_ptr, grad_ptr, lr, D: tl.constexpr):
    cols = tl.arange(0, D)
    w = tl.load(w_ptr + cols)
    g = tl.load(grad_ptr + cols)
    tl.store(w_ptr + cols, w - lr * g)
