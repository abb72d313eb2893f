"""Small kernels for property-based tests of op semantics through the whole stack."""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def binary_kernel(x_ptr, y_ptr, m_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    """out = x OP y on the lanes where m != 0; 0 (masked load) elsewhere."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    m = tl.load(m_ptr + offs, mask=inside, other=0) != 0
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m, other=1)
    if OP == "add":
        r = x + y
    elif OP == "sub":
        r = x - y
    elif OP == "mul":
        r = x * y
    elif OP == "floordiv":
        r = x // y
    elif OP == "mod":
        r = x % y
    elif OP == "shr":
        r = x >> (y & 7)
    elif OP == "and":
        r = x & y
    elif OP == "max":
        r = tl.maximum(x, y)
    else:
        r = tl.where(x < y, x, y)
    tl.store(out_ptr + offs, r, mask=inside)


@triton.jit
def row_reduce_kernel(
    x_ptr, out_ptr, idx_ptr, n_cols, stride, OP: tl.constexpr, BLOCK: tl.constexpr
):
    """One program per row: a reduction and an index reduction over the row."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0)
    if OP == "sum":
        r = tl.sum(x, axis=0)
        i = tl.argmax(x, axis=0)
    elif OP == "max":
        r = tl.max(x, axis=0)
        i = tl.argmax(x, axis=0)
    else:
        r = tl.min(tl.where(cols < n_cols, x, 127), axis=0)
        i = tl.argmin(tl.where(cols < n_cols, x, 127), axis=0)
    tl.store(out_ptr + row, r)
    tl.store(idx_ptr + row, i)


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    """Row-wise inclusive prefix sum."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0)
    tl.store(out_ptr + row * n_cols + cols, tl.cumsum(x, axis=0), mask=mask)
