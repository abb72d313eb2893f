"""Exercise 01: add a constant to every element (see README.md).

Edit the kernel, then run ``minitriton exercises check 1``.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def add_constant_kernel(x_ptr, out_ptr, n, value, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    # TODO: load the block of x at `x_ptr + offsets`, add `value`,
    #       and store the result at `out_ptr + offsets`.
