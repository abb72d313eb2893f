"""Exercise 02: vector add with masks (see README.md).

This kernel is right when n is a multiple of BLOCK, and wrong otherwise.
Run ``minitriton exercises check 2`` to see what goes wrong, then fix it.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    # TODO: the last program's block reaches past the end of the arrays.
    #       Compute a mask of the lanes that are inside, and pass it to
    #       every tl.load and tl.store.
    x = tl.load(x_ptr + offsets)
    y = tl.load(y_ptr + offsets)
    tl.store(out_ptr + offsets, x + y)
