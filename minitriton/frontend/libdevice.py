"""Lowering of libdevice's functions (:mod:`minitriton.language.libdevice`).

A library may also reach them by symbol, through Triton's
``core.extern_elementwise`` (``"__nv_tanhf"``): :func:`extern_call` finds the
function of that symbol and lowers it like the call by name.

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
from minitriton.language.libdevice import CORE_FUNCTIONS, LIBDEVICE

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


@impl("libdevice.rsqrt_rn")
def _rsqrt_rn(ctx: FunctionLowerer, arg0: Any) -> Tensor:
    """``1 / sqrt(x)`` rounded once: both steps in fp64 (exact enough), then one rounding."""
    x = _float_input(ctx, arg0, "libdevice.rsqrt_rn", (F32,))
    wide = S.cast(ctx.b, x, F64)
    root = IMPLS["sqrt_rn"](ctx, wide)
    one = S.cast(ctx.b, S.to_tensor(ctx.b, 1.0), F64)
    return S.cast(ctx.b, IMPLS["div_rn"](ctx, one, root), F32)


@impl("libdevice.rcp64h")
def _rcp64h(ctx: FunctionLowerer, arg0: Any) -> Tensor:
    """``1 / x`` of an fp64 value (libdevice's is a fast approximation; this is the quotient)."""
    x = _float_input(ctx, arg0, "libdevice.rcp64h", (F64,))
    return IMPLS["div_rn"](ctx, S.cast(ctx.b, S.to_tensor(ctx.b, 1.0), F64), x)


def _bessel_n(name: str, op: type[Operation]) -> None:
    @impl(f"libdevice.{name}")
    def lower(ctx: FunctionLowerer, arg0: Any, arg1: Any) -> Tensor:
        n = S.cast(ctx.b, _int_input(ctx, arg0, f"libdevice.{name}", (32,)), I32)
        x = _float_input(ctx, arg1, f"libdevice.{name}", _FP32_64)
        n, x = S.broadcast_pair(ctx.b, n, x)
        return Tensor(ctx.b.value(op, [n.handle, x.handle], x.type))


_bessel_n("jn", ops.JnOp)
_bessel_n("yn", ops.YnOp)


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


def _int_pair(ctx: FunctionLowerer, arg0: Any, arg1: Any, name: str) -> tuple[Tensor, Tensor]:
    """Two 32-bit integer arguments of ``libdevice.name``, promoted to one type."""
    x = _int_input(ctx, arg0, f"libdevice.{name}", (32,))
    y = _int_input(ctx, arg1, f"libdevice.{name}", (32,))
    return S.promote_pair(ctx.b, x, y)


def _unsigned(ctx: FunctionLowerer, x: Tensor) -> Tensor:
    """``x``'s bits as the unsigned type of its width (so that ``>>`` is a logical shift)."""
    return S.bitcast(ctx.b, x, U32 if S.scalar_dtype(x).bitwidth == 32 else U64)


def _leading_zeros(ctx: FunctionLowerer, x: Tensor) -> Tensor:
    """The zero bits above the highest set bit (the width for 0), by halving steps; int32."""
    b = ctx.b
    v = _unsigned(ctx, x)
    width = S.scalar_dtype(v).bitwidth
    count = S.cast(b, S.to_tensor(b, 0), I32)
    step = width // 2
    while step:
        empty = S.compare(b, "==", S.binary(b, ">>", v, width - step), 0)
        count = S.where(b, empty, S.binary(b, "+", count, step), count)
        v = S.where(b, empty, S.binary(b, "<<", v, step), v)
        step //= 2
    return S.where(b, S.compare(b, "==", x, 0), width, count)


@impl("libdevice.clz")
def _clz(ctx: FunctionLowerer, arg0: Any) -> Tensor:
    return _leading_zeros(ctx, _int_input(ctx, arg0, "libdevice.clz", (32, 64)))


@impl("libdevice.ffs")
def _ffs(ctx: FunctionLowerer, arg0: Any) -> Tensor:
    """The 1-based position of the lowest set bit, 0 for 0: ``width - clz(x & -x)``."""
    b = ctx.b
    x = _int_input(ctx, arg0, "libdevice.ffs", (32, 64))
    lowest = S.binary(b, "&", x, S.binary(b, "-", 0, x))
    width = S.scalar_dtype(x).bitwidth
    return S.where(
        b, S.compare(b, "==", x, 0), 0, S.binary(b, "-", width, _leading_zeros(ctx, lowest))
    )


#: Per word width: (shift, mask) of each step of a bit reversal (swap halves of ever
#: smaller fields), in unsigned types.
_BREV = {
    32: [(1, 0x55555555), (2, 0x33333333), (4, 0x0F0F0F0F), (8, 0x00FF00FF), (16, 0x0000FFFF)],
    64: [(1, 0x5555555555555555), (2, 0x3333333333333333), (4, 0x0F0F0F0F0F0F0F0F),
         (8, 0x00FF00FF00FF00FF), (16, 0x0000FFFF0000FFFF), (32, 0x00000000FFFFFFFF)],
}  # fmt: skip


@impl("libdevice.brev")
def _brev(ctx: FunctionLowerer, arg0: Any) -> Tensor:
    """The bits in reverse order: pairs, nibbles, bytes, ... swapped in turn."""
    b = ctx.b
    x = _int_input(ctx, arg0, "libdevice.brev", (32, 64))
    v = _unsigned(ctx, x)
    for shift, mask in _BREV[S.scalar_dtype(x).bitwidth]:
        low = S.binary(b, "<<", S.binary(b, "&", v, mask), shift)
        v = S.binary(b, "|", S.binary(b, "&", S.binary(b, ">>", v, shift), mask), low)
    return S.bitcast(b, v, S.scalar_dtype(x))


@impl("libdevice.byte_perm")
def _byte_perm(ctx: FunctionLowerer, arg0: Any, arg1: Any, arg2: Any) -> Tensor:
    """Byte ``n`` of the result is byte ``s[4n:4n+3]`` of the eight bytes of ``(y, x)``."""
    b = ctx.b
    x, y, s = (_unsigned(ctx, _int_input(ctx, a, "libdevice.byte_perm", (32,)))
               for a in (arg0, arg1, arg2))  # fmt: skip
    bytes_ = S.binary(b, "|", S.cast(b, x, U64), S.binary(b, "<<", S.cast(b, y, U64), 32))
    out = S.cast(b, S.to_tensor(b, 0), U32)
    for n in range(4):
        selector = S.cast(b, S.binary(b, "&", S.binary(b, ">>", s, 4 * n), 7), U64)
        byte = S.binary(b, "&", S.binary(b, ">>", bytes_, S.binary(b, "*", selector, 8)), 0xFF)
        out = S.binary(b, "|", out, S.binary(b, "<<", S.cast(b, byte, U32), 8 * n))
    return S.bitcast(b, out, I32)


def _halving_add(name: str, round_up: bool) -> None:
    @impl(f"libdevice.{name}")
    def lower(ctx: FunctionLowerer, arg0: Any, arg1: Any) -> Tensor:
        """``(x + y) >> 1`` (``+ 1`` first for the rounding form) without overflow."""
        b = ctx.b
        x, y = _int_pair(ctx, arg0, arg1, name)
        dtype = S.scalar_dtype(x)
        wide = U64 if dtype.kind == "uint" else I64
        total = S.binary(b, "+", S.cast(b, x, wide), S.cast(b, y, wide))
        if round_up:
            total = S.binary(b, "+", total, 1)
        return S.cast(b, S.binary(b, ">>", total, 1), dtype)


_halving_add("hadd", round_up=False)
_halving_add("rhadd", round_up=True)


@impl("libdevice.mul24")
def _mul24(ctx: FunctionLowerer, arg0: Any, arg1: Any) -> Tensor:
    """The low 32 bits of the product of the low 24 bits (sign-extended for int32)."""
    b = ctx.b
    x, y = _int_pair(ctx, arg0, arg1, "mul24")
    if S.scalar_dtype(x).kind == "uint":
        x, y = S.binary(b, "&", x, 0xFFFFFF), S.binary(b, "&", y, 0xFFFFFF)
    else:
        x, y = (S.binary(b, ">>", S.binary(b, "<<", v, 8), 8) for v in (x, y))
    return S.binary(b, "*", x, y)


@impl("libdevice.sad")
def _sad(ctx: FunctionLowerer, arg0: Any, arg1: Any, arg2: Any) -> Tensor:
    """``|x - y| + z`` (modulo 2**32), typed as ``x`` is."""
    b = ctx.b
    x, y = _int_pair(ctx, arg0, arg1, "sad")
    z = _int_input(ctx, arg2, "libdevice.sad", (32,))
    if S.scalar_dtype(x).kind == "uint":
        larger, smaller = S.minmax(b, "max", x, y), S.minmax(b, "min", x, y)
        difference = S.cast(b, S.binary(b, "-", larger, smaller), U64)
    else:
        wide = S.binary(b, "-", S.cast(b, x, I64), S.cast(b, y, I64))
        difference = S.cast(b, _abs(b, wide), U64)
    total = S.binary(b, "+", difference, S.cast(b, _unsigned(ctx, z), U64))
    return S.bitcast(b, S.cast(b, total, U32), S.scalar_dtype(x))


@impl("libdevice.llround")
def _llround(ctx: FunctionLowerer, arg0: Any) -> Tensor:
    """Rounding half away from zero, to ``int64``."""
    x = _float_input(ctx, arg0, "libdevice.llround", _FP32_64)
    return S.cast(ctx.b, _math(ctx.b, "math.round", x), I64)


@impl("libdevice.scalbn")
def _scalbn(ctx: FunctionLowerer, arg0: Any, arg1: Any) -> Tensor:
    """``x * 2**n``: :func:`_ldexp` (FLT_RADIX is 2)."""
    return IMPLS["libdevice.ldexp"](ctx, arg0, arg1)


def _norm(ctx: FunctionLowerer, name: str, args: tuple[Any, ...]) -> Tensor:
    """``sqrt(a**2 + b**2 + ...)`` as a chain of ``hypot`` (no overflow in the squares)."""
    values = [_float_input(ctx, a, f"libdevice.{name}", _FP32_64) for a in args]
    total = IMPLS["libdevice.hypot"](ctx, values[0], values[1])
    for value in values[2:]:
        total = IMPLS["libdevice.hypot"](ctx, total, value)
    return total


def _reciprocal(ctx: FunctionLowerer, x: Tensor) -> Tensor:
    return S.binary(ctx.b, "/", S.cast(ctx.b, S.to_tensor(ctx.b, 1.0), S.scalar_dtype(x)), x)


@impl("libdevice.rhypot")
def _rhypot(ctx: FunctionLowerer, arg0: Any, arg1: Any) -> Tensor:
    return _reciprocal(ctx, _norm(ctx, "rhypot", (arg0, arg1)))


@impl("libdevice.norm3d")
def _norm3d(ctx: FunctionLowerer, arg0: Any, arg1: Any, arg2: Any) -> Tensor:
    return _norm(ctx, "norm3d", (arg0, arg1, arg2))


@impl("libdevice.rnorm3d")
def _rnorm3d(ctx: FunctionLowerer, arg0: Any, arg1: Any, arg2: Any) -> Tensor:
    return _reciprocal(ctx, _norm(ctx, "rnorm3d", (arg0, arg1, arg2)))


@impl("libdevice.norm4d")
def _norm4d(ctx: FunctionLowerer, arg0: Any, arg1: Any, arg2: Any, arg3: Any) -> Tensor:
    return _norm(ctx, "norm4d", (arg0, arg1, arg2, arg3))


@impl("libdevice.rnorm4d")
def _rnorm4d(ctx: FunctionLowerer, arg0: Any, arg1: Any, arg2: Any, arg3: Any) -> Tensor:
    return _reciprocal(ctx, _norm(ctx, "rnorm4d", (arg0, arg1, arg2, arg3)))


def _double_word(name: str, high: bool) -> None:
    @impl(f"libdevice.{name}")
    def lower(ctx: FunctionLowerer, arg0: Any) -> Tensor:
        x = _float_input(ctx, arg0, f"libdevice.{name}", (F64,))
        bits = S.bitcast(ctx.b, x, U64)
        if high:
            bits = S.binary(ctx.b, ">>", bits, 32)
        return S.bitcast(ctx.b, S.cast(ctx.b, bits, U32), I32)


_double_word("double2hiint", high=True)
_double_word("double2loint", high=False)


@impl("libdevice.hiloint2double")
def _hiloint2double(ctx: FunctionLowerer, arg0: Any, arg1: Any) -> Tensor:
    """The fp64 whose high word is ``hi`` and low word ``lo``."""
    b = ctx.b
    hi, lo = (_unsigned(ctx, _int_input(ctx, a, "libdevice.hiloint2double", (32,)))
              for a in (arg0, arg1))  # fmt: skip
    bits = S.binary(b, "|", S.binary(b, "<<", S.cast(b, hi, U64), 32), S.cast(b, lo, U64))
    return S.bitcast(b, bits, F64)


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


# ---------------------------------------------------------------- extern_elementwise

# Symbols whose name is not the function's with a type prefix or suffix.
_SYMBOL_ALIASES = {"mul64hi": "mulhi", "umul64hi": "mulhi"}


def libdevice_function(symbol: str) -> str | None:
    """The builtin that runs libdevice's ``symbol`` (``"__nv_tanhf"`` -> ``"libdevice.tanh"``).

    libdevice names a function's variants with a type prefix (``fadd_rn``,
    ``dsqrt_rn``, ``umulhi``, ``llabs``) or suffix (``tanhf``, ``popcll``,
    ``isnand``); the function takes its types from its arguments here, so
    any variant maps to the one function. None for other symbols.
    """
    if not symbol.startswith("__nv_"):
        return None
    name = symbol[len("__nv_") :]
    name = _SYMBOL_ALIASES.get(name, name.replace("fmaf_", "fma_"))
    for prefix in ("", "f", "d", "u", "ll", "ull"):
        if not name.startswith(prefix):
            continue
        for suffix in ("", "f", "d", "ll"):
            stem = name[len(prefix) : len(name) - len(suffix)]
            if suffix and not name.endswith(suffix) or not stem:
                continue
            if f"libdevice.{stem}" in LIBDEVICE:
                return f"libdevice.{stem}"
            if stem in CORE_FUNCTIONS:
                return stem
    return None


def extern_call(
    ctx: FunctionLowerer, library: str, args: list[Any], table: dict[tuple[Any, ...], Any]
) -> Tensor:
    """``core.extern_elementwise``: the function ``table`` names for the arguments' dtypes."""
    loc = ctx.b.loc
    tensors = [_tensor(ctx, a, f"argument {i}") for i, a in enumerate(args)]
    key = tuple(S.scalar_dtype(t) for t in tensors)
    entry = table.get(key)
    if entry is None:
        known = ", ".join("(" + ", ".join(repr(d) for d in k) + ")" for k in table)
        shown = "(" + ", ".join(repr(d) for d in key) + ")"
        raise error(loc, f"extern_elementwise: no function for arguments of types {shown}",
                    help=f"the table has {known or 'no entries'}")  # fmt: skip
    symbol, result = entry
    name = libdevice_function(symbol)
    if name is None:
        raise error(
            loc,
            f"extern_elementwise: '{symbol}' of {library or 'an external library'} cannot run "
            "here; MiniTriton runs NVIDIA's libdevice functions (symbols '__nv_...')",
            help="write the function with tl builtins, or call libdevice by name "
            "(from triton.language.extra import libdevice)",
        )
    out = ctx.call_builtin(name, tensors, {}, loc)
    return out if S.scalar_dtype(out) == result else S.cast(ctx.b, out, result)
