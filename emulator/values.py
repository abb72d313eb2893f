"""Runtime values of the emulator, and the number conversions they need.

A runtime value (:class:`RVal`) is a NumPy array plus a flag that says
whether it is *batched*:

* an **unbatched** value has exactly the IR shape (``()`` for a scalar) and
  is the same for every program of the batch (``tl.arange``, constants,
  kernel arguments, anything computed only from those);
* a **batched** value has a leading program axis: shape ``(P, *ir_shape)``,
  one row per program of the batch.

Elementwise NumPy operations broadcast trailing dimensions, so an unbatched
``(128,)`` block combines with a batched ``(P, 128)`` block with no extra
code. A pointer value is an integer array of *element offsets* into one
buffer, plus that buffer's id (see :mod:`minitriton.emulator.memory`): ``int64``,
except that the fast path of ``x_ptr + offsets`` on an argument keeps the
offsets block itself (often ``int32``; see :mod:`minitriton.emulator.ops.speed`),
so code that scales offsets widens them first.

bf16 values are stored as their ``uint16`` bit patterns (the top half of an
fp32); arithmetic decodes them to fp32 and rounds back after every op.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minitriton.ir.types import I16, U16, PointerType, ScalarType, Type, element_type, wrap_int


@dataclass(frozen=True)
class RVal:
    """One SSA value at run time (for a single program or a batch of them)."""

    data: np.ndarray
    batched: bool
    #: For pointers only: the id of the buffer the offsets point into.
    buffer: int | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        """The data's shape (a lazy value answers without making its data)."""
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        """The data's dtype (a lazy value answers without making its data)."""
        return self.data.dtype

    def take(self, rows: np.ndarray) -> RVal:
        """The rows ``rows`` of a batched value (an unbatched value is shared)."""
        if not self.batched:
            return self
        return RVal(self.data[rows], True, self.buffer)

    def rows(self, size: int) -> np.ndarray:
        """The data with a leading program axis of ``size`` rows (a view if unbatched)."""
        if self.batched:
            return self.data
        return np.broadcast_to(self.data, (size, *self.data.shape))

    def program(self, row: int) -> np.ndarray:
        """The value of the program at ``row`` of the batch."""
        return self.data[row] if self.batched else self.data


def storage_dtype(t: Type) -> np.dtype:
    """The NumPy dtype that holds values of ``t`` (int64 offsets for pointers)."""
    elem = element_type(t)
    if isinstance(elem, PointerType):
        return np.dtype(np.int64)
    return elem.numpy


# ---------------------------------------------------------------- bf16


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    """Decode bf16 bit patterns (uint16) to fp32 exactly."""
    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """Round fp32 values to bf16 bit patterns, to nearest even (NaN stays NaN)."""
    f = np.asarray(x, dtype=np.float32)
    b = f.view(np.uint32)
    # Adding 0x7FFF plus the lowest kept bit rounds half-way cases to even.
    rounded = (b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    quiet_nan = (b >> np.uint32(16)) | np.uint32(0x40)
    return np.where(np.isnan(f), quiet_nan, rounded).astype(np.uint16)


def to_compute(data: np.ndarray, t: ScalarType) -> np.ndarray:
    """Values of type ``t`` in the dtype arithmetic runs in (bf16 and fp8 -> fp32)."""
    if t.name == "bf16":
        return bf16_to_f32(data)
    if t.name in FP8_FORMATS:
        return fp8_to_f32(data, t.name)
    return data


def from_compute(data: np.ndarray, t: ScalarType) -> np.ndarray:
    """Values computed for type ``t`` back in its storage dtype, rounded once."""
    if t.name == "bf16":
        return f32_to_bf16(np.asarray(data, dtype=np.float32))
    if t.name in FP8_FORMATS:
        return f32_to_fp8(np.asarray(data, dtype=np.float32), t.name)
    return np.asarray(data).astype(t.numpy, copy=False)


# ---------------------------------------------------------------- fp8

# name -> (exponent bits, mantissa bits, exponent bias, special codes):
# * "ieee" (e5m2): infinities and NaNs where the exponent is all ones;
# * "fn" (e4m3fn): no infinity, one NaN code per sign (0x7F, 0xFF);
# * "fnuz" (AMD's e4m3fnuz and e5m2fnuz, Triton's fp8e4b8 and fp8e5b16): no
#   infinity, no negative zero; 0x80 is the only NaN;
# * "finite" (Triton's fp8e4b15): every code is a finite number.
FP8_FORMATS = {
    "f8e5": (5, 2, 15, "ieee"),
    "f8e4nv": (4, 3, 7, "fn"),
    "f8e4b15": (4, 3, 15, "finite"),
    "f8e4b8": (4, 3, 8, "fnuz"),
    "f8e5b16": (5, 2, 16, "fnuz"),
}


def _fp8_table(name: str) -> np.ndarray:
    """The fp32 value of each of the 256 codes of an fp8 format."""
    exp_bits, man_bits, bias, special = FP8_FORMATS[name]
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exp = (codes >> man_bits) & ((1 << exp_bits) - 1)
    man = codes & ((1 << man_bits) - 1)
    normal = (1 + man / (1 << man_bits)) * np.exp2(exp - bias)
    subnormal = man / (1 << man_bits) * np.exp2(1 - bias)
    value = sign * np.where(exp == 0, subnormal, normal)
    top = exp == (1 << exp_bits) - 1
    if special == "ieee":
        value = np.where(top & (man == 0), sign * np.inf, value)
        value = np.where(top & (man != 0), np.nan, value)
    elif special == "fn":
        value = np.where(top & (man == (1 << man_bits) - 1), np.nan, value)
    elif special == "fnuz":
        value = np.where(codes == 0x80, np.nan, value)
    return value.astype(np.float32)


_FP8_TABLES = {name: _fp8_table(name) for name in FP8_FORMATS}


def fp8_to_f32(bits: np.ndarray, name: str) -> np.ndarray:
    """Decode fp8 codes (uint8) to fp32 exactly."""
    return _FP8_TABLES[name][np.asarray(bits, dtype=np.uint8)]


def f32_to_fp8(x: np.ndarray, name: str) -> np.ndarray:
    """Round fp32 values to fp8 codes: to nearest even, saturating to the largest finite value.

    This is the GPU's ``cvt.rn.satfinite``, which Triton uses (torch's
    conversion to ``float8_e5m2`` overflows to infinity instead).
    """
    table = _FP8_TABLES[name]
    finite = table[:128][np.isfinite(table[:128])]  # the non-negative codes, increasing
    a = np.abs(np.asarray(x, dtype=np.float32))
    hi = np.clip(np.searchsorted(finite, a), 1, len(finite) - 1)
    lo = hi - 1
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, and saturated below anyway
        down, up = a - finite[lo], finite[hi] - a
    pick_hi = (up < down) | ((up == down) & (hi % 2 == 0))
    code = np.where(a >= finite[-1], len(finite) - 1, np.where(pick_hi, hi, lo))
    special = FP8_FORMATS[name][3]
    # No negative zero in the "fnuz" formats: -0.0 (and what rounds to it) is +0.
    negative = np.signbit(x) & ((code != 0) | (special != "fnuz"))
    code = np.where(negative, code | 0x80, code)
    return np.where(np.isnan(x), _FP8_NAN[special], code).astype(np.uint8)


#: The code a NaN converts to, by kind of format (no NaN at all: the largest code).
_FP8_NAN = {"ieee": 0x7F, "fn": 0x7F, "fnuz": 0x80, "finite": 0x7F}


def to_float64(data: np.ndarray, t: ScalarType) -> np.ndarray:
    """Values of type ``t`` as float64 (exact for every type but i64/u64)."""
    return np.asarray(to_compute(data, t), dtype=np.float64)


# ---------------------------------------------------------------- casts


def scalar_constant(value: int | float | bool, t: ScalarType) -> np.ndarray:
    """A 0-d array holding ``value`` converted to ``t``."""
    if t.is_int():
        return np.array(wrap_int(int(value), t), dtype=t.numpy)
    if t.name == "bf16":
        return f32_to_bf16(np.float32(value))
    if t.name in FP8_FORMATS:
        return f32_to_fp8(np.float32(value), t.name)
    return np.array(value, dtype=t.numpy)


def cast_values(data: np.ndarray, src: ScalarType, dst: ScalarType) -> np.ndarray:
    """Convert values between scalar types with Triton's rules.

    * int -> int wraps (two's complement); anything -> i1 is ``!= 0``;
    * float -> int truncates toward zero and out-of-range values saturate to
      the type's limits, as PTX's ``cvt.rzi`` does (Triton calls it
      undefined); NaN gives what the GPU gives (:func:`nan_as_int`);
    * int/float -> float rounds to nearest even (bf16 sources and targets go
      through fp32, so f64 -> bf16 rounds twice).
    """
    if dst.is_bool():
        return to_compute(data, src) != 0
    if dst.is_int() and src.is_float():
        return float_to_int(to_float64(data, src), src, dst)
    if dst.is_int():
        return np.asarray(data).astype(dst.numpy)
    if dst.name == "bf16" or dst.name in FP8_FORMATS:
        return from_compute(np.asarray(to_compute(data, src)).astype(np.float32), dst)
    return np.asarray(to_compute(data, src)).astype(dst.numpy)


def cast_toward_zero(data: np.ndarray, src: ScalarType, dst: ScalarType) -> np.ndarray:
    """Narrow floats of type ``src`` to ``dst`` rounding toward zero (``arith.cast``'s
    ``rounding = "rtz"``, Triton's ``fp_downcast_rounding="rtz"``).

    The value rounded to nearest is one of the two codes around the exact value;
    where it lies farther from zero, the code one below is the one toward zero:
    sign apart, a float's codes grow with its magnitude, and the code below
    infinity's is the largest finite value (IEEE's rounding toward zero of a
    value too large). An infinity stays infinite, except in f8e4nv, which has
    none and saturates; NaN stays NaN.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # too large: inf; NaN: compares False
        x = to_float64(data, src)
        nearest = np.asarray(cast_values(data, src, dst))
        away = np.abs(to_float64(nearest, dst)) > np.abs(x)
    codes = nearest.view(np.dtype(f"u{nearest.dtype.itemsize}"))
    stepped = np.where(away, codes - codes.dtype.type(1), codes).astype(codes.dtype)
    if dst.name == "f8e5":  # f32_to_fp8 saturates: put the infinities back
        infinity = np.uint8(0x7C) | np.where(np.signbit(x), np.uint8(0x80), np.uint8(0))
        stepped = np.where(np.isinf(x), infinity, stepped).astype(np.uint8)
    return stepped.view(nearest.dtype)


def nan_as_int(src: ScalarType, dst: ScalarType) -> int:
    """The integer an NVIDIA GPU's ``cvt`` gives for a NaN of type ``src`` (measured on an H200).

    A 64-bit result, or an f64 source converted to 16 bits or more, gives the
    integer whose only set bit is the result's sign bit (``INT_MIN``,
    ``2**63``, ``0x8000`` ...); an f32 or narrower source converted to 32 bits
    or fewer gives 0. (8-bit results go through 16 bits: see :func:`float_to_int`.)
    """
    if dst.bitwidth == 64 or (src.name == "f64" and dst.bitwidth >= 16):
        return -(1 << (dst.bitwidth - 1)) if dst.is_signed() else 1 << (dst.bitwidth - 1)
    return 0


def float_to_int(x: np.ndarray, src: ScalarType, dst: ScalarType) -> np.ndarray:
    """Float values (as f64) converted to integer type ``dst``, saturating, as PTX's ``cvt``.

    ``x`` holds integral values already for ``cvt``'s other roundings; this
    truncates toward zero. An 8-bit result is the 16-bit one's low byte, as
    the GPU computes it (LLVM widens 8-bit conversions): 200.0 gives -56 as an
    int8 and infinity -1, as on an H200.
    """
    if dst.bitwidth == 8:
        wide = I16 if dst.is_signed() else U16
        return float_to_int(x, src, wide).astype(dst.numpy)  # wraps to the low byte
    info = np.iinfo(dst.numpy)
    nan = np.isnan(x)
    t = np.trunc(np.where(nan, 0.0, x))
    # float(info.max) may round up past the limit (2^63 - 1 -> 2^63): compare first.
    too_big = t >= float(info.max)
    too_small = t <= float(info.min)
    safe = np.where(too_big | too_small, 0.0, t).astype(dst.numpy)
    safe = np.where(too_big, info.max, safe)
    safe = np.where(too_small, info.min, safe).astype(dst.numpy)
    return np.where(nan, np.array(nan_as_int(src, dst), dtype=object).astype(dst.numpy), safe)
