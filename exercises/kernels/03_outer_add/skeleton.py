"""Exercise 03: 2D outer add, out[i, j] = x[i] + y[j] (see README.md).

Run ``minitriton exercises check 3``.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def outer_add_kernel(
    x_ptr, y_ptr, out_ptr, M, N, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M)
    y = tl.load(y_ptr + cols, mask=cols < N)
    # TODO: make the BLOCK_M x BLOCK_N block x[i] + y[j] (x down, y across),
    #       the matching block of pointers into `out` (use both strides!)
    #       and a 2D mask, then store.
