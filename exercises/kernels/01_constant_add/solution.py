"""Exercise 01, reference solution: add a constant to every element."""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def add_constant_kernel(x_ptr, out_ptr, n, value, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets)
    tl.store(out_ptr + offsets, x + value)
