"""``minitriton compile FILE`` reads the file's definitions without running its script work."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from minitriton.cli import main

TUTORIAL = '''
"""Like Triton's tutorials: the work runs at the top level, with no main guard."""
import pathlib

import numpy as np

import minitriton as triton
import minitriton.language as tl

BLOCK = 64
DEVICE = get_the_gpu()  # fails here: an assignment the kernel does not need


@triton.jit
def add_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


x = np.ones(100, np.float32)
print("the script ran")
pathlib.Path(__file__).with_name("ran.txt").write_text("the script ran")
for _ in range(2):
    add_kernel[(2,)](x, np.empty_like(x), 100, BLOCK_SIZE=BLOCK)
'''


def test_compile_skips_the_scripts_work(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "tutorial.py"
    path.write_text(textwrap.dedent(TUTORIAL).lstrip())
    status = main(["compile", str(path), "-s", "*fp32:16, *fp32:16, i32, 64", "--emit", "ir-opt"])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    assert out.startswith("tt.func @add_kernel(")
    assert "the script ran" not in out
    assert not (tmp_path / "ran.txt").exists()


def test_a_broken_definition_is_still_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "broken.py"
    path.write_text("import minitriton\nfrom no_such_module import thing\n")
    status = main(["compile", str(path), "--emit", "ast"])
    err = capsys.readouterr().err
    assert status == 1
    assert err.startswith(f"minitriton: error: importing {path} failed:\nTraceback")
    assert err.rstrip().endswith("ModuleNotFoundError: No module named 'no_such_module'")
