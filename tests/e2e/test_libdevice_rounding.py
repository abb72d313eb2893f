"""libdevice's directed rounding (``add_rd``, ``div_rz``, ``float2int_ru`` ...), against exact
arithmetic.

The reference computes each result exactly with :class:`fractions.Fraction`
and rounds it in the asked mode by walking the representable values, so it
shares no code with the emulator's error-free transformations. The inputs
mix random values with the awkward ones: signed zeros, subnormals, values
whose sum or product overflows, and ties. Each kernel also assembles with
``ptxas`` (the GPU runs PTX's ``add.rm.f32``, ``cvt.rpi.s32.f32`` ...).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from minitriton.diagnostics import CompileError
from tests.e2e.ptxas_check import assemble_for_args, needs_ptxas
from tests.kernels import libdevice_rounding as K

MODES = ["rn", "rz", "rd", "ru"]
ARITHMETIC = {"add": 2, "sub": 2, "mul": 2, "div": 2, "fma": 3, "sqrt": 1, "rcp": 1}
N = 64


def _rounded(exact: Fraction, dtype: type, mode: str) -> np.floating:
    """``exact`` rounded to ``dtype`` in ``mode`` (infinity past the largest value)."""
    big = np.finfo(dtype).max
    if exact > Fraction(float(big)) or exact < -Fraction(float(big)):
        beyond = {"rn": True, "rz": False, "rd": exact < 0, "ru": exact > 0}[mode]
        limit = dtype(np.inf) if beyond else big
        return limit if exact > 0 else -limit
    lo = dtype(float(exact))
    while Fraction(float(lo)) > exact:
        lo = np.nextafter(lo, dtype(-np.inf))
    while Fraction(float(np.nextafter(lo, dtype(np.inf)))) <= exact:
        lo = np.nextafter(lo, dtype(np.inf))
    hi = lo if Fraction(float(lo)) == exact else np.nextafter(lo, dtype(np.inf))
    if mode == "rd" or (mode == "rz" and exact >= 0):
        return lo
    if mode in ("ru", "rz"):
        return hi
    d_lo, d_hi = exact - Fraction(float(lo)), Fraction(float(hi)) - exact
    even_lo = int(np.array(lo).view(f"u{np.dtype(dtype).itemsize}")) % 2 == 0
    return lo if d_lo < d_hi or (d_lo == d_hi and even_lo) else hi


def _inputs(dtype: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    info = np.finfo(dtype)
    x = (rng.standard_normal(N) * 100).astype(dtype)
    y = (rng.standard_normal(N) * 3).astype(dtype)
    z = rng.standard_normal(N).astype(dtype)
    awkward_x = [0.0, -0.0, info.smallest_subnormal, -3 * info.smallest_subnormal, info.max,
                 -info.max, 1.0, 3.0]  # fmt: skip
    awkward_y = [-0.0, 0.0, 0.5, 7.0, info.max, info.max, 3.0, 1.0 / 3]
    x[: len(awkward_x)], y[: len(awkward_y)] = awkward_x, awkward_y
    return x, y, z


def _exact(fn: str, a: Fraction, b: Fraction, c: Fraction) -> Fraction | None:
    """The exact result, or None where it is not a finite number."""
    if fn in ("div", "rcp") and (b if fn == "div" else a) == 0:
        return None
    if fn == "sqrt":
        return None  # checked apart: irrational roots have no Fraction
    return {"add": a + b, "sub": a - b, "mul": a * b, "fma": a * b + c,
            "div": a / b if b else None, "rcp": 1 / a if a else None}[fn]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", sorted(ARITHMETIC))
def test_rounded_arithmetic_is_exact_arithmetic_rounded_once(
    backend: str, fn: str, mode: str, dtype: type
) -> None:
    x, y, z = _inputs(dtype)
    if fn == "sqrt":
        x = np.abs(x)
    out = np.zeros(N, dtype)
    name = f"{fn}_{mode}"
    K.rounded_arithmetic[(1,)](x, y, z, out, N, name, ARITHMETIC[fn], backend=backend)
    for a, b, c, got in zip(x, y, z, out):
        fa, fb, fc = Fraction(float(a)), Fraction(float(b)), Fraction(float(c))
        if fn == "sqrt":
            _check_sqrt(fa, got, dtype, mode)
            continue
        exact = _exact(fn, fa, fb, fc)
        if exact is None or (exact == 0 and fn in ("add", "sub", "fma", "mul")):
            continue  # zeros: their sign follows IEEE's special rules, checked below
        assert got == _rounded(exact, dtype, mode), (name, a, b, c, got)


def _check_sqrt(a: Fraction, got: np.floating, dtype: type, mode: str) -> None:
    """``got`` is a neighbour of sqrt(a) on the mode's side (exact squares are exact)."""
    g = Fraction(float(got))
    below = Fraction(float(np.nextafter(got, dtype(-np.inf))))
    above = Fraction(float(np.nextafter(got, dtype(np.inf))))
    if g * g == a:
        return
    if mode in ("rd", "rz"):
        assert g * g < a < above * above
    elif mode == "ru":
        assert below * below < a < g * g
    else:
        assert below * below < a < above * above


def test_zeros_keep_ieees_signs(backend: str) -> None:
    x = np.array([0.0, -0.0, 1.0, -1.0] * 16, np.float32)
    y = np.array([-0.0, -0.0, -1.0, 1.0] * 16, np.float32)
    for mode, sign in [("rn", 1.0), ("rz", 1.0), ("ru", 1.0), ("rd", -1.0)]:
        out = np.full(N, 7.0, np.float32)
        K.rounded_arithmetic[(1,)](x, y, x, out, N, f"add_{mode}", 2, backend=backend)
        # x + y = +0 for (0, -0) and for (1, -1) except toward -inf; (-0) + (-0) = -0
        assert np.all(out == 0)
        assert np.copysign(1.0, out[0]) == sign and np.copysign(1.0, out[1]) == -1.0
        assert np.copysign(1.0, out[2]) == sign


CONVERSIONS = {  # name -> (source dtype, destination dtype)
    "float2int": (np.float32, np.int32), "float2uint": (np.float32, np.uint32),
    "float2ll": (np.float32, np.int64), "float2ull": (np.float32, np.uint64),
    "double2int": (np.float64, np.int32), "double2ll": (np.float64, np.int64),
    "double2uint": (np.float64, np.uint32), "double2ull": (np.float64, np.uint64),
    "double2float": (np.float64, np.float32), "int2float": (np.int32, np.float32),
    "uint2float": (np.uint32, np.float32), "ll2float": (np.int64, np.float32),
    "ull2float": (np.uint64, np.float32), "ll2double": (np.int64, np.float64),
    "ull2double": (np.uint64, np.float64),
}  # fmt: skip


#: What an H200's ``cvt`` gives for a NaN, by (source, destination): 0 from f32 to 32 bits,
#: else the integer with only the sign bit set.
NAN_AS_INT = {
    (np.float32, np.int32): 0, (np.float32, np.uint32): 0,
    (np.float32, np.int64): -(2**63), (np.float32, np.uint64): 2**63,
    (np.float64, np.int32): -(2**31), (np.float64, np.uint32): 2**31,
    (np.float64, np.int64): -(2**63), (np.float64, np.uint64): 2**63,
}  # fmt: skip


def _conversion_inputs(src: type) -> np.ndarray:
    rng = np.random.default_rng(11)
    if np.issubdtype(src, np.floating):
        x = (rng.standard_normal(N) * 1e3).astype(src)
        x[:10] = [0.5, 1.5, 2.5, -0.5, -2.5, -1.25, 3e10, -3e10, 1e-3, np.nan]
        return x
    info = np.iinfo(src)
    x = rng.integers(info.min, info.max, N, dtype=src, endpoint=True)
    extremes = [info.max, info.min, 2**24 + 1, 2**53 + 1 if info.bits == 64 else 2**24 + 3]
    x[:4] = [v if info.min <= v <= info.max else 0 for v in extremes]
    return x


def _converted(value: np.generic, dst: type, mode: str) -> np.generic:
    if (
        np.issubdtype(dst, np.floating)
        and np.issubdtype(type(value), np.floating)
        and np.isnan(value)
    ):
        return dst(np.nan)
    if np.issubdtype(dst, np.floating):
        return _rounded(Fraction(int(value)) if np.issubdtype(type(value), np.integer)
                        else Fraction(float(value)), dst, mode)  # fmt: skip
    info = np.iinfo(dst)
    if np.isnan(value):
        return dst(NAN_AS_INT[type(value), dst])
    integral = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}[mode](value)
    return dst(min(max(int(integral), info.min), info.max))  # saturating, as PTX's cvt


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
def test_rounded_conversions(backend: str, conversion: str, mode: str) -> None:
    src, dst = CONVERSIONS[conversion]
    x = _conversion_inputs(src)
    out = np.zeros(N, dst)
    K.rounded_conversion[(1,)](x, out, N, f"{conversion}_{mode}", backend=backend)
    expected = np.array([_converted(v, dst, mode) for v in x], dst)
    np.testing.assert_array_equal(out, expected)


def test_a_conversion_checks_its_source_kind() -> None:
    with pytest.raises(CompileError, match=r"libdevice.int2float_rd takes an integer value"):
        K.rounded_conversion[(1,)](np.zeros(N, np.float32), np.zeros(N, np.float32), N,
                                   "int2float_rd")  # fmt: skip


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("name", ["add_rd", "fma_rz", "sqrt_ru", "div_rn", "rcp_rz"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rounded_arithmetic_assembles(name: str, dtype: type, arch: str, tmp_path) -> None:
    x = np.zeros(N, dtype)
    args = (x, x, x, x, N, name, ARITHMETIC[name.split("_")[0]])
    assemble_for_args(K.rounded_arithmetic, args, arch, tmp_path)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("name", ["float2int_rd", "double2float_ru", "ull2float_rz",
                                  "ll2double_rd", "float2ull_ru"])  # fmt: skip
def test_rounded_conversions_assemble(name: str, arch: str, tmp_path) -> None:
    src, dst = CONVERSIONS[name.rsplit("_", 1)[0]]
    args = (np.zeros(N, src), np.zeros(N, dst), N, name)
    assemble_for_args(K.rounded_conversion, args, arch, tmp_path)
