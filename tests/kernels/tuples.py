"""Kernels with tuples: tuple and ``NamedTuple`` arguments, ``tl.tuple``, comprehensions.

Every kernel here is plain Triton (3.x) and runs unchanged on Triton.
"""

from __future__ import annotations

from typing import NamedTuple

import minitriton as triton
import minitriton.language as tl


@triton.jit
def _incremented(values):
    return tl.tuple([v + 1 for v in values])


@triton.jit
def _store_each(ptrs, values):
    for i in tl.static_range(len(values)):
        tl.store(ptrs[i], values[i])


@triton.jit
def store_incremented(ptrs, values):
    """``ptrs[i][0] = values[i] + 1`` for every item of two tuples of the same length."""
    _store_each(ptrs, _incremented(values))


@triton.jit
def nested_items(out, items, scale: tl.constexpr):
    """``items`` is ``(x_ptr, (k, None, y_ptr, 4))``: reads through both pointers."""
    tl.static_assert(items[1][1] is None)
    tl.static_assert(items[1][3] == 4)
    x_ptr, (k, _, y_ptr, four) = items
    tl.store(out + 0, tl.load(x_ptr) * scale)
    tl.store(out + 1, k)
    tl.store(out + 2, tl.load(y_ptr) + four)
    tl.store(out + 3, len(items[1]))


@triton.jit
def strided_copy(x_ptr, y_ptr, shape: tl.constexpr, strides, factor):
    """``y = factor * x`` for a 2-D block whose strides come in a tuple."""
    rows = tl.arange(0, shape[0])[:, None]
    cols = tl.arange(0, shape[1])[None, :]
    x = tl.load(x_ptr + rows * strides[0] + cols * strides[1])
    tl.store(y_ptr + rows * shape[1] + cols, factor * x)


@triton.jit
def _sum3(a, b, c):
    return a + b + c


@triton.jit
def star_args(out, x_ptr):
    """``_sum3(*t)`` with a tuple of three loaded blocks, and ``tl.tuple`` arithmetic."""
    offs = tl.arange(0, 8)
    t = tl.tuple([tl.load(x_ptr + offs), tl.load(x_ptr + 8 + offs)]) + (2.0,)
    tl.store(out + offs, _sum3(*t))


@triton.jit
def compile_time_tuples(out):
    """Tuple equality, concatenation and comprehension at compile time."""
    tl.store(out + 0, (1, 2) == (1, 2))
    tl.store(out + 1, tl.tuple((1, 2)) == (1, 3))
    joined = (0, 1) + tl.tuple((2, 3))
    for i in tl.static_range(len(joined)):
        tl.store(out + 2 + i, joined[i] * 10)
    squares = [i * i for i in joined]
    tl.store(out + 6, squares[3])


class Matrix(NamedTuple):
    """A pointer with its shape and strides, as a kernel argument."""

    ptr: object
    shape: tuple
    stride: tuple


class Scaled(NamedTuple):
    """A ``@jit`` function and the extra arguments it takes."""

    fn: object
    extra: tuple


@triton.jit
def _matrix(ptr, shape, stride):
    return Matrix(ptr=ptr, shape=shape, stride=stride)


@triton.jit
def _in_bounds(m, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)[:, None]
    cols = tl.arange(0, BLOCK)[None, :]
    return (rows < m.shape[0]) & (cols < m.shape[1])


@triton.jit
def _offsets(m, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)[:, None]
    cols = tl.arange(0, BLOCK)[None, :]
    return m.ptr + rows * m.stride[0] + cols * m.stride[1]


@triton.jit
def apply_to_matrix(op, src, dst, BLOCK: tl.constexpr):
    """``dst = op.fn(src, *op.extra)`` over the top-left corner both share."""
    x_m = _matrix(src.ptr, src.shape, src.stride)
    x = tl.load(_offsets(x_m, BLOCK), mask=_in_bounds(x_m, BLOCK), other=0.0)
    y = op.fn(x, *op.extra)
    tl.store(_offsets(dst, BLOCK), y, mask=_in_bounds(dst, BLOCK))


@triton.jit
def times_loaded(x, a_ptr):
    """``x * a_ptr[0]``: a function passed inside a ``NamedTuple``."""
    return x * tl.load(a_ptr)


@triton.jit
def no_parameters():
    """A kernel without parameters: Triton launches it like any other."""
    low, high = float("-inf"), float("inf")
    tl.static_assert(low < high)


@triton.jit
def philox_words(out, seed, c0, c1, N: tl.constexpr):
    """``tl.random.philox`` of the counter ``(c0 + i, c1, 0, 0)``: its four words."""
    offs = tl.arange(0, N)
    a, b, c, d = tl.random.philox(seed, c0 + offs, c1, 0, 0)
    tl.store(out + offs, a)
    tl.store(out + N + offs, b)
    tl.store(out + 2 * N + offs, c)
    tl.store(out + 3 * N + offs, d)


@triton.jit
def philox_impl_words(out, c0, k0, k1, N: tl.constexpr, ROUNDS: tl.constexpr):
    """``tl.random.philox_impl`` on 64-bit words ``(c0 + i, 0, 0, 0)``, key ``(k0, k1)``."""
    offs = tl.arange(0, N)
    c = (c0 + offs).to(tl.uint64)
    zero = tl.zeros([N], dtype=tl.uint64)
    a, b, _, _ = tl.random.philox_impl(c, zero, zero, zero, k0.to(tl.uint64),
                                       k1.to(tl.uint64), ROUNDS)  # fmt: skip
    tl.store(out + offs, a)
    tl.store(out + N + offs, b)
