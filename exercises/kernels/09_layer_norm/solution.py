"""Exercise 09, reference solution: layer norm of rows, looping over blocks."""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def layer_norm_kernel(
    x_ptr, y_ptr, w_ptr, b_ptr, N, stride_xm, stride_ym, eps, BLOCK: tl.constexpr
):
    row = tl.program_id(axis=0)
    x_row = x_ptr + row * stride_xm
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_row + cols, mask=cols < N, other=0.0)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0)
        d = tl.where(cols < N, x - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        tl.store(y_ptr + row * stride_ym + cols, (x - mean) * rstd * w + b, mask=mask)
