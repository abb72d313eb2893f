"""libdevice and ``tl.math``, by every import path Triton code uses, against NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.diagnostics import CompileError
from minitriton.language.extra import libdevice
from minitriton.language.extra.cuda import libdevice as cuda_libdevice

X = np.array([-2.5, -1.0, -0.25, 0.0, 0.3, 0.5, 0.9, 1.5, 2.5, 3.0, 7.0, 12.5], dtype=np.float32)
Y = np.array([2.0, -3.0, 0.5, 1.0, 2.0, -0.5, 4.0, 1.5, -2.0, 0.5, 3.0, 2.0], dtype=np.float32)
BLOCK = 16


# Each function is called by name in the kernel body (not passed as an argument),
# so the same kernels run on Triton too.
@triton.jit
def unary_kernel(x_ptr, o_ptr, n, NAME: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.5)
    if NAME == "tanh":
        y = libdevice.tanh(x)
    elif NAME == "acos":
        y = libdevice.acos(x)
    elif NAME == "acosh":
        y = libdevice.acosh(x)
    elif NAME == "asin":
        y = libdevice.asin(x)
    elif NAME == "asinh":
        y = libdevice.asinh(x)
    elif NAME == "atan":
        y = libdevice.atan(x)
    elif NAME == "atanh":
        y = libdevice.atanh(x)
    elif NAME == "cbrt":
        y = libdevice.cbrt(x)
    elif NAME == "cosh":
        y = libdevice.cosh(x)
    elif NAME == "sinh":
        y = libdevice.sinh(x)
    elif NAME == "tan":
        y = libdevice.tan(x)
    elif NAME == "erfc":
        y = libdevice.erfc(x)
    elif NAME == "exp10":
        y = libdevice.exp10(x)
    elif NAME == "expm1":
        y = libdevice.expm1(x)
    elif NAME == "log10":
        y = libdevice.log10(x)
    elif NAME == "log1p":
        y = libdevice.log1p(x)
    elif NAME == "lgamma":
        y = libdevice.lgamma(x)
    elif NAME == "tgamma":
        y = libdevice.tgamma(x)
    elif NAME == "rint":
        y = libdevice.rint(x)
    elif NAME == "nearbyint":
        y = libdevice.nearbyint(x)
    elif NAME == "round":
        y = libdevice.round(x)
    elif NAME == "trunc":
        y = libdevice.trunc(x)
    elif NAME == "saturatef":
        y = libdevice.saturatef(x)
    elif NAME == "exp":
        y = libdevice.exp(x)
    elif NAME == "sqrt":
        y = libdevice.sqrt(x)
    elif NAME == "rsqrt":
        y = libdevice.rsqrt(x)
    elif NAME == "erf":
        y = libdevice.erf(x)
    elif NAME == "rcp_rn":
        y = libdevice.rcp_rn(x)
    else:
        tl.static_assert(False, "unknown function")
    tl.store(o_ptr + offs, y, mask=offs < n)


@triton.jit
def binary_kernel(x_ptr, y_ptr, o_ptr, n, NAME: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.5)
    other = tl.load(y_ptr + offs, mask=offs < n, other=0.5)
    if NAME == "pow":
        y = libdevice.pow(x, other)
    elif NAME == "atan2":
        y = libdevice.atan2(x, other)
    elif NAME == "hypot":
        y = libdevice.hypot(x, other)
    elif NAME == "copysign":
        y = libdevice.copysign(x, other)
    elif NAME == "fmod":
        y = libdevice.fmod(x, other)
    elif NAME == "fdim":
        y = libdevice.fdim(x, other)
    elif NAME == "nextafter":
        y = libdevice.nextafter(x, other)
    elif NAME == "div_rn":
        y = libdevice.div_rn(x, other)
    else:
        tl.static_assert(False, "unknown function")
    tl.store(o_ptr + offs, y, mask=offs < n)


def _round_half_away(a: np.ndarray) -> np.ndarray:
    return np.sign(a) * np.floor(np.abs(a) + 0.5)


UNARY = {
    "tanh": (np.tanh, X),
    "acos": (np.arccos, X / 13),
    "acosh": (np.arccosh, np.abs(X) + 1),
    "asin": (np.arcsin, X / 13),
    "asinh": (np.arcsinh, X),
    "atan": (np.arctan, X),
    "atanh": (np.arctanh, X / 13),
    "cbrt": (np.cbrt, X),
    "cosh": (np.cosh, X),
    "sinh": (np.sinh, X),
    "tan": (np.tan, X / 4),
    "erfc": (np.vectorize(math.erfc), X),
    "exp10": (lambda a: np.power(10.0, a), X / 4),
    "expm1": (np.expm1, X),
    "log10": (np.log10, np.abs(X) + 0.1),
    "log1p": (np.log1p, np.abs(X)),
    "lgamma": (np.vectorize(math.lgamma), np.abs(X) + 0.1),
    "tgamma": (np.vectorize(math.gamma), np.abs(X) + 0.1),
    "rint": (np.rint, X),
    "nearbyint": (np.rint, X),
    "round": (_round_half_away, X),
    "trunc": (np.trunc, X),
    "saturatef": (lambda a: np.clip(a, 0, 1), X),
    "exp": (np.exp, X),
    "sqrt": (np.sqrt, np.abs(X)),
    "rsqrt": (lambda a: 1 / np.sqrt(a), np.abs(X) + 0.1),
    "erf": (np.vectorize(math.erf), X),
    "rcp_rn": (lambda a: 1 / a, X + 0.1),
}

BINARY = {
    "pow": (np.power, np.abs(X)),
    "atan2": (np.arctan2, X),
    "hypot": (np.hypot, X),
    "copysign": (np.copysign, X),
    "fmod": (np.fmod, X),
    "fdim": (lambda a, b: np.maximum(a - b, 0), X),
    "nextafter": (np.nextafter, X),
    "div_rn": (np.divide, X),
}


def _tolerance(backend: str) -> float:
    return 1e-6 if backend == "emulator" else 2e-6  # libdevice: within 2 ULP


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_libdevice_function(backend: str, name: str) -> None:
    reference, x = UNARY[name]
    out = np.zeros_like(x)
    unary_kernel[(1,)](x, out, len(x), NAME=name, BLOCK=BLOCK, backend=backend)
    expected = reference(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(out, expected, rtol=_tolerance(backend), atol=1e-7)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_libdevice_function(backend: str, name: str) -> None:
    reference, x = BINARY[name]
    out = np.zeros_like(x)
    binary_kernel[(1,)](x, Y, out, len(x), NAME=name, BLOCK=BLOCK, backend=backend)
    if name == "nextafter":  # exact in fp32, not through fp64
        np.testing.assert_array_equal(out, np.nextafter(x, Y))
        return
    expected = reference(x.astype(np.float64), Y.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(out, expected, rtol=_tolerance(backend), atol=1e-7)


@triton.jit
def predicates(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, libdevice.isnan(x))
    tl.store(o_ptr + BLOCK + offs, libdevice.isinf(x))
    tl.store(o_ptr + 2 * BLOCK + offs, libdevice.finitef(x))
    tl.store(o_ptr + 3 * BLOCK + offs, libdevice.signbit(x))


def test_predicates_return_int32(backend: str) -> None:
    x = np.array([1.0, np.nan, np.inf, -np.inf, -0.0, 0.0, -3.0, -np.nan], dtype=np.float32)
    out = np.full(32, 7, dtype=np.int32)
    predicates[(1,)](x, out, BLOCK=8, backend=backend)
    np.testing.assert_array_equal(out[:8], np.isnan(x))
    np.testing.assert_array_equal(out[8:16], np.isinf(x))
    np.testing.assert_array_equal(out[16:24], np.isfinite(x))
    np.testing.assert_array_equal(out[24:], np.signbit(x))


@triton.jit
def import_paths(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, tl.extra.cuda.libdevice.tanh(x))
    tl.store(o_ptr + BLOCK + offs, cuda_libdevice.pow(x, 2.0))
    tl.store(o_ptr + 2 * BLOCK + offs, tl.math.tanh(x) + tl.math.exp2(x))
    tl.store(o_ptr + 3 * BLOCK + offs, tl.math.erf(x) + tl.extra.libdevice.rsqrt(x))


def test_every_import_path(backend: str) -> None:
    x = np.linspace(0.5, 2.0, 8, dtype=np.float32)
    out = np.zeros(32, dtype=np.float32)
    import_paths[(1,)](x, out, BLOCK=8, backend=backend)
    erf = np.vectorize(math.erf)(x)
    expected = np.concatenate([np.tanh(x), x**2, np.tanh(x) + np.exp2(x), erf + 1 / np.sqrt(x)])
    np.testing.assert_allclose(out, expected, rtol=2e-6)


@triton.jit
def fp64_tanh(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, libdevice.tanh(tl.load(x_ptr + offs)))


def test_fp64_stays_fp64(backend: str) -> None:
    x = np.linspace(-3, 3, 8)
    out = np.zeros(8)
    fp64_tanh[(1,)](x, out, BLOCK=8, backend=backend)
    np.testing.assert_allclose(out, np.tanh(x), rtol=1e-15)


@triton.jit
def fp16_tanh(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, libdevice.tanh(tl.load(x_ptr + offs)))


def test_fp16_input_is_a_located_error() -> None:
    x = np.zeros(8, dtype=np.float16)
    with pytest.raises(CompileError) as info:
        fp16_tanh[(1,)](x, x, BLOCK=8, backend="emulator")
    d = info.value.first
    assert d.message == "tl.libdevice.tanh: Expected dtype ['fp32', 'fp64'] but got fp16"
    assert d.help == "convert with .to(tl.float32) first"


@triton.jit
def unknown_function(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, libdevice.erfinv_typo(tl.load(x_ptr + offs)))


def test_unknown_libdevice_function_is_named() -> None:
    x = np.zeros(8, dtype=np.float32)
    with pytest.raises(CompileError, match="unknown function 'libdevice.erfinv_typo'"):
        unknown_function[(1,)](x, BLOCK=8, backend="emulator")
