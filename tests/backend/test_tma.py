"""TMA copies on sm_90a: which loads get them, the ttgir and PTX they become, the recipes.

No GPU needed (llvmlite; ``ptxas`` where it is on PATH). The GPU runs are in
``tests/gpu/test_tma_gpu.py``.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from minitriton.backend import tensormap as TMAP
from minitriton.backend.build import PTXModule
from minitriton.backend.tma import UNBOUNDED, mark_grid_constants
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.ir.ttgir_text import readable
from minitriton.signature import parse_signature
from tests.kernels.tma_matmul import (
    block_ptr_matmul,
    block_ptr_matmul_rows_unchecked,
    desc_matmul,
    mixed_matmul,
)

DESC_SIG = ("tensordesc<fp16[128, 64]>:16, tensordesc<fp16[128, 64]>:16, "
            "tensordesc<fp16[128, 128]>:16, i32:16, i32:16, i32:16, 128, 128, 64")  # fmt: skip
BP_SIG = ("*fp16:16, *fp16:16, *fp16:16, i32, i32, i32:16, i32:16, 1, i32:16, 1, i32:16, 1, "
          "128, 128, 64")  # fmt: skip


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    monkeypatch.delenv("MINITRITON_TMA", raising=False)
    monkeypatch.delenv("MINITRITON_TMA_FORMS", raising=False)
    # The loads alone (the default): TMA stores (test_tma_stores.py) add maps and copies.
    monkeypatch.delenv("MINITRITON_TMA_STORES", raising=False)


def _compile(kernel, sig: str, arch: str = "sm_90a", warps: int = 8) -> PTXModule:  # noqa: ANN001
    specs = parse_signature(sig, kernel.params)
    options = CompileOptions(num_warps=warps, num_stages=3, arch=arch)
    return compile_kernel(kernel.source, specs, options, stop_after="ptx").binary


def _loop(ttgir: str) -> str:
    start = ttgir.index("scf.for")
    return ttgir[start : ttgir.index("\n  }", start)]


def _tma_lines(ttgir: str) -> str:
    """The pipeline's shared-memory and barrier ops, operands blanked (they are SSA numbers)."""
    keep = ("ttg.local_alloc", "ttng.", "ttg.async", "scf.yield", "ttg.local_dealloc")
    lines = [re.sub(r"%[\w.]+", "%_", ln.strip()) for ln in ttgir.splitlines()
             if ln.strip().startswith(keep) or "= ttng." in ln or "= scf.for(" in ln]  # fmt: skip
    return "\n".join(ln.split(" {layout")[0] if ln.startswith("%") else ln for ln in lines) + "\n"


def test_descriptor_matmul_golden(golden) -> None:  # noqa: ANN001
    lines = _tma_lines(_compile(desc_matmul, DESC_SIG).ttgir)
    golden(readable(lines), "tma_descriptor_matmul.ttgir")


def test_descriptor_tiles_are_copied_by_tma() -> None:
    k = _compile(desc_matmul, DESC_SIG)
    loop = _loop(k.ttgir)
    assert "ttg.async_copy_global_to_local" not in k.ttgir and "tt.load" not in loop
    assert loop.count("ttng.async_tma_copy_global_to_local") == 2
    assert loop.count("ttng.wait_barrier") == 1 and "ttg.async_wait" not in loop
    assert "ttng.barrier_expect(%" in loop and "{bytes = 32768}" in loop  # 2 x 128 x 64 x 2 bytes
    # Every copy of A (128 x 64, 128-byte rows) and of B.T (K-major, 128 rows of 64) is one box.
    ptx = k.ptx
    copies = re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\."
                        r"mbarrier::complete_tx::bytes \[%r\d+\], \[%rd\d+, \{%r\d+, %r\d+\}\], "
                        r"\[%r\d+\];", ptx)  # fmt: skip
    assert len(copies) == 6  # two prologue stages and the loop, A and B each
    assert "mbarrier.try_wait.parity.shared::cta.b64" in ptx
    assert "mbarrier.arrive.expect_tx.shared::cta.b64" in ptx
    assert "mbarrier.init.shared::cta.b64" in ptx and "mbarrier.inval.shared::cta.b64" in ptx
    assert "cp.async.cg" not in ptx and "cp.async.commit_group" not in ptx
    # The maps are 64-byte aligned 128-byte parameters after the 15 arguments, read in place.
    assert re.search(r"\.param \.align 64 \.b8 desc_matmul_param_15\[128\]", ptx)
    assert re.search(r"\.param \.align 64 \.b8 desc_matmul_param_16\[128\]", ptx)
    assert "cvta.param.u64" in ptx


def test_recipes_name_the_arguments_of_each_map() -> None:
    k = _compile(desc_matmul, DESC_SIG)
    # a_desc = (base 0, shape0 1, shape1 2, stride0 3); b_desc = 4..7; innermost (K) first.
    assert k.tma == [
        {"base": 0, "dtype": "f16", "dims": [["arg", 2], ["arg", 1]], "strides": [["arg", 3]],
         "box": [64, 128], "swizzle": 128},
        {"base": 4, "dtype": "f16", "dims": [["arg", 6], ["arg", 5]], "strides": [["arg", 7]],
         "box": [64, 128], "swizzle": 128},
    ]  # fmt: skip


def test_block_pointers_over_kernel_arguments() -> None:
    k = _compile(block_ptr_matmul, BP_SIG)
    # B is row-major 64 x 128: two 128-byte column blocks, so two boxes of 64 x 64.
    assert [m["box"] for m in k.tma] == [[64, 128], [64, 64]]
    # Sizes: K and M for A, N and K for B; strides sam and sbk (the unit strides are constants).
    assert [m["dims"] for m in k.tma] == [[["arg", 5], ["arg", 3]], [["arg", 4], ["arg", 5]]]
    assert [m["strides"] for m in k.tma] == [[["arg", 6]], [["arg", 7]]]
    assert _loop(k.ttgir).count("ttng.async_tma_copy_global_to_local") == 2
    assert k.ptx.count("cp.async.bulk.tensor.2d") == 9  # 3 issues x (1 box of A + 2 of B)


UNALIGNED_A = BP_SIG.replace("i32:16, i32:16, 1", "i32:16, i32, 1", 1)
ROWS_UNCHECKED_SIG = "*fp16:16, *fp16:16, *fp16:16, i32, i32, i32:16, i32:16, i32:16, 128, 128, 64"
MIXED_SIG = "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:16, 128, 128, 64"


def test_by_default_a_loop_gets_tma_only_for_all_of_its_rings() -> None:
    # A's ring is filled by cp.async (no map describes its mask): so is B's, by default.
    k = _compile(mixed_matmul, MIXED_SIG)
    assert k.tma == [] and "ttng." not in k.ttgir.replace("ttng.warp_group_dot", "")
    assert _loop(k.ttgir).count("ttg.async_copy_global_to_local") == 2


def test_a_loop_whose_rings_all_qualify_gets_tma_beside_a_plain_load() -> None:
    # A's rows are too unaligned for a ring (an ordinary load each iteration); B's ring, the
    # loop's only one, is filled by TMA, under the synchronous schedule.
    k = _compile(block_ptr_matmul, UNALIGNED_A)
    assert [m["base"] for m in k.tma] == [1]
    loop = _loop(k.ttgir)
    assert loop.count("tt.load(") == 1 and loop.count("ttng.async_tma_copy_global_to_local") == 1


def test_unaligned_stride_gives_no_map_for_that_operand(monkeypatch) -> None:  # noqa: ANN001
    # sam (A's row stride) has no divisibility: no TMA for A (and rows too unaligned for
    # cp.async: A stays an ordinary load in the loop); B still comes by TMA.
    monkeypatch.setenv("MINITRITON_TMA_FORMS", "all")
    k = _compile(block_ptr_matmul, UNALIGNED_A)
    assert [m["base"] for m in k.tma] == [1]
    loop = _loop(k.ttgir)
    assert loop.count("tt.load(") == 1 and loop.count("ttng.async_tma_copy_global_to_local") == 1
    assert "ttng.wait_barrier" in loop


def test_a_dimension_without_bounds_check_is_unbounded() -> None:
    # A's rows are not checked: its map's row dimension is UNBOUNDED, so that TMA reads the
    # rows past M as the pointer load does; K (checked) bounds its columns. B is checked.
    k = _compile(block_ptr_matmul_rows_unchecked, ROWS_UNCHECKED_SIG)
    assert [m["base"] for m in k.tma] == [0, 1]
    assert k.tma[0]["dims"] == [["arg", 5], UNBOUNDED]
    assert k.tma[1]["dims"] == [["arg", 4], ["arg", 5]]
    assert _loop(k.ttgir).count("ttng.async_tma_copy_global_to_local") == 2
    assert "cp.async.cg.shared.global" not in k.ptx


def test_a_mixed_loop_waits_for_both_kinds_of_copy(monkeypatch) -> None:  # noqa: ANN001
    # With MINITRITON_TMA_FORMS=all a loop may mix rings: A (a mask no map describes) by
    # cp.async, B by TMA; each iteration waits for the cp.async group and the barrier.
    monkeypatch.setenv("MINITRITON_TMA_FORMS", "all")
    k = _compile(mixed_matmul, MIXED_SIG)
    loop = _loop(k.ttgir)
    assert [m["base"] for m in k.tma] == [1]
    assert loop.count("ttg.async_copy_global_to_local") == 1
    assert "ttg.async_wait() {num = 1}" in loop and "ttng.wait_barrier" in loop
    assert "cp.async.cg.shared.global" in k.ptx and "cp.async.bulk.tensor.2d" in k.ptx


def test_switch_and_other_arches_keep_cp_async(monkeypatch) -> None:  # noqa: ANN001
    assert _compile(desc_matmul, DESC_SIG, arch="sm_80", warps=4).tma == []
    monkeypatch.setenv("MINITRITON_TMA", "0")
    k = _compile(desc_matmul, DESC_SIG)
    assert k.tma == [] and "ttng." not in k.ttgir.replace("ttng.warp_group_dot", "")
    assert "cp.async.bulk" not in k.ptx and "cp.async.cg" in k.ptx


def test_switch_is_part_of_the_cache_key(monkeypatch) -> None:  # noqa: ANN001
    from minitriton.backend.cache import cache_key

    on = cache_key("ir", "sm_90a", 8, 3)
    monkeypatch.setenv("MINITRITON_TMA_FORMS", "all")
    every_form = cache_key("ir", "sm_90a", 8, 3)
    monkeypatch.setenv("MINITRITON_TMA", "0")
    assert len({on, every_form, cache_key("ir", "sm_90a", 8, 3)}) == 3


def test_debug_mode_compiles_the_cp_async_path() -> None:
    from minitriton.backend.build import compile_ir_debug
    from minitriton.compiler import compile_kernel as ck

    specs = parse_signature(DESC_SIG, desc_matmul.params)
    options = CompileOptions(num_warps=8, num_stages=3, arch="sm_90a")
    module = ck(desc_matmul.source, specs, options, stop_after="ir-opt").module
    kernel, _ = compile_ir_debug(module, "sm_90a", 8, 3)
    assert kernel.tma == [] and "cp.async.bulk" not in kernel.ptx and "cp.async.cg" in kernel.ptx


def test_grid_constant_marking_touches_only_the_kernel_definition() -> None:
    text = ('define ptx_kernel void @"k"(ptr %".1", ptr %"tma_map_0") {\n'
            '  call void asm sideeffect "", "l"(ptr %"tma_map_0")\n}')  # fmt: skip
    out = mark_grid_constants(text, "k").splitlines()
    assert out[0] == ('define ptx_kernel void @"k"(ptr %".1", ptr byval([128 x i8]) align 64 '
                      '"nvvm.grid_constant" %"tma_map_0") {')  # fmt: skip
    assert out[1] == '  call void asm sideeffect "", "l"(ptr %"tma_map_0")'


class _Slot:
    def __init__(self, value: int) -> None:
        self.value = value


def test_maps_are_encoded_once_per_set_of_values(monkeypatch) -> None:  # noqa: ANN001
    calls = []

    def fake(recipe, base, dims, strides, name):  # noqa: ANN001, ANN202
        calls.append((base, dims, strides))
        return bytes([len(calls)]) * TMAP.MAP_BYTES

    monkeypatch.setattr(TMAP, "encode_tiled", fake)
    monkeypatch.setattr(TMAP, "_ENCODED", {})
    recipe = {"base": 0, "dtype": "f16", "dims": [["arg", 2], ["const", 300]],
              "strides": [["arg", 1]], "box": [64, 128], "swizzle": 128}  # fmt: skip
    maps = TMAP.TensorMaps([recipe], "k")
    slots = [_Slot(0x1000), _Slot(208), _Slot(200)]
    maps.fill(slots)
    maps.fill(slots)  # a warm launch: same values, nothing encoded
    assert calls == [(0x1000, (200, 300), (208,))]
    import ctypes

    assert ctypes.string_at(maps.addresses[0], 4) == b"\x01" * 4
    assert maps.addresses[0] % 64 == 0
    slots[0].value = 0x2000  # another tensor: a new map
    maps.fill(slots)
    assert calls[-1] == (0x2000, (200, 300), (208,))
    assert ctypes.string_at(maps.addresses[0], 4) == b"\x02" * 4
    slots[0].value = 0x1000  # back to the first: from the process cache
    maps.fill(slots)
    assert len(calls) == 2 and ctypes.string_at(maps.addresses[0], 4) == b"\x01" * 4


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize("which", ["descriptor", "block pointer"])
def test_ptxas_accepts_it(tmp_path, which: str) -> None:  # noqa: ANN001
    kernel, sig = (desc_matmul, DESC_SIG) if which == "descriptor" else (block_ptr_matmul, BP_SIG)
    k = _compile(kernel, sig)
    ptx = tmp_path / "k.ptx"
    ptx.write_text(k.ptx)
    run = subprocess.run(["ptxas", "-arch=sm_90a", "-v", str(ptx), "-o", str(tmp_path / "k.o")],
                         capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "0 bytes spill stores" in run.stderr
