"""Kernels for the frontend rules of Triton's ``test_frontend.py``.

They run in tests/e2e/test_frontend_rules.py.
"""

from __future__ import annotations

from typing import Any

import minitriton as triton
import minitriton.language as tl


@triton.constexpr_function
def plus_one(x):
    return x + 1


@triton.jit
def walrus_and_filters(out_ptr):
    """``:=`` in expressions and conditions, and comprehensions with ``if`` filters."""
    big: tl.constexpr = [x for x in (10, 20, 30, 40) if x >= 30]
    even: tl.constexpr = [x for x in (0, 1, 2, 3, 4, 5) if x > 1 if x % 2 == 0]
    tl.static_assert(len(big) == 2)
    y = (z := tl.program_id(0) + 5)
    if (w := plus_one(10)) != 10:
        tl.store(out_ptr, y + z + w)  # 5 + 5 + 11
    tl.store(out_ptr + 1, big[0] + big[1] + even[0] * 100 + even[1] * 1000)
    for i in range(3):
        if (q := i * 2) > 1:
            tl.store(out_ptr + 2 + i, q)


@triton.jit
def tuple_of_scalars_in_a_loop(out_ptr, n):
    """A tuple of Python ints assigned in a loop is carried, as Triton's tensors are."""
    seed = 1
    pair = (seed, seed)
    for _ in range(n):
        pair = (pair[0] + 1, pair[1] + 2)
    tl.store(out_ptr, pair[0])
    tl.store(out_ptr + 1, pair[1])


@triton.jit
def types_of_values():
    """``.type`` of compile-time values and tuples, as Triton's types compare."""
    y: tl.constexpr = 0
    tl.static_assert(y.type == tl.constexpr_type(0))
    tl.static_assert(y.type != tl.constexpr_type(1))
    a: tl.constexpr = (0, 1)
    tl.static_assert(a.type == ((0, 1)).type)
    x = tl.program_id(0)
    t = (x, x)
    tl.static_assert(t.type == tl.tuple_type([tl.int32, tl.int32]))


@triton.jit
def int_bits_as_pointer(x_ptr, out_ptr):
    """``bitcast=True`` between a pointer and int64 keeps the address (Triton's)."""
    address = x_ptr.to(tl.int64, bitcast=True)
    second = (address + 4).to(tl.pointer_type(tl.int32), bitcast=True)
    tl.store(out_ptr, tl.load(second))


@triton.jit
def narrow_float_division():
    """``/`` and ``%`` on fp8, fp16 and bf16 compute in fp32; other ops keep the type."""
    x = tl.full((8,), 0, tl.float16).to(tl.float8e5)
    z = tl.full((8,), 0, tl.float16).to(tl.float8e4nv)
    tl.static_assert((x / x).dtype == tl.float32)
    tl.static_assert((x % x).dtype == tl.float32)
    tl.static_assert((x % 2).dtype == tl.float32)
    tl.static_assert((x / z).dtype == tl.float32)
    tl.static_assert((x * x).dtype == tl.float8e5)
    tl.static_assert((x * z).dtype == tl.float16)
    tl.static_assert((x * 2.0).dtype == tl.float8e5)


@triton.jit
def constexpr_min(a: tl.constexpr, b: tl.constexpr, out_ptr):
    tl.store(out_ptr, min(a, b))


@tl.core.builtin
def make_list(*args: Any, _semantic: Any = None) -> list[Any]:
    """A library's own builtin: it runs while the kernel compiles."""
    return list(args)


@triton.constexpr_function
def second(items):
    return items[1]


@triton.jit
def library_builtin(out_ptr):
    a: tl.constexpr = second(make_list(4, 8, 16))
    tl.store(out_ptr, a)


@triton.jit
def constant_answer():
    return tl.constexpr(42)


@triton.jit
def sign_of(x):
    if x < 0:
        return -1
    else:
        return 1


@triton.jit
def constexpr_returns(out_ptr):
    """A helper's compile-time result stays compile-time."""
    x: tl.constexpr = constant_answer()
    tl.static_assert(x == 42)
    s: tl.constexpr = sign_of(-3)
    tl.static_assert(s == -1)
    tl.store(out_ptr, x + s)


@triton.aggregate
class Boxed:
    value: tl.tensor
    scale: tl.constexpr = 3

    @triton.jit
    def __getitem__(self, index):
        return self.value * self.scale + index

    @staticmethod
    def make(value):  # plain Python: passes the run-time value through
        return Boxed(value)


@triton.jit
def aggregate_indexing(out_ptr):
    box = Boxed.make(tl.arange(0, 4))
    tl.store(out_ptr + tl.arange(0, 4), box[10])


@triton.jit
def fp16_accumulator(a_ptr, b_ptr, out_ptr):
    r = tl.arange(0, 16)
    a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 16 + r[None, :])
    acc = tl.full([16, 16], 1, dtype=tl.float16)
    d = tl.dot(a, b, acc)
    tl.static_assert(d.dtype == tl.float16)
    tl.store(out_ptr + r[:, None] * 16 + r[None, :], d)


@triton.jit
def add_two(a_ptr, n: tl.constexpr):
    offsets = tl.arange(0, n)
    tl.store(a_ptr + offsets, tl.load(a_ptr + offsets) + 2)


@triton.jit
def unpack_too_many():
    a, b = (1, 2, 3)  # noqa: F841


@triton.jit
def unpack_too_few():
    a, b, c = (1, 2)  # noqa: F841


@triton.jit
def return_in_loop(n):
    for i in range(n):
        if i == 5:
            return


@triton.jit
def first_and_count(*dims):
    return dims[0] * 10 + len(dims)


@triton.jit
def varargs_helper(out_ptr):
    """A helper's ``*args`` collects its positional arguments in a tuple; ``f(*t)`` spreads one."""
    dims: tl.constexpr = (4, 2, 9)
    tl.store(out_ptr, first_and_count(*dims))
    tl.store(out_ptr + 1, first_and_count(tl.program_id(0) + 7))


@triton.jit
def varargs_kernel(*ptrs):
    tl.store(ptrs[0], 1)


@triton.jit
def typed_scalars(ptr, val: tl.float16, n: "tl.int8", m: tl.int64, other: int):  # noqa: UP037
    """Scalar parameters annotated with a dtype are passed as it (Triton's rule)."""
    tl.static_assert(val.dtype == tl.float16)
    tl.static_assert(n.dtype == tl.int8)
    tl.static_assert(m.dtype == tl.int64)
    tl.static_assert(other.dtype == tl.int32)  # `int` names no dtype
    tl.store(ptr, val)
    tl.store(ptr + 1, n + 0)
    tl.store(ptr + 2, (m * 2).to(tl.float32))
    tl.store(ptr + 3, other)


@triton.jit
def masked_assert(x_ptr, N: tl.constexpr):
    """``tl.device_assert(cond, msg, mask=)`` checks only the lanes the mask enables."""
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x > 0, "x must be positive", mask=offs < 4)


@triton.jit
def int_ops(x_ptr, y_ptr, z_ptr, OP: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    y = tl.load(y_ptr + tl.arange(0, 4))
    if OP == "add":
        z = x + y
    elif OP == "sub":
        z = x - y
    else:
        z = x * y
    tl.store(z_ptr + tl.arange(0, 4), z)


@triton.jit
def mul_add(a_ptr, b_ptr, c_ptr, out_ptr):
    i = tl.arange(0, 16)
    tl.store(out_ptr + i, tl.load(a_ptr + i) * tl.load(b_ptr + i) + tl.load(c_ptr + i))
