"""NVIDIA's libdevice math library, as Triton exposes it.

Import it as in Triton; every spelling reaches the same functions::

    from minitriton.language.extra import libdevice        # Triton 3.x
    from minitriton.language.extra.cuda import libdevice   # Triton 3.x, CUDA only
    tl.extra.cuda.libdevice.tanh(x)                         # the same, by attribute
    tl.math.tanh(x)                                         # Triton 2.x

Inside a kernel, ``libdevice.tanh(x)`` takes an fp32 or fp64 block (as
Triton's libdevice does: convert fp16 first) and gives the same type. On the
GPU the call is the libdevice function itself (``__nv_tanhf``); on the
emulator it is NumPy's function of the same name, computed in the input's
type. The predicates ``isnan``, ``isinf``, ``isfinited``, ``finitef`` and
``signbit`` return ``int32`` (0 or 1), as in libdevice. Functions that
Triton's libdevice has and this module lacks are a located error that names
them; every name here is also in Triton's libdevice, so code written for
MiniTriton runs on Triton.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from minitriton.language import core

LIBDEVICE: dict[str, Callable[..., Any]] = {}

# name -> (number of arguments, one-line docstring). Each becomes a stub that
# the frontend lowers with the implementation registered as "libdevice.NAME".
_FUNCTIONS: dict[str, tuple[int, str]] = {
    "acos": (1, "Elementwise arc cosine."),
    "acosh": (1, "Elementwise inverse hyperbolic cosine."),
    "asin": (1, "Elementwise arc sine."),
    "asinh": (1, "Elementwise inverse hyperbolic sine."),
    "atan": (1, "Elementwise arc tangent."),
    "atanh": (1, "Elementwise inverse hyperbolic tangent."),
    "cbrt": (1, "Elementwise cube root."),
    "cosh": (1, "Elementwise hyperbolic cosine."),
    "sinh": (1, "Elementwise hyperbolic sine."),
    "tan": (1, "Elementwise tangent."),
    "tanh": (1, "Elementwise hyperbolic tangent."),
    "erfc": (1, "Elementwise complementary error function ``1 - erf(x)``."),
    "exp10": (1, "Elementwise ``10**x``."),
    "expm1": (1, "Elementwise ``e**x - 1``, accurate near 0."),
    "log10": (1, "Elementwise base-10 logarithm."),
    "log1p": (1, "Elementwise ``log(1 + x)``, accurate near 0."),
    "lgamma": (1, "Elementwise logarithm of the absolute value of the gamma function."),
    "tgamma": (1, "Elementwise gamma function."),
    "rint": (1, "Elementwise rounding to the nearest integer, ties to even."),
    "nearbyint": (1, "Elementwise rounding to the nearest integer, ties to even."),
    "round": (1, "Elementwise rounding to the nearest integer, ties away from zero."),
    "trunc": (1, "Elementwise rounding toward zero."),
    "atan2": (2, "Elementwise arc tangent of ``arg0 / arg1``, in the right quadrant."),
    "hypot": (2, "Elementwise ``sqrt(arg0**2 + arg1**2)`` without overflow."),
    "copysign": (2, "Elementwise magnitude of ``arg0`` with the sign of ``arg1``."),
    "fmod": (2, "Elementwise remainder with the sign of ``arg0`` (C ``fmod``)."),
    "nextafter": (2, "Elementwise next representable value after ``arg0`` toward ``arg1``."),
    "pow": (2, "Elementwise ``arg0 ** arg1``."),
    "fdim": (2, "Elementwise positive difference ``max(arg0 - arg1, 0)``."),
    "isnan": (1, "Elementwise 1 where ``arg0`` is NaN, else 0 (``int32``)."),
    "isinf": (1, "Elementwise 1 where ``arg0`` is plus or minus infinity, else 0 (``int32``)."),
    "isfinited": (1, "Elementwise 1 where ``arg0`` is finite, else 0 (``int32``)."),
    "finitef": (1, "Elementwise 1 where ``arg0`` is finite, else 0 (``int32``)."),
    "signbit": (1, "Elementwise 1 where the sign bit of ``arg0`` is set, else 0 (``int32``)."),
    "saturatef": (1, "Elementwise clamp to ``[0, 1]``."),
    "fast_expf": (1, "Elementwise ``e**x``, the fast approximation (as ``tl.exp``)."),
    "fast_logf": (1, "Elementwise natural logarithm, the fast approximation."),
    "rcp_rn": (1, "Elementwise ``1 / x``, rounded to nearest."),
    "fast_dividef": (2, "Elementwise ``arg0 / arg1``, the fast approximation."),
    "div_rn": (2, "Elementwise ``arg0 / arg1``, rounded to nearest (IEEE)."),
    "erfinv": (1, "Elementwise inverse error function."),
    "erfcinv": (1, "Elementwise inverse complementary error function."),
    "normcdf": (1, "Elementwise standard normal cumulative distribution function."),
    "normcdfinv": (1, "Elementwise inverse of the standard normal distribution function."),
    "rcbrt": (1, "Elementwise ``1 / cbrt(x)``."),
    "logb": (1, "Elementwise exponent of ``x`` as a float (``-inf`` at 0)."),
    "j0": (1, "Elementwise Bessel function of the first kind of order 0."),
    "j1": (1, "Elementwise Bessel function of the first kind of order 1."),
    "y0": (1, "Elementwise Bessel function of the second kind of order 0."),
    "y1": (1, "Elementwise Bessel function of the second kind of order 1."),
    "jn": (2, "Elementwise Bessel function of the first kind of integer order ``arg0`` (int32)."),
    "yn": (2, "Elementwise Bessel function of the second kind of integer order ``arg0`` (int32)."),
    "rsqrt_rn": (1, "Elementwise ``1 / sqrt(x)`` of fp32, rounded to nearest."),
    "rcp64h": (
        1,
        "Elementwise ``1 / x`` of fp64. libdevice's is a fast approximation; MiniTriton gives "
        "the quotient rounded to nearest on both backends.",
    ),
    "cyl_bessel_i0": (1, "Elementwise modified Bessel function of the first kind of order 0."),
    "cyl_bessel_i1": (1, "Elementwise modified Bessel function of the first kind of order 1."),
    "erfcx": (1, "Elementwise scaled complementary error function ``exp(x**2) * erfc(x)``."),
    "sinpi": (1, "Elementwise ``sin(pi * x)``, exactly 0 at the integers."),
    "cospi": (1, "Elementwise ``cos(pi * x)``, exactly 0 at the half-integers."),
    "remainder": (2, "Elementwise IEEE remainder ``x - n * y``, ``n = rint(x / y)``."),
    "clz": (1, "Elementwise count of the zero bits above the highest set bit (int32 or int64)."),
    "ffs": (1, "Elementwise 1-based position of the lowest set bit, 0 for 0 (int32 or int64)."),
    "brev": (1, "Elementwise reversal of the bits of an int32 or int64."),
    "byte_perm": (
        3,
        "Elementwise byte permute: byte ``n`` of the result is the byte of ``(arg1, arg0)`` "
        "that bits ``4n .. 4n+2`` of ``arg2`` select.",
    ),
    "hadd": (2, "Elementwise ``(x + y) >> 1`` of 32-bit integers, without overflow."),
    "rhadd": (2, "Elementwise ``(x + y + 1) >> 1`` of 32-bit integers, without overflow."),
    "mul24": (2, "Elementwise product of the low 24 bits of 32-bit integers (its low 32 bits)."),
    "sad": (3, "Elementwise ``|arg0 - arg1| + arg2`` of 32-bit integers."),
    "llround": (1, "Elementwise rounding to the nearest ``int64``, halves away from zero."),
    "scalbn": (2, "Elementwise ``arg0 * 2**arg1`` for an integer ``arg1``."),
    "rhypot": (2, "Elementwise ``1 / sqrt(x**2 + y**2)``."),
    "norm3d": (3, "Elementwise ``sqrt(a**2 + b**2 + c**2)``, without overflow in the squares."),
    "rnorm3d": (3, "Elementwise ``1 / sqrt(a**2 + b**2 + c**2)``."),
    "norm4d": (4, "Elementwise ``sqrt(a**2 + b**2 + c**2 + d**2)``, without overflow."),
    "rnorm4d": (4, "Elementwise ``1 / sqrt(a**2 + b**2 + c**2 + d**2)``."),
    "double2hiint": (1, "The high 32 bits of an fp64 value, as ``int32``."),
    "double2loint": (1, "The low 32 bits of an fp64 value, as ``int32``."),
    "hiloint2double": (2, "The fp64 value whose high 32 bits are ``arg0`` and low 32 ``arg1``."),
    "ilogb": (
        1,
        "Elementwise exponent of ``x`` as ``int32`` (INT_MIN at 0 and NaN, INT_MAX at inf).",
    ),
    "ldexp": (2, "Elementwise ``arg0 * 2**arg1`` for an integer ``arg1``."),
    "llrint": (1, "Elementwise rounding to the nearest ``int64``, ties to even."),
    "fast_sinf": (1, "Elementwise sine, the fast approximation (as ``tl.sin``)."),
    "fast_cosf": (1, "Elementwise cosine, the fast approximation (as ``tl.cos``)."),
    "fast_tanf": (1, "Elementwise tangent (the fast approximation in libdevice)."),
    "fast_tanhf": (1, "Elementwise hyperbolic tangent (the fast approximation in libdevice)."),
    "fast_log2f": (1, "Elementwise base-2 logarithm, the fast approximation."),
    "fast_log10f": (1, "Elementwise base-10 logarithm (the fast approximation in libdevice)."),
    "fast_exp10f": (1, "Elementwise ``10**x`` (the fast approximation in libdevice)."),
    "fast_powf": (2, "Elementwise ``arg0 ** arg1`` (the fast approximation in libdevice)."),
    "float_as_int": (1, "The bits of an fp32 value as ``int32``."),
    "float_as_uint": (1, "The bits of an fp32 value as ``uint32``."),
    "int_as_float": (1, "The bits of an ``int32`` value as fp32."),
    "uint_as_float": (1, "The bits of a ``uint32`` value as fp32."),
    "double_as_longlong": (1, "The bits of an fp64 value as ``int64``."),
    "longlong_as_double": (1, "The bits of an ``int64`` value as fp64."),
    "popc": (1, "Elementwise number of set bits of a 32- or 64-bit integer (``int32``)."),
    "mulhi": (2, "Elementwise high 32 bits of the 64-bit product of two 32-bit integers."),
}

_ROUNDING_WORDS = {
    "rn": "rounded to nearest even",
    "rz": "rounded toward zero",
    "rd": "rounded down (toward -inf)",
    "ru": "rounded up (toward +inf)",
}
_ARITHMETIC = {
    "add": (2, "``arg0 + arg1``"),
    "sub": (2, "``arg0 - arg1``"),
    "mul": (2, "``arg0 * arg1``"),
    "div": (2, "``arg0 / arg1``"),
    "fma": (3, "``arg0 * arg1 + arg2`` (one rounding)"),
    "sqrt": (1, "``sqrt(arg0)``"),
    "rcp": (1, "``1 / arg0``"),
}
_CONVERSION_NAMES = {"float": "fp32", "double": "fp64", "int": "int32", "uint": "uint32",
                     "ll": "int64", "ull": "uint64"}  # fmt: skip
_CONVERSIONS = [f"float2{d}" for d in ("int", "uint", "ll", "ull")]
_CONVERSIONS += [f"double2{d}" for d in ("int", "uint", "ll", "ull", "float")]
_CONVERSIONS += [f"{s}2float" for s in ("int", "uint", "ll", "ull")]
_CONVERSIONS += ["ll2double", "ull2double"]
for _r, _words in _ROUNDING_WORDS.items():
    for _fn, (_arity, _what) in _ARITHMETIC.items():
        _FUNCTIONS.setdefault(f"{_fn}_{_r}", (_arity, f"Elementwise {_what}, {_words}."))
    for _c in _CONVERSIONS:
        _src, _dst = (_CONVERSION_NAMES[t] for t in _c.split("2"))
        _to = f"{_words}; to an integer value first, saturating" if "int" in _dst else _words
        _FUNCTIONS[f"{_c}_{_r}"] = (1, f"Elementwise conversion of {_src} to {_dst}, {_to}.")
for _c in ("int2double", "uint2double"):
    _FUNCTIONS[f"{_c}_rn"] = (1, f"Elementwise conversion of {_CONVERSION_NAMES[_c[:-7]]} to fp64 "
                              "(exact).")  # fmt: skip
_FUNCTIONS.pop("sqrt_rn")  # Triton's core function, below

# libdevice names that are Triton's core functions: the same builtins.
CORE_FUNCTIONS: tuple[str, ...] = ("exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt")
CORE_FUNCTIONS += ("sin", "cos", "floor", "ceil", "erf", "fma", "abs")


def _signature(arity: int) -> inspect.Signature:
    """``(arg0, arg1, ...)``: the signature the frontend binds a call with."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature([inspect.Parameter(f"arg{i}", kind) for i in range(arity)])


def _stub(name: str, arity: int, doc: str) -> Callable[..., Any]:
    def call(*args: Any, _semantic: Any = None, _builder: Any = None) -> Any:
        # A library's builtin may call it with the _semantic it was given (see core.builtin).
        handle = _semantic if _semantic is not None else _builder
        if hasattr(handle, "call_builtin"):
            return handle.call_builtin(f"libdevice.{name}", args, {})
        raise RuntimeError(f"libdevice.{name} can only be called inside a @jit kernel")

    stub: Any = call  # gains attributes below
    stub.__signature__ = _signature(arity)
    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = doc
    stub.__module__ = __name__
    stub.__minitriton_builtin__ = f"libdevice.{name}"
    LIBDEVICE[f"libdevice.{name}"] = stub
    return stub


for _name, (_arity, _doc) in _FUNCTIONS.items():
    globals()[_name] = _stub(_name, _arity, _doc)
for _name in CORE_FUNCTIONS:
    globals()[_name] = core.BUILTINS[_name]

__all__ = sorted([*_FUNCTIONS, *CORE_FUNCTIONS])
