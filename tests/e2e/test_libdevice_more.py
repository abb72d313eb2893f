"""The libdevice functions TorchInductor's kernels call beyond the basic ones, against NumPy.

``erfinv`` (``torch.erfinv``), ``ldexp`` and ``ilogb`` (``torch.ldexp``,
``torch.frexp``), ``llrint`` (rounding of indices), the ``fast_*f``
approximations, the inverse and normal-distribution functions, bit casts,
``popc`` and ``mulhi``; on both backends, and assembled with ``ptxas``.
"""

from __future__ import annotations

import math
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.language.extra import libdevice
from tests.e2e.ptxas_check import assemble, needs_ptxas

BLOCK = 16


@triton.jit
def float_kernel(x_ptr, o_ptr, n, NAME: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.5)
    if NAME == "erfinv":
        y = libdevice.erfinv(x)
    elif NAME == "erfcinv":
        y = libdevice.erfcinv(x)
    elif NAME == "normcdf":
        y = libdevice.normcdf(x)
    elif NAME == "normcdfinv":
        y = libdevice.normcdfinv(x)
    elif NAME == "rcbrt":
        y = libdevice.rcbrt(x)
    elif NAME == "logb":
        y = libdevice.logb(x)
    elif NAME == "fast_tanhf":
        y = libdevice.fast_tanhf(x)
    elif NAME == "fast_sinf":
        y = libdevice.fast_sinf(x)
    elif NAME == "fast_log10f":
        y = libdevice.fast_log10f(x)
    else:
        tl.static_assert(False, "unknown function")
    tl.store(o_ptr + offs, y, mask=offs < n)


def _vec(fn):  # noqa: ANN001, ANN202
    return np.vectorize(fn, otypes=[np.float64])


_PHI = NormalDist()
X = np.array([-0.999, -0.7, -0.25, 0.0, 0.1, 0.5, 0.9, 0.9999, -0.5, 0.3, 0.05, -0.05], np.float32)
FLOAT_CASES = {
    "erfinv": (_vec(lambda x: _PHI.inv_cdf((1 + x) / 2) / math.sqrt(2)), X, 2e-6),
    "erfcinv": (_vec(lambda y: -_PHI.inv_cdf(y / 2) / math.sqrt(2)), X + 1, 2e-6),
    "normcdf": (_vec(_PHI.cdf), X * 6, 2e-6),
    "normcdfinv": (_vec(_PHI.inv_cdf), (X + 1) / 2.1 + 0.01, 2e-6),
    "rcbrt": (lambda a: 1 / np.cbrt(a), X + 2, 2e-6),
    "logb": (
        lambda a: np.floor(np.log2(np.abs(a))),
        np.array([0.75, 1, 3, 1e-3, 1e20, -6] * 2, np.float32),
        0,
    ),
    "fast_tanhf": (np.tanh, X * 3, 2e-3),
    "fast_sinf": (np.sin, X * 3, 2e-3),
    "fast_log10f": (np.log10, np.abs(X) + 0.5, 2e-3),
}


@pytest.mark.parametrize("name", sorted(FLOAT_CASES))
def test_float_functions(backend: str, name: str) -> None:
    reference, x, rtol = FLOAT_CASES[name]
    out = np.zeros_like(x)
    float_kernel[(1,)](x, out, len(x), NAME=name, BLOCK=BLOCK, backend=backend)
    expected = reference(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=2e-6)


@triton.jit
def exponent_kernel(x_ptr, n_ptr, ldexp_ptr, ilogb_ptr, llrint_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    n = tl.load(n_ptr + offs)
    tl.store(ldexp_ptr + offs, libdevice.ldexp(x, n))
    tl.store(ilogb_ptr + offs, libdevice.ilogb(x))
    tl.store(llrint_ptr + offs, libdevice.llrint(x * 1000.0))


def test_ldexp_ilogb_and_llrint(backend: str) -> None:
    x = np.array([1.5, -0.75, 3.0, 1e-30, 2.0**-140, 0.0, np.inf, np.nan] * 2, np.float32)
    n = np.array([3, -2, 100, 200, 160, 5, 1, 0, -3, 0, -100, -120, 2, 7, -1, 4], np.int32)
    out_ldexp = np.zeros(16, np.float32)
    out_ilogb = np.zeros(16, np.int32)
    out_llrint = np.zeros(16, np.int64)
    exponent_kernel[(1,)](x, n, out_ldexp, out_ilogb, out_llrint, BLOCK=16, backend=backend)
    np.testing.assert_array_equal(out_ldexp, np.ldexp(x, n))
    finite = np.isfinite(x) & (x != 0)
    want = np.where(finite, np.frexp(np.where(finite, x, 1))[1] - 1, 0)
    want = np.where(x == 0, -(2**31), want)
    want = np.where(np.isnan(x), -(2**31), np.where(np.isinf(x), 2**31 - 1, want))
    np.testing.assert_array_equal(out_ilogb, want)
    scaled = (x * np.float32(1000.0))[np.isfinite(x * np.float32(1000.0))]
    np.testing.assert_array_equal(out_llrint[np.isfinite(x * np.float32(1000.0))], np.rint(scaled))


@triton.jit
def bits_kernel(f_ptr, i_ptr, d_ptr, out_i_ptr, out_f_ptr, out_l_ptr, out_d_ptr, pop_ptr,
                hi_ptr, BLOCK: tl.constexpr):  # fmt: skip
    offs = tl.arange(0, BLOCK)
    f = tl.load(f_ptr + offs)
    i = tl.load(i_ptr + offs)
    d = tl.load(d_ptr + offs)
    tl.store(out_i_ptr + offs, libdevice.float_as_int(f))
    tl.store(out_f_ptr + offs, libdevice.int_as_float(i))
    tl.store(out_l_ptr + offs, libdevice.double_as_longlong(d))
    tl.store(out_d_ptr + offs, libdevice.longlong_as_double(libdevice.double_as_longlong(d)))
    tl.store(pop_ptr + offs, libdevice.popc(i))
    tl.store(pop_ptr + BLOCK + offs, libdevice.popc(libdevice.double_as_longlong(d)))
    tl.store(hi_ptr + offs, libdevice.mulhi(i, i + 12345))


def test_bit_casts_popc_and_mulhi(backend: str, rng: np.random.Generator) -> None:
    f = rng.standard_normal(16).astype(np.float32)
    f[0] = -0.0
    i = rng.integers(-(2**31), 2**31 - 12346, 16).astype(np.int32)
    i[:3] = [0, -1, 2**31 - 12346]
    d = rng.standard_normal(16)
    outs = [np.zeros(16, np.int32), np.zeros(16, np.float32), np.zeros(16, np.int64),
            np.zeros(16, np.float64), np.zeros(32, np.int32), np.zeros(16, np.int32)]  # fmt: skip
    bits_kernel[(1,)](f, i, d, *outs, BLOCK=16, backend=backend)
    as_int, as_float, as_long, as_double, pop, hi = outs
    np.testing.assert_array_equal(as_int, f.view(np.int32))
    np.testing.assert_array_equal(as_float.view(np.int32), i)
    np.testing.assert_array_equal(as_long, d.view(np.int64))
    np.testing.assert_array_equal(as_double, d)
    popcount = np.vectorize(lambda v, w: bin(int(v) & ((1 << w) - 1)).count("1"))
    np.testing.assert_array_equal(pop[:16], popcount(i, 32))
    np.testing.assert_array_equal(pop[16:], popcount(d.view(np.int64), 64))
    want_hi = (i.astype(np.int64) * (i.astype(np.int64) + 12345)) >> 32
    np.testing.assert_array_equal(hi, want_hi.astype(np.int32))


# ---------------------------------------------------------------- PTX for both archs

PTX_CASES = {
    **{
        f"float-{name}": (float_kernel, f"*fp32:16, *fp32:16, i32, {name!r}, 16")
        for name in FLOAT_CASES
    },
    "exponent": (exponent_kernel, "*fp32:16, *i32:16, *fp32:16, *i32:16, *i64:16, 16"),
    "bits": (
        bits_kernel,
        "*fp32:16, *i32:16, *fp64:16, *i32:16, *fp32:16, *i64:16, *fp64:16, *i32:16, *i32:16, 16",
    ),  # fmt: skip
}


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("case", sorted(PTX_CASES))
def test_ptx_assembles(case: str, arch: str, tmp_path: Path) -> None:
    kernel, signature = PTX_CASES[case]
    assemble(kernel, signature.replace("'", '"'), arch, tmp_path)
