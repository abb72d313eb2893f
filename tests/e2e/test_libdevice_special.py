"""libdevice's Bessel functions and ``erfcx`` (TorchInductor calls them for
``torch.special.bessel_j0`` ... ``torch.i0``, ``torch.special.i1``, ``erfcx`` and
``log_ndtr``), on both backends in fp32 and fp64, and assembled with ``ptxas``.

The reference is :mod:`minitriton.emulator.special` in fp64, which
``tests/emulator/test_special_functions.py`` checks against values to 17
digits and identities; here the question is whether each name reaches its
function on each backend. On the GPU the functions are libdevice's own
(a few fp32 ulps, absolute near the zeros of J and Y).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator import special
from minitriton.language.extra import libdevice
from tests.e2e.ptxas_check import assemble, needs_ptxas

NAMES = ["j0", "j1", "y0", "y1", "cyl_bessel_i0", "cyl_bessel_i1", "erfcx"]
BLOCK = 32


@triton.jit
def special_kernel(x_ptr, o_ptr, n, NAME: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    if NAME == "j0":
        y = libdevice.j0(x)
    elif NAME == "j1":
        y = libdevice.j1(x)
    elif NAME == "y0":
        y = libdevice.y0(x)
    elif NAME == "y1":
        y = libdevice.y1(x)
    elif NAME == "cyl_bessel_i0":
        y = libdevice.cyl_bessel_i0(x)
    elif NAME == "cyl_bessel_i1":
        y = libdevice.cyl_bessel_i1(x)
    elif NAME == "erfcx":
        y = libdevice.erfcx(x)
    else:
        tl.static_assert(False, "unknown function")
    tl.store(o_ptr + offs, y, mask=offs < n)


def _inputs(name: str, dtype: type) -> np.ndarray:
    if name in ("y0", "y1"):
        x = [0.05, 0.5, 1.0, 2.5, 7.0, 11.9, 12.1, 24.0, 26.0, 80.0, 500.0, 3.3]
    elif name == "erfcx":
        x = [-3.0, -1.5, -0.5, 0.0, 0.5, 2.0, 10.0, 24.9, 25.1, 300.0, 1.25, -0.01]
    else:
        x = [-30.0, -7.5, -1.0, 0.0, 0.25, 1.0, 3.0, 11.0, 19.9, 20.1, 26.0, 60.0]
    return np.array(x, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fp32", "fp64"])
@pytest.mark.parametrize("name", NAMES)
def test_special_function(backend: str, name: str, dtype: type) -> None:
    x = _inputs(name, dtype)
    out = np.zeros_like(x)
    special_kernel[(1,)](x, out, len(x), NAME=name, BLOCK=BLOCK, backend=backend)
    want = getattr(special, name)(x.astype(np.float64)).astype(dtype)
    tol = 3e-6 if dtype == np.float32 else 1e-13
    if backend == "gpu":
        tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol)


def test_special_values(backend: str) -> None:
    """C's values at 0 and the infinities, NaN for Y of a negative number."""
    x = np.array([0.0, np.inf, -np.inf, -1.0, np.nan], np.float32)
    want = {
        "j0": [1.0, 0.0, 0.0, special.j0(1.0), np.nan],
        "y0": [-np.inf, 0.0, np.nan, np.nan, np.nan],
        "cyl_bessel_i1": [0.0, np.inf, -np.inf, -special.cyl_bessel_i1(1.0), np.nan],
        "erfcx": [1.0, 0.0, np.inf, special.erfcx(-1.0), np.nan],
    }
    for name, values in want.items():
        out = np.zeros_like(x)
        special_kernel[(1,)](x, out, len(x), NAME=name, BLOCK=8, backend=backend)
        np.testing.assert_allclose(out, np.array(values, np.float32), rtol=2e-6, err_msg=name)


def test_a_half_input_says_to_convert(backend: str) -> None:
    x = np.ones(4, np.float16)
    with pytest.raises(
        triton.CompilationError, match=r"Expected dtype \[.fp32., .fp64.\] but got fp16"
    ):
        special_kernel[(1,)](x, np.zeros(4, np.float16), 4, NAME="j0", BLOCK=4, backend=backend)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("name", NAMES)
def test_ptx_assembles(name: str, arch: str, tmp_path: Path) -> None:
    for dtype in ("fp32", "fp64"):
        signature = f'*{dtype}:16, *{dtype}:16, i32, "{name}", 32'
        module = assemble(special_kernel, signature, arch, tmp_path)
        suffix = "f" if dtype == "fp32" else ""
        assert f"__nv_{name}{suffix}" not in module.ptx  # libdevice is linked and inlined


@triton.jit
def integer_order_kernel(n_ptr, x_ptr, j_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    n = tl.load(n_ptr + offs)
    x = tl.load(x_ptr + offs)
    tl.store(j_ptr + offs, libdevice.jn(n, x))
    tl.store(y_ptr + offs, libdevice.yn(3, tl.abs(x)))  # a Python int order, broadcast


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fp32", "fp64"])
def test_bessel_functions_of_integer_order(backend: str, dtype: type) -> None:
    n = np.array([-3, -1, 0, 1, 2, 3, 4, 5, 7, 10, 12, 20, 2, 6, 9, 30], np.int32)
    x = np.array([2.5, 1.0, 7.0, -7.0, 0.5, 3.0, 11.0, 4.0, 7.0, 9.0, 30.0, 25.0, -6.0, 0.3,
                  15.0, 12.0], dtype)  # fmt: skip
    j, y = np.zeros_like(x), np.zeros_like(x)
    integer_order_kernel[(1,)](n, x, j, y, BLOCK=16, backend=backend)
    wide = x.astype(np.float64)
    tol = 3e-6 if dtype == np.float32 else 1e-12
    if backend == "gpu":
        tol = 2e-5 if dtype == np.float32 else 1e-11
    want_j = np.where(n < 0, np.nan, special.jn(n, wide))  # libdevice: NaN below order 0
    np.testing.assert_allclose(j, want_j.astype(dtype), rtol=tol, atol=tol)
    want_y = special.yn(np.full(16, 3), np.abs(wide)).astype(dtype)
    np.testing.assert_allclose(y, want_y, rtol=tol, atol=tol)


@triton.jit
def rounded_reciprocal_kernel(x_ptr, d_ptr, r_ptr, h_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    d = tl.load(d_ptr + offs)
    tl.store(r_ptr + offs, libdevice.rsqrt_rn(x))
    tl.store(h_ptr + offs, libdevice.rcp64h(d))


def test_rsqrt_rn_is_correctly_rounded_and_rcp64h_divides(
    backend: str, rng: np.random.Generator
) -> None:
    x = np.exp(rng.uniform(-80, 80, 64)).astype(np.float32)
    x[:4] = [1.0, 4.0, np.inf, 0.0]
    d = rng.uniform(-1e3, 1e3, 64)
    r, h = np.zeros_like(x), np.zeros_like(d)
    rounded_reciprocal_kernel[(1,)](x, d, r, h, BLOCK=64, backend=backend)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(r, (1 / np.sqrt(x.astype(np.float64))).astype(np.float32))
    np.testing.assert_array_equal(h, 1 / d)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_integer_orders_and_rounded_reciprocals_assemble(arch: str, tmp_path: Path) -> None:
    for dtype in ("fp32", "fp64"):
        signature = f"*i32, *{dtype}, *{dtype}, *{dtype}, 16"
        assert "__nv_jn" not in assemble(integer_order_kernel, signature, arch, tmp_path).ptx
    ptx = assemble(rounded_reciprocal_kernel, "*fp32, *fp64, *fp32, *fp64, 64", arch, tmp_path).ptx
    assert "sqrt.rn.f64" in ptx and "rcp.rn.f64" in ptx
