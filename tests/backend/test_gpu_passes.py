"""The GPU backend's passes: registry, pipeline, goldens, printing and dumps.

Goldens: ``goldens/gpu_passes/<pass>/<case>.ir`` is the IR of a real kernel
(tutorial 03's matmul, tutorial 06's attention, ...) just before the pass,
and ``<case>.out`` the IR after it. ``test_golden_input`` checks that the
``.ir`` is still what the earlier passes make of the kernel; ``test_golden``
parses it, runs the pass with the verifier and compares with the ``.out``.
``pytest --update-goldens`` rewrites both (review the diff).
"""

from __future__ import annotations

import importlib
import io
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import minitriton.backend.passes as gpu_passes
from minitriton.backend.passes import (
    GPU_PIPELINE,
    GpuPass,
    GpuState,
    gpu_pass_names,
    gpu_snapshots,
    run_gpu_passes,
    watching,
)
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.diagnostics import CompileError
from minitriton.ir import parse_module, print_module, verify_module
from minitriton.passes import PASSES
from minitriton.signature import kernel_params, parse_signature
from tests.kernels import inductor_reductions, persistent_matmul, tc_kernels, tma_matmul

MATMUL_SIG = ("*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, "
              "i32:1, i32:16, i32:1, 128, 128, 64, 8")  # fmt: skip
ATTN_SIG = ("*fp16:16, *fp16:16, *fp16:16, fp32, *fp32:16, *fp16:16, "
            + ", ".join(["i32:16, i32:16, i32:16, i32:1"] * 4)
            + ", i32, i32, 1024, 64, 128, 64, 3")  # fmt: skip
DESC_SIG = ("tensordesc<fp16[128, 64]>:16, tensordesc<fp16[128, 64]>:16, "
            "tensordesc<fp16[128, 128]>:16, i32:16, i32:16, i32:16, 128, 128, 64, 8")  # fmt: skip
ARGMAX_SIG = "*fp32:16, *fp32:16, *i32:16, i32:16, i32:16, 4, 64"
#: Tutorial 09's persistent descriptor matmul, its epilogue whole or in two halves.
PERSISTENT_SIG = ("tensordesc<fp16[128, 64]>:16, tensordesc<fp16[128, 64]>:16, "
                  "tensordesc<fp16[128, {n}]>:16, i32:16, i32:16, i32:16, 128, 128, 64, 8, "
                  "{subtile}, 132, False")  # fmt: skip
WS_SIG = ("tensordesc<fp16[128, 64]>:16, tensordesc<fp16[128, 64]>:16, "
          "tensordesc<fp16[128, 128]>:16, i32:16, i32:16, i32:16, 128, 128, 64, 1")  # fmt: skip

#: case -> (kernel, signature, arch)
KERNELS: dict[str, tuple[Any, str, str]] = {
    "matmul-sm90a": (tc_kernels.matmul_kernel, MATMUL_SIG, "sm_90a"),
    "matmul-sm80": (tc_kernels.matmul_kernel, MATMUL_SIG, "sm_80"),
    "attention-sm90a": (tc_kernels._attn_fwd, ATTN_SIG, "sm_90a"),
    "attention-sm80": (tc_kernels._attn_fwd, ATTN_SIG, "sm_80"),
    "descriptor-matmul-sm90a": (tc_kernels.matmul_kernel_tma, DESC_SIG, "sm_90a"),
    "argmax-sm90a": (inductor_reductions.argmax_kernel, ARGMAX_SIG, "sm_90a"),
    "persistent-sm90a-tma": (persistent_matmul.persistent_desc_matmul,
                             PERSISTENT_SIG.format(n=128, subtile=False), "sm_90a"),
    "persistent-subtile-sm90a-tma": (persistent_matmul.persistent_desc_matmul,
                                     PERSISTENT_SIG.format(n=64, subtile=True), "sm_90a"),
    "ws-descriptor-matmul-sm90a": (tma_matmul.ws_desc_matmul, WS_SIG, "sm_90a"),
}  # fmt: skip
#: The cases compiled with TMA copies, TMA stores and warp specialization allowed
#: (``MINITRITON_TMA_STORES=1``, ``MINITRITON_WARP_SPECIALIZE=1``).
TMA_CASES = {"persistent-sm90a-tma", "persistent-subtile-sm90a-tma", "ws-descriptor-matmul-sm90a"}
#: pass -> the cases its goldens cover (each one a kernel the pass changes)
GOLDEN_CASES: dict[str, list[str]] = {
    "inline-calls": ["attention-sm90a", "argmax-sm90a"],
    "scalar-combiners": ["argmax-sm90a"],
    "sink-transposes": ["descriptor-matmul-sm90a"],
    "software-pipeline": ["matmul-sm90a", "matmul-sm80", "attention-sm90a", "attention-sm80"],
    "tma-stores": ["persistent-sm90a-tma", "persistent-subtile-sm90a-tma"],
    "warp-specialize": ["ws-descriptor-matmul-sm90a"],
    "assign-layouts": ["matmul-sm90a", "matmul-sm80", "attention-sm80"],
}
PAIRS = [(name, case) for name, cases in GOLDEN_CASES.items() for case in cases]


def _optimized(case: str) -> Any:
    kernel, sig, arch = KERNELS[case]
    specs = parse_signature(sig, kernel_params(kernel.fn))
    return compile_kernel(
        kernel.source, specs, CompileOptions(arch=arch), stop_after="ir-opt"
    ).module


def _state(module: Any, case: str) -> GpuState:
    tma = case in TMA_CASES
    return GpuState(module, num_warps=4, arch=KERNELS[case][2], num_stages=3,
                    tma=tma, tma_stores=tma)  # fmt: skip


@pytest.fixture(autouse=True)
def _warp_specialize(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINITRITON_WARP_SPECIALIZE", "1")
    monkeypatch.delenv("MINITRITON_TMA", raising=False)
    monkeypatch.delenv("MINITRITON_TMA_FORMS", raising=False)


# ------------------------------------------------------------------ registry


def test_every_gpu_pass_is_registered_in_order() -> None:
    assert gpu_pass_names() == list(GPU_PIPELINE)
    for name in GPU_PIPELINE:
        cls = PASSES[name]
        assert issubclass(cls, GpuPass) and cls.stage == "gpu"
        assert cls.__module__.startswith("minitriton.backend.passes.")
    assert {n for n, c in PASSES.items() if c.stage == "ir"} >= {"canonicalize", "cse", "dce"}


def test_no_two_pass_modules_share_a_name() -> None:
    ir = {
        i.name for i in pkgutil.iter_modules(importlib.import_module("minitriton.passes").__path__)
    }
    gpu = {i.name for i in pkgutil.iter_modules(gpu_passes.__path__)}
    assert ir & gpu == set()
    assert importlib.util.find_spec("minitriton.backend.pipeline") is None


def test_every_gpu_pass_has_goldens() -> None:
    assert set(GOLDEN_CASES) == set(GPU_PIPELINE)


def test_run_gpu_passes_rejects_an_ir_pass() -> None:
    with pytest.raises(ValueError, match="'cse' is not a GPU pass"):
        run_gpu_passes(GpuState(parse_module("tt.func @k() {\n  tt.return()\n}\n")), ["cse"])


# ------------------------------------------------------------------ goldens


@pytest.mark.parametrize(("name", "case"), PAIRS, ids=[f"{n}/{c}" for n, c in PAIRS])
def test_golden_input(name: str, case: str, golden: Callable[[str, str], None]) -> None:
    """The ``.ir`` is what the passes before ``name`` make of the kernel."""
    tma = case in TMA_CASES
    snapshots = dict(gpu_snapshots(_optimized(case), arch=KERNELS[case][2], tma=tma,
                                   tma_stores=tma))  # fmt: skip
    before = list(snapshots)[list(snapshots).index(name) - 1]
    golden(snapshots[before], f"gpu_passes/{name}/{case}.ir")


@pytest.mark.parametrize(("name", "case"), PAIRS, ids=[f"{n}/{c}" for n, c in PAIRS])
def test_golden(name: str, case: str, golden: Callable[[str, str], None]) -> None:
    path = Path(__file__).parent / "goldens" / "gpu_passes" / name / f"{case}.ir"
    text = path.read_text(encoding="utf-8")
    module = parse_module(text, str(path))
    verify_module(module)
    run_gpu_passes(_state(module, case), [name], verify=True)
    after = print_module(module)
    assert after != text, f"{name} left {case} unchanged: choose a case it rewrites"
    golden(after, f"gpu_passes/{name}/{case}.out")


def test_software_pipeline_makes_rings_and_assign_layouts_annotates() -> None:
    snapshots = dict(gpu_snapshots(_optimized("matmul-sm80"), arch="sm_80"))
    assert "ttg.async_copy" not in snapshots["sink-transposes"]
    assert "ttg.async_copy_global_to_local" in snapshots["software-pipeline"]
    assert "layout = " not in snapshots["software-pipeline"]
    assert 'layout = "nvidia_mma<' in snapshots["assign-layouts"]


def test_arch_conditions_skip_passes() -> None:
    module = _optimized("matmul-sm80")
    names = [n for n, _ in gpu_snapshots(module, arch="sm_75")]
    assert names == ["input", "inline-calls", "scalar-combiners", "assign-layouts"]
    names = [n for n, _ in gpu_snapshots(module, arch="sm_80", num_stages=1)]
    assert "software-pipeline" not in names and "sink-transposes" in names


def test_the_verifier_names_the_gpu_pass_that_broke_the_ir(monkeypatch) -> None:  # noqa: ANN001
    def broken(self: Any, state: GpuState) -> None:
        state.kernel.body.block.ops.pop()  # drop tt.return: no terminator

    monkeypatch.setattr(PASSES["scalar-combiners"], "run", broken)
    module = _optimized("matmul-sm80")
    with pytest.raises(CompileError, match="after pass 'scalar-combiners'"):
        run_gpu_passes(GpuState(module, arch="sm_80"), verify=True)


# ------------------------------------------------------------------ watching


def test_watching_prints_the_named_passes_and_hands_on_every_one() -> None:
    module = _optimized("matmul-sm90a")
    out = io.StringIO()
    seen: list[str] = []
    with watching(["software-pipeline", "cse"], lambda n, _: seen.append(n), out=out):
        run_gpu_passes(GpuState(module, arch="sm_90a", tma=True, tma_stores=True))
    assert seen == list(GPU_PIPELINE)
    text = out.getvalue()
    assert text.count("// -----// IR Dump After") == 1
    assert text.startswith("// -----// IR Dump After software-pipeline //----- //\n")
    assert "ttng.warp_group_dot" in text


def test_dump_dir_has_one_file_per_gpu_pass(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("MINITRITON_DUMP_DIR", str(tmp_path))
    kernel, sig, arch = KERNELS["attention-sm80"]
    specs = parse_signature(sig, kernel_params(kernel.fn))
    compile_kernel(kernel.source, specs, CompileOptions(arch=arch), stop_after="ptx")
    (folder,) = tmp_path.iterdir()
    files = sorted(p.name for p in folder.iterdir())
    stages = [f.split("-", 1)[1].removesuffix(".txt") for f in files]
    gpu = [f"after-{n}" for n in GPU_PIPELINE if n != "tma-stores"]  # sm_80 has no TMA
    assert stages[stages.index("ir-opt") + 1 :] == [*gpu, "ttgir", "llir", "ptx"]
    last = (folder / files[stages.index("after-assign-layouts")]).read_text()
    assert last == (folder / files[stages.index("ttgir")]).read_text()
