"""Rounding f32 to fp8 in software: f8e5 before sm_89, and fp8e4b15 on every arch.

The LLVM that :func:`soft_fp8_bits` emits is run on the host (llvmlite's
MCJIT) over every f32 with a step through the bit patterns, every edge of
each format's range and random values, against the emulator's rounding
(which is the GPU's ``cvt.rn.satfinite.e5m2x2.f32`` for f8e5); fp8e4b15's
decoding is checked on all 256 codes. A kernel converting to f8e5 then
compiles for sm_80 and assembles (fp8e4b15's kernels: ``test_compat_suite.py``).
"""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from llvmlite import ir

import minitriton as triton
import minitriton.language as tl
from minitriton.backend.host_jit import host_function
from minitriton.backend.lltypes import (
    E4B15_SOFT,
    E5M2_SOFT,
    F32_T,
    I8,
    f8e4b15_as_f16_bits,
    f32_to_f8e5_bits,
    soft_fp8_bits,
)
from minitriton.emulator.values import f32_to_fp8
from minitriton.emulator.values import fp8_to_f32 as emulator_fp8_to_f32
from tests.e2e.ptxas_check import assemble, needs_ptxas

FORMATS = {"f8e5": E5M2_SOFT, "f8e4b15": E4B15_SOFT}


def _loop(name: str, src_t: ir.Type, dst_t: ir.Type, body_fn: Any) -> ctypes._CFuncPtr:
    """Host-compile ``dst[i] = body_fn(builder, src[i])`` over two arrays."""
    module = ir.Module(name)
    i64 = ir.IntType(64)
    fnty = ir.FunctionType(ir.VoidType(), [src_t.as_pointer(), dst_t.as_pointer(), i64])
    fn = ir.Function(module, fnty, "convert")
    src, dst, n = fn.args
    entry, body, done = (fn.append_basic_block(name) for name in ("entry", "body", "done"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, ir.Constant(i64, 0)), body, done)
    b.position_at_end(body)
    i = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), entry)
    b.store(body_fn(b, b.load(b.gep(src, [i]))), b.gep(dst, [i]))
    nxt = b.add(i, ir.Constant(i64, 1))
    i.add_incoming(nxt, body)
    b.cbranch(b.icmp_signed("<", nxt, n), body, done)
    b.position_at_end(done)
    b.ret_void()
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
    return host_function(module, "convert", proto)


@functools.cache
def host_rounding(fmt: str) -> ctypes._CFuncPtr:
    """Host-compile a loop applying ``soft_fp8_bits`` for ``fmt`` to an array."""
    return _loop(fmt, F32_T, I8, lambda b, x: soft_fp8_bits(b, x, FORMATS[fmt]))


def convert(x: np.ndarray, fmt: str = "f8e5") -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float32)
    out = np.zeros(x.size, np.uint8)
    host_rounding(fmt)(x.ctypes.data, out.ctypes.data, x.size)
    return out


def edges(fmt: str) -> np.ndarray:
    """Every value of ``fmt``, the midpoints between neighbours and the f32s next to them."""
    values = emulator_fp8_to_f32(np.arange(256, dtype=np.uint8), fmt)
    finite = np.unique(values[np.isfinite(values)])
    mids = (finite[:-1] + finite[1:]) / 2  # exact in f32: ties to round to even
    beyond = [2.0, 1.9375, 61440.0, 65504.0, 65536.0, 1e30, 2.0**-17, 2.0**-18, 2.0**-24]
    near = np.concatenate([finite, mids, beyond])
    near = np.concatenate([near, -near])
    up, down = np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(-np.inf))
    special = np.array([np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0], np.float32)
    return np.concatenate([near, up, down, special]).astype(np.float32)


@pytest.mark.parametrize("fmt", FORMATS)
def test_software_rounding_matches_satfinite_at_every_edge(fmt: str) -> None:
    x = edges(fmt)
    np.testing.assert_array_equal(convert(x, fmt), f32_to_fp8(x, fmt))


@pytest.mark.parametrize("fmt", FORMATS)
def test_software_rounding_matches_satfinite_across_the_bit_patterns(fmt: str) -> None:
    rng = np.random.default_rng(0)
    stepped = np.arange(0, 2**32, 4099, dtype=np.uint64).astype(np.uint32)
    random = rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([stepped, random]).view(np.float32)
    np.testing.assert_array_equal(convert(x, fmt), f32_to_fp8(x, fmt))


def test_a_wrong_rounding_is_caught() -> None:
    # the check itself must fail on truncation: 1.2 rounds up to 1.25 (code 0x3d), not 0x3c
    x = np.array([1.2], np.float32)
    assert convert(x)[0] == f32_to_fp8(x, "f8e5")[0] == 0x3D
    # fp8e4b15 saturates at 1.875 (0x7f) where f8e5 would go on to 2.0
    assert convert(np.array([2.5], np.float32), "f8e4b15")[0] == 0x7F


def test_f8e5_helper_is_the_e5m2_format() -> None:
    x = edges("f8e5")
    out = np.zeros(x.size, np.uint8)
    _loop("e5", F32_T, I8, f32_to_f8e5_bits)(x.ctypes.data, out.ctypes.data, x.size)
    np.testing.assert_array_equal(out, f32_to_fp8(x, "f8e5"))


def test_f8e4b15_decodes_every_code_exactly() -> None:
    # checked through the fp16 bits it makes (the host JIT has no half-precision fpext)
    codes = np.arange(256, dtype=np.uint16)
    out = np.zeros(256, np.uint16)
    i16 = ir.IntType(16)
    decode = _loop("d", i16, i16, f8e4b15_as_f16_bits)
    decode(codes.ctypes.data, out.ctypes.data, 256)
    values = out.view(np.float16).astype(np.float32)
    np.testing.assert_array_equal(values, emulator_fp8_to_f32(codes.astype(np.uint8), "f8e4b15"))
    assert values[0x7F] == 1.875 and values[0x01] == 2.0**-17 and values[0x80] == 0.0


@triton.jit
def to_f8e5(src, dst, rtz_dst):
    idx = tl.arange(0, 64)
    x = tl.load(src + idx)
    tl.store(dst + idx, x.to(tl.float8e5))
    tl.store(rtz_dst + idx, x.to(tl.float8e5, fp_downcast_rounding="rtz"))


@needs_ptxas
@pytest.mark.parametrize("source", ["fp32", "fp16", "bf16"])
def test_converting_to_f8e5_compiles_for_sm80(source: str, tmp_path: Path) -> None:
    # Triton's test_fp8_compiles_for_multiple_architectures_cuda: sm_80 has no fp8
    # instructions, and converts in software
    compiled = assemble(to_f8e5, f"*{source}, *fp8e5, *fp8e5", "sm_80", tmp_path)
    assert "cvt.rn.satfinite" not in compiled.ptx and "cvt.rni.f32.f32" in compiled.ptx
