"""Scripts written for Triton run unchanged through ``python -m minitriton.compat``.

Triton's own tutorials are not part of this repository; point
``MINITRITON_TRITON_TUTORIALS`` at a checkout's ``python/tutorials`` folder to
run them here too (the docs list each tutorial's result).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from minitriton.compat import alias_triton, main, run_script

SCRIPTS = Path(__file__).parent / "triton_scripts"
TUTORIALS = os.environ.get("MINITRITON_TRITON_TUTORIALS", "")

pytest.importorskip("torch")


def test_a_triton_script_runs_unchanged() -> None:
    result = run_script(SCRIPTS / "host_api_script.py", timeout=300)
    assert result.passed, result.tail
    assert "scaled-tanh: running 1 of 2 points" in result.tail
    assert "✅ done" in result.tail


def test_a_printed_failed_check_fails_the_script() -> None:
    result = run_script(SCRIPTS / "failing_check_script.py", timeout=120)
    assert result.returncode == 0
    assert not result.passed


def test_the_command_line_reports_each_script(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(SCRIPTS / "failing_check_script.py")]) == 1
    out = capsys.readouterr().out
    assert "failing_check_script.py" in out and "FAIL" in out
    assert out.strip().endswith("0 passed, 1 failed")


def _triton_modules() -> dict[str, object]:
    return {n: m for n, m in sys.modules.items() if n == "triton" or n.startswith("triton.")}


def test_alias_makes_triton_modules_minitriton() -> None:
    import minitriton
    import minitriton.language.extra.cuda.libdevice as libdevice

    saved = _triton_modules()
    try:
        alias_triton()
        import triton
        import triton.testing
        from triton.language.extra.cuda import libdevice as aliased

        assert triton is minitriton and aliased is libdevice
        # A module alias_triton did not import is still one module under both names.
        assert sys.modules["triton.testing"] is sys.modules["minitriton.testing"]
        assert triton.testing.get_dram_gbps is minitriton.testing.get_dram_gbps
    finally:
        for name in _triton_modules():
            del sys.modules[name]
        sys.modules.update(saved)


@pytest.mark.skipif(not TUTORIALS, reason="MINITRITON_TRITON_TUTORIALS is not set")
@pytest.mark.parametrize("name", sorted(p.name for p in Path(TUTORIALS or ".").glob("0[1-9]-*.py")))
def test_triton_tutorial(name: str) -> None:
    result = run_script(Path(TUTORIALS) / name)
    assert result.passed, result.tail
