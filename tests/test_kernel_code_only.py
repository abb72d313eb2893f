"""Kernels run only kernel code, and Python functions of constants as Triton does.

``minitriton compile`` runs only the kernel's module, not its ``__main__`` block.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from minitriton.cli import main

SCRIPT = textwrap.dedent(
    """\
    import os
    import minitriton as triton
    import minitriton.language as tl

    print("imported")
    MARK = {mark!r}


    def helper(n):
        open(MARK, "w").close()
        return n


    def twice(n):
        return n * 2


    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        {call}
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1, mask=offs < n)


    if __name__ == "__main__":
        open(MARK + ".main", "w").close()
    """
)


def compile_script(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], call: str
) -> tuple[int, str, str, Path]:
    mark = tmp_path / "ran"
    script = tmp_path / "user_kernel.py"
    script.write_text(SCRIPT.format(mark=str(mark), call=call))
    status = main(["compile", str(script), "--signature", "*fp32, i32, 16", "--emit", "ir"])
    out, err = capsys.readouterr()
    return status, out, err, mark


@pytest.mark.parametrize(
    ("call", "shown"),
    [
        ('os.system("true")', "the Python function 'system'"),
        ("open(MARK)", None),
    ],
)
def test_a_kernel_cannot_call_python_functions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], call: str, shown: str | None
) -> None:
    status, out, err, mark = compile_script(tmp_path, capsys, call)
    assert status == 1
    assert "error: " in err and out == ""
    if shown is not None:
        assert f"a kernel cannot call {shown}" in err
        assert "help: decorate it with @triton.jit" in err
    assert not mark.exists()


def test_a_python_function_of_constants_runs_at_compile_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As in Triton: TorchInductor's kernels compute constexprs with Python helpers.
    status, out, err, mark = compile_script(tmp_path, capsys, "N: tl.constexpr = helper(3)")
    assert status == 0, err
    assert mark.exists()


def test_a_python_function_may_pass_run_time_values_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As in Triton, the function is called with the run-time value as it is.
    status, out, err, mark = compile_script(tmp_path, capsys, "m = helper(n) + 1")
    assert status == 0, err
    assert mark.exists() and "arith.add" in out


def test_a_python_function_that_computes_with_run_time_values_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err, mark = compile_script(tmp_path, capsys, "m = twice(n)")
    assert status == 1
    assert "the Python function 'twice' runs at compile time" in err
    assert "argument 1 ('n') is a run-time i32" in err
    assert "help: decorate 'twice' with @triton.jit" in err


def test_compile_does_not_run_main_and_keeps_prints_out_of_emit_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err, mark = compile_script(tmp_path, capsys, "pass")
    assert status == 0
    assert out.startswith("tt.func @k(")
    # compile runs the script's imports, definitions and assignments only: its
    # top-level print is not run, so nothing of it can mix with the IR.
    assert "imported" not in out and "imported" not in err
    assert not Path(str(mark) + ".main").exists()


@pytest.mark.parametrize("call", ["x = (3).bit_length()", "x = triton.cdiv(n, 4)", "x = min(3, 4)"])
def test_allowed_calls_still_compile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], call: str
) -> None:
    status, out, err, _ = compile_script(tmp_path, capsys, call)
    assert status == 0, err
