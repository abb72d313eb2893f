"""``torch.compile`` on CPU tensors runs Inductor's Triton kernels on MiniTriton.

:func:`minitriton.inductor.enable` makes Inductor write Triton kernels for the
CPU and hands them to MiniTriton; ``compile_cpu_check.py`` compiles each of
its cases (pointwise math with libdevice calls, layouts, indexing, atomics,
persistent, looped and split reductions, Welford, scans, sorts, a small model)
in one child process and compares with eager torch. Each case must have gone
through at least one MiniTriton kernel, and a wrong ``sin`` must be caught.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytestmark = [pytest.mark.torch, pytest.mark.slow]

HERE = Path(__file__).resolve().parent


def _case_names() -> list[str]:
    source = (HERE / "compile_cpu_check.py").read_text()
    table = source[source.index("CASES: dict") : source.index("\n}\n")]
    return [line.split('"')[1] for line in table.splitlines() if line.startswith('    "')]


NAMES = _case_names()


def run_check(*args: str) -> dict[str, dict[str, object]]:
    """Run ``compile_cpu_check.py`` with ``args``; its row per case."""
    result = subprocess.run(
        [sys.executable, str(HERE / "compile_cpu_check.py"), *args],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    rows = {}
    for line in result.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            rows[row["case"]] = row
    assert rows, result.stderr[-3000:]
    return rows


@pytest.fixture(scope="module")
def rows() -> dict[str, dict[str, object]]:
    return run_check()


@pytest.mark.parametrize("name", NAMES)
def test_compiled_case_matches_eager(name: str, rows: dict[str, dict[str, object]]) -> None:
    row = rows[name]
    assert row["ok"], row["detail"]
    assert row["kernels"], "Inductor handed no kernel to MiniTriton: the case tests nothing"


def test_the_check_catches_a_wrong_function() -> None:
    rows = run_check("--break", "sin", "sin_mul_add", "cumsum")
    assert not rows["sin_mul_add"]["ok"]
    assert "differs by up to" in str(rows["sin_mul_add"]["detail"])
    assert rows["cumsum"]["ok"], rows["cumsum"]["detail"]


def test_enable_checks_the_backend_name() -> None:
    import minitriton.inductor

    with pytest.raises(ValueError, match="unknown backend 'cuda'"):
        minitriton.inductor.enable("cuda")
