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
    for normal and subnormal codes alike; ``0x7f`` is its NaN. fp8e4b15
    (bias 15, every code finite) is that fp16 itself, with its sign.
    """
    bits16 = b.zext(v, I16)
    if st.name == "f8e5":
        return b.fpext(b.bitcast(b.shl(bits16, ir.Constant(I16, 8)), F16_T), F32_T)
    if st.name == "f8e4b15":
        return b.fpext(b.bitcast(f8e4b15_as_f16_bits(b, bits16), F16_T), F32_T)
    mag = b.and_(bits16, ir.Constant(I16, 0x7F))
    half = b.bitcast(b.shl(mag, ir.Constant(I16, 7)), F16_T)
    value = b.fmul(b.fpext(half, F32_T), ir.Constant(F32_T, 256.0))
    value = b.select(b.icmp_unsigned("==", mag, ir.Constant(I16, 0x7F)),
                     ir.Constant(F32_T, math.nan), value)  # fmt: skip
    sign = b.shl(b.zext(b.and_(v, ir.Constant(I8, 0x80)), I32), ir.Constant(I32, 24))
    return b.bitcast(b.or_(b.bitcast(value, I32), sign), F32_T)


def f8e4b15_as_f16_bits(b: ir.IRBuilder, bits16: ir.Value) -> ir.Value:
    """The fp16 bits (an i16) of the fp8e4b15 code in the low byte of ``bits16``.

    Both formats have exponent bias 15, so the sign moves to bit 15 and the
    4 exponent and 3 mantissa bits move up by 7, for subnormals too.
    """
    sign = b.shl(b.and_(bits16, ir.Constant(I16, 0x80)), ir.Constant(I16, 8))
    magnitude = b.shl(b.and_(bits16, ir.Constant(I16, 0x7F)), ir.Constant(I16, 7))
    return b.or_(sign, magnitude)


def f32_to_fp8(b: ir.IRBuilder, st: ScalarType, v: ir.Value, native: bool = True) -> ir.Value:
    """Round f32 to fp8 bits: nearest even, saturating (``cvt.rn.satfinite``, sm_89+).

    Without ``native`` (before sm_89), f8e5 is rounded in integer arithmetic
    to the same bits (:func:`f32_to_f8e5_bits`); Triton, too, converts to
    f8e5 in software there, and refuses f8e4nv. fp8e4b15, which no PTX
    conversion knows, is always rounded that way.
    """
    if st.name == "f8e4b15":
        return soft_fp8_bits(b, v, E4B15_SOFT)
    if not native:
        assert st.name == "f8e5", "only f8e5 has a conversion before sm_89"
        return f32_to_f8e5_bits(b, v)
    kind = "e5m2x2" if st.name == "f8e5" else "e4m3x2"
    fnty = ir.FunctionType(I16, [F32_T, F32_T])
    cvt = ir.InlineAsm(fnty, f"cvt.rn.satfinite.{kind}.f32 $0, $1, $2;", "=h,f,f")
    return b.trunc(b.call(cvt, [ir.Constant(F32_T, 0.0), v]), I8)  # the low byte is $2's


@dataclass(frozen=True)
class SoftFP8:
    """An fp8 format as :func:`soft_fp8_bits` rounds to it."""

    mantissa_bits: int
    bias: int
    #: The code of the largest finite value, where larger values saturate.
    max_code: int


#: f8e5 (e5m2): 57344 is its largest finite value.
E5M2_SOFT = SoftFP8(mantissa_bits=2, bias=15, max_code=0x7B)
#: Triton's fp8e4b15: e4m3 with fp16's bias, no infinity or NaN; 1.875 is its largest value.
E4B15_SOFT = SoftFP8(mantissa_bits=3, bias=15, max_code=0x7F)


def f32_to_f8e5_bits(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """``cvt.rn.satfinite.e5m2`` of one f32, in plain LLVM (any arch; the host too)."""
    return soft_fp8_bits(b, v, E5M2_SOFT)


def soft_fp8_bits(b: ir.IRBuilder, v: ir.Value, fmt: SoftFP8) -> ir.Value:
    """Round one f32 to the fp8 format ``fmt`` in plain LLVM: nearest even, saturating.

    The code keeps f32's sign, the exponent rebiased to ``fmt.bias`` and the
    top ``fmt.mantissa_bits`` mantissa bits. A normal value rounds its 23
    mantissa bits to that many, to nearest even, and is rebiased; past the
    largest finite code, the infinities included, it saturates. Below the
    smallest normal value, ``2^(1 - bias)``, the codes are multiples of
    ``2^(1 - bias - mantissa_bits)``, so the code is ``|x|`` over that step
    rounded to the nearest even integer (the two ranges meet at the smallest
    normal code). NaN becomes ``0x7f`` (f8e5's NaN; fp8e4b15's largest code,
    as the emulator rounds it).
    """

    def c(n: int) -> ir.Constant:
        return ir.Constant(I32, n)

    drop = 23 - fmt.mantissa_bits
    bits = b.bitcast(v, I32)
    mag = b.and_(bits, c(0x7FFFFFFF))
    odd = b.and_(b.lshr(mag, c(drop)), c(1))
    rounded = b.lshr(b.add(mag, b.add(c((1 << (drop - 1)) - 1), odd)), c(drop))
    normal = b.sub(rounded, c((127 - fmt.bias) << fmt.mantissa_bits))
    normal = b.select(b.icmp_unsigned(">", normal, c(fmt.max_code)), c(fmt.max_code), normal)
    rint = b.module.declare_intrinsic("llvm.rint", [F32_T])
    step = 2.0 ** (fmt.bias - 1 + fmt.mantissa_bits)
    scaled = b.fmul(b.bitcast(mag, F32_T), ir.Constant(F32_T, step))
    subnormal = b.fptoui(b.call(rint, [scaled]), I32)
    smallest_normal = (128 - fmt.bias) << 23  # the f32 bits of 2^(1 - bias)
    code = b.select(b.icmp_unsigned("<", mag, c(smallest_normal)), subnormal, normal)
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
