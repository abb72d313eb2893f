"""Kernels for the compile-once and on-disk cache tests: a helper, a global, a combiner."""

import minitriton as triton
import minitriton.language as tl

SCALE = tl.constexpr(3)  # a global kernels read: a constexpr, as Triton asks


@triton.jit
def scaled(x, factor):
    """A helper: every specialization of the kernel calls it."""
    return x * factor


@triton.jit
def add_max(a, b):
    """A combiner for tl.reduce."""
    return tl.maximum(a, b)


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = x * SCALE, and the block's maximum of it added to lane 0."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    y = scaled(x, SCALE)
    top = tl.reduce(tl.where(mask, y, y * 0), 0, add_max)
    tl.store(out_ptr + offs, y + tl.where(offs % BLOCK == 0, top, top * 0), mask=mask)


def block_of(n):
    """Plain Python: the key covers its source, since a kernel may read it."""
    return n * 2
