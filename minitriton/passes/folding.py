"""Evaluate IR ops on constants, exactly as the target computes them.

Used by the ``canonicalize`` pass. Every function returns ``None`` when it
must not fold: integer division by zero, shifts by the bit width or more,
float-to-int casts out of range, NaN in ``max``/``min`` (whose NaN rules
differ across backends), and roundings we cannot reproduce exactly.

Conventions:

* Integer values are Python ints kept in the type's range: signed types as
  two's complement (``i8``: -128..127), unsigned ones as 0..2^n-1, ``i1``
  as ``False``/``True``. Arithmetic wraps around at the type's width.
* Integer ``div`` truncates toward zero and ``rem`` takes the sign of the
  dividend, as in C (semantics rule 1: rules are numbered as on the docs'
  *Semantics rules* page).
* Float values are Python floats holding the exact value of the type. They
  are computed with NumPy in the type's own dtype; ``bf16`` computes in
  ``float32`` and rounds to nearest even on 16 bits (rule 18), as the GPU
  does.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from minitriton.ir import ops, types
from minitriton.ir.core import Operation
from minitriton.ir.types import PointerType, ScalarType, Type

#: An op class, the key of the tables below (a typo fails at import).
OpClass = type[Operation]

Number = int | float | bool

# ---------------------------------------------------------------- conversions


def wrap_int(value: int, t: ScalarType) -> int | bool:
    """``value`` wrapped around to the range of integer type ``t``; an ``i1`` is a bool.

    A folded ``i1`` stays a bool so that its constant prints ``true``/``false``.
    """
    wrapped = types.wrap_int(value, t)
    return bool(wrapped) if t.is_bool() else wrapped


def _compute_dtype(t: ScalarType) -> type[np.floating]:
    # bf16 has no NumPy dtype: compute in f32, then round (see round_float).
    return {"f16": np.float16, "bf16": np.float32, "f32": np.float32}.get(t.name, np.float64)


def _round_bf16(value: float) -> float | None:
    """Round an f32-exact value to bf16, to nearest even; None if not f32-exact."""
    f32 = np.float32(value)
    if not math.isnan(value) and float(f32) != value:
        return None  # rounding twice (f64 -> f32 -> bf16) could differ
    if math.isnan(value):
        return value
    bits = int(np.array(f32).view(np.uint32))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return float(np.array(bits, dtype=np.uint32).view(np.float32))


def round_float(value: float, t: ScalarType) -> float | None:
    """``value`` rounded to nearest even in float type ``t``."""
    if t.name == "bf16":
        return _round_bf16(float(value))
    with np.errstate(all="ignore"):
        return float(_compute_dtype(t)(value))


def normalize(value: Number, t: ScalarType) -> Number:
    """A constant attribute read as a value of ``t`` (ints wrap, floats round)."""
    if t.is_int():
        return wrap_int(int(value), t)
    # The attribute may hold more digits than the type has; a bf16 one is
    # read as f32 first, so that it can be rounded exactly once more.
    as_f32 = float(np.float32(value)) if t.name == "bf16" else float(value)
    rounded = round_float(as_f32, t)
    assert rounded is not None
    return rounded


# ---------------------------------------------------------------- binary ops


def _int_div(a: int, b: int) -> int | None:
    # BEGIN EXERCISE c1-fold
    # STUB: raise NotImplementedError("c1-fold: a / b truncated toward zero, None if b == 0")
    if b == 0:
        return None  # undefined (rule 3): never fold
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q
    # END EXERCISE


def _int_rem(a: int, b: int) -> int | None:
    # BEGIN EXERCISE c1-fold
    # STUB: raise NotImplementedError("c1-fold: a % b with the sign of a, None if b == 0")
    q = _int_div(a, b)
    return None if q is None else a - b * q
    # END EXERCISE


def _shift_ok(t: ScalarType, b: int) -> bool:
    # C leaves shifts by a negative amount or by >= the width undefined.
    return 0 <= b < t.bitwidth


_INT_BINARY: dict[OpClass, Callable[[int, int, ScalarType], int | None]] = {
    ops.AddOp: lambda a, b, t: a + b,
    ops.SubOp: lambda a, b, t: a - b,
    ops.MulOp: lambda a, b, t: a * b,
    ops.DivOp: lambda a, b, t: _int_div(a, b),
    ops.RemOp: lambda a, b, t: _int_rem(a, b),
    ops.MaxOp: lambda a, b, t: max(a, b),
    ops.MinOp: lambda a, b, t: min(a, b),
    ops.AndOp: lambda a, b, t: a & b,
    ops.OrOp: lambda a, b, t: a | b,
    ops.XorOp: lambda a, b, t: a ^ b,
    ops.ShlOp: lambda a, b, t: a << b if _shift_ok(t, b) else None,
    # Python's >> is arithmetic; unsigned values are non-negative, so it is
    # also the logical shift for them (rule 13).
    ops.ShrOp: lambda a, b, t: a >> b if _shift_ok(t, b) else None,
}


def _float_minmax(fn: Callable[..., np.floating]) -> Callable[..., np.floating | None]:
    def fold(a: np.floating, b: np.floating) -> np.floating | None:
        return None if np.isnan(a) or np.isnan(b) else fn(a, b)

    return fold


_FLOAT_BINARY: dict[OpClass, Callable[..., np.floating | None]] = {
    ops.AddOp: lambda a, b: a + b,
    ops.SubOp: lambda a, b: a - b,
    ops.MulOp: lambda a, b: a * b,
    ops.DivOp: lambda a, b: a / b,
    ops.DivRnOp: lambda a, b: a / b,
    ops.RemOp: np.fmod,  # C fmod: the sign of the dividend
    ops.MaxOp: _float_minmax(np.maximum),
    ops.MinOp: _float_minmax(np.minimum),
}


def fold_binary(op_class: OpClass, a: Number, b: Number, t: ScalarType) -> Number | None:
    """``a <op> b`` in type ``t``, or ``None`` when it must not fold."""
    if t.is_int():
        fn = _INT_BINARY.get(op_class)
        result = fn(int(a), int(b), t) if fn else None
        return None if result is None else wrap_int(result, t)
    float_fn = _FLOAT_BINARY.get(op_class)
    if float_fn is None:
        return None
    dtype = _compute_dtype(t)
    with np.errstate(all="ignore"):
        value = float_fn(dtype(a), dtype(b))
    return None if value is None else round_float(float(value), t)


# ---------------------------------------------------------------- unary ops


def _float_round_fn(fn: Callable[[float], int]) -> Callable[[float], float]:
    # floor(inf) and floor(nan) are themselves; math.floor would raise.
    return lambda a: float(fn(a)) if math.isfinite(a) else a


# Only ops that are exact everywhere: exp, sin, ... are approximate on GPUs.
_FLOAT_UNARY: dict[OpClass, Callable[[float], float]] = {
    ops.NegOp: lambda a: -a,
    ops.AbsOp: abs,
    ops.MATH_UNARY_OPS["floor"]: _float_round_fn(math.floor),
    ops.MATH_UNARY_OPS["ceil"]: _float_round_fn(math.ceil),
}

_INT_UNARY: dict[OpClass, Callable[[int], int]] = {
    ops.NegOp: lambda a: -a,
    ops.NotOp: lambda a: ~a,
    ops.AbsOp: abs,
}


def fold_unary(op_class: OpClass, a: Number, t: ScalarType) -> Number | None:
    """``op(a)`` in type ``t`` for neg, not, abs, floor and ceil."""
    if t.is_int():
        int_fn = _INT_UNARY.get(op_class)
        return wrap_int(int_fn(int(a)), t) if int_fn else None
    fn = _FLOAT_UNARY.get(op_class)
    return round_float(fn(float(a)), t) if fn else None


# ---------------------------------------------------------------- compare


_COMPARE: dict[str, Callable[[Number, Number], bool]] = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}


def fold_cmp(pred: str, a: Number, b: Number) -> bool:
    """``a <pred> b``; floats compare as in Python (ordered except ``ne``)."""
    return _COMPARE[pred](a, b)


# ---------------------------------------------------------------- casts


def fold_cast(value: Number, src: Type, dst: Type) -> Number | None:
    """``arith.cast`` of ``value`` from scalar type ``src`` to ``dst``."""
    if isinstance(src, PointerType) or isinstance(dst, PointerType):
        return None  # addresses are not known at compile time
    assert isinstance(src, ScalarType) and isinstance(dst, ScalarType)
    if dst.is_bool():
        return value != 0  # Triton casts to i1 as ``x != 0``
    if src.is_int() and dst.is_int():
        return wrap_int(int(value), dst)
    if src.is_int():
        return _int_to_float(int(value), src, dst)
    if dst.is_int():
        return _float_to_int(float(value), dst)
    return round_float(float(value), dst)


def _int_to_float(value: int, src: ScalarType, dst: ScalarType) -> float | None:
    # NumPy converts with one rounding (Python's float() would round to f64 first).
    target = np.float32 if dst.name == "bf16" else _compute_dtype(dst)
    with np.errstate(all="ignore"):
        converted = np.array([value], dtype=src.numpy).astype(target)[0]
    if dst.name == "bf16" and float(converted) != value:
        return None  # not exact in f32: rounding twice could differ
    return round_float(float(converted), dst)


def _float_to_int(value: float, dst: ScalarType) -> int | None:
    if not math.isfinite(value):
        return None  # undefined (rule 12)
    truncated = int(value)  # toward zero
    if wrap_int(truncated, dst) != truncated:
        return None  # out of range: undefined (rule 12)
    return truncated


# Significant bits of each float type, including the implicit leading one.
_MANTISSA = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}


def is_exact_cast(src: Type, dst: Type) -> bool:
    """True if every value of ``src`` survives ``src -> dst -> src`` unchanged."""
    if src == dst:
        return True
    if not isinstance(src, ScalarType) or not isinstance(dst, ScalarType):
        return False
    if src.is_int() and dst.is_int():
        return _int_fits(src, dst)
    if src.is_int() and dst.is_float():
        magnitude_bits = src.bitwidth - (1 if src.is_signed() else 0)
        return magnitude_bits <= _MANTISSA[dst.name]
    if src.is_float() and dst.is_float():
        return (src.name, dst.name) in _FLOAT_WIDENING
    return False


_FLOAT_WIDENING = {("f16", "f32"), ("f16", "f64"), ("bf16", "f32"), ("bf16", "f64")}
_FLOAT_WIDENING |= {("f32", "f64")}


def _int_fits(src: ScalarType, dst: ScalarType) -> bool:
    if src.is_bool():
        return True  # 0 and 1 fit anywhere, and ``x != 0`` brings them back
    if src.is_signed():
        return dst.is_signed() and dst.bitwidth >= src.bitwidth
    return dst.bitwidth > src.bitwidth or (dst.is_unsigned() and dst.bitwidth >= src.bitwidth)
