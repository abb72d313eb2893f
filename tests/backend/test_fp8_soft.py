"""Rounding f32 to f8e5 before sm_89: the software path gives ``cvt.rn.satfinite``'s bits.

The LLVM that :func:`f32_to_f8e5_bits` emits is run on the host (llvmlite's
MCJIT) over every f32 with a step through the bit patterns, every edge of
f8e5's range and random values, against the emulator's rounding (which is the
GPU's ``cvt.rn.satfinite.e5m2x2.f32``); a kernel converting to f8e5 then
compiles for sm_80 and assembles.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest
from llvmlite import ir

import minitriton as triton
import minitriton.language as tl
from minitriton.backend.lltypes import F32_T, I8, f32_to_f8e5_bits
from minitriton.emulator.values import f32_to_fp8
from tests.backend.host_jit import host_function
from tests.e2e.ptxas_check import assemble, needs_ptxas


def host_f8e5() -> ctypes._CFuncPtr:
    """Host-compile a loop applying ``f32_to_f8e5_bits`` to an array."""
    module = ir.Module("f8e5")
    ptr_f, ptr_b = F32_T.as_pointer(), I8.as_pointer()
    i64 = ir.IntType(64)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr_f, ptr_b, i64]), "convert")
    src, dst, n = fn.args
    entry, body, done = (fn.append_basic_block(name) for name in ("entry", "body", "done"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, ir.Constant(i64, 0)), body, done)
    b.position_at_end(body)
    i = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), entry)
    b.store(f32_to_f8e5_bits(b, b.load(b.gep(src, [i]))), b.gep(dst, [i]))
    nxt = b.add(i, ir.Constant(i64, 1))
    i.add_incoming(nxt, body)
    b.cbranch(b.icmp_signed("<", nxt, n), body, done)
    b.position_at_end(done)
    b.ret_void()
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
    return host_function(module, "convert", proto)


def convert(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float32)
    out = np.zeros(x.size, np.uint8)
    host_f8e5()(x.ctypes.data, out.ctypes.data, x.size)
    return out


def edges() -> np.ndarray:
    """Every f8e5 value, the midpoints between neighbours and the f32s next to them."""
    codes = np.arange(256, dtype=np.uint16) << 8
    values = codes.view(np.float16).astype(np.float32)
    finite = np.sort(values[np.isfinite(values)])
    mids = (finite[:-1] + finite[1:]) / 2  # exact in f32: ties to round to even
    near = np.concatenate([finite, mids, [61440.0, 65504.0, 65536.0, 1e30, 2.0**-17, 2.0**-24]])
    near = np.concatenate([near, -near])
    up, down = np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(-np.inf))
    special = np.array([np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0], np.float32)
    return np.concatenate([near, up, down, special]).astype(np.float32)


def test_software_f8e5_rounding_matches_satfinite_at_every_edge() -> None:
    x = edges()
    np.testing.assert_array_equal(convert(x), f32_to_fp8(x, "f8e5"))


def test_software_f8e5_rounding_matches_satfinite_across_the_bit_patterns() -> None:
    rng = np.random.default_rng(0)
    stepped = np.arange(0, 2**32, 4099, dtype=np.uint64).astype(np.uint32)
    random = rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([stepped, random]).view(np.float32)
    np.testing.assert_array_equal(convert(x), f32_to_fp8(x, "f8e5"))


def test_a_wrong_rounding_is_caught() -> None:
    # the check itself must fail on truncation: 1.2 rounds up to 1.25 (code 0x3d), not 0x3c
    x = np.array([1.2], np.float32)
    assert convert(x)[0] == f32_to_fp8(x, "f8e5")[0] == 0x3D


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
