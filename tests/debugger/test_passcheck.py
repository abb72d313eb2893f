"""The pass checker: real kernels agree after every pass; a broken pass is found."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from minitriton.emulator import check_passes
from minitriton.emulator.debug.passcheck import PassChecker
from minitriton.emulator.debug.tools import using
from minitriton.ir.ops import Module
from minitriton.ir.types import element_type
from minitriton.passes.base import PASSES, Pass, register_pass
from tests.debugger.debug_kernels import run_scale, sum_rows_kernel
from tests.kernels.fused_softmax import softmax_kernel
from tests.kernels.vector_add import add_kernel


@dataclass(frozen=True)
class AddToItself(Pass):
    """A deliberately wrong pass: ``a + b`` on floats becomes ``a + a`` (a bad value merge)."""

    name: ClassVar[str] = "test-add-to-itself"

    def apply(self, module: Module) -> None:
        for op in module.walk():
            if op.name == "arith.add" and element_type(op.results[0].type).is_float():
                op.operands[1] = op.operands[0]


@pytest.fixture
def broken_pass() -> Iterator[str]:
    register_pass(AddToItself)
    yield AddToItself.name
    PASSES.pop(AddToItself.name)


def test_kernels_agree_after_every_pass() -> None:
    x = np.arange(100, dtype=np.float32)
    report = check_passes(add_kernel, (4,), x, x, np.empty_like(x), 100, BLOCK_SIZE=32)
    assert report.ok, report
    assert (
        str(report) == "add_kernel: the results agree after every pass "
        "(loop-unroll, canonicalize, licm, cse, dce)"
    )
    rows = np.random.default_rng(0).standard_normal((5, 10)).astype(np.float32)
    report = check_passes(softmax_kernel, (3,), np.empty_like(rows), rows, 10, 10, 5, 10, 16, 2)
    assert report.ok, report
    report = check_passes(sum_rows_kernel, (5,), rows, np.zeros(5, np.float32), 10, BLOCK=4)
    assert report.ok, report


def test_broken_pass_is_reported(broken_pass: str) -> None:
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    report = check_passes(add_kernel, (2,), x, 2 * x, out, 8, BLOCK_SIZE=4,
                          passes=["canonicalize", broken_pass, "dce"])  # fmt: skip
    assert not report.ok
    assert report.bad_pass == broken_pass
    text = str(report)
    assert text.startswith(f"add_kernel: pass '{broken_pass}' changes the kernel's results")
    assert "'output_ptr': 8 of 8 elements differ: [0] 0.0 -> 0.0" not in text
    assert "'output_ptr': 7 of 8 elements differ: [1] 3.0 -> 2.0, [2] 6.0 -> 4.0" in text
    assert "-  %output = arith.add(%x, %y) : tensor<4xf32>" in text
    assert "+  %output = arith.add(%x, %x) : tensor<4xf32>" in text
    assert not out.any()  # check_passes launches nothing for real


def test_pass_checker_tool_on_every_launch(broken_pass: str) -> None:
    checker = PassChecker(["canonicalize", broken_pass])
    with using(checker):
        out = run_scale(10, 4)
    assert out[1] == 3.0  # the real launch ran normally
    assert len(checker.reports) == 1
    launch, report = checker.reports[0]
    assert launch.name == "scale_kernel" and report.bad_pass == broken_pass


def test_cli_reports_the_broken_pass(
    broken_pass: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    from minitriton.cli import main

    monkeypatch.setattr("sys.argv", list(__import__("sys").argv))
    script = str(Path(__file__).with_name("debug_kernels.py"))
    assert main(["check-passes", script]) == 0
    assert "scale_kernel: the results agree after every pass" in capsys.readouterr().out
    assert main(["check-passes", script, "--passes", f"canonicalize,{broken_pass}"]) == 1
    out = capsys.readouterr().out
    assert f"launch 1 (scale_kernel, grid (3, 1, 1)): scale_kernel: pass '{broken_pass}'" in out


# ---------------------------------------------------------------- the GPU passes


def test_gpu_passes_are_checked_while_the_emulator_can_run_them() -> None:
    x = np.arange(100, dtype=np.float32)
    report = check_passes(add_kernel, (4,), x, x, np.empty_like(x), 100, BLOCK_SIZE=32, gpu=True)
    assert report.ok, report
    assert str(report) == (
        "add_kernel: the results agree after every pass (loop-unroll, canonicalize, licm, "
        "cse, dce, "
        "inline-calls, scalar-combiners, sink-transposes, software-pipeline, warp-specialize, "
        "tma-stores, "
        "assign-layouts)"
    )


def test_gpu_only_ir_is_reported_not_emulated() -> None:
    from tests.kernels.tc_kernels import matmul_kernel

    a, b = np.ones((128, 64), np.float16), np.ones((64, 128), np.float16)
    c = np.zeros((128, 128), np.float16)
    report = check_passes(matmul_kernel, (1,), a, b, c, 128, 128, 64, 64, 1, 128, 1, 128, 1,
                          BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8,
                          gpu=True)  # fmt: skip
    assert report.ok, report
    lines = str(report).splitlines()
    assert lines[0].endswith("(loop-unroll, canonicalize, licm, cse, dce, inline-calls, "
                             "scalar-combiners, sink-transposes)")  # fmt: skip
    assert lines[1].startswith("  pass software-pipeline: IR has GPU-only ops (ttg.async_comm")
    assert lines[1].endswith(", ...), not emulated")
    assert lines[2].startswith("  pass warp-specialize: IR has GPU-only ops")
    assert lines[3].startswith("  pass tma-stores: IR has GPU-only ops")
    assert lines[4].startswith("  pass assign-layouts: IR has GPU-only ops")


def test_a_broken_gpu_pass_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    def add_to_itself(self: Pass, state: object) -> None:
        AddToItself().apply(state.module)  # type: ignore[attr-defined]

    import minitriton.backend.passes  # noqa: F401 - registers the GPU passes

    monkeypatch.setattr(PASSES["scalar-combiners"], "run", add_to_itself)
    x = np.arange(8, dtype=np.float32)
    report = check_passes(add_kernel, (2,), x, 2 * x, np.zeros(8, np.float32), 8, BLOCK_SIZE=4,
                          gpu=True)  # fmt: skip
    assert not report.ok and report.bad_pass == "scalar-combiners"
    assert "pass 'scalar-combiners' changes the kernel's results" in str(report)


@dataclass(frozen=True)
class RoundingAddToItself(AddToItself):
    """The wrong pass again, but claiming it only rounds differently: still reported."""

    name: ClassVar[str] = "test-rounding-add-to-itself"
    rounding: ClassVar[str] = "it says so"


def test_a_dot_add_rounded_once_is_accepted_and_said() -> None:
    # canonicalize moves `acc + dot(a, b)` into the dot's accumulator (Triton's rule):
    # one rounding fewer, so float results may move by rounding, and the report says so
    from tests.kernels.tc_kernels import matmul_kernel

    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 96)).astype(np.float16)
    b = rng.standard_normal((96, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float32)
    report = check_passes(matmul_kernel, (1,), a, b, c, 64, 64, 96, 96, 1, 64, 1, 64, 1,
                          BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, GROUP_SIZE_M=1,
                          PLUS_EQUALS=True)  # fmt: skip
    assert report.ok, report
    assert report.rounded == [
        "pass canonicalize: float results round differently "
        "(it moves additions into tl.dot's accumulator, as Triton does)"
    ]
    assert str(report).splitlines()[1].strip() == report.rounded[0]


def test_a_pass_that_claims_rounding_but_changes_values_is_reported() -> None:
    register_pass(RoundingAddToItself)
    try:
        x = np.arange(8, dtype=np.float32)
        passes = ["canonicalize", RoundingAddToItself.name]
        out = np.zeros(8, np.float32)
        report = check_passes(add_kernel, (2,), x, 2 * x, out, 8, BLOCK_SIZE=4, passes=passes)
    finally:
        PASSES.pop(RoundingAddToItself.name)
    assert not report.ok and report.bad_pass == RoundingAddToItself.name
    assert report.rounded == []
