"""Per-op semantics, property-tested against exact Python references."""

from __future__ import annotations

import struct
from fractions import Fraction

import numpy as np
from emulator_helpers import binary_kernel, run, unary_kernel
from hypothesis import given, settings
from hypothesis import strategies as st

N = 16  # one block per kernel; hypothesis draws N values per operand

INT_TYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "u32": np.uint32, "u8": np.uint8,
             "i64": np.int64}  # fmt: skip


def _wrap(v: int, t: str) -> int:
    bits = int(t[1:])
    v &= (1 << bits) - 1
    if t[0] == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def _ints(t: str) -> st.SearchStrategy[list[int]]:
    info = np.iinfo(INT_TYPES[t])
    edge = st.sampled_from([int(info.min), int(info.max), 0, 1, -1 if info.min < 0 else 2])
    value = st.one_of(edge, st.integers(int(info.min), int(info.max)))
    return st.lists(value, min_size=N, max_size=N)


def _binary(op: str, t: str, a: list[int], b: list[int]) -> np.ndarray:
    dt = INT_TYPES[t]
    out = np.zeros(N, dtype=dt)
    run(binary_kernel(op, t, N), (1,), [np.array(a, dtype=dt), np.array(b, dtype=dt), out])
    return out


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(INT_TYPES)), st.data())
def test_integer_arithmetic_wraps_around(t: str, data: st.DataObject) -> None:
    a, b = data.draw(_ints(t)), data.draw(_ints(t))
    for op, ref in (
        ("add", lambda x, y: x + y),
        ("sub", lambda x, y: x - y),
        ("mul", lambda x, y: x * y),
    ):
        got = _binary(f"arith.{op}", t, a, b)
        assert got.tolist() == [_wrap(ref(x, y), t) for x, y in zip(a, b)], op


def _c_div(x: int, y: int) -> int:
    if y == 0:
        return 0  # documented: division by zero gives 0
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(INT_TYPES)), st.data())
def test_integer_division_truncates_like_c(t: str, data: st.DataObject) -> None:
    a, b = data.draw(_ints(t)), data.draw(_ints(t))
    q = _binary("arith.div", t, a, b)
    r = _binary("arith.rem", t, a, b)
    assert q.tolist() == [_wrap(_c_div(x, y), t) for x, y in zip(a, b)]
    assert r.tolist() == [_wrap(x - _c_div(x, y) * y, t) if y else 0 for x, y in zip(a, b)]


def test_division_examples_from_the_semantics_doc() -> None:
    q = _binary("arith.div", "i32", [-7, 7, -7, 7] * 4, [2, -2, -2, 2] * 4)
    r = _binary("arith.rem", "i32", [-7, 7, -7, 7] * 4, [2, -2, -2, 2] * 4)
    assert q[:4].tolist() == [-3, -3, 3, 3]
    assert r[:4].tolist() == [-1, 1, -1, 1]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["i8", "i32", "u32", "u8"]), st.data())
def test_shifts_arithmetic_for_signed_logical_for_unsigned(t: str, data: st.DataObject) -> None:
    bits = int(t[1:])
    a = data.draw(_ints(t))
    s = data.draw(st.lists(st.integers(0, bits - 1), min_size=N, max_size=N))
    shr = _binary("arith.shr", t, a, s)
    shl = _binary("arith.shl", t, a, s)
    mask = (1 << bits) - 1
    # Python's >> on negative ints is arithmetic; unsigned values are never negative.
    assert shr.tolist() == [_wrap(x >> k, t) for x, k in zip(a, s)]
    assert shl.tolist() == [_wrap((x << k) & mask, t) for x, k in zip(a, s)]


def test_shift_by_bit_width_or_more() -> None:
    a = [-8, 8] * (N // 2)
    assert _binary("arith.shr", "i32", a, [32] * N)[:2].tolist() == [-1, 0]
    assert _binary("arith.shl", "i32", a, [40] * N)[:2].tolist() == [0, 0]


# ---------------------------------------------------------------- bf16


def _bf16_reference(x: float) -> int:
    """Round an fp32 value to bf16 bits, to nearest even, with exact rationals."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    if x != x:
        return (bits >> 16) | 0x40
    if x in (float("inf"), float("-inf")):
        return bits >> 16
    low, high = bits >> 16, (bits >> 16) + 1
    value = Fraction(x)
    lo_v = _bits_value(low << 16)
    hi_v = _bits_value(high << 16)
    if hi_v is None:  # rounding up overflows to inf
        return low if abs(value - lo_v) < abs(Fraction(2) ** 128 - abs(value)) else high
    d_lo, d_hi = abs(value - lo_v), abs(hi_v - value)
    if d_lo != d_hi:
        return low if d_lo < d_hi else high
    return low if low % 2 == 0 else high


def _bits_value(bits: int) -> Fraction | None:
    f = struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]
    return None if f != f or f in (float("inf"), float("-inf")) else Fraction(f)


f32s = st.floats(width=32, allow_nan=True, allow_infinity=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(f32s, min_size=N, max_size=N))
def test_cast_to_bf16_rounds_to_nearest_even(xs: list[float]) -> None:
    out = np.zeros(N, dtype=np.uint16)
    run(unary_kernel("arith.cast", "f32", N, out_t="bf16"), (1,), [np.array(xs, np.float32), out])
    assert out.tolist() == [_bf16_reference(x) for x in xs]


def test_bf16_ties_round_to_even() -> None:
    # 1 + 2^-8 is exactly between bf16 1.0 and 1.0078125: even mantissa (1.0) wins.
    xs = np.array([1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), 3.0e38] * (N // 4), np.float32)
    out = np.zeros(N, dtype=np.uint16)
    run(unary_kernel("arith.cast", "f32", N, out_t="bf16"), (1,), [xs, out])
    assert out[:4].tolist() == [0x3F80, 0x3F82, 0xBF80, 0x7F62]


bf16_bits = st.integers(0, 0xFFFF).filter(lambda b: (b & 0x7F80) != 0x7F80)  # finite


@settings(max_examples=60, deadline=None)
@given(st.lists(bf16_bits, min_size=N, max_size=N), st.lists(bf16_bits, min_size=N, max_size=N))
def test_bf16_add_rounds_the_exact_sum(a: list[int], b: list[int]) -> None:
    out = np.zeros(N, dtype=np.uint16)
    run(
        binary_kernel("arith.add", "bf16", N),
        (1,),
        [np.array(a, np.uint16), np.array(b, np.uint16), out],
    )
    for x, y, got in zip(a, b, out.tolist()):
        exact = float(_bits_value(x << 16) + _bits_value(y << 16))  # type: ignore[operator]
        # exact sums of two bf16 fit in fp32 unless exponents are far apart; then fp32
        # rounding first is harmless (fp32 has more than 2 * 8 + 2 bits)
        assert got == _bf16_reference(float(np.float32(exact))) or exact == 0.0


# ---------------------------------------------------------------- casts


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-3e9, 3e9, width=32), min_size=N, max_size=N))
def test_float_to_int_truncates_and_saturates(xs: list[float]) -> None:
    out = np.zeros(N, dtype=np.int32)
    run(unary_kernel("arith.cast", "f32", N, out_t="i32"), (1,), [np.array(xs, np.float32), out])
    expected = [max(-(2**31), min(2**31 - 1, int(x))) for x in np.array(xs, np.float32).tolist()]
    assert out.tolist() == expected


def test_float_to_int_nan_and_inf_are_deterministic() -> None:
    xs = np.array([np.nan, np.inf, -np.inf, -1.9] * (N // 4), np.float32)
    out = np.zeros(N, dtype=np.uint8)
    run(unary_kernel("arith.cast", "f32", N, out_t="u8"), (1,), [xs, out])
    assert out[:4].tolist() == [0, 255, 0, 0]


@settings(max_examples=40, deadline=None)
@given(_ints("i32"))
def test_int_casts_wrap_and_round(xs: list[int]) -> None:
    a = np.array(xs, np.int32)
    narrow = np.zeros(N, dtype=np.int8)
    run(unary_kernel("arith.cast", "i32", N, out_t="i8"), (1,), [a, narrow])
    assert narrow.tolist() == [_wrap(x, "i8") for x in xs]
    f16 = np.zeros(N, dtype=np.float16)
    run(unary_kernel("arith.cast", "i32", N, out_t="f16"), (1,), [a, f16])
    np.testing.assert_array_equal(f16, a.astype(np.float64).astype(np.float16))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(width=32), min_size=N, max_size=N))
def test_f32_to_f16_rounds_to_nearest_even(xs: list[float]) -> None:
    out = np.zeros(N, dtype=np.float16)
    run(unary_kernel("arith.cast", "f32", N, out_t="f16"), (1,), [np.array(xs, np.float32), out])
    np.testing.assert_array_equal(out, np.array(xs, np.float32).astype(np.float16))


# ---------------------------------------------------------------- floats


def test_float_max_min_ignore_nan() -> None:
    a = np.array([np.nan, 1.0, np.nan, -2.0] * (N // 4), np.float32)
    b = np.array([3.0, np.nan, np.nan, 5.0] * (N // 4), np.float32)
    hi, lo = np.zeros(N, np.float32), np.zeros(N, np.float32)
    run(binary_kernel("arith.max", "f32", N), (1,), [a, b, hi])
    run(binary_kernel("arith.min", "f32", N), (1,), [a, b, lo])
    np.testing.assert_array_equal(hi[:4], [3.0, 1.0, np.nan, 5.0])
    np.testing.assert_array_equal(lo[:4], [3.0, 1.0, np.nan, -2.0])


def test_exp_in_f16_is_computed_in_f32_and_rounded() -> None:
    x = np.linspace(-4, 4, N).astype(np.float16)
    out = np.zeros(N, np.float16)
    run(unary_kernel("math.exp", "f16", N), (1,), [x, out])
    np.testing.assert_array_equal(out, np.exp(x.astype(np.float32)).astype(np.float16))


def test_float_rem_takes_the_sign_of_the_dividend() -> None:
    a = np.array([-7.5, 7.5] * (N // 2), np.float32)
    b = np.array([2.0, -2.0] * (N // 2), np.float32)
    out = np.zeros(N, np.float32)
    run(binary_kernel("arith.rem", "f32", N), (1,), [a, b, out])
    assert out[:2].tolist() == [-1.5, 1.5]


@settings(max_examples=30, deadline=None)
@given(_ints("u32"), _ints("u32"))
def test_umulhi(a: list[int], b: list[int]) -> None:
    got = _binary("arith.umulhi", "u32", a, b)
    assert got.tolist() == [(x * y) >> 32 for x, y in zip(a, b)]


@settings(max_examples=30, deadline=None)
@given(_ints("i32"), _ints("i32"))
def test_umulhi_of_signed_ints_multiplies_their_bit_patterns(a: list[int], b: list[int]) -> None:
    """As Triton's ``tl.umulhi`` and the GPU's ``mul.hi.u32``: unsigned, whatever the type."""
    got = _binary("arith.umulhi", "i32", a, b)
    want = [((x & 0xFFFFFFFF) * (y & 0xFFFFFFFF)) >> 32 for x, y in zip(a, b)]
    assert got.tolist() == [_wrap(w, "i32") for w in want]


@settings(max_examples=30, deadline=None)
@given(_ints("i64"), _ints("i64"))
def test_umulhi_of_int64(a: list[int], b: list[int]) -> None:
    got = _binary("arith.umulhi", "i64", a, b)
    mask = (1 << 64) - 1
    want = [((x & mask) * (y & mask)) >> 64 for x, y in zip(a, b)]
    assert got.tolist() == [_wrap(w, "i64") for w in want]
