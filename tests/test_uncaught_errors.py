"""Uncaught kernel errors: ``minitriton run`` prints the located diagnostic
alone, and a script that installs the hook shows the user's call site and the
diagnostic, never MiniTriton's own frames. ``import minitriton`` leaves the
interpreter's hook alone."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

# ``{hook}`` stays on the first line so the line numbers below do not move.
HOOK = "import minitriton.diagnostics as d; d.install_excepthook(); "

SCRIPT = textwrap.dedent(
    """\
    {hook}import numpy as np
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


def run_script(
    tmp_path: Path, mask: str, op: str, hook: str = HOOK, cli: bool = False
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT.format(mask=mask, op=op, hook=hook))
    command = [sys.executable, *(["-m", "minitriton", "run"] if cli else []), str(script)]
    return subprocess.run(command, capture_output=True, text=True)


def test_import_minitriton_installs_no_excepthook() -> None:
    code = "import sys, minitriton; print(sys.excepthook is sys.__excepthook__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout == "True\n", done.stderr


def test_the_cli_installs_the_excepthook() -> None:
    from minitriton import cli, diagnostics

    before = sys.excepthook
    try:
        sys.excepthook = sys.__excepthook__
        cli.main([])  # no subcommand: prints the help
        assert sys.excepthook is diagnostics.excepthook
    finally:
        sys.excepthook = before


def test_minitriton_run_prints_the_diagnostic_alone(tmp_path: Path) -> None:
    done = run_script(tmp_path, ", mask=offs < n", "//", hook="", cli=True)
    script = tmp_path / "user_script.py"
    assert done.returncode == 1
    assert done.stderr.startswith(f"{script}:10:28: error: floor division '//'")
    assert "Traceback" not in done.stderr


def test_without_the_hook_the_message_is_still_the_diagnostic(tmp_path: Path) -> None:
    done = run_script(tmp_path, ", mask=offs < n", "//", hook="")
    assert done.returncode == 1
    assert "Traceback (most recent call last):" in done.stderr
    assert "minitriton.diagnostics.CompileError: " in done.stderr
    assert done.stderr.endswith("x // 2.0, mask=offs < n)\n                               ^\n")


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


def test_every_user_facing_error_is_a_user_error() -> None:
    from minitriton.cli import CliError
    from minitriton.diagnostics import CompileError, UserError
    from minitriton.emulator.budget import KernelInterrupt
    from minitriton.emulator.debug.checks import CheckError
    from minitriton.emulator.debug.debug_expr import ExprError
    from minitriton.emulator.errors import EmulatorError
    from minitriton.jit import is_user_error
    from minitriton.launch_checks import LaunchError, LaunchTypeError

    kinds = [CompileError, EmulatorError, CheckError, LaunchError, LaunchTypeError]
    kinds += [CliError, ExprError]
    for kind in kinds:
        assert issubclass(kind, UserError) and issubclass(kind, Exception), kind
    # A Ctrl-C in a kernel is a user error that `except Exception` does not catch.
    assert issubclass(KernelInterrupt, UserError) and not issubclass(KernelInterrupt, Exception)
    assert is_user_error(LaunchError("bad grid"))
    assert not is_user_error(ValueError("internal"))
    assert not is_user_error(KeyError("EmulatorError"))
