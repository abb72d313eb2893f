"""The mma_v2 tensor-core path without a GPU: layouts in the ttgir, instructions in the PTX.

Kernels from ``tests/kernels/dot_kernels.py`` are compiled for a given arch
(PTX generation needs no GPU) and, when ``ptxas`` is available, assembled.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from minitriton.backend.build import compile_ir
from minitriton.backend.shared_layout import MmaTile
from minitriton.compiler import compile_kernel
from minitriton.jit import base_jit_function
from minitriton.signature import kernel_params, parse_signature

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.kernels import dot_kernels  # noqa: E402

PTXAS = shutil.which("ptxas")
STRIDES = "i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, i32:1, i32:16, i32:1"


def build(kernel, signature: str, arch: str = "sm_80", num_warps: int = 4, num_stages: int = 3):
    """Compile a Python kernel for ``signature`` down to PTX for ``arch``."""
    jit = base_jit_function(kernel)
    specs = parse_signature(signature, kernel_params(jit.fn))
    module = compile_kernel(jit.source, specs, stop_after="ir-opt").module
    return compile_ir(module, arch, num_warps, num_stages)


def dot(dtype: str, precision: str = "tf32", tile: str = "64, 64, 32", **kw):
    sig = f"*{dtype}:16, *{dtype}:16, *fp32:16, {STRIDES}, {tile}, {precision!r}"
    return build(dot_kernels.dot_kernel, sig.replace("'", '"'), **kw)


def assemble(k, tmp_path: Path) -> str:
    if PTXAS is None:
        pytest.skip("ptxas not found")
    ptx = tmp_path / "k.ptx"
    ptx.write_text(k.ptx)
    proc = subprocess.run(
        [PTXAS, "-v", f"-arch={k.arch}", str(ptx), "-o", str(tmp_path / "k.cubin")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


@pytest.mark.parametrize(
    "dtype, instr",
    [
        ("fp16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
        ("bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
        ("fp32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
    ],
)
def test_float_dots_use_mma_sync(dtype, instr, tmp_path):
    k = dot(dtype)
    assert (
        'layout = "nvidia_mma<versionMajor=2, warpsPerCTA=[2, 2], instrShape=[16, 8]>"' in k.ttgir
    )
    assert "dot_op<opIdx=0, parent=nvidia_mma<" in k.ttgir
    assert "dot_op<opIdx=1, parent=nvidia_mma<" in k.ttgir
    # 64x64x32 with 2x2 warps: 2 m16 tiles x 4 n8 tiles per warp, K/kI steps.
    steps = 32 // (8 if dtype == "fp32" else 16)
    assert k.ptx.count(instr) == 2 * 4 * steps
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in k.ptx
    assert ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in k.ptx) == (dtype != "fp32")
    assert "cvt.rna" not in k.ptx  # fp32 bits go to the tensor cores as Triton gives them
    assemble(k, tmp_path)


def test_ieee_stays_exact_on_fma(tmp_path):
    k = dot("fp32", "ieee")
    assert "mma.sync" not in k.ptx and "nvidia_mma" not in k.ttgir
    assert "fma.rn.f32" in k.ptx


def test_int8_uses_m16n8k32_with_int32_accumulators(tmp_path):
    sig = f"*i8:16, *i8:16, *i32:16, {STRIDES}, 64, 64, 64"
    k = build(dot_kernels.int8_dot_kernel, sig)
    # .satfinite, as Triton: an int32 sum that overflows saturates rather than wraps.
    assert k.ptx.count("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32") == 2 * 4 * 2
    assemble(k, tmp_path)


def test_attention_p_stays_in_registers(tmp_path):
    sig = "*fp16:16, *fp16:16, *fp16:16, *fp32:16, i32:16, 64, 64, 64"
    k = build(dot_kernels.chained_dot_kernel, sig)
    assert "warpsPerCTA=[4, 1]" in k.ttgir
    lines = k.ttgir.splitlines()
    dots = [line for line in lines if "tt.dot(" in line]
    converted = {m for line in lines for m in re.findall(r"(%\w+) = ttg\.convert_layout", line)}
    p_operand = re.search(r"tt\.dot\((%\w+),", dots[1]).group(1)
    assert p_operand not in converted  # the cast of P feeds the dot directly
    # Shared memory stages q only (no P tile): k and v are read from their rings; the one
    # other conversion is the epilogue's, to a blocked layout for coalesced stores.
    staged = {
        m
        for line in lines
        for m in re.findall(r'(%\w+) = ttg\.convert_layout\(\S+\) \{layout = "dot_op', line)
    }
    assert len(staged) == 1
    ring_reads = re.findall(r'= ttg\.local_load\(\S+\) \{buffer = \d, layout = "dot_op', k.ttgir)
    assert len(ring_reads) == 2
    assert len(converted - staged) == 1
    # The softmax reductions run on the accumulator layout (no conversion before them).
    assert re.search(
        r'tt\.reduce\(%qk\) \{axis = 1, layout = "slice<dim=1, parent=nvidia_mma', k.ttgir
    )
    assemble(k, tmp_path)


def test_without_warps_along_m_p_goes_through_shared_memory():
    # Two warps along N: the accumulator is not an A fragment, P is converted.
    from minitriton.backend.layouts import MmaParams, dot_operand_layout, mma_layout

    params = MmaParams((1, 2))
    assert mma_layout(params, (16, 64)) != dot_operand_layout(params, 0, 16, (16, 64))


def test_128x128x32_fp16_fits_the_register_file(tmp_path):
    k = dot("fp16", tile="128, 128, 32")
    info = assemble(k, tmp_path)
    regs = int(re.search(r"Used (\d+) registers", info).group(1))
    assert regs <= 255
    assert " 0 bytes spill stores" in info


@pytest.mark.parametrize(
    "cols, eb", [(16, 2), (32, 2), (64, 2), (128, 2), (8, 4), (32, 4), (32, 1)]
)
def test_swizzle_makes_ldmatrix_conflict_free(cols, eb):
    tile = MmaTile(64, cols, eb)
    # One ldmatrix phase reads 8 rows of one 16-byte unit: 8 different bank groups.
    for row0 in range(0, 64, 8):
        for col in range(0, cols, tile.unit):
            groups = {tile.offset(row0 + r, col) // 16 % 8 for r in range(8)}
            assert len(groups) == 8
    # Every element gets its own place.
    offsets = {tile.offset(r, c) for r in range(64) for c in range(cols)}
    assert len(offsets) == 64 * cols and max(offsets) < tile.nbytes


def test_unswizzled_rows_would_conflict():
    # The check above can fail: without the XOR, 128-byte rows share their bank group.
    assert len({(r * 128) // 16 % 8 for r in range(8)}) == 1


@pytest.mark.parametrize("arch", ["sm_75", "sm_86", "sm_89", "sm_90a", "sm_100", "sm_120"])
def test_each_arch_gets_its_best_dot_path(arch, tmp_path):
    k = dot("fp16", arch=arch)
    assert f".target {arch}" in k.ptx
    best = {"sm_75": None, "sm_90a": "wgmma.mma_async"}.get(arch, "mma.sync")  # sm_75: FMA
    for instruction in ("mma.sync", "wgmma.mma_async"):
        assert (instruction in k.ptx) == (instruction == best), instruction
    assemble(k, tmp_path)


def test_sm75_rounds_bf16_in_software(tmp_path):
    from minitriton.ir.parser import parse_module

    path = ROOT / "tests" / "backend" / "kernels" / "elementwise.ir"
    module = parse_module(path.read_text(), str(path))
    assert "cvt.rn.bf16.f32" in compile_ir(module, "sm_80").ptx
    k = compile_ir(module, "sm_75")
    assert "cvt.rn.bf16.f32" not in k.ptx and ".bf16" not in k.ptx
    assemble(k, tmp_path)


def test_ptxas_check_runs_dot_kernels_on_every_arch():
    from minitriton.tools.ptxas_check import ARCHS, NON_DOT_ARCHS, Kernel, archs_for

    assert ARCHS == ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_100", "sm_120")
    dot_k = Kernel("d", ROOT, "%c = tt.dot(%a, %b, %acc)", 4)
    other = Kernel("v", ROOT, "%c = arith.add(%a, %b)", 4)
    assert archs_for(dot_k) == ARCHS and archs_for(other) == NON_DOT_ARCHS


def test_ttgir_goldens(golden):
    from minitriton.ir.ttgir_text import readable

    # The layouts of a matmul and of an attention kernel on sm_80, as the ttgir dump shows them.
    # The goldens read as `--emit ttgir` prints: layouts as aliases.
    golden(readable(dot("fp16", num_stages=1).ttgir), "dot_fp16_64x64x32_sm80.ttgir")
    sig = "*fp16:16, *fp16:16, *fp16:16, *fp32:16, i32:16, 64, 64, 64"
    golden(readable(build(dot_kernels.chained_dot_kernel, sig).ttgir), "chained_dot_64_sm80.ttgir")
