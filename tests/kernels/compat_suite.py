"""Kernels in the style of Triton's own language tests (``test_core.py``).

Each one checks a rule that Triton's tests check: shapes compared with
lists, ``isinstance`` on run-time values, conditional expressions that store,
reverse scans with a combine function that is not commutative, right shifts
of mixed signedness, small dots, and the fp8 formats of other GPUs.
"""

from __future__ import annotations

import minitriton as triton
import minitriton.language as tl


@triton.jit
def shapes_and_types(out, X, N: tl.constexpr):
    """Static checks on shapes and types; stores 1 when they all compiled."""
    x = tl.load(X + tl.arange(0, N))
    tl.static_assert(x.shape == [N])
    tl.static_assert(x.shape == (N,))
    tl.static_assert(tl.expand_dims(x, 0).shape == [1, N])
    first, second = tl.split(tl.reshape(x, (N // 2, 2)))
    tl.static_assert(first.shape == [N // 2])
    pair = tl.interleave(tl.load(X), tl.load(X + 1))
    tl.static_assert(pair.shape == [2])
    tl.static_assert(isinstance(x, tl.tensor))
    tl.static_assert(not isinstance(x, tl.constexpr))
    tl.static_assert(isinstance(N, tl.constexpr) and isinstance(N, int))
    tl.static_assert(isinstance((x, N), tl.tuple))
    one = 1
    tl.static_assert(one.dtype == tl.int32)
    tl.static_assert(x.dtype.fp_mantissa_width == 23 and x.dtype.is_fp32())
    tl.store(out + tl.arange(0, 2), pair)
    tl.store(out + 2, tl.sum(first - second))


@triton.jit
def store_on_one_side(out, x_ptr, y_ptr, n):
    """``a if c else b`` with stores: only the chosen one runs."""
    pid = tl.program_id(0)
    tl.store(out + pid, tl.load(x_ptr)) if pid % 2 == 0 else tl.store(out + pid, tl.load(y_ptr))
    # The load past the end runs only for programs past n (none here).
    v = tl.load(x_ptr + 1000000) if pid > n else 7
    tl.store(out + 4 + pid, v)


@triton.jit
def _first(a, b):
    return a


@triton.jit
def reverse_scan_first(out, x_ptr, N: tl.constexpr):
    """A reverse scan keeps the running value (from the end) on the left: all last."""
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(out + tl.arange(0, N), tl.associative_scan(x, 0, _first, reverse=True))


@triton.jit
def shift_right(out, x_ptr, y_ptr, N: tl.constexpr):
    """``x >> y`` with x's and y's types."""
    offs = tl.arange(0, N)
    tl.store(out + offs, tl.load(x_ptr + offs) >> tl.load(y_ptr + offs))


@triton.jit
def small_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """``C = A @ B`` for blocks as small as one row."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


@triton.jit
def fp8_round_trip(out_ptr, back_ptr, x_ptr, N: tl.constexpr, FP8: tl.constexpr):
    """fp32 -> an fp8 format -> fp32, and the fp8 bits."""
    offs = tl.arange(0, N)
    small = tl.load(x_ptr + offs).to(FP8)
    tl.store(out_ptr + offs, small.to(tl.uint8, bitcast=True))
    tl.store(back_ptr + offs, small.to(tl.float32))


@triton.jit
def fp8_bits_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                 FP8: tl.constexpr):  # fmt: skip
    """``C = A @ B`` of fp8 blocks given by their bits."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :]).to(FP8, bitcast=True)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :]).to(FP8, bitcast=True)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


@triton.jit
def unused_fp8_dot(dtype: tl.constexpr):
    """A dot whose result nothing uses (Triton's ``test_fp8_support``)."""
    a = tl.full((64, 64), 0.0, dtype)
    tl.dot(a, a)


@triton.jit
def abs_of_bits(out_ptr, bits_ptr, N: tl.constexpr, FP8: tl.constexpr):
    """``tl.abs`` of fp8 values given by their bits (as Triton's ``test_abs_fp8``)."""
    offs = tl.arange(0, N)
    x = tl.load(bits_ptr + offs).to(FP8, bitcast=True)
    tl.store(out_ptr + offs, tl.abs(x).to(tl.uint8, bitcast=True))


@triton.jit
def compare_and_swap(x_ptr, old_ptr, N: tl.constexpr):
    """Each element of ``x`` that is 0 becomes 2; ``old`` gets what ``x`` held."""
    offs = tl.arange(0, N)
    zero = tl.zeros((N,), x_ptr.dtype.element_ty)
    old = tl.atomic_cas(x_ptr + offs, zero, zero + 2)
    tl.store(old_ptr + offs, old)


@triton.jit
def descriptor_fields(out_ptr, x_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """A descriptor's fields as Triton's tests read them: ``block_shape`` equals a list."""
    desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    assert desc.block_shape == [BM, BN]
    tl.static_assert(desc.block_shape == (BM, BN))
    block = desc.load([BM, 0])
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(out_ptr + offs, block)


@triton.jit
def nan_padded_tile(out_ptr, x_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """The tile at (BM, BN) of an in-kernel descriptor whose padding is NaN."""
    desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN],
                                     padding_option="nan")  # fmt: skip
    tl.static_assert(isinstance(desc, tl.tensor_descriptor))
    tl.static_assert(not isinstance(M, tl.tensor_descriptor))
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(out_ptr + offs, desc.load([BM, BN]))


@triton.jit
def gather_then_scatter(out_ptr, in_ptr, idx_ptr, dst_idx_ptr, y, X, Y,
                        BLOCK_X: tl.constexpr, BLOCK_Y: tl.constexpr):  # fmt: skip
    """Rows ``idx`` of ``in`` from column ``y`` (Triton 3.4's ``desc.gather``), written to
    rows ``dst_idx`` of ``out`` (``desc.scatter``)."""
    src = tl.make_tensor_descriptor(in_ptr, [X, Y], [Y, 1], [1, BLOCK_Y])
    dst = tl.make_tensor_descriptor(out_ptr, [X, Y], [Y, 1], [1, BLOCK_Y])
    rows = src.gather(tl.load(idx_ptr + tl.arange(0, BLOCK_X)), y)
    dst.scatter(rows, tl.load(dst_idx_ptr + tl.arange(0, BLOCK_X)), y)


@triton.jit
def inline_asm(x_ptr, y_ptr, bits_ptr, halves_ptr, N: tl.constexpr):
    """PTX through ``tl.inline_asm_elementwise``: one result, two results, fp16."""
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    # cvt.rna.tf32.f32: fp32 rounded to TF32 (ties away from zero), as bits
    tf32 = tl.inline_asm_elementwise("cvt.rna.tf32.f32 $0, $1;", "=r,f", [x], dtype=tl.int32,
                                     is_pure=True, pack=1)  # fmt: skip
    tl.store(bits_ptr + offs, tf32)
    lo, hi = tl.inline_asm_elementwise(
        "mul.lo.u32 $0, $2, $3;\n\tmul.hi.u32 $1, $2, $3;", "=r,=r,r,r",
        [tf32.to(tl.uint32, bitcast=True), 3], dtype=(tl.uint32, tl.uint32), is_pure=True, pack=1,
    )  # fmt: skip
    tl.store(bits_ptr + N + offs, (lo ^ hi).to(tl.int32, bitcast=True))
    half = tl.inline_asm_elementwise("add.f16 $0, $1, $2;", "=h,h,h", [y, y], dtype=tl.float16,
                                     is_pure=True, pack=1)  # fmt: skip
    tl.store(halves_ptr + offs, half)


@triton.jit
def packed_asm(x_ptr, halves_ptr, bytes_ptr, N: tl.constexpr):
    """``pack=2``: two fp32 in, two fp16 out in one register; ``pack=4``: four int8 in one."""
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    halves = tl.inline_asm_elementwise("cvt.rn.f16x2.f32 $0, $2, $1;", "=r,r,r", [x],
                                       dtype=tl.float16, is_pure=True, pack=2)  # fmt: skip
    tl.store(halves_ptr + offs, halves)
    b = tl.load(bytes_ptr + offs)
    swapped = tl.inline_asm_elementwise("prmt.b32 $0, $1, 0, 0x0123;", "=r,r", [b],
                                        dtype=tl.int8, is_pure=True, pack=4)  # fmt: skip
    tl.store(bytes_ptr + offs, swapped)


@triton.jit
def newer_syntax(x_ptr, out_ptr, lock_ptr, N: tl.constexpr):
    """Slices with ``None`` bounds, ``hasattr``/``getattr`` on run-time values,
    ``.item()`` and an ``if`` on a one-element block, and member functions."""
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    row = x[None, None:][:, ::None]  # [1, N]
    if hasattr(x, "dtype") and not hasattr(x, "no_such_attribute"):
        x = tl.reshape(row, (N,)) + getattr(x, "no_such_attribute", 1.0)
    first = tl.load(x_ptr + tl.arange(0, 1))  # a one-element block
    if first > 100.0:
        x = x * 0
    x = x + first.item()
    (out_ptr + offs).store(x.sqrt_rn() * 0 + x)  # sqrt_rn as a member; the values stay x
    lock_ptr.atomic_add(tl.cdiv(N, 3))


@triton.jit
def umulhi_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.umulhi(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@triton.jit
def atomic_on_int16(x_ptr):
    tl.atomic_add(x_ptr, tl.load(x_ptr))


@triton.jit
def narrow_descriptor(x_ptr):
    desc = tl.make_tensor_descriptor(x_ptr, [128, 128], [128, 1], [8, 2])
    tl.store(x_ptr + tl.arange(0, 2), tl.sum(desc.load([0, 0]), axis=0))


@triton.must_use_result("Write y = cube(x).")
@triton.jit
def cube(x):
    """``x ** 3``, whose result a caller must use (``triton.must_use_result``)."""
    return x * x * x


@triton.jit
def uses_cube(x_ptr, N: tl.constexpr):
    """``x = cube(x)``, in place."""
    offs = tl.arange(0, N)
    tl.store(x_ptr + offs, cube(tl.load(x_ptr + offs)))


@triton.jit
def drops_cube(x_ptr, N: tl.constexpr):
    """``cube(x)`` as a statement: its result is lost."""
    cube(tl.load(x_ptr + tl.arange(0, N)))


@triton.jit
def advances_a_block_pointer(x_ptr, out_ptr, N: tl.constexpr, DROP: tl.constexpr):
    """``p = p.advance(...)`` (the method form), or ``tl.advance(p, ...)`` dropped."""
    p = tl.make_block_ptr(x_ptr, (2 * N,), (1,), (0,), (N,), (0,))
    if DROP:
        tl.advance(p, (N,))
    else:
        p = p.advance((N,))
    tl.store(out_ptr + tl.arange(0, N), tl.load(p))


@triton.aggregate
class Pair:
    """Two blocks and a compile-time scale (Triton 3.5's ``@triton.aggregate``)."""

    a: tl.tensor
    b: tl.tensor
    scale: tl.constexpr

    @triton.constexpr_function
    def __init__(self, a, b, scale):
        self.a = a
        self.b = b
        self.scale = scale

    @triton.jit
    def total(self):
        return (self.a + self.b) * self.scale

    @triton.jit
    def swapped(self):
        return Pair(self.b, self.a, self.scale)

    @triton.constexpr_function
    def doubled_scale(self):
        return self.scale * 2


@triton.jit
def product(p):
    """A helper that takes an aggregate."""
    return p.a * p.b


@triton.jit
def aggregates(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    """Aggregates built, passed to helpers, returned by methods and carried by a loop."""
    offs = tl.arange(0, N)
    p = Pair(tl.load(x_ptr + offs), tl.load(y_ptr + offs), 3)
    q = p.swapped()
    acc = tl.zeros((N,), tl.float32)
    for _ in range(2):
        acc += q.total() + product(q)
        q = Pair(q.a + 1, q.b, q.scale)
    tl.static_assert(p.doubled_scale() == 6)
    tl.store(out_ptr + offs, acc + p.a)


@triton.jit
def cast_to(x_ptr, out_ptr, N: tl.constexpr, DST: tl.constexpr):
    """``x.to(DST)``: a float block converted to an integer type."""
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(DST))
