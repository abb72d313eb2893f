"""Big blocks compile in time proportionate to their size (no GPU needed).

A thread's offset in a layout used to be one shift, mask, multiply and or
per bit of the thread index. With every address of a 2^16-element block
hanging off that chain, LLVM's straight-line strength reduction took time
quadratic in the elements per thread (54 s for ``--emit ptx`` at
``num_warps=2``). The offset is now one shift and mask per run of bits.
"""

from __future__ import annotations

import importlib.util
import random
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from minitriton.backend.codegen import Codegen, bit_runs
from minitriton.backend.compiler import INLINE_BUDGET, libdevice_size
from minitriton.backend.layouts import blocked, default_params
from minitriton.backend.mathlib import find_libdevice
from minitriton.backend.prepare import prepare_kernel
from minitriton.compiler import CompileOptions, compile_kernel

SOURCE = """
import minitriton as triton
import minitriton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.exp(tl.load(x_ptr + offs)) * 2.0)


@triton.jit
def scale_and_sum(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.exp(x) * 2.0 + x
    tl.store(y_ptr + offs, y)
    tl.store(out_ptr, tl.sum(y, axis=0))


@triton.jit
def powers(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, POWERS)
"""


def kernels(tmp_path: Path, terms: int = 1) -> Any:
    path = tmp_path / "big_blocks.py"
    path.write_text(SOURCE.replace("POWERS", " ** ".join(["x"] * terms)))
    spec = importlib.util.spec_from_file_location("big_blocks", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_ptx(fn: Any, n_ptrs: int, block: int, num_warps: int) -> Any:
    # Pointers not known to be 16-byte aligned: one scalar access per element, as
    # ``minitriton compile --signature "*fp32, ..."`` compiles them.
    arrays = [np.zeros(5, np.float32)[1:] for _ in range(n_ptrs)]
    specs = fn.specialize(fn.bind(tuple(arrays), {"BLOCK": block}))
    options = CompileOptions(num_warps=num_warps)
    return compile_kernel(fn.source, specs, options, stop_after="ptx")


def or_all(terms: Any) -> int:
    """The terms OR-ed together, as the code generator combines them."""
    total = 0
    for term in terms:
        total |= term
    return total


def test_bit_runs_equal_the_per_bit_terms_for_any_bases() -> None:
    """Random bases (zero, powers of two, a few others): the same value for every index."""
    rng = random.Random(12)
    for _ in range(300):
        bases = [rng.choice([0, 1 << rng.randrange(12), 1 << rng.randrange(12), 3, 6])
                 for _ in range(rng.randrange(1, 9))]  # fmt: skip
        for index in range(1 << len(bases)):
            per_bit = or_all(basis for bit, basis in enumerate(bases) if index >> bit & 1)
            runs = bit_runs(bases)
            merged = or_all(((index >> f) & ((1 << n) - 1)) * basis for f, n, basis in runs)
            assert merged == per_bit, (bases, index)


def test_bit_runs_merge_bits_whose_bases_double() -> None:
    assert bit_runs([4, 8, 16, 32, 64, 128, 256]) == [(0, 7, 4)]
    assert bit_runs([1, 2, 0, 8, 16]) == [(0, 2, 1), (3, 2, 8)]
    assert bit_runs([1, 4, 8]) == [(0, 1, 1), (1, 2, 4)]
    assert bit_runs([0, 0]) == []
    assert bit_runs([3, 6]) == [(0, 1, 3), (1, 1, 6)]  # not powers of two: one bit each


@pytest.mark.parametrize("shape", [(1024,), (65536,), (64, 32), (16, 128), (128, 128), (4, 8)])
@pytest.mark.parametrize("num_warps", [1, 2, 4, 8])
def test_bit_runs_give_every_thread_its_offset(shape: tuple[int, ...], num_warps: int) -> None:
    """The runs over the thread index reproduce the per-bit sum of the layout's bases."""
    layout = blocked(default_params(shape, num_warps, 4), shape)
    for dim in range(len(shape)):
        bases = [b[dim] for b in layout.lane_bases] + [b[dim] for b in layout.warp_bases]
        runs = bit_runs(bases)
        for tid in range(32 * num_warps):
            per_bit = sum(basis for bit, basis in enumerate(bases) if tid >> bit & 1)
            merged = or_all(
                ((tid >> first) & ((1 << count) - 1)) * basis for first, count, basis in runs
            )
            assert merged == per_bit, (shape, num_warps, dim, tid)


def prologue(module: Any, num_warps: int) -> list[str]:
    """The instructions of the LLVM prologue our code generator writes (before LLVM's passes)."""
    kernel, plan, inlined_at = prepare_kernel(module, num_warps, "sm_90", 3)[1:]
    text = str(Codegen(kernel, plan, inlined_at, arch="sm_90", num_warps=num_warps).generate())
    body = text.split("prologue:\n", 1)[1].split("body:\n", 1)[0]
    return [line for line in body.splitlines() if " = " in line]


@pytest.mark.parametrize("num_warps", [1, 2, 4, 8])
def test_a_thread_offset_is_a_shift_and_a_mask(
    tmp_path: Path, monkeypatch: Any, num_warps: int
) -> None:
    """In a 1-D block, ``(tid & (threads - 1)) << 2``: not four instructions per bit."""
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    out = compile_ptx(kernels(tmp_path).scale_and_sum, 3, 4096, num_warps)
    lines = prologue(out.module, num_warps)
    offset = [line for line in lines if re.search(r"= (and|shl|lshr|or|mul) i32", line)]
    # tid & mask, << 2; then lane and warp for the reduction, a compare for thread 0.
    assert len(offset) <= 4, "\n".join(lines)


def test_a_2_16_element_block_compiles_to_ptx_in_proportion(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """65,536 elements on two warps (1,024 per thread): seconds, where it took 54."""
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    fn = kernels(tmp_path).scale_and_sum
    began = time.process_time()
    out = compile_ptx(fn, 3, 65536, 2)
    spent = time.process_time() - began
    assert out.asm["ptx"].count("st.global") >= 1024  # per thread: the block is all there
    assert spent < 20.0, f"{spent:.1f} s of CPU"


needs_libdevice = pytest.mark.skipif(find_libdevice() is None, reason="libdevice not found")


@needs_libdevice
def test_a_long_chain_of_powers_calls_one_out_of_line_pow(tmp_path: Path, monkeypatch: Any) -> None:
    """100 ``**`` on 8 elements per thread: 800 calls of one ``__nv_powf``, not 800 copies."""
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    assert 800 * libdevice_size("__nv_powf") > INLINE_BUDGET
    out = compile_ptx(kernels(tmp_path, terms=101).powers, 2, 1024, 4)
    ptx = out.asm["ptx"]
    assert ptx.count(".func") == 2  # its declaration and its body
    assert ptx.count("call.uni") == 800
    assert len(out.asm["llir"]) < 400_000  # inlined, it was 4 MB


@needs_libdevice
def test_a_few_powers_stay_inlined(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    out = compile_ptx(kernels(tmp_path, terms=3).powers, 2, 1024, 4)
    assert ".func" not in out.asm["ptx"] and "call.uni" not in out.asm["ptx"]
    assert not re.search(r"@\"?__nv_powf", out.asm["llir"])  # inlined, then dropped
