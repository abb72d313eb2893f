"""Constant folding agrees with NumPy (C semantics), checked with hypothesis.

Each test writes a tiny function that computes one op on constants, runs
``canonicalize`` and reads the folded constant back.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from minitriton.ir import parse_module
from minitriton.ir.printer import format_attr
from minitriton.passes import run_pipeline

INT_TYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "u8": np.uint8, "u32": np.uint32}
SETTINGS = settings(max_examples=150, deadline=None)


def fold(op: str, t: str, *values: float, result_t: str | None = None, attrs: str = ""):
    """The constant that ``op(values...)`` folds to, or None if it is not folded."""
    result_t = result_t or t
    lines = [f"tt.func @f() -> ({result_t}) {{"]
    for i, v in enumerate(values):
        lines.append(f"  %v{i} = arith.constant() {{value = {format_attr(v)}}} : {t}")
    operands = ", ".join(f"%v{i}" for i in range(len(values)))
    lines += [f"  %r = {op}({operands}){attrs} : {result_t}", "  tt.return(%r)", "}", ""]
    module = run_pipeline(parse_module("\n".join(lines)), ["canonicalize", "dce"], verify=True)
    result = module.funcs[0].body.ops[-1].operands[0]
    owner = result.owner
    return owner.attrs["value"] if owner.name == "arith.constant" else None


def ints_of(t: str) -> st.SearchStrategy[int]:
    info = np.iinfo(INT_TYPES[t])
    return st.integers(int(info.min), int(info.max))


@st.composite
def int_pairs(draw: st.DrawFn) -> tuple[str, int, int]:
    t = draw(st.sampled_from(sorted(INT_TYPES)))
    return t, draw(ints_of(t)), draw(ints_of(t))


def _wrap(value: np.ndarray, t: str) -> int:
    # Compute in int64 (exact for these widths), then wrap like the target.
    return int(value.astype(np.int64).astype(INT_TYPES[t])[0])


def _np(value: int) -> np.ndarray:
    return np.array([value], dtype=np.int64)


# ---------------------------------------------------------------- integers


@SETTINGS
@given(int_pairs(), st.sampled_from(["add", "sub", "mul", "and", "or", "xor", "max", "min"]))
def test_int_binary_wraps_like_numpy(case: tuple[str, int, int], op: str) -> None:
    t, a, b = case
    ref = {
        "add": np.add,
        "sub": np.subtract,
        "mul": np.multiply,
        "and": np.bitwise_and,
        "or": np.bitwise_or,
        "xor": np.bitwise_xor,
        "max": np.maximum,
        "min": np.minimum,
    }[op]
    dtype = INT_TYPES[t]
    want = int(ref(np.array([a], dtype), np.array([b], dtype))[0])
    assert fold(f"arith.{op}", t, a, b) == want


@SETTINGS
@given(int_pairs())
def test_int_div_rem_truncate_like_c(case: tuple[str, int, int]) -> None:
    t, a, b = case
    if b == 0:
        assert fold("arith.div", t, a, b) is None  # undefined: never folded
        assert fold("arith.rem", t, a, b) is None
        return
    rem = np.fmod(_np(a), _np(b))  # C remainder: the sign of the dividend
    quot = (_np(a) - rem) // _np(b)  # exact, so floor == truncation
    assert fold("arith.div", t, a, b) == _wrap(quot, t)
    assert fold("arith.rem", t, a, b) == _wrap(rem, t)


def test_int_div_examples_from_the_semantics_doc() -> None:
    assert fold("arith.div", "i32", -7, 2) == -3
    assert fold("arith.rem", "i32", -7, 2) == -1
    assert fold("arith.div", "i8", -128, -1) == -128  # wraps around


@SETTINGS
@given(st.sampled_from(sorted(INT_TYPES)), st.data())
def test_shifts_match_numpy(t: str, data: st.DataObject) -> None:
    dtype = INT_TYPES[t]
    bits = np.iinfo(dtype).bits
    a = data.draw(ints_of(t))
    b = data.draw(st.integers(0, min(bits + 4, int(np.iinfo(dtype).max))))
    if b >= bits:
        assert fold("arith.shr", t, a, b) is None  # undefined in C
        return
    x, s = np.array([a], dtype), np.array([b], dtype)
    assert fold("arith.shr", t, a, b) == int(np.right_shift(x, s)[0])
    assert fold("arith.shl", t, a, b) == int(np.left_shift(x, s)[0])


@SETTINGS
@given(int_pairs(), st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]))
def test_int_cmp(case: tuple[str, int, int], pred: str) -> None:
    t, a, b = case
    want = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}
    got = fold("arith.cmp", t, a, b, result_t="i1", attrs=f' {{pred = "{pred}"}}')
    assert got is want[pred]


@SETTINGS
@given(st.integers(-(2**31), 2**31 - 1), st.sampled_from(["i8", "u8", "i16", "u32"]))
def test_int_cast_wraps_like_numpy(a: int, t: str) -> None:
    want = int(np.array([a], np.int32).astype(INT_TYPES[t])[0])
    assert fold("arith.cast", "i32", a, result_t=t) == want


# ---------------------------------------------------------------- floats


def _same_float(got: float, want: float) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1, got) == math.copysign(1, want)


@SETTINGS
@given(
    st.sampled_from([("f16", np.float16, 16), ("f32", np.float32, 32)]),
    st.sampled_from(["add", "sub", "mul", "div", "rem"]),
    st.data(),
)
def test_float_binary_matches_numpy(ftype: tuple, op: str, data: st.DataObject) -> None:
    t, dtype, width = ftype
    a = data.draw(st.floats(width=width))
    b = data.draw(st.floats(width=width))
    ref = {"add": np.add, "sub": np.subtract, "mul": np.multiply}
    ref |= {"div": np.divide, "rem": np.fmod}
    with np.errstate(all="ignore"):
        want = float(ref[op](dtype(a), dtype(b)))
    assert _same_float(fold(f"arith.{op}", t, a, b), want)


def _bf16_neighbours(x: float) -> tuple[float, float]:
    """The two bf16 values around the f32 ``x`` (equal if ``x`` is bf16)."""
    bits = int(np.array(x, np.float32).view(np.uint32))
    low = bits & 0xFFFF0000
    high = low + 0x10000
    as_f32 = np.array([low, high], np.uint32).view(np.float32)
    return float(as_f32[0]), float(as_f32[1])


def _bf16_from_bits(bits: int) -> float:
    return float(np.array(bits << 16, np.uint32).view(np.float32))


BF16 = st.integers(0, 0xFFFF).map(_bf16_from_bits).filter(math.isfinite)


@SETTINGS
@given(BF16, BF16)
def test_bf16_rounds_to_nearest_even(a: float, b: float) -> None:
    exact = float(np.float32(a) + np.float32(b))  # bf16 computes in f32 first
    lo, hi = _bf16_neighbours(exact)
    assume(math.isfinite(exact) and math.isfinite(hi))
    got = fold("arith.add", "bf16", a, b)
    assert got in (lo, hi)
    assert abs(got - exact) == min(abs(lo - exact), abs(hi - exact))  # the nearest ...
    if abs(lo - exact) == abs(hi - exact) and lo != hi:
        last_bit = int(np.array(got, np.float32).view(np.uint32) >> 16) & 1
        assert last_bit == 0  # ... and the even one on a tie


@SETTINGS
@given(st.floats(width=32))
def test_float_to_int_cast_truncates(x: float) -> None:
    got = fold("arith.cast", "f32", x, result_t="i32")
    if not math.isfinite(x) or not -(2**31) <= math.trunc(x) < 2**31:
        assert got is None  # undefined: never folded
        return
    assert got == int(np.array([x], np.float32).astype(np.int32)[0])


@SETTINGS
@given(st.integers(-(2**31), 2**31 - 1))
def test_int_to_float_cast_rounds_like_numpy(a: int) -> None:
    assert fold("arith.cast", "i32", a, result_t="f32") == float(np.float32(np.int32(a)))


@pytest.mark.parametrize(
    ("op", "a", "b"),
    [("arith.max", 1.0, math.nan), ("arith.min", math.nan, 2.0)],
)
def test_nan_in_max_min_is_not_folded(op: str, a: float, b: float) -> None:
    assert fold(op, "f32", a, b) is None


def test_float_identities_that_are_not_exact_are_kept() -> None:
    # x + 0.0 would turn -0.0 into 0.0 and x * 0.0 would turn inf into nan.
    text = """\
tt.func @f(%x: f32) -> (f32, f32) {
  %z = arith.constant() {value = 0.0} : f32
  %a = arith.add(%x, %z) : f32
  %m = arith.mul(%x, %z) : f32
  tt.return(%a, %m)
}
"""
    module = run_pipeline(parse_module(text), ["canonicalize"], verify=True)
    names = [op.name for op in module.funcs[0].body.ops]
    assert names == ["arith.constant", "arith.add", "arith.mul", "tt.return"]


def test_rule_tables_are_keyed_by_registered_op_classes() -> None:
    from minitriton.ir import OP_REGISTRY
    from minitriton.passes import folding
    from minitriton.passes.canonicalize import RULES

    tables = [RULES, folding._INT_BINARY, folding._FLOAT_BINARY]
    tables += [folding._INT_UNARY, folding._FLOAT_UNARY]
    registered = set(OP_REGISTRY.values())
    assert all(key in registered for table in tables for key in table)
    assert "arith.add" not in RULES  # type: ignore[comparison-overlap]
