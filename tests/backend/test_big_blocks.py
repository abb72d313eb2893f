"""Big blocks compile in time proportionate to their size (no GPU needed).

A thread's offset in a layout used to be one shift, mask, multiply and or
per bit of the thread index. With every address of a 2^16-element block
hanging off that chain, LLVM's straight-line strength reduction took time
quadratic in the elements per thread (54 s for ``--emit ptx`` at
``num_warps=2``). The offset is now one shift and mask per run of bits.
"""

from __future__ import annotations

import importlib.util
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from minitriton.backend.build import INLINE_BUDGET, libdevice_size
from minitriton.backend.lower import LoweringContext
from minitriton.backend.lower.math import find_libdevice
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


def prologue(module: Any, num_warps: int) -> list[str]:
    """The instructions of the LLVM prologue our code generator writes (before LLVM's passes)."""
    kernel, plan, inlined_at = prepare_kernel(module, num_warps, "sm_90", 3)[1:]
    ctx = LoweringContext(kernel, plan, inlined_at, arch="sm_90", num_warps=num_warps)
    text = str(ctx.generate())
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
