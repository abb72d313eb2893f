"""Exercise 09: layer normalization (see README.md).

Run ``minitriton exercises check 9``.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def layer_norm_kernel(
    x_ptr, y_ptr, w_ptr, b_ptr, N, stride_xm, stride_ym, eps, BLOCK: tl.constexpr
):
    row = tl.program_id(axis=0)
    x_row = x_ptr + row * stride_xm
    # TODO 1: the mean of the row (loop over it in blocks of BLOCK).
    mean = 0.0
    # TODO 2: the variance, the mean of (x - mean)**2. Careful: masked lanes
    #         load 0, and (0 - mean)**2 is not 0.
    var = 1.0
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        tl.store(y_ptr + row * stride_ym + cols, (x - mean) * rstd * w + b, mask=mask)
