"""An uncaught kernel error in a plain ``python script.py`` run shows the
user's call site and the located diagnostic, never MiniTriton's own frames."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """\
    import numpy as np
    import minitriton as triton
    import minitriton.language as tl


    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs{mask})
        tl.store(x_ptr + offs, x {op} 2.0, mask=offs < n)


    x = np.ones(100, np.float32)
    k[(1,)](x, 100, BLOCK=128, backend="emulator")
    """
)


def run_script(tmp_path: Path, mask: str, op: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT.format(mask=mask, op=op))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True)


def test_compile_error_prints_only_user_frames(tmp_path: Path) -> None:
    done = run_script(tmp_path, ", mask=offs < n", "//")
    script = tmp_path / "user_script.py"
    assert done.returncode == 1
    assert done.stderr == (
        "Traceback (most recent call last):\n"
        f'  File "{script}", line 14, in <module>\n'
        '    k[(1,)](x, 100, BLOCK=128, backend="emulator")\n'
        f"minitriton.diagnostics.CompileError: {script}:10:28: error: floor division '//'"
        " is not supported on floating-point values (fp32 // fp32)\n"
        "        tl.store(x_ptr + offs, x // 2.0, mask=offs < n)\n"
        "                               ^\n"
    )


def test_emulator_error_prints_only_user_frames(tmp_path: Path) -> None:
    done = run_script(tmp_path, "", "*")
    assert done.returncode == 1
    assert "minitriton/" not in done.stderr.replace(str(tmp_path), "")
    assert "jit.py" not in done.stderr
    assert "user_script.py:9:9: error: out-of-bounds tt.load from 'x_ptr'" in done.stderr
    assert "in program (0, 0, 0)" in done.stderr


def test_other_exceptions_keep_the_normal_traceback(tmp_path: Path) -> None:
    script = tmp_path / "plain.py"
    script.write_text("import minitriton\n\ndef f():\n    raise ValueError('plain')\n\nf()\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert done.returncode == 1
    assert "line 4, in f\n    raise ValueError" in done.stderr
    assert done.stderr.endswith("ValueError: plain\n")


def test_every_runner_prints_a_system_exit_message(tmp_path: Path) -> None:
    """`minitriton run` and the tools that run scripts treat SystemExit("msg") as Python does."""
    script = tmp_path / "bye.py"
    script.write_text('raise SystemExit("bye now")\n')
    for command in (["run"], ["trace", "--out", str(tmp_path / "trace")]):
        done = subprocess.run(
            [sys.executable, "-m", "minitriton", command[0], str(script), *command[1:]],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 1, command
        assert "bye now" in done.stderr, command
