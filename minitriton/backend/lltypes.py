"""LLVM types of MiniTriton's IR types, and the per-thread block value."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from minitriton.backend.layouts import Layout
from minitriton.ir.types import BF16, F16, F32, F64, PointerType, ScalarType

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
class Tensor:
    """A block value as one thread sees it: its layout and one LLVM value per register."""

    layout: Layout
    vals: list[ir.Value]


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


def to_tf32(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """``v`` (fp32) rounded to TF32 with ``cvt.rna``, as bits in an i32 (both MMA paths use it)."""
    cvt = ir.InlineAsm(ir.FunctionType(I32, [F32_T]), "cvt.rna.tf32.f32 $0, $1;", "=r,f")
    return b.call(cvt, [v])


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
