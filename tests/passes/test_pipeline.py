"""The registry, ``run_pipeline`` (``--print-after``, ``on_ir``, verify) and snapshots."""

from __future__ import annotations

import dataclasses
import io
import pkgutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

import minitriton.passes as passes_pkg
from minitriton.diagnostics import CompileError
from minitriton.ir import Module, parse_module, print_module
from minitriton.passes import (
    DEFAULT_PIPELINE,
    PASSES,
    Pass,
    dump_dir_writer,
    get_pass,
    run_pipeline,
    snapshots,
)

KERNEL = """\
tt.func @k(%p: ptr<f32>, %x: f32) {
  %a = arith.constant() {value = 2.0} : f32
  %b = arith.constant() {value = 3.0} : f32
  %c = arith.mul(%a, %b) : f32
  %d = arith.mul(%x, %c) : f32
  %e = arith.mul(%x, %c) : f32
  %f = arith.add(%d, %e) : f32
  tt.store(%p, %f)
  tt.return()
}
"""

AFTER_PIPELINE = """\
tt.func @k(%p: ptr<f32>, %x: f32) {
  %c = arith.constant() {value = 6.0} : f32
  %d = arith.mul(%x, %c) : f32
  %f = arith.add(%d, %d) : f32
  tt.store(%p, %f)
  tt.return()
}
"""


def _module() -> Module:
    return parse_module(KERNEL)


# ---------------------------------------------------------------- registry


def test_required_passes_are_registered() -> None:
    assert {"canonicalize", "cse", "dce", "licm", "inline"} <= set(PASSES)
    for name, cls in PASSES.items():
        assert cls.name == name
        assert issubclass(cls, Pass)
        assert dataclasses.is_dataclass(cls)


def test_passes_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_pass("cse").extra = 1  # type: ignore[attr-defined]


def test_every_module_of_the_package_is_imported() -> None:
    for info in pkgutil.iter_modules(passes_pkg.__path__):
        assert f"minitriton.passes.{info.name}" in sys.modules


def test_default_pipeline_order() -> None:
    assert DEFAULT_PIPELINE == ("loop-unroll", "canonicalize", "licm", "cse", "dce")
    assert "inline" not in DEFAULT_PIPELINE


def test_unknown_pass_is_reported_with_the_known_names() -> None:
    with pytest.raises(ValueError, match="unknown pass 'nope'.*canonicalize"):
        run_pipeline(_module(), ["nope"])
    with pytest.raises(ValueError, match="unknown pass 'nope'"):
        run_pipeline(_module(), print_after=["nope"])


# ---------------------------------------------------------------- run_pipeline


def test_default_pipeline_result() -> None:
    module = run_pipeline(_module(), verify=True)
    assert print_module(module) == AFTER_PIPELINE


def test_print_after_selected_passes() -> None:
    out = io.StringIO()
    run_pipeline(_module(), print_after=["cse"], verify=True, out=out)
    text = out.getvalue()
    assert text.startswith("// -----// IR Dump After cse //----- //\n")
    assert text.count("IR Dump After") == 1
    # Printed after cse, before dce: the folded-away constants are still there.
    assert "%a = arith.constant()" in text and "%e = " not in text


def test_print_after_all() -> None:
    out = io.StringIO()
    run_pipeline(_module(), print_after="all", verify=True, out=out)
    headers = [line for line in out.getvalue().splitlines() if "IR Dump After" in line]
    assert headers == [f"// -----// IR Dump After {n} //----- //" for n in DEFAULT_PIPELINE]
    # The dump is still IR: each section parses back (comments are skipped).
    for section in out.getvalue().split("// -----//")[1:]:
        parse_module(section.split("\n", 1)[1])


def test_print_after_a_single_name_string() -> None:
    out = io.StringIO()
    run_pipeline(_module(), print_after="dce", out=out)
    assert out.getvalue().count("IR Dump After dce") == 1


def test_nothing_printed_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    run_pipeline(_module())
    assert capsys.readouterr().err == ""


def test_on_ir_sees_every_pass_in_order() -> None:
    seen: list[tuple[str, str]] = []
    module = run_pipeline(_module(), on_ir=lambda name, ir: seen.append((name, ir)))
    assert [name for name, _ in seen] == list(DEFAULT_PIPELINE)
    assert seen[-1][1] == print_module(module)
    assert "%a = arith.constant()" in seen[0][1]  # after canonicalize: not yet dce'd


def test_dump_dir_writer(tmp_path: Path) -> None:
    run_pipeline(_module(), ["cse", "dce", "cse"], on_ir=dump_dir_writer(tmp_path / "dumps"))
    files = sorted(p.name for p in (tmp_path / "dumps").iterdir())
    assert files == ["01-cse.ir", "02-dce.ir", "03-cse.ir"]
    assert (tmp_path / "dumps" / "03-cse.ir").read_text().startswith("tt.func @k")


# ---------------------------------------------------------------- verification


@dataclass(frozen=True)
class _BreakIR(Pass):
    """Deletes the producer of a used value: the verifier must object."""

    name: ClassVar[str] = "break-ir"

    def apply(self, module: Module) -> None:
        block = module.funcs[0].body.block
        block.remove(block.ops[0])


def test_verify_names_the_pass_that_broke_the_ir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PASSES, "break-ir", _BreakIR)
    with pytest.raises(CompileError, match="after pass 'break-ir'"):
        run_pipeline(_module(), ["cse", "break-ir"], verify=True)
    run_pipeline(_module(), ["break-ir"], verify=False)  # unchecked without verify


# ---------------------------------------------------------------- snapshots


def test_snapshots() -> None:
    module = _module()
    snaps = snapshots(module, verify=True)
    assert [name for name, _ in snaps] == ["input", *DEFAULT_PIPELINE]
    assert print_module(snaps[0][1]) == KERNEL
    assert print_module(snaps[-1][1]) == AFTER_PIPELINE
    assert print_module(module) == KERNEL  # the input is left alone
    # Each snapshot is an independent copy.
    snaps[0][1].funcs[0].body.block.ops.clear()
    assert print_module(snaps[1][1]) != ""
    assert print_module(module) == KERNEL
