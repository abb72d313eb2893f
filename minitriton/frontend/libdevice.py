"""Lowering of libdevice's functions (:mod:`minitriton.language.libdevice`).

Most become one ``math.*`` op of the same name (``libdevice.tanh(x)`` ->
``math.tanh``), which the emulator computes with NumPy and the GPU backend
lowers to the libdevice call. The rest are built from existing ops, so they
need no new semantics: ``isnan(x)`` is ``x != x``, ``fdim`` is
``max(x - y, 0)``, ``saturatef`` is a clamp to ``[0, 1]``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from minitriton.diagnostics import error
from minitriton.frontend import semantic as S
from minitriton.frontend.builtins import (
    _FP32_64,
    IMPLS,
    _float_input,
    _math,
    _runtime_x,
    _tensor,
    impl,
)
from minitriton.frontend.semantic import Tensor
from minitriton.ir import ops
from minitriton.ir.core import OP_REGISTRY, Operation
from minitriton.ir.ops import MATH_BINARY, MATH_UNARY
from minitriton.ir.types import F32, F64, I32, I64, U32, U64, ScalarType, with_shape

if TYPE_CHECKING:
    from minitriton.frontend.lower import FunctionLowerer

# libdevice names that are one math.* op of another name.
_RENAMED = {"nearbyint": "rint", "fast_expf": "exp", "fast_logf": "log", "fast_sinf": "sin"}
_RENAMED |= {"fast_cosf": "cos", "fast_tanf": "tan", "fast_tanhf": "tanh", "fast_log2f": "log2"}
_RENAMED |= {"fast_log10f": "log10", "fast_exp10f": "exp10"}
# Two-argument libdevice functions that are one op of the IR's own.
_BINARY_AS: dict[str, type[Operation]] = {
    "pow": ops.PowOp,
    "fmod": ops.RemOp,
    "div_rn": ops.DivRnOp,
    "fast_dividef": ops.DivOp,
    "fast_powf": ops.PowOp,
}


def _unary_op(name: str, op_name: str) -> Any:
    def lower(ctx: FunctionLowerer, arg0: Any) -> Tensor:
        x = _float_input(ctx, arg0, f"libdevice.{name}", _FP32_64)
        if op_name == "math.abs":
            return Tensor(ctx.b.value(ops.AbsOp, [x.handle], x.type))
        return _math(ctx.b, op_name, x)

    return lower


def _binary_op(name: str, op: type[Operation]) -> Any:
    def lower(ctx: FunctionLowerer, arg0: Any, arg1: Any) -> Tensor:
        a, c = _float_args(ctx, arg0, arg1, name)
        return Tensor(ctx.b.value(op, [a.handle, c.handle], a.type))

    return lower


def _float_args(ctx: FunctionLowerer, arg0: Any, arg1: Any, name: str) -> tuple[Tensor, Tensor]:
    """Both arguments as one fp32 or fp64 type (a Python scalar takes the other's type)."""
    a, c = S.promote_pair(ctx.b, _runtime_x(ctx, arg0, arg1), arg1)
    _float_input(ctx, a, f"libdevice.{name}", _FP32_64)
    return a, c


for _name in MATH_UNARY:
    IMPLS[f"libdevice.{_name}"] = _unary_op(_name, f"math.{_name}")
for _name, _target in _RENAMED.items():
    IMPLS[f"libdevice.{_name}"] = _unary_op(_name, f"math.{_target}")
for _name in MATH_BINARY:
    IMPLS[f"libdevice.{_name}"] = _binary_op(_name, OP_REGISTRY[f"math.{_name}"])
for _name, _op in _BINARY_AS.items():
    IMPLS[f"libdevice.{_name}"] = _binary_op(_name, _op)


@impl("libdevice.fdim")
def _fdim(ctx: FunctionLowerer, arg0: Any, arg1: Any) -> Tensor:
    a, c = _float_args(ctx, arg0, arg1, "fdim")
    return S.minmax(ctx.b, "max", S.binary(ctx.b, "-", a, c), 0.0)


@impl("libdevice.rcp_rn")
def _rcp_rn(ctx: FunctionLowerer, arg0: Any) -> Tensor:
    x = _float_input(ctx, arg0, "libdevice.rcp_rn", _FP32_64)
    one = S.to_tensor(ctx.b, 1.0)
    one = S.cast(ctx.b, one, x.dtype)
    return IMPLS["div_rn"](ctx, one, x)


@impl("libdevice.saturatef")
def _saturatef(ctx: FunctionLowerer, arg0: Any) -> Tensor:
    x = _float_input(ctx, arg0, "libdevice.saturatef", _FP32_64)
    return S.minmax(ctx.b, "min", S.minmax(ctx.b, "max", x, 0.0), 1.0)


# ---------------------------------------------------------------- predicates (int32)


def _predicate(name: str, build: Any) -> None:
    @impl(f"libdevice.{name}")
    def lower(ctx: FunctionLowerer, arg0: Any) -> Tensor:
        x = _float_input(ctx, arg0, f"libdevice.{name}", _FP32_64)
        return S.cast(ctx.b, build(ctx.b, x), I32)


def _abs(b: Any, x: Tensor) -> Tensor:
    return Tensor(b.value(ops.AbsOp, [x.handle], x.type))


def _negative_sign(b: Any, x: Tensor) -> Tensor:
    """The sign bit, as ``copysign(1, x) < 0`` (true for -0.0 and negative NaNs too)."""
    one = S.cast(b, S.to_tensor(b, 1.0), x.dtype)
    one = S.broadcast_to(b, one, x.shape) if x.is_block else one
    signed = Tensor(b.value(OP_REGISTRY["math.copysign"], [one.handle, x.handle], x.type))
    return S.compare(b, "<", signed, 0.0)


_predicate("isnan", lambda b, x: S.compare(b, "!=", x, x))
_predicate("isinf", lambda b, x: S.compare(b, "==", _abs(b, x), math.inf))
_predicate("isfinited", lambda b, x: S.compare(b, "<", _abs(b, x), math.inf))
_predicate("finitef", lambda b, x: S.compare(b, "<", _abs(b, x), math.inf))
_predicate("signbit", _negative_sign)


# ---------------------------------------------------------------- built from other ops


@impl("libdevice.ilogb")
def _ilogb(ctx: FunctionLowerer, arg0: Any) -> Tensor:
    """``logb`` as ``int32``, with C's values: INT_MIN at 0 and NaN, INT_MAX at infinity."""
    b = ctx.b
    x = _float_input(ctx, arg0, "libdevice.ilogb", _FP32_64)
    exponent = S.cast(b, _math(b, "math.logb", x), I32)
    special = S.where(b, S.compare(b, "==", _abs(b, x), math.inf), 2**31 - 1, -(2**31))
    regular = S.binary(b, "&", S.compare(b, "==", x, x), S.compare(b, "<", _abs(b, x), math.inf))
    regular = S.binary(b, "&", regular, S.compare(b, "!=", x, 0.0))
    return S.where(b, regular, exponent, S.cast(b, special, I32))


def _power_of_two(ctx: FunctionLowerer, k: Tensor, dtype: ScalarType) -> Tensor:
    """``2**k`` built from its bits (exact), for ``k`` within the normal exponents."""
    b = ctx.b
    mantissa, bias, low, high, bits = (23, 127, -126, 127, I32) if dtype == F32 else (
        52, 1023, -1022, 1023, I64)  # fmt: skip
    k = S.minmax(b, "max", S.minmax(b, "min", S.cast(b, k, bits), high), low)
    return S.bitcast(b, S.binary(b, "<<", S.binary(b, "+", k, bias), mantissa), dtype)


@impl("libdevice.ldexp")
def _ldexp(ctx: FunctionLowerer, arg0: Any, arg1: Any) -> Tensor:
    """``x * 2**n`` as two exact multiplies by powers of two (n split in halves)."""
    b = ctx.b
    x = _float_input(ctx, arg0, "libdevice.ldexp", _FP32_64)
    n = _int_input(ctx, arg1, "libdevice.ldexp", (32, 64))
    half = S.binary(b, ">>", n, 1)
    dtype = S.scalar_dtype(x)
    x = S.binary(b, "*", x, _power_of_two(ctx, half, dtype))
    return S.binary(b, "*", x, _power_of_two(ctx, S.binary(b, "-", n, half), dtype))


@impl("libdevice.llrint")
def _llrint(ctx: FunctionLowerer, arg0: Any) -> Tensor:
    x = _float_input(ctx, arg0, "libdevice.llrint", _FP32_64)
    return S.cast(ctx.b, _math(ctx.b, "math.rint", x), I64)


def _int_input(ctx: FunctionLowerer, x: Any, name: str, widths: tuple[int, ...]) -> Tensor:
    t = _tensor(ctx, x, "x")
    dtype = S.scalar_dtype(t)
    if not dtype.is_int() or dtype.bitwidth not in widths:
        sizes = " or ".join(f"{w}-bit" for w in widths)
        raise error(ctx.b.loc, f"{name} expects {sizes} integers, got {dtype!r}")
    return t


def _bitcast(name: str, source: tuple[ScalarType, ...], target: ScalarType) -> None:
    @impl(f"libdevice.{name}")
    def lower(ctx: FunctionLowerer, arg0: Any) -> Tensor:
        t = _tensor(ctx, arg0, "arg0")
        if S.scalar_dtype(t) not in source:
            names = " or ".join(repr(s) for s in source)
            raise error(ctx.b.loc, f"libdevice.{name} expects {names}, got {S.scalar_dtype(t)!r}")
        return S.bitcast(ctx.b, t, target)


_bitcast("float_as_int", (F32,), I32)
_bitcast("float_as_uint", (F32,), U32)
_bitcast("int_as_float", (I32, U32), F32)
_bitcast("uint_as_float", (U32, I32), F32)
_bitcast("double_as_longlong", (F64,), I64)
_bitcast("longlong_as_double", (I64, U64), F64)


#: Per word width: the SWAR masks (pairs, nibbles, bytes), the byte-summing multiplier
#: and the shift that brings the sum down; in unsigned types, so the shifts are logical.
_SWAR = {
    32: (U32, 0x55555555, 0x33333333, 0x0F0F0F0F, 0x01010101, 24),
    64: (U64, 0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x0101010101010101, 56),
}


@impl("libdevice.popc")
def _popc(ctx: FunctionLowerer, arg0: Any) -> Tensor:
    """Set bits, counted in parallel within the word (SWAR), then summed by one multiply."""
    b = ctx.b
    x = _int_input(ctx, arg0, "libdevice.popc", (32, 64))
    word, m1, m2, m4, ones, shift = _SWAR[S.scalar_dtype(x).bitwidth]
    v = S.bitcast(b, x, word)
    v = S.binary(b, "-", v, S.binary(b, "&", S.binary(b, ">>", v, 1), m1))
    v = S.binary(b, "+", S.binary(b, "&", v, m2), S.binary(b, "&", S.binary(b, ">>", v, 2), m2))
    v = S.binary(b, "&", S.binary(b, "+", v, S.binary(b, ">>", v, 4)), m4)
    return S.cast(b, S.binary(b, ">>", S.binary(b, "*", v, ones), shift), I32)


@impl("libdevice.mulhi")
def _mulhi(ctx: FunctionLowerer, arg0: Any, arg1: Any) -> Tensor:
    """The high word of the 64-bit product, signed or unsigned as the operands are."""
    b = ctx.b
    x = _int_input(ctx, arg0, "libdevice.mulhi", (32,))
    y = _int_input(ctx, arg1, "libdevice.mulhi", (32,))
    x, y = S.promote_pair(b, x, y)
    unsigned = S.scalar_dtype(x).kind == "uint"
    wide = U64 if unsigned else I64
    product = S.binary(b, "*", S.cast(b, x, wide), S.cast(b, y, wide))
    return S.cast(b, S.binary(b, ">>", product, 32), S.scalar_dtype(x))


# ---------------------------------------------------------------- explicit rounding

#: libdevice's names for the types its conversions take: float2int_rd is f32 -> i32.
_CVT_TYPES = {"float": F32, "double": F64, "int": I32, "uint": U32, "ll": I64, "ull": U64}
#: The conversions libdevice has in each rounding mode (the exact ones only as _rn).
ROUNDED_CONVERSIONS = [
    f"{src}2{dst}"
    for src, dst in [("float", d) for d in ("int", "uint", "ll", "ull")]
    + [("double", d) for d in ("int", "uint", "ll", "ull", "float")]
    + [(s, "float") for s in ("int", "uint", "ll", "ull")]
    + [(s, "double") for s in ("ll", "ull")]
]
#: The arithmetic libdevice has in each rounding mode, that is not an op already.
ROUNDED_ARITHMETIC = ["add", "sub", "mul", "div", "fma", "sqrt", "rcp"]
_ALREADY = {"div_rn", "rcp_rn", "sqrt_rn"}  # an op of their own (sqrt_rn is a tl builtin)


def _rounded_arithmetic(fn: str, rounding: str) -> None:
    name = f"{fn}_{rounding}"

    @impl(f"libdevice.{name}")
    def lower(ctx: FunctionLowerer, arg0: Any, arg1: Any = None, arg2: Any = None) -> Tensor:
        args = [arg0, arg1, arg2][: ops.ROUNDED_FUNCTIONS[fn]]
        values = [_float_input(ctx, a, f"libdevice.{name}", _FP32_64) for a in args]
        wide = F64 if any(S.scalar_dtype(v) == F64 for v in values) else F32
        shape: tuple[int, ...] = ()
        for v in values:
            shape = S.broadcast_shapes(ctx.b, shape, v.shape)
        values = [S.convert(ctx.b, v, wide, shape) for v in values]
        attrs = {"fn": fn, "rounding": rounding}
        return Tensor(ctx.b.value(ops.RoundedOp, [v.handle for v in values], values[0].type, attrs))


def _rounded_conversion(conversion: str, rounding: str) -> None:
    name = f"{conversion}_{rounding}"
    src, dst = (_CVT_TYPES[t] for t in conversion.split("2"))

    @impl(f"libdevice.{name}")
    def lower(ctx: FunctionLowerer, arg0: Any) -> Tensor:
        x = _tensor(ctx, arg0, "arg0")
        if S.scalar_dtype(x).is_float() != src.is_float():
            kind = "a floating-point" if src.is_float() else "an integer"
            raise error(ctx.b.loc, f"libdevice.{name} takes {kind} value ({src!r}), got {x.type}")
        x = S.cast(ctx.b, x, src)
        result = with_shape(dst, x.shape)
        attrs = {"fn": "cvt", "rounding": rounding}
        return Tensor(ctx.b.value(ops.RoundedOp, [x.handle], result, attrs))


for _rounding in ops.ROUNDINGS:
    for _fn in ROUNDED_ARITHMETIC:
        if f"{_fn}_{_rounding}" not in _ALREADY:
            _rounded_arithmetic(_fn, _rounding)
    for _conversion in ROUNDED_CONVERSIONS:
        _rounded_conversion(_conversion, _rounding)
for _conversion in ("int2double", "uint2double"):  # exact: libdevice has only _rn
    _rounded_conversion(_conversion, "rn")
