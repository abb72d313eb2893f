"""Kernels that map ``@jit`` functions over blocks with ``tl.map_elementwise`` (Triton 3.5):
Triton's own tests' functions, a per-element loop, and the mistakes refused."""

from __future__ import annotations

import minitriton as triton
import minitriton.language as tl


@triton.jit
def compare(x, y):
    if x < y:
        return -1
    elif x == y:
        return 0
    else:
        return 1


@triton.jit
def compare_kernel(X, Y, Z, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    y = tl.load(Y + tl.arange(0, BLOCK))
    tl.store(Z + tl.arange(0, BLOCK), tl.map_elementwise(compare, x, y))


@triton.jit
def divmod_(a, b):
    return a // b, a % b


@triton.jit
def divmod_kernel(A, B, C, D, BLOCK: tl.constexpr):
    a = tl.load(A + tl.arange(0, BLOCK))
    b = tl.load(B + tl.arange(0, BLOCK))
    c, d = tl.map_elementwise(divmod_, a, b)
    tl.store(C + tl.arange(0, BLOCK), c)
    tl.store(D + tl.arange(0, BLOCK), d)


@triton.jit
def divmod_pair(a0, a1, b0, b1):
    return a0 // b0, a1 // b1, a0 % b0, a1 % b1


@triton.jit
def divmod_pack_kernel(A, B, C, D, BLOCK: tl.constexpr):
    a = tl.load(A + tl.arange(0, BLOCK))
    b = tl.load(B + tl.arange(0, BLOCK))
    c, d = tl.map_elementwise(divmod_pair, a, b, pack=2)
    tl.store(C + tl.arange(0, BLOCK), c)
    tl.store(D + tl.arange(0, BLOCK), d)


@triton.jit
def reverse_four(x0, x1, x2, x3):
    return x3, x2, x1, x0


@triton.jit
def reverse_groups_kernel(X, Y, ROWS: tl.constexpr, COLS: tl.constexpr):
    """A 2-D block, groups of four along its rows reversed: the order pack promises."""
    offs = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    tl.store(Y + offs, tl.map_elementwise(reverse_four, tl.load(X + offs), pack=4))


@triton.jit
def collatz_steps(n, limit):
    steps = 0
    while n != 1 and steps < limit:
        if n % 2 == 0:  # noqa: SIM108 - a branch per element is the point
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@triton.jit
def collatz_kernel(N, S, BLOCK: tl.constexpr):
    """A loop whose trip count differs per element, with a scalar argument broadcast."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(S + offs, tl.map_elementwise(collatz_steps, tl.load(N + offs), 500))


@triton.jit
def pack_three_kernel(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(X + tl.arange(0, BLOCK), tl.map_elementwise(compare, x, x, pack=3))


@triton.jit
def make_block(x):
    return tl.zeros([4], tl.int32) + x


@triton.jit
def block_result_kernel(X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(X + tl.arange(0, BLOCK), tl.map_elementwise(make_block, x))
