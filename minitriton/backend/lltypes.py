"""LLVM types of MiniTriton's IR types, and the per-thread block value."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from minitriton.backend.layouts import Layout
from minitriton.ir.types import BF16, F16, F32, F64, PointerType, ScalarType, Type, element_type

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F16_T = ir.HalfType()
F32_T = ir.FloatType()
F64_T = ir.DoubleType()
GLOBAL_PTR = ir.PointerType(addrspace=1)
SHARED_PTR = ir.PointerType(addrspace=3)
GENERIC_PTR = ir.PointerType()
VOID = ir.VoidType()

ElemType = ScalarType | PointerType


@dataclass
class RegTile:
    """A block value as one thread sees it: its layout and one LLVM value per register."""

    layout: Layout
    vals: list[ir.Value]


def scalar_of(t: Type) -> ScalarType:
    """The element type of ``t``, which the op's verifier made a scalar type (not a pointer)."""
    elem = element_type(t)
    assert isinstance(elem, ScalarType), f"expected scalar elements, got {t}"
    return elem


def pointee_of(t: Type) -> ScalarType:
    """What the pointers of ``t`` (a pointer or a block of pointers) point to."""
    elem = element_type(t)
    assert isinstance(elem, PointerType), f"expected pointers, got {t}"
    return elem.pointee


#: An IR value once lowered: one LLVM value (a scalar) or a thread's registers (a block).
Lowered = ir.Value | RegTile


def float_suffix(st: ScalarType) -> str:
    """The LLVM intrinsic suffix of a float type (``f16``, ``f32``, ``f64``)."""
    return {16: "f16", 32: "f32", 64: "f64"}[st.bitwidth]


def ll_type(t: ElemType) -> ir.Type:
    """The register type of an element (bf16 lives in an i16)."""
    if isinstance(t, PointerType):
        return GLOBAL_PTR
    if t == F16:
        return F16_T
    if t == BF16:
        return I16
    if t == F32:
        return F32_T
    if t == F64:
        return F64_T
    return ir.IntType(t.bitwidth)


def truncate_tf32(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """``v`` (fp32) with its low 13 mantissa bits cleared: TF32 as the tensor cores read it.

    Triton hands fp32 operands to ``mma.sync`` and ``wgmma`` unconverted;
    the FMA path of a batched TF32 dot reads its operands the same way.
    """
    bits = b.and_(b.bitcast(v, I32), ir.Constant(I32, 0xFFFFE000))
    return b.bitcast(bits, F32_T)


def fp8_to_f32(b: ir.IRBuilder, st: ScalarType, v: ir.Value) -> ir.Value:
    """Decode fp8 bits (an i8) to f32 exactly, on any arch.

    e5m2 is the top byte of an fp16. e4m3 (bias 7) becomes an fp16 with its
    exponent and mantissa bits moved into place (bias 15), times 2^8: exact
    for normal and subnormal codes alike; ``0x7f`` is its NaN.
    """
    bits16 = b.zext(v, I16)
    if st.name == "f8e5":
        return b.fpext(b.bitcast(b.shl(bits16, ir.Constant(I16, 8)), F16_T), F32_T)
    mag = b.and_(bits16, ir.Constant(I16, 0x7F))
    half = b.bitcast(b.shl(mag, ir.Constant(I16, 7)), F16_T)
    value = b.fmul(b.fpext(half, F32_T), ir.Constant(F32_T, 256.0))
    value = b.select(b.icmp_unsigned("==", mag, ir.Constant(I16, 0x7F)),
                     ir.Constant(F32_T, math.nan), value)  # fmt: skip
    sign = b.shl(b.zext(b.and_(v, ir.Constant(I8, 0x80)), I32), ir.Constant(I32, 24))
    return b.bitcast(b.or_(b.bitcast(value, I32), sign), F32_T)


def f32_to_fp8(b: ir.IRBuilder, st: ScalarType, v: ir.Value, native: bool = True) -> ir.Value:
    """Round f32 to fp8 bits: nearest even, saturating (``cvt.rn.satfinite``, sm_89+).

    Without ``native`` (before sm_89), f8e5 is rounded in integer arithmetic
    to the same bits (:func:`f32_to_f8e5_bits`); Triton, too, converts to
    f8e5 in software there, and refuses f8e4nv.
    """
    if not native:
        assert st.name == "f8e5", "only f8e5 has a conversion before sm_89"
        return f32_to_f8e5_bits(b, v)
    kind = "e5m2x2" if st.name == "f8e5" else "e4m3x2"
    fnty = ir.FunctionType(I16, [F32_T, F32_T])
    cvt = ir.InlineAsm(fnty, f"cvt.rn.satfinite.{kind}.f32 $0, $1, $2;", "=h,f,f")
    return b.trunc(b.call(cvt, [ir.Constant(F32_T, 0.0), v]), I8)  # the low byte is $2's


def f32_to_f8e5_bits(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """``cvt.rn.satfinite.e5m2`` of one f32, in plain LLVM (any arch; the host too).

    f8e5 keeps f32's sign, 5 exponent bits (bias 15) and the top 2 mantissa
    bits. A normal value rounds its 23 mantissa bits to 2, to nearest even,
    and is rebiased; past the largest finite code (``0x7b``, 57344), the
    infinities included, it saturates. Below 2^-14 the codes are multiples
    of 2^-16, so the code is ``|x| * 2^16`` rounded to the nearest even
    integer (4 is 2^-14's normal code: the two ranges meet). NaN is ``0x7f``.
    """

    def c(n: int) -> ir.Constant:
        return ir.Constant(I32, n)

    bits = b.bitcast(v, I32)
    mag = b.and_(bits, c(0x7FFFFFFF))
    odd = b.and_(b.lshr(mag, c(21)), c(1))
    rounded = b.lshr(b.add(mag, b.add(c(0xFFFFF), odd)), c(21))  # exponent and 2 bits
    normal = b.sub(rounded, c(112 << 2))  # rebias 127 -> 15
    normal = b.select(b.icmp_unsigned(">", normal, c(0x7B)), c(0x7B), normal)
    rint = b.module.declare_intrinsic("llvm.rint", [F32_T])
    scaled = b.fmul(b.bitcast(mag, F32_T), ir.Constant(F32_T, 65536.0))
    subnormal = b.fptoui(b.call(rint, [scaled]), I32)
    code = b.select(b.icmp_unsigned("<", mag, c(0x38800000)), subnormal, normal)
    code = b.or_(code, b.and_(b.lshr(bits, c(24)), c(0x80)))
    code = b.select(b.icmp_unsigned(">", mag, c(0x7F800000)), c(0x7F), code)
    return b.trunc(code, I8)


def mem_type(t: ElemType) -> ir.Type:
    """The in-memory type of an element (``i1`` is stored as a byte)."""
    if isinstance(t, ScalarType) and t.is_bool():
        return I8
    return ll_type(t)


def byte_size(t: ElemType) -> int:
    """Bytes one element takes in memory."""
    if isinstance(t, PointerType):
        return 8
    return max(1, t.bitwidth // 8)


def const(t: ElemType, value: int | float | bool) -> ir.Constant:
    """An LLVM constant of element type ``t``."""
    if isinstance(t, PointerType):
        return ir.Constant(I64, int(value)).inttoptr(GLOBAL_PTR)
    if t == BF16:
        return ir.Constant(I16, bf16_bits(_rounded(value, np.float32)))
    if t.is_fp8():
        from minitriton.emulator.values import f32_to_fp8 as encode  # the same rounding

        return ir.Constant(I8, int(encode(np.float32(_rounded(value, np.float32)), t.name)))
    if t.is_float():
        return ir.Constant(ll_type(t), _rounded(value, t.numpy.type))
    bits = t.bitwidth
    v = int(value) & ((1 << bits) - 1)
    if bits > 1 and v >= 1 << (bits - 1):
        v -= 1 << bits
    return ir.Constant(ir.IntType(bits), v)


def _rounded(value: int | float | bool, scalar: type[np.floating]) -> float:
    """``value`` rounded to ``scalar``: past the type's range it is infinity, as in C."""
    try:
        wide = float(value)
    except OverflowError:  # an int beyond fp64
        wide = math.inf if value > 0 else -math.inf
    with np.errstate(over="ignore"):
        return float(scalar(wide))


def bf16_bits(value: float) -> int:
    """The bf16 bit pattern nearest to ``value`` (round to nearest even)."""
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:
        return 0x7FC0
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    return (rounded >> 16) & 0xFFFF
