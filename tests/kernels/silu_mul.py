"""SiLU-and-multiply, ``x * sigmoid(x) * y``: the gated activation of a SwiGLU layer.

One BLOCK_SIZE chunk per program, masked at the end. The emulator benchmark's
"elementwise" row launches it over 100,000 small programs.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def silu_mul_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    out = x * tl.sigmoid(x) * y
    tl.store(out_ptr + offsets, out, mask=mask)
