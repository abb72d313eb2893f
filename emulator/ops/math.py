"""Semantics of the ``math.*`` ops: libdevice functions, ``abs``, ``fma``, ``pow``, ``div_rn``.

They run through :func:`~minitriton.emulator.ops.arith.elementwise`; the
libdevice functions and ``pow`` with ``math_precision``: f16 (and bf16)
operands compute in fp32 and the result is rounded once. NumPy's functions
are correctly rounded or close to it; the GPU's are approximations (see the
package docstring for the differences).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import partial

import numpy as np

from minitriton.emulator import special
from minitriton.emulator.interpreter import ProgramState
from minitriton.emulator.ops.arith import ArrayFn, elementwise
from minitriton.emulator.registry import semantics
from minitriton.emulator.values import RVal, cast_values
from minitriton.ir.core import Operation
from minitriton.ir.ops import (
    MATH_BINARY_OPS,
    MATH_UNARY_OPS,
    AbsOp,
    DivRnOp,
    FmaOp,
    JnOp,
    PowOp,
    RoundedOp,
    YnOp,
)
from minitriton.ir.types import ScalarType, element_type

#: ``elementwise``, registering from this module.
_math = partial(elementwise, home=__name__)


@_math(DivRnOp)
def _div_rn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE division, rounded to nearest."""
    return a / b


@_math(PowOp, math_precision=True)
def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a ** b."""
    return np.power(a, b)


def _abs_fp8(bits: np.ndarray) -> np.ndarray:
    """|a| of fp8 values held as bits: the sign bit cleared."""
    return bits & np.uint8(0x7F)


@_math(AbsOp, fp8_bits=_abs_fp8)
def _abs(a: np.ndarray) -> np.ndarray:
    """|a| (``abs(INT_MIN)`` wraps to INT_MIN)."""
    return np.abs(a) if a.dtype.kind != "u" else a


def _erf(a: np.ndarray) -> np.ndarray:
    try:
        from scipy.special import erf  # optional: much faster than the fallback
    except ImportError:
        return np.frompyfunc(math.erf, 1, 1)(a).astype(a.dtype)
    return erf(a)


_MATH: dict[str, ArrayFn] = {
    "exp": np.exp,
    "exp2": np.exp2,
    "log": np.log,
    "log2": np.log2,
    "sqrt": np.sqrt,
    "rsqrt": lambda a: 1 / np.sqrt(a),
    "sin": np.sin,
    "cos": np.cos,
    "floor": np.floor,
    "ceil": np.ceil,
    "erf": _erf,
    "tanh": np.tanh,
    # libdevice's functions (minitriton.language.libdevice)
    "acos": np.arccos,
    "acosh": np.arccosh,
    "asin": np.arcsin,
    "asinh": np.arcsinh,
    "atan": np.arctan,
    "atanh": np.arctanh,
    "cbrt": np.cbrt,
    "cosh": np.cosh,
    "sinh": np.sinh,
    "tan": np.tan,
    "erfc": lambda a: _scalar_fn(math.erfc, a, at_pole=math.nan),
    "exp10": lambda a: np.power(a.dtype.type(10), a),
    "expm1": np.expm1,
    "log10": np.log10,
    "log1p": np.log1p,
    "lgamma": lambda a: _scalar_fn(math.lgamma, a, at_pole=math.inf),
    "tgamma": lambda a: _scalar_fn(math.gamma, a, at_pole=math.nan),
    "rint": np.rint,
    "round": lambda a: np.trunc(a) + np.where(np.abs(a - np.trunc(a)) >= 0.5, np.sign(a), 0),
    "trunc": np.trunc,
    "erfinv": lambda a: _normal_quantile(a, lambda x: (1 + x) / 2, math.sqrt(0.5)),
    "erfcinv": lambda a: _normal_quantile(a, lambda y: y / 2, -math.sqrt(0.5)),
    "normcdf": lambda a: _scalar_fn(lambda x: 0.5 * math.erfc(-x * math.sqrt(0.5)), a, at_pole=0),
    "normcdfinv": lambda a: _normal_quantile(a, lambda p: p, 1.0),
    "rcbrt": lambda a: 1 / np.cbrt(a),
    "logb": lambda a: _logb(a),
    "j0": special.j0,
    "j1": special.j1,
    "y0": special.y0,
    "y1": special.y1,
    "cyl_bessel_i0": special.cyl_bessel_i0,
    "cyl_bessel_i1": special.cyl_bessel_i1,
    "erfcx": special.erfcx,
    "sinpi": special.sinpi,
    "cospi": special.cospi,
}
for _name, _fn in _MATH.items():
    _math(MATH_UNARY_OPS[_name], math_precision=True)(_fn)

_MATH_BINARY: dict[str, ArrayFn] = {
    "atan2": np.arctan2,
    "hypot": np.hypot,
    "copysign": np.copysign,
    "nextafter": np.nextafter,
    "remainder": special.remainder,
}
for _name, _fn in _MATH_BINARY.items():
    _math(MATH_BINARY_OPS[_name], math_precision=True)(_fn)


@semantics(JnOp, YnOp)
def _bessel_n(op: Operation, state: ProgramState, n: RVal, x: RVal) -> RVal:
    """``jn`` / ``yn``: computed in fp64 (:mod:`~minitriton.emulator.special`), rounded once."""
    fn = special.jn if isinstance(op, JnOp) else special.yn
    dst = element_type(op.result.type)
    assert isinstance(dst, ScalarType)
    out = cast_values(fn(n.data, x.data), ScalarType("f64"), dst)
    return RVal(np.asarray(out), n.batched or x.batched)


def _scalar_fn(fn: Callable[[float], float], a: np.ndarray, *, at_pole: float) -> np.ndarray:
    """A ``math`` module function on each element, with C's values where Python raises.

    Python raises at a pole (``lgamma(0)``, ``gamma(-1)``) and on overflow;
    C returns ``at_pole`` at a pole (``copysign(inf, x)`` for ``tgamma(±0)``)
    and infinity on overflow.
    """

    def one(x: float) -> float:
        try:
            return fn(x)
        except OverflowError:
            return math.inf
        except ValueError:
            return math.copysign(math.inf, x) if x == 0 else at_pole

    return np.vectorize(one, otypes=[a.dtype])(a)


def _normal_quantile(a: np.ndarray, to_p: Callable[[float], float], scale: float) -> np.ndarray:
    """``scale * Phi^-1(to_p(x))`` on each element (``erfinv``, ``erfcinv``, ``normcdfinv``).

    ``statistics.NormalDist.inv_cdf`` is Wichura's AS241, accurate to about
    1e-16; p = 0 and 1 give the infinities, p outside [0, 1] and NaN give NaN.
    """
    from statistics import NormalDist  # only here: not every emulated kernel needs it

    dist = NormalDist()

    def one(x: float) -> float:
        p = to_p(x)
        if not 0 <= p <= 1:
            return math.nan
        if p in (0, 1):
            return math.copysign(math.inf, (p - 0.5) * scale)
        return scale * dist.inv_cdf(p)

    return np.vectorize(one, otypes=[a.dtype])(a)


def _logb(a: np.ndarray) -> np.ndarray:
    """The unbiased exponent of ``a`` as a float: -inf at 0, inf at inf, NaN at NaN."""
    _, exponent = np.frexp(a)
    out = (exponent - 1).astype(a.dtype)
    out = np.where(a == 0, -np.inf, out)
    out = np.where(np.isinf(a), np.inf, out)
    return np.where(np.isnan(a), np.nan, out).astype(a.dtype)


@_math(FmaOp)
def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c: exact product in fp64 (one rounding for f32 and narrower)."""
    return a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)


# ---------------------------------------------------------------- explicit rounding


@semantics(RoundedOp)
def _rounded(op: Operation, state: ProgramState, *xs: RVal) -> RVal:
    """One IEEE operation rounded as ``rounding`` says (libdevice's ``add_rd`` ...).

    The result rounded to nearest is computed first; then an error-free
    transformation (TwoSum, Dekker's TwoProduct) gives the sign of the exact
    result minus it, and the directed modes step one ulp where the sign says
    the nearest value lies on the wrong side.
    """
    fn, rounding = op.attrs["fn"], op.attrs["rounding"]
    batched = any(x.batched for x in xs)
    args = [np.asarray(x.data) for x in xs]
    if fn == "cvt":
        src = element_type(op.operands[0].type)
        dst = element_type(op.result.type)
        assert isinstance(src, ScalarType) and isinstance(dst, ScalarType)
        return RVal(_convert_rounded(args[0], src, dst, rounding), batched)
    with np.errstate(all="ignore"):
        args = list(np.broadcast_arrays(*args))
        nearest, above = _NEAREST[fn](*args)
        above = _exact_where_unsure(fn, args, nearest, np.asarray(above, np.float64))
        result = _direct(nearest, above, rounding, args)
        if rounding == "rd" and fn in ("add", "sub", "fma"):
            result = _zero_sum_toward_negative(fn, args, result, above)
        return RVal(np.asarray(result), batched)


def _zero_sum_toward_negative(
    fn: str, args: list[np.ndarray], result: np.ndarray, above: np.ndarray
) -> np.ndarray:
    """IEEE's sign of an exact zero sum rounded down: -0, unless both terms are +0."""
    if fn == "fma":
        terms = (args[0] * args[1], args[2])
    else:
        terms = (args[0], args[1] if fn == "add" else -args[1])
    plus_zeros = np.all([(t == 0) & ~np.signbit(t) for t in terms], axis=0)
    return np.where((result == 0) & (above == 0) & ~plus_zeros, -result.dtype.type(0), result)


def _exact_where_unsure(
    fn: str, args: list[np.ndarray], nearest: np.ndarray, above: np.ndarray
) -> np.ndarray:
    """``above`` again, exactly with fractions, where the error-free transformations may
    underflow or overflow (tiny or huge values); those elements are few."""
    info = np.finfo(nearest.dtype)
    tiny, huge = info.tiny * 2.0 ** (info.nmant + 2), info.max / 2.0 ** (info.nmant + 2)
    magnitudes = [np.abs(a) for a in args]
    unsure = ~np.isfinite(above) | (np.abs(nearest) < tiny) | (np.abs(nearest) > huge)
    for m in magnitudes:
        unsure |= (m > huge) | ((m < tiny) & (m != 0))
    finite = np.all([np.isfinite(a) for a in args], axis=0) & np.isfinite(nearest)
    above = above.copy()
    for i in zip(*np.nonzero(unsure & finite)):
        values = [Fraction(float(a[i])) for a in args]
        above[i] = _exact_side(fn, values, Fraction(float(nearest[i])))
    return above


def _exact_side(fn: str, v: list[Fraction], nearest: Fraction) -> float:
    """The sign of (exact result - ``nearest``), computed exactly."""
    if fn == "sqrt":  # compare squares: sqrt is increasing
        return _sign(v[0] - nearest * nearest) if nearest >= 0 else 0.0
    if fn in ("div", "rcp") and v[-1] == 0:
        return 0.0
    exact = {
        "add": lambda: v[0] + v[1],
        "sub": lambda: v[0] - v[1],
        "mul": lambda: v[0] * v[1],
        "div": lambda: v[0] / v[1],
        "fma": lambda: v[0] * v[1] + v[2],
        "rcp": lambda: 1 / v[0],
    }[fn]()
    return _sign(exact - nearest)


def _sign(x: Fraction) -> float:
    return float((x > 0) - (x < 0))


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s = a + b`` rounded, and its exact error ``a + b - s`` (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's split of ``a`` into two halves of its mantissa."""
    factor = a.dtype.type(4097.0 if a.dtype == np.float32 else 134217729.0)  # 2^s + 1
    c = factor * a
    high = c - (c - a)
    return high, a - high


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``p = a * b`` rounded, and its exact error ``a * b - p`` (Dekker's TwoProduct)."""
    p = a * b
    a1, a2 = _split(a)
    b1, b2 = _split(b)
    return p, a2 * b2 - (((p - a1 * b1) - a2 * b1) - a1 * b2)


def _add(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s, err = _two_sum(a, b)
    return s, np.sign(err)


def _mul(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p, err = _two_product(a, b)
    return p, np.sign(err)


def _div(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    q = a / b
    p, err = _two_product(q, b)
    residual = (a - p) - err  # exact for a quotient rounded to nearest
    return q, np.sign(residual) * np.sign(b)


def _sqrt(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = np.sqrt(a)
    p, err = _two_product(s, s)
    return s, np.sign((a - p) - err)


def _fma_exact(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a * b + c``, exactly with fractions (NumPy has no fused multiply-add)."""
    dtype = a.dtype.type
    nearest, above = [], []
    for x, y, z in zip(a.ravel(), b.ravel(), c.ravel()):
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
            nearest.append(dtype(x * y + z))
            above.append(0.0)
            continue
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        n = _nearest_to(exact, dtype)
        nearest.append(n)
        above.append(_sign(exact - Fraction(float(n))) if math.isfinite(n) else 0.0)
    shape = a.shape
    return np.array(nearest, a.dtype).reshape(shape), np.array(above).reshape(shape)


def _nearest_to(exact: Fraction, dtype: type) -> np.floating:
    """``exact`` rounded to the nearest value of ``dtype``, ties to even."""
    big = np.finfo(dtype).max
    ulp = Fraction(float(big)) - Fraction(float(np.nextafter(big, dtype(0))))
    if abs(exact) >= Fraction(float(big)) + ulp / 2:  # past the largest value (ties go up)
        return dtype(-math.inf if exact < 0 else math.inf)
    guess = dtype(float(exact))  # within one step: float() rounds once, dtype() maybe twice
    candidates = [np.nextafter(guess, dtype(-np.inf)), guess, np.nextafter(guess, dtype(np.inf))]
    finite = [c for c in candidates if math.isfinite(c)]
    bits = np.uint32 if dtype is np.float32 else np.uint64

    def distance(c: np.floating) -> tuple[Fraction, int]:
        return abs(Fraction(float(c)) - exact), int(np.array(c).view(bits)) & 1

    return min(finite, key=distance)


#: The result rounded to nearest, and the sign of (exact result - it), per function.
_NEAREST: dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]] = {
    "add": _add,
    "sub": lambda a, b: _add(a, -b),
    "mul": _mul,
    "div": _div,
    "fma": _fma_exact,
    "sqrt": _sqrt,
    "rcp": lambda a: _div(np.ones_like(a), a),
}


def _direct(
    nearest: np.ndarray, above: np.ndarray, rounding: str, args: list[np.ndarray]
) -> np.ndarray:
    """The result in mode ``rounding``, from the nearest one and the exact value's side."""
    above = np.nan_to_num(above)  # infinite or NaN operands: the nearest result is exact
    if rounding == "rn":
        return nearest
    down = np.nextafter(nearest, nearest.dtype.type(-np.inf))
    up = np.nextafter(nearest, nearest.dtype.type(np.inf))
    if rounding == "rd":
        result = np.where(above < 0, down, nearest)
    elif rounding == "ru":
        result = np.where(above > 0, up, nearest)
    else:  # rz: toward zero, the side of the exact value nearer zero
        toward = np.where(nearest > 0, down, up)
        result = np.where(above * np.sign(nearest) < 0, toward, nearest)
    # A finite result that overflowed to infinity: the directed modes stop at the largest.
    finite = np.all([np.isfinite(a) for a in np.broadcast_arrays(*args)], axis=0)
    biggest = np.finfo(nearest.dtype).max
    stays = {"rz": np.isinf(result), "rd": result == np.inf, "ru": result == -np.inf}[rounding]
    return np.where(finite & stays, np.copysign(biggest, result), result)


def _convert_rounded(x: np.ndarray, src: ScalarType, dst: ScalarType, rounding: str) -> np.ndarray:
    """``cvt`` with a rounding mode: float to integer, integer to float, f64 to f32."""
    if src.is_float() and dst.is_int():
        integral = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}[rounding](x)
        return np.asarray(cast_values(integral, src, dst))  # NaN stays NaN: nan_as_int
    nearest = np.asarray(cast_values(x, src, dst))
    if rounding == "rn":
        return nearest

    def side(v: np.generic, n: np.generic) -> float:
        if not (math.isfinite(n) and (src.is_int() or math.isfinite(v))):
            return 0.0  # NaN and infinities convert exactly
        exact = Fraction(int(v)) if src.is_int() else Fraction(float(v))
        return _sign(exact - Fraction(float(n)))

    above = np.array([side(v, n) for v, n in zip(x.ravel(), nearest.ravel())]).reshape(x.shape)
    return _direct(nearest, above, rounding, [x.astype(np.float64)])
