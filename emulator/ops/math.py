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
from functools import partial

import numpy as np

from minitriton.emulator.ops.arith import ArrayFn, elementwise
from minitriton.ir.ops import MATH_BINARY_OPS, MATH_UNARY_OPS, AbsOp, DivRnOp, FmaOp, PowOp

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


@_math(AbsOp)
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
}
for _name, _fn in _MATH.items():
    _math(MATH_UNARY_OPS[_name], math_precision=True)(_fn)

_MATH_BINARY: dict[str, ArrayFn] = {
    "atan2": np.arctan2,
    "hypot": np.hypot,
    "copysign": np.copysign,
    "nextafter": np.nextafter,
}
for _name, _fn in _MATH_BINARY.items():
    _math(MATH_BINARY_OPS[_name], math_precision=True)(_fn)


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
