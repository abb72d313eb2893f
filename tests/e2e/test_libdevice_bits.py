"""libdevice's bit functions and small helpers, against NumPy, on both backends.

``clz``, ``ffs``, ``brev`` (32 and 64 bits), ``byte_perm``, ``hadd``, ``rhadd``,
``mul24``, ``sad`` (signed and unsigned), ``llround``, ``scalbn``, ``rhypot``,
``norm3d``, ``rnorm3d``, ``norm4d``, ``rnorm4d``, ``double2hiint``,
``double2loint``, ``hiloint2double``, ``sinpi``, ``cospi`` and ``remainder``;
each kernel is also assembled with ``ptxas`` for sm_90a and sm_80.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.language.extra import libdevice
from tests.e2e.ptxas_check import assemble, needs_ptxas

N = 16


@triton.jit
def bits_kernel(x_ptr, y_ptr, out_ptr, NAME: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if NAME == "clz":
        r = libdevice.clz(x)
    elif NAME == "ffs":
        r = libdevice.ffs(x)
    elif NAME == "brev":
        r = libdevice.brev(x)
    elif NAME == "hadd":
        r = libdevice.hadd(x, y)
    elif NAME == "rhadd":
        r = libdevice.rhadd(x, y)
    elif NAME == "mul24":
        r = libdevice.mul24(x, y)
    else:
        tl.static_assert(NAME == "sad", "unknown function")
        r = libdevice.sad(x, y, y)
    tl.store(out_ptr + offs, r)


def _clz(v: int, width: int) -> int:
    v &= (1 << width) - 1
    return width - v.bit_length()


def _ffs(v: int, width: int) -> int:
    v &= (1 << width) - 1
    return (v & -v).bit_length()


def _brev(v: int, width: int) -> int:
    return int(format(v & ((1 << width) - 1), f"0{width}b")[::-1], 2)


def _wrap(v: int, dtype: np.dtype) -> int:
    """``v`` modulo 2**bits, read as ``dtype``."""
    return int(np.array(v & ((1 << 8 * dtype.itemsize) - 1), np.uint64).astype(dtype))


def _int24(v: int, signed: bool) -> int:
    v &= 0xFFFFFF
    return v - (1 << 24) if signed and v >> 23 else v


REFERENCES = {
    "clz": lambda x, y, w, s: _clz(x, w),
    "ffs": lambda x, y, w, s: _ffs(x, w),
    "brev": lambda x, y, w, s: _brev(x, w),
    "hadd": lambda x, y, w, s: (x + y) >> 1,
    "rhadd": lambda x, y, w, s: (x + y + 1) >> 1,
    "mul24": lambda x, y, w, s: _int24(x, s) * _int24(y, s),
    "sad": lambda x, y, w, s: abs(x - y) + (y & 0xFFFFFFFF),
}
#: The functions and the integer types each takes.
CASES = [("clz", np.int32), ("clz", np.int64), ("ffs", np.int32), ("ffs", np.int64),
         ("brev", np.int32), ("brev", np.int64), ("hadd", np.int32), ("hadd", np.uint32),
         ("rhadd", np.int32), ("rhadd", np.uint32), ("mul24", np.int32), ("mul24", np.uint32),
         ("sad", np.int32), ("sad", np.uint32)]  # fmt: skip


def _ints(dtype: type, rng: np.random.Generator) -> np.ndarray:
    info = np.iinfo(dtype)
    edge = [0, 1, info.max, info.min, info.max - 1, 1 << 20, 12345, info.min + 7]
    rest = rng.integers(info.min, info.max, N - len(edge), dtype=dtype, endpoint=True)
    return np.concatenate([np.array(edge, dtype), rest])


@pytest.mark.parametrize(("name", "dtype"), CASES, ids=[f"{n}-{d.__name__}" for n, d in CASES])
def test_integer_functions(backend: str, name: str, dtype: type,
                           rng: np.random.Generator) -> None:  # fmt: skip
    x, y = _ints(dtype, rng), _ints(dtype, rng)[::-1].copy()
    counts = name in ("clz", "ffs")
    out = np.zeros(N, np.int32 if counts else dtype)
    bits_kernel[(1,)](x, y, out, NAME=name, N=N, backend=backend)
    width, signed = 8 * np.dtype(dtype).itemsize, np.dtype(dtype).kind == "i"
    want = [REFERENCES[name](int(a), int(b), width, signed) for a, b in zip(x, y)]
    np.testing.assert_array_equal(out, [_wrap(v, out.dtype) for v in want])


@triton.jit
def bytes_kernel(x_ptr, y_ptr, s_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    r = libdevice.byte_perm(tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(s_ptr + offs))
    tl.store(out_ptr + offs, r)


def test_byte_perm(backend: str, rng: np.random.Generator) -> None:
    x, y = _ints(np.int32, rng), _ints(np.int32, rng)
    s = np.array([0x3210, 0x7654, 0x0123, 0x4444, 0x5140, 0x0000, 0x7777, 0xFFFF] * 2, np.int32)
    out = np.zeros(N, np.int32)
    bytes_kernel[(1,)](x, y, s, out, N=N, backend=backend)
    for i in range(N):
        pool = (int(x[i]) & 0xFFFFFFFF).to_bytes(4, "little") + (
            int(y[i]) & 0xFFFFFFFF).to_bytes(4, "little")  # fmt: skip
        want = bytes(pool[(int(s[i]) >> 4 * n) & 7] for n in range(4))
        assert _wrap(int.from_bytes(want, "little"), np.dtype(np.int32)) == out[i], i


@triton.jit
def float_kernel(a_ptr, b_ptr, c_ptr, d_ptr, n_ptr, out_ptr, NAME: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    c = tl.load(c_ptr + offs)
    d = tl.load(d_ptr + offs)
    if NAME == "llround":
        r = libdevice.llround(a).to(a.dtype)
    elif NAME == "scalbn":
        r = libdevice.scalbn(a, tl.load(n_ptr + offs))
    elif NAME == "rhypot":
        r = libdevice.rhypot(a, b)
    elif NAME == "norm3d":
        r = libdevice.norm3d(a, b, c)
    elif NAME == "rnorm3d":
        r = libdevice.rnorm3d(a, b, c)
    elif NAME == "norm4d":
        r = libdevice.norm4d(a, b, c, d)
    elif NAME == "rnorm4d":
        r = libdevice.rnorm4d(a, b, c, d)
    elif NAME == "sinpi":
        r = libdevice.sinpi(a)
    elif NAME == "cospi":
        r = libdevice.cospi(a)
    else:
        tl.static_assert(NAME == "remainder", "unknown function")
        r = libdevice.remainder(a, b)
    tl.store(out_ptr + offs, r)


def _norm(*values: np.ndarray) -> np.ndarray:
    return np.sqrt(sum(v.astype(np.float64) ** 2 for v in values))


FLOAT_REFERENCES = {
    "llround": lambda a, b, c, d, n: np.trunc(a + np.copysign(0.5, a)),
    "scalbn": lambda a, b, c, d, n: np.ldexp(a, n),
    "rhypot": lambda a, b, c, d, n: 1 / _norm(a, b),
    "norm3d": lambda a, b, c, d, n: _norm(a, b, c),
    "rnorm3d": lambda a, b, c, d, n: 1 / _norm(a, b, c),
    "norm4d": lambda a, b, c, d, n: _norm(a, b, c, d),
    "rnorm4d": lambda a, b, c, d, n: 1 / _norm(a, b, c, d),
    "sinpi": lambda a, b, c, d, n: np.array([math.sin(math.pi * (v % 2)) for v in a]),
    "cospi": lambda a, b, c, d, n: np.array([math.cos(math.pi * (v % 2)) for v in a]),
    "remainder": lambda a, b, c, d, n: np.array([math.remainder(p, q) for p, q in zip(a, b)]),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fp32", "fp64"])
@pytest.mark.parametrize("name", sorted(FLOAT_REFERENCES))
def test_float_functions(backend: str, name: str, dtype: type,
                         rng: np.random.Generator) -> None:  # fmt: skip
    a, b, c, d = (rng.standard_normal(N).astype(dtype) * 20 for _ in range(4))
    a[:6] = [2.5, -2.5, 0.5, 3.0, -7.0, 1.5]  # halves, integers: llround, sinpi, cospi
    n = rng.integers(-20, 20, N).astype(np.int32)
    out = np.zeros(N, dtype)
    float_kernel[(1,)](a, b, c, d, n, out, NAME=name, N=N, backend=backend)
    want = FLOAT_REFERENCES[name](a, b, c, d, n)
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(out, want.astype(dtype), rtol=tol, atol=tol)


def test_sinpi_and_cospi_are_exact_where_they_vanish() -> None:
    x = np.array([0.0, 1.0, 2.0, -3.0, 0.5, 1.5, -2.5, 1e9 + 0.5] * 2, np.float32)
    outs = {name: np.full(N, 7.0, np.float32) for name in ("sinpi", "cospi")}
    for name, out in outs.items():
        float_kernel[(1,)](x, x, x, x, np.zeros(N, np.int32), out, NAME=name, N=N,
                           backend="emulator")  # fmt: skip
    integer = x == np.round(x)
    assert (outs["sinpi"][integer] == 0).all() and (outs["cospi"][~integer] == 0).all()
    assert np.signbit(outs["sinpi"][3])  # sinpi(-3) is -0


@triton.jit
def words_kernel(x_ptr, hi_ptr, lo_ptr, back_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    hi = libdevice.double2hiint(x)
    lo = libdevice.double2loint(x)
    tl.store(hi_ptr + offs, hi)
    tl.store(lo_ptr + offs, lo)
    tl.store(back_ptr + offs, libdevice.hiloint2double(hi, lo))


def test_double_words(backend: str, rng: np.random.Generator) -> None:
    x = rng.standard_normal(N)
    x[:3] = [-0.0, np.inf, 1e-310]
    hi, lo, back = np.zeros(N, np.int32), np.zeros(N, np.int32), np.zeros(N)
    words_kernel[(1,)](x, hi, lo, back, N=N, backend=backend)
    bits = x.view(np.uint64)
    np.testing.assert_array_equal(hi.view(np.uint32), (bits >> 32).astype(np.uint32))
    np.testing.assert_array_equal(lo.view(np.uint32), (bits & 0xFFFFFFFF).astype(np.uint32))
    np.testing.assert_array_equal(back.view(np.uint64), bits)


def test_an_integer_function_refuses_floats() -> None:
    x = np.zeros(N, np.float32)
    with pytest.raises(triton.CompilationError, match="libdevice.clz expects 32-bit or 64-bit"):
        bits_kernel[(1,)](x, x, x, NAME="clz", N=N, backend="emulator")


def _pointer(dtype: type) -> str:
    """The signature's pointer type for a NumPy integer type: ``*i32:16``, ``*u32:16`` ..."""
    return "*" + np.dtype(dtype).name.replace("uint", "u").replace("int", "i") + ":16"


PTX_CASES = {
    **{f"{n}-{d.__name__}": (bits_kernel, f"{_pointer(d)}, {_pointer(d)}, *i32:16, {n!r}, {N}")
       for n, d in CASES if n in ("clz", "ffs")},
    **{f"{n}-{d.__name__}": (bits_kernel, ", ".join([_pointer(d)] * 3) + f", {n!r}, {N}")
       for n, d in CASES if n not in ("clz", "ffs")},
    "byte_perm": (bytes_kernel, f"*i32:16, *i32:16, *i32:16, *i32:16, {N}"),
    **{f"{n}-{t}": (float_kernel, ", ".join([f"*{t}:16"] * 4) + f", *i32:16, *{t}:16, {n!r}, {N}")
       for n in FLOAT_REFERENCES for t in ("fp32", "fp64")},
    "words": (words_kernel, f"*fp64:16, *i32:16, *i32:16, *fp64:16, {N}"),
}  # fmt: skip


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("case", sorted(PTX_CASES))
def test_ptx_assembles(case: str, arch: str, tmp_path: Path) -> None:
    kernel, signature = PTX_CASES[case]
    assemble(kernel, signature.replace("'", '"'), arch, tmp_path)
