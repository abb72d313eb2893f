"""Thread-id bit packing: runs, the emitted LLVM, and what it buys in the PTX.

``pack_bits`` is checked against the bit-by-bit definition by running the
LLVM it emits on the host (llvmlite's MCJIT) for every thread id of a CTA.
"""

from __future__ import annotations

import ctypes
import random
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from llvmlite import ir

from minitriton.backend.bitpack import Run, pack_bits, runs
from minitriton.backend.build import compile_ir
from minitriton.backend.host_jit import host_function
from minitriton.ir.parser import parse_module

I32 = ir.IntType(32)
KERNELS = Path(__file__).resolve().parent / "kernels"
PTXAS = shutil.which("ptxas")


def naive(pairs: list[tuple[int, int]], tid: int) -> int:
    """The definition: OR over pairs of ((tid >> bit) & 1) * weight."""
    out = 0
    for bit, weight in pairs:
        out |= ((tid >> bit) & 1) * weight
    return out


def jit(pairs: list[tuple[int, int]]) -> tuple[Callable[[int], int], str]:
    """Host-compile ``pack_bits`` for ``pairs``; the function and its LLVM text."""
    module = ir.Module("bitpack")
    fn = ir.Function(module, ir.FunctionType(I32, [I32]), "pack")
    b = ir.IRBuilder(fn.append_basic_block())
    b.ret(pack_bits(b, fn.args[0], pairs))
    proto = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_uint32)
    return host_function(module, "pack", proto), str(module)


def test_blocked_layout_bits_are_one_run():
    # 4 elements per thread, 32 lanes, 8 warps: thread-id bits 0..7 -> 4 ... 512
    assert runs([(i, 4 << i) for i in range(8)]) == [Run(0, 8, 4)]


def test_runs_break_at_gaps_odd_weights_and_order():
    pairs = [(0, 1), (1, 2), (3, 8), (4, 3), (5, 64), (6, 32)]
    assert runs(pairs) == [Run(0, 2, 1), Run(3, 1, 8), Run(4, 1, 3), Run(5, 1, 64), Run(6, 1, 32)]


def test_zero_weights_are_replication_and_dropped():
    assert runs([(0, 0), (1, 2), (2, 0)]) == [Run(1, 1, 2)]
    fn, text = jit([(0, 0), (3, 0)])
    assert fn(255) == 0 and "ret i32 0" in text


def test_one_run_is_one_shift_and_one_mask():
    fn, text = jit([(i, 4 << i) for i in range(8)])
    body = re.findall(r"^\s+%\S+ = (\w+)", text, re.M)
    assert body == ["shl", "and"]
    assert [fn(t) for t in (0, 1, 5, 255)] == [0, 4, 20, 1020]


def test_right_shifts_for_weights_below_the_bit():
    # warp bits 5..7 of tid to slot index 0..7 (the cross-warp reduction's slot)
    fn, text = jit([(5, 1), (6, 2), (7, 4)])
    assert "lshr" in text and "mul" not in text
    assert all(fn(t) == t >> 5 for t in range(256))


@pytest.mark.parametrize("seed", range(12))
def test_pack_bits_matches_the_bitwise_definition(seed):
    rng = random.Random(seed)
    bits = rng.sample(range(10), rng.randint(1, 10))
    weights = [0, 1, 2, 3, 4, 6, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 96]
    pairs = [(bit, rng.choice(weights)) for bit in bits]
    if seed % 3 == 0:  # a long doubling run among the random ones
        pairs = [(i, 2 << i) for i in range(6)] + [(b, w) for b, w in pairs if b >= 6]
    fn, _ = jit(pairs)
    assert [fn(t) for t in range(1024)] == [naive(pairs, t) for t in range(1024)]


def test_a_wrong_packing_is_caught():
    # the checker itself: a one-bit-off weight must disagree somewhere
    pairs = [(i, 4 << i) for i in range(8)]
    fn, _ = jit(pairs[:-1] + [(7, 1024)])
    assert [fn(t) for t in range(256)] != [naive(pairs, t) for t in range(256)]


def _layer_norm():
    path = KERNELS / "layer_norm.ir"
    return compile_ir(parse_module(path.read_text(), str(path)), "sm_90", 8)


def test_layer_norm_thread_offset_is_a_shift_of_tid():
    ptx = _layer_norm().ptx
    # the per-bit form showed as bfe.u32 of tid's lane and warp bits
    assert "bfe.u32" not in ptx
    assert re.search(r"mov\.u32\s+(%r\d+), %tid\.x;\s+shl\.b32\s+%r\d+, \1, 2;", ptx)


def test_layer_norm_masked_loads_need_no_selects():
    # Each masked load's words start as `other` (zero here), then the predicated
    # ld.global.v4 overwrites them: one compare per 4-element vector and no select.
    # The per-element form took 53 setp and 48 selp, and ran at 0.93x Triton on an
    # H100; the only selects left are the 16 of the variance loop's tl.where.
    ptx = _layer_norm().ptx
    assert len(re.findall(r"\bselp\.", ptx)) == 16
    assert len(re.findall(r"\bsetp\.", ptx)) < 32
    assert len(re.findall(r"@%p\d+ ld\.global\.v4\.b32", ptx)) == 20


@pytest.mark.skipif(PTXAS is None, reason="ptxas not found")
def test_layer_norm_assembles_without_spills(tmp_path):
    ptx = tmp_path / "layer_norm.ptx"
    ptx.write_text(_layer_norm().ptx)
    proc = subprocess.run(
        [PTXAS, "-v", "-arch=sm_90", str(ptx), "-o", str(tmp_path / "out.cubin")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "0 bytes spill stores" in proc.stderr, proc.stderr
