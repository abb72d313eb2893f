"""The PTX code path without a GPU: every kernel lowers, assembles, and looks right.

Each ``tests/backend/kernels/*.ir`` file is compiled for sm_90 and sm_80 and,
when ``ptxas`` is available, assembled. Further tests check properties of the
generated code: vectorized and predicated memory accesses, layouts shown in
the ``ttgir`` dump, ``.loc`` line info, inlined helpers, reductions through
shuffles, and located errors.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from minitriton.backend import compile_to_ptx
from minitriton.backend.build import compile_ir
from minitriton.diagnostics import CompileError
from minitriton.ir.parser import parse_module

KERNELS = Path(__file__).resolve().parent / "kernels"
ALL = sorted(p.stem for p in KERNELS.glob("*.ir"))
PTXAS = shutil.which("ptxas")


def load(name: str, text: str | None = None):
    path = KERNELS / f"{name}.ir"
    return parse_module(text if text is not None else path.read_text(), str(path))


def warps(name: str) -> int:
    m = re.search(r"//\s*num_warps:\s*(\d+)", (KERNELS / f"{name}.ir").read_text())
    return int(m.group(1)) if m else 4


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
@pytest.mark.parametrize("name", ALL)
def test_kernel_lowers_and_assembles(name, arch, tmp_path):
    k = compile_ir(load(name), arch, warps(name))
    assert f".target {arch}" in k.ptx
    assert f".entry {k.name}(" in k.ptx
    assert f".maxntid {32 * warps(name)}" in k.ptx
    if PTXAS is None:
        pytest.skip("ptxas not found")
    ptx = tmp_path / f"{name}.ptx"
    ptx.write_text(k.ptx)
    proc = subprocess.run(
        [PTXAS, f"-arch={arch}", str(ptx), "-o", str(tmp_path / "out.cubin")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_all_op_kinds_are_covered():
    from minitriton.ir.core import OP_REGISTRY

    used = set()
    for name in ALL:
        used |= {op.name for op in load(name).walk()}
    # ttg./ttng. ops are made by the backend itself (layouts, pipelining), never written.
    expected = {n for n in OP_REGISTRY if not n.startswith(("ttg.", "ttng."))}
    missing = sorted(
        n
        for n in expected
        if n not in used
        and not n.startswith("math.")
        or n in ("math.fma", "math.div_rn", "math.pow", "math.abs")
        and n not in used
    )
    assert not missing, f"no test kernel uses {missing}"


def test_elementwise_ir_is_up_to_date():
    spec = importlib.util.spec_from_file_location("cases", KERNELS / "elementwise_cases.py")
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    assert (KERNELS / "elementwise.ir").read_text() == cases.build_ir()


def test_vector_add_is_vectorized_and_predicated():
    ptx = compile_ir(load("vector_add")).ptx
    # 1024 elements, 128 threads: two 16-byte accesses per thread and operand.
    assert len(re.findall(r"@%p\d+ ld\.global\.v4\.b32", ptx)) == 4
    assert len(re.findall(r"@%p\d+ st\.global\.v4\.b32", ptx)) == 2
    assert "ld.global.b32" not in ptx


def test_a_loads_other_is_the_start_value_of_its_predicated_words():
    # other=1.5: the words move it in before the predicated load; nothing selects after.
    text = (
        (KERNELS / "vector_add.ir")
        .read_text()
        .replace(
            "%x = tt.load(%4, %mask)",
            "%o = arith.constant() {value = 1.5} : tensor<1024xf32>\n  %x = tt.load(%4, %mask, %o)",
        )
    )
    ptx = compile_ir(load("vector_add", text)).ptx
    assert "selp" not in ptx
    assert str(0x3FC00000) in ptx  # the bits of 1.5, moved into a register
    loads = re.findall(r"((?:mov\.b32 %r\d+, [^;]+;\s*)+)@%p\d+ ld\.global\.v4\.b32", ptx)
    assert len(loads) == 4
    assert all(block.count("mov.b32") == 4 for block in loads)


def test_without_divisibility_masked_accesses_are_scalar():
    text = (
        (KERNELS / "vector_add.ir")
        .read_text()
        .replace("%n_elements: i32 {divisibility = 16}", "%n_elements: i32")
    )
    ptx = compile_ir(load("vector_add", text)).ptx
    assert "v4" not in ptx
    assert len(re.findall(r"@%p\d+ ld\.global\.b32", ptx)) == 16


def test_unmasked_loads_use_llvm_vectors():
    ptx = compile_ir(load("matmul")).ptx
    assert re.search(r"\tld\.global\.v4\.b32", ptx)  # plain, not predicated


def test_f16_uses_8_wide_accesses():
    ptx = compile_ir(load("trans_reshape")).ptx
    assert re.search(r"ld\.global\.v4\.b32", ptx)  # 8 x f16 = 16 bytes


def test_layouts_are_visible_in_ttgir():
    k = compile_ir(load("vector_add"))
    assert 'layout = "blocked<spt=[4], tpw=[32], wpc=[4], order=[0]>"' in k.ttgir
    k = compile_ir(load("reduce2d"))
    assert (
        'layout = "slice<dim=1, parent=blocked<spt=[1, 4], tpw=[4, 8], wpc=[4, 1], order=[1, 0]>>"'
        in k.ttgir
    )


@pytest.mark.parametrize("name", ["vector_add", "softmax", "layer_norm", "matmul"])
def test_no_layout_conversions_in_tutorial_kernels(name):
    assert "ttg.convert_layout" not in compile_ir(load(name), num_warps=warps(name)).ttgir


def test_loc_line_info_points_at_the_source():
    ptx = compile_ir(load("vector_add")).ptx
    assert re.search(r'\.file\s+1 ".*vector_add\.ir"', ptx)
    lines = (KERNELS / "vector_add.ir").read_text().splitlines()
    load_line = next(i + 1 for i, ln in enumerate(lines) if "%x = tt.load" in ln)
    assert re.search(rf"\.loc\s+1 {load_line} \d+", ptx)


def test_reduction_uses_shuffles_and_shared_memory():
    k = compile_ir(load("softmax"), num_warps=16)
    assert "shfl.sync.bfly.b32" in k.ptx
    assert "bar.sync" in k.ptx and k.shared > 0


def test_helpers_are_inlined():
    k = compile_ir(load("control"))
    assert "tt.call" not in k.ttgir
    assert "call" not in k.ptx.replace("call.uni", "")


def test_print_and_assert_use_cuda_system_calls():
    ptx = compile_ir(load("print_assert")).ptx
    assert "vprintf" in ptx and "__assertfail" in ptx


def test_atomics_carry_their_semantics():
    ptx = compile_ir(load("atomics")).ptx
    assert "atom.global.gpu.relaxed.add.u32" in ptx  # Triton's order: scope, then semantics
    assert "atom.global.acquire.gpu.cas.b32" in ptx  # but for cas: semantics, then scope
    assert "atom.global.gpu.release.exch.b32" in ptx
    assert "atom.global.gpu.acq_rel.max.s32" in ptx  # float max, positive half


def test_compile_to_ptx_returns_llir_and_ptx():
    llir, ptx = compile_to_ptx(load("vector_add"), "sm_90", 4)
    assert "define ptx_kernel void @add_kernel" in llir
    assert ".visible .entry add_kernel" in ptx


def test_unsupported_arch_and_warps():
    with pytest.raises(ValueError):
        compile_ir(load("vector_add"), "sm_70")
    with pytest.raises(ValueError):
        compile_ir(load("vector_add"), "sm_90", 3)


def test_invalid_ir_is_a_located_error():
    text = (
        (KERNELS / "vector_add.ir")
        .read_text()
        .replace(
            "%output = arith.add(%x, %y) : tensor<1024xf32>",
            "%output = arith.add(%x, %mask) : tensor<1024xf32>",
        )
    )
    with pytest.raises(CompileError) as err:
        compile_ir(load("vector_add", text))
    assert "vector_add.ir:" in str(err.value)
