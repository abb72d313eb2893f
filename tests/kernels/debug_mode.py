"""Kernels with out-of-bounds accesses and failing asserts, for the GPU's debug mode.

Each buggy kernel has a correct twin (the right mask) that must raise nothing.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def store_past_end(out_ptr, n, BLOCK: tl.constexpr, MASKED: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if MASKED:
        tl.store(out_ptr + offs, offs.to(tl.float32), mask=offs < n)
    else:
        tl.store(out_ptr + offs, offs.to(tl.float32))


@triton.jit
def store_before_start(out_ptr, n, BLOCK: tl.constexpr, SHIFT: tl.constexpr):
    offs = tl.arange(0, BLOCK) - SHIFT
    tl.store(out_ptr + offs, offs.to(tl.float32), mask=offs < n)


@triton.jit
def load_past_end(x_ptr, out_ptr, n, BLOCK: tl.constexpr, MASKED: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if MASKED:  # noqa: SIM108 (kernels have no conditional expressions)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    else:
        x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x * 2.0)


@triton.jit
def tile_copy(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, COLS: tl.constexpr):
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    mask = (rows < M) & (cols < N) if COLS else rows < M
    tile = tl.load(x_ptr + rows * N + cols, mask=mask, other=0.0)
    tl.store(out_ptr + rows * BN + cols, tile)


@triton.jit
def copy_block(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def check_positive(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.device_assert(x > 0.0, "x must be positive")


@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def pick_pointer(x_ptr, y_ptr, out_ptr, flag, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = x_ptr
    if flag > 0:
        p = y_ptr
    q = x_ptr
    for _ in range(n):
        q += 1
    tl.store(out_ptr + offs, tl.load(p + offs) + tl.load(q + offs))
