"""Kernels with the bugs the checks find (line numbers appear in messages)."""

# fmt: off
import minitriton as triton
import minitriton.language as tl


@triton.jit
def same_block_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)  # bug: every program writes block 0
    x = tl.load(x_ptr + pid * BLOCK + offs, mask=pid * BLOCK + offs < n)
    tl.store(out_ptr + offs, x, mask=offs < n)


@triton.jit
def chain_kernel(x_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    prev = tl.load(x_ptr + offs - BLOCK, mask=offs >= BLOCK, other=0.0)  # reads the previous block
    tl.store(x_ptr + offs, prev + 1.0)


@triton.jit
def accumulate_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(out_ptr + offs, mask=mask)  # reads the output before anyone wrote it
    tl.store(out_ptr + offs, acc + tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def row_offset_kernel(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = row * stride  # i32 overflow for large strides
    x = tl.load(x_ptr + start - row * stride + tl.arange(0, BLOCK))
    tl.store(out_ptr + row * BLOCK + tl.arange(0, BLOCK), x)


@triton.jit
def row_offset64_kernel(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    start = row * stride
    x = tl.load(x_ptr + start - row * stride + tl.arange(0, BLOCK))
    tl.store(out_ptr + row * BLOCK + tl.arange(0, BLOCK), x)


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + x, tl.full((BLOCK,), 1, tl.int32), mask=mask)


@triton.jit
def positive_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.device_assert(x > 0, "x must be positive")


@triton.jit
def softmax_no_mask(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols)  # bug: no mask
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)
