"""Kernels that use the language features real-world kernels (TorchInductor's among them) need.

``tl.assume`` hints, plain Python functions called on compile-time values,
``tl.pointer_type`` casts of int64 addresses and pointer -> int64 casts,
an early ``return`` whose branch gives a variable another type, a ``for``
loop's variable used after the loop, ``triton.language.standard._log2`` and
the ``logical_and`` / ``logical_or`` methods.
"""

from __future__ import annotations

import math
from typing import Any

import minitriton as triton
import minitriton.language as tl
from minitriton.language.standard import _log2


def next_pow2_log(n: int) -> int:
    """A plain Python helper: ceil(log2(n)). Kernels may name it only with
    ``TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1``, as in Triton."""
    return max(0, math.ceil(math.log2(n)))


def triton_builtin(f: Any) -> Any:
    """TorchInductor's marker for helpers that get Triton's compile-time values."""
    f.__triton_builtin__ = True
    return f


@triton_builtin
def constexpr_half(n: tl.constexpr, *, _builder: object = None) -> tl.constexpr:
    """An Inductor-style builtin: it asserts that it gets a tl.constexpr."""
    if not isinstance(n, tl.constexpr):
        raise AssertionError(f"Expected tl.constexpr, got {type(n)}")
    return tl.constexpr(n.value // 2)


@triton.jit
def assume_scale_kernel(x_ptr, y_ptr, n, stride, BLOCK: tl.constexpr):
    """y[i * stride] = 2 x[i], with Inductor's assumptions on the pid and the stride."""
    pid = tl.program_id(0)
    tl.assume(pid >= 0)
    tl.assume(stride > 0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs * stride, x * 2, mask=mask)


@triton.jit
def compile_time_calls_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    """y = x * LOG + HALF, with LOG and HALF computed by Python functions while compiling
    (``math``'s, reached through the module, and a library builtin)."""
    LOG: tl.constexpr = _log2(BLOCK) + math.ceil(math.log2(BLOCK - 1))
    HALF: tl.constexpr = constexpr_half(BLOCK)
    idtype = tl.core.get_int_dtype(bitwidth=x_ptr.dtype.element_ty.primitive_bitwidth, signed=True)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    fdtype = tl.core._unwrap_if_constexpr(x.dtype)  # as Inductor's pack_value_flag
    bits = x.to(idtype, bitcast=True).to(fdtype, bitcast=True)  # a round trip
    tl.store(y_ptr + offs, bits * LOG + HALF)


@triton.jit
def run_time_python_call_kernel(x_ptr, BLOCK: tl.constexpr):
    """Wrong: a Python function called on a block (it runs only at compile time)."""
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(x_ptr + tl.arange(0, BLOCK), next_pow2_log(x))


@triton.jit
def gather_rows_kernel(table_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    """Row r of ``out`` = the n_cols floats at the address ``table[r]``."""
    row = tl.program_id(0)
    src = tl.load(table_ptr + row).to(tl.pointer_type(tl.float32))
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    tl.store(out_ptr + row * n_cols + cols, tl.load(src + cols, mask=mask), mask=mask)


@triton.jit
def pointer_round_trip_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    """y = x[::-1] through addresses: pointer -> int64, arithmetic, int64 -> pointer."""
    offs = tl.arange(0, BLOCK)
    base = x_ptr.to(tl.int64)
    last = base + (BLOCK - 1) * 4
    ptrs = (last - offs.to(tl.int64) * 4).to(tl.pointer_type(tl.float32))
    tl.store(y_ptr + offs, tl.load(ptrs))


@triton.jit
def early_return_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    """Rotary-embedding style: programs past the end return; ``v`` differs in type per branch."""
    pid = tl.program_id(0)
    if pid >= n_rows:
        v = 0
        return
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x_ptr + pid * n_cols + cols, mask=mask)
    tl.store(y_ptr + pid * n_cols + cols, v + 1, mask=mask)


@triton.jit
def early_return_helper(x, limit):
    """A helper whose branches give ``y`` a scalar and a block type."""
    if limit <= 0:
        y = 0.0
        return x * y
    y = x * 2
    return y + limit


@triton.jit
def early_return_helper_kernel(x_ptr, y_ptr, limit, BLOCK: tl.constexpr):
    """y = early_return_helper(x, limit)."""
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, early_return_helper(tl.load(x_ptr + offs), limit))


@triton.jit
def loop_variable_kernel(out_ptr, n, step_down: tl.constexpr):
    """out = [sum of i, i after the loop, j after a counting-down loop, k kept from before]."""
    acc = 0
    for i in range(0, n):
        acc += i
    tl.store(out_ptr, acc)
    tl.store(out_ptr + 1, i)
    for j in range(n + 5, 0, -step_down):  # noqa: B007 - j is read after the loop
        acc += 1
    tl.store(out_ptr + 2, j)
    k = n * 100
    for k in range(n, 3):  # noqa: B007 - k is read after the loop
        acc += 1
    tl.store(out_ptr + 3, k)


@triton.jit
def logical_methods_kernel(x_ptr, y_ptr, lo, hi, BLOCK: tl.constexpr):
    """y = (lo < x < hi) or x == 0, with Inductor's bucketize spelling."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    inside = (x > lo).logical_and(x < hi).logical_or(x == 0)
    tl.store(y_ptr + offs, inside.to(tl.int32))


@triton.jit
def scatter_rows_kernel(table_ptr, x_ptr, n_cols, BLOCK: tl.constexpr):
    """The n_cols floats at the address ``table[r]`` = row r of ``x``."""
    row = tl.program_id(0)
    dst = tl.load(table_ptr + row).to(tl.pointer_type(tl.float32))
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    tl.store(dst + cols, tl.load(x_ptr + row * n_cols + cols, mask=mask), mask=mask)


@triton.jit
def fp8_dot_kernel(a_ptr, b_ptr, c_ptr, LIMIT: tl.constexpr):
    """A 16x32 @ 32x16 fp8 product with an explicit ``max_num_imprecise_acc``."""
    rows, cols, ks = tl.arange(0, 16), tl.arange(0, 16), tl.arange(0, 32)
    a = tl.load(a_ptr + rows[:, None] * 32 + ks[None, :])
    b = tl.load(b_ptr + ks[:, None] * 16 + cols[None, :])
    c = tl.dot(a, b, max_num_imprecise_acc=LIMIT)
    tl.store(c_ptr + rows[:, None] * 16 + cols[None, :], c)


@triton.jit
def select_addresses_kernel(cond_ptr, a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    """Integers cast to pointers that nothing dereferences, selected and stored back."""
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs).to(tl.pi32_t)
    b = tl.load(b_ptr + offs).to(tl.pi32_t)
    tl.store(out_ptr + offs, tl.where(tl.load(cond_ptr + offs), a, b))


@triton.jit
def masked_raw_addresses_kernel(x_ptr, table_ptr, out_ptr, BLOCK: tl.constexpr):
    """Addresses into two arrays cast to pointers, mixed with an argument's pointers, and
    loaded where the mask keeps one array."""
    offs = tl.arange(0, BLOCK)
    raw = tl.load(table_ptr + offs).to(tl.pointer_type(tl.float32))
    first = offs < 4
    ptrs = tl.where(first, raw, x_ptr + offs)
    tl.store(out_ptr + offs, tl.load(ptrs, mask=first, other=-1.0))


@triton.jit
def bitonic_merge_kernel(x_ptr, y_ptr, ROWS: tl.constexpr, N: tl.constexpr, DESC: tl.constexpr):
    offs = tl.arange(0, ROWS)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(y_ptr + offs, tl.bitonic_merge(tl.load(x_ptr + offs), descending=DESC))


@triton.jit
def split_kernel(x_ptr, a_ptr, b_ptr, N: tl.constexpr):
    pairs = tl.load(x_ptr + tl.arange(0, N)[:, None] * 2 + tl.arange(0, 2)[None, :])
    a, b = tl.split(pairs)
    tl.store(a_ptr + tl.arange(0, N), a)
    tl.store(b_ptr + tl.arange(0, N), b)
