"""Tests for exercise c6: integer ops lowered to LLVM IR compute what C computes.

No GPU is needed: each op is lowered by ``arith._int_binary`` into a tiny
host function, JIT-compiled for this CPU with llvmlite, and run on random
operands; NumPy gives the expected C semantics (the emulator's too).
"""

from __future__ import annotations

import ctypes
from types import SimpleNamespace

import numpy as np
import pytest
from llvmlite import ir

from minitriton.backend.host_jit import host_function
from minitriton.backend.lower import arith
from minitriton.ir.types import I1, I8, I16, I32, I64, U8, U16, U32, U64, ScalarType

pytestmark = pytest.mark.exercise("c6-lower")

TYPES = {
    "i8": (I8, np.int8, ctypes.c_int8),
    "u8": (U8, np.uint8, ctypes.c_uint8),
    "i32": (I32, np.int32, ctypes.c_int32),
    "u32": (U32, np.uint32, ctypes.c_uint32),
    "i16": (I16, np.int16, ctypes.c_int16),
    "u16": (U16, np.uint16, ctypes.c_uint16),
    "i64": (I64, np.int64, ctypes.c_int64),
    "u64": (U64, np.uint64, ctypes.c_uint64),
}
OPS = ("arith.div", "arith.rem", "arith.shr", "arith.max", "arith.min")


def _expected(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if op == "arith.div":  # C: truncate toward zero, with exact integers
        quotients = []
        for x, y in zip(a.tolist(), b.tolist()):
            q = abs(x) // abs(y)
            quotients.append(q if (x < 0) == (y < 0) else -q)
        return np.array(quotients, dtype=a.dtype)
    if op == "arith.rem":  # C: the sign of the dividend
        return np.fmod(a, b)
    if op == "arith.shr":  # arithmetic for signed, logical for unsigned
        return a >> b
    return np.maximum(a, b) if op == "arith.max" else np.minimum(a, b)


def _operands(op: str, dtype: type, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, 200, dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, 200, dtype=dtype, endpoint=True)
    if op == "arith.shr":
        b = rng.integers(0, info.bits, 200).astype(dtype)
    if op in ("arith.div", "arith.rem"):
        b[b == 0] = 1  # division by zero is undefined
        if info.min < 0:
            b[(a == info.min) & (b == -1)] = 1  # so is MIN / -1 (it traps on x86)
    return a, b


def _compile(op: str, st: ScalarType, ctype: type) -> ctypes._CFuncPtr:
    """``f(a, b)``: ``op`` lowered by ``arith._int_binary`` and JIT-compiled for this CPU."""
    module = ir.Module(name="c6")
    ty = ir.IntType(st.bitwidth)
    fn = ir.Function(module, ir.FunctionType(ty, [ty, ty]), name="f")
    builder = ir.IRBuilder(fn.append_basic_block())
    # _int_binary only needs the builder of the lowering context.
    builder.ret(arith._int_binary(SimpleNamespace(b=builder), op, st, *fn.args))
    return host_function(module, "f", ctypes.CFUNCTYPE(ctype, ctype, ctype))


@pytest.mark.parametrize("tname", list(TYPES))
@pytest.mark.parametrize("op", OPS)
def test_int_op_matches_c(op: str, tname: str) -> None:
    st, dtype, ctype = TYPES[tname]
    fn = _compile(op, st, ctype)
    a, b = _operands(op, dtype, np.random.default_rng(len(op) * 7 + len(tname)))
    got = np.array([fn(int(x), int(y)) for x, y in zip(a, b)], dtype=dtype)
    np.testing.assert_array_equal(got, _expected(op, a, b), err_msg=f"{op} on {tname}")


# i1 is unsigned: true is 1, not -1. Its max is "or" and its min is "and"; a
# lowering that decides signedness from the type's name ("i1" starts with "i")
# gets both backwards.
I1_TABLE = {
    "arith.max": lambda a, b: a | b,
    "arith.min": lambda a, b: a & b,
    "arith.div": lambda a, b: a,  # b is 1: dividing by 0 is undefined
    "arith.rem": lambda a, b: 0,
    "arith.shr": lambda a, b: a,  # b is 0: a shift by the width is undefined
}


@pytest.mark.parametrize("op", OPS)
def test_int_op_on_i1_is_unsigned(op: str) -> None:
    fn = _compile(op, I1, ctypes.c_bool)
    pairs = [(a, b) for a in (0, 1) for b in (0, 1)]
    if op in ("arith.div", "arith.rem"):
        pairs = [(a, 1) for a in (0, 1)]
    if op == "arith.shr":
        pairs = [(a, 0) for a in (0, 1)]
    for a, b in pairs:
        got = int(fn(bool(a), bool(b)))
        assert got == I1_TABLE[op](a, b), f"{op} on i1: ({a}, {b}) gave {got}"


@pytest.mark.parametrize("tname", [t for t in TYPES if t.startswith("u")])
@pytest.mark.parametrize("op", OPS)
def test_int_op_on_unsigned_with_the_top_bit_set(op: str, tname: str) -> None:
    # Values at and above 2**(bits - 1): negative if the lowering takes them as signed.
    st, dtype, ctype = TYPES[tname]
    fn = _compile(op, st, ctype)
    top = np.iinfo(dtype).max
    half = top // 2 + 1
    values = [half, top, half + 1, 3, 1]
    pairs = [(a, b) for a in values for b in values]
    if op in ("arith.div", "arith.rem"):
        # Taken as signed, half / top is MIN / -1, which traps on x86: a crash, not an answer.
        pairs.remove((half, top))
    if op == "arith.shr":
        pairs = [(a, s) for a in values for s in (1, 3, st.bitwidth - 1)]
    a = np.array([p[0] for p in pairs], dtype=dtype)
    b = np.array([p[1] for p in pairs], dtype=dtype)
    got = np.array([fn(int(x), int(y)) for x, y in zip(a, b)], dtype=dtype)
    np.testing.assert_array_equal(got, _expected(op, a, b), err_msg=f"{op} on {tname}")
