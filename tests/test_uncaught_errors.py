"""Uncaught kernel errors: ``minitriton run`` prints the located diagnostic
alone, and a plain ``python script.py`` (``import minitriton`` installs a hook
for user errors only) shows the user's call site and the diagnostic, never
MiniTriton's own frames; ``MINITRITON_TRACEBACK=1`` shows them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.diagnostics import TRACEBACK_ENV, UserError
from minitriton.launch_checks import LaunchTypeError

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
    tmp_path: Path, mask: str, op: str, hook: str = HOOK, cli: bool = False, full: bool = False
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT.format(mask=mask, op=op, hook=hook))
    command = [sys.executable, *(["-m", "minitriton", "run"] if cli else []), str(script)]
    env = {k: v for k, v in os.environ.items() if k != TRACEBACK_ENV}
    if full:
        env[TRACEBACK_ENV] = "1"
    return subprocess.run(command, capture_output=True, text=True, env=env)


def our_lines(stderr: str, tmp_path: Path) -> list[str]:
    """The lines of ``stderr`` that name MiniTriton's own files."""
    text = stderr.replace(str(tmp_path), "<tmp>")
    return [line for line in text.splitlines() if "minitriton/" in line or "emulator/" in line]


def test_import_minitriton_installs_a_hook_for_user_errors_only() -> None:
    code = (
        "import sys; before = sys.excepthook; import minitriton.diagnostics as d, minitriton; "
        "print(sys.excepthook is d.excepthook, d._previous_hook is before)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout == "True True\n", done.stderr


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


def test_a_plain_script_shows_no_frames_of_ours(tmp_path: Path) -> None:
    done = run_script(tmp_path, ", mask=offs < n", "//", hook="")
    assert done.returncode == 1
    assert "Traceback (most recent call last):" in done.stderr
    assert 'user_script.py", line 14, in <module>' in done.stderr
    assert "minitriton.diagnostics.CompileError: " in done.stderr
    assert our_lines(done.stderr, tmp_path) == []
    assert done.stderr.endswith(
        "x // 2.0, mask=offs < n)\n                               ^ at 4:27: in k\n"
    )


@pytest.mark.parametrize(("mask", "op"), [(", mask=offs < n", "//"), ("", "*")])
def test_minitriton_traceback_shows_our_frames(tmp_path: Path, mask: str, op: str) -> None:
    """A compile error and an emulator error alike: the full traceback, then the diagnostic."""
    short = run_script(tmp_path, mask, op, hook="")
    full = run_script(tmp_path, mask, op, hook="", full=True)
    assert full.returncode == short.returncode == 1
    assert our_lines(short.stderr, tmp_path) == []
    assert any("minitriton/jit.py" in line for line in our_lines(full.stderr, tmp_path))
    assert 'user_script.py", line 14, in <module>' in full.stderr
    assert short.stderr.splitlines()[-3:] == full.stderr.splitlines()[-3:]


def test_minitriton_run_honours_minitriton_traceback(tmp_path: Path) -> None:
    done = run_script(tmp_path, ", mask=offs < n", "//", hook="", cli=True, full=True)
    assert done.returncode == 1
    assert done.stderr.startswith("Traceback (most recent call last):")
    assert any("minitriton/jit.py" in line for line in our_lines(done.stderr, tmp_path))
    assert "error: floor division '//'" in done.stderr


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
        "                               ^ at 4:27: in k\n"
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


# ---------------------------------------------------------------- launch arguments

ARGS_SCRIPT = textwrap.dedent(
    """\
    import numpy as np
    import minitriton as triton
    import minitriton.language as tl


    @triton.jit
    def add_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
        offs = tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + offs, mask=offs < n_elements)
        tl.store(out_ptr + offs, x, mask=offs < n_elements)

    x = np.ones(100, np.float32)
    out = np.zeros(100, np.float32)
    add_kernel[(1,)]({args}, backend="{backend}")
    """
)


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ("x, out, BLOCK_SIZE=128", "missing argument 'n_elements'"),
        ("x, out, 100, 128, 7", "takes 4 arguments, 5 were given"),
        ("x, out, 100, BLOCK_SIZE=128, n=3", "unexpected keyword argument 'n'"),
        ("x, out, 100, BLOCK_SIZE=128, x_ptr=x", "got multiple values for argument 'x_ptr'"),
    ],
)
@pytest.mark.parametrize("backend", ["emulator", "gpu"])
def test_a_wrong_launch_argument_is_located_at_the_launch(
    tmp_path: Path, args: str, problem: str, backend: str
) -> None:
    """Binding comes before the backends split: the GPU backend says the same, GPU or not."""
    script = tmp_path / "launch.py"
    script.write_text(ARGS_SCRIPT.format(args=args, backend=backend))
    env = {k: v for k, v in os.environ.items() if k != TRACEBACK_ENV}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert done.returncode == 1
    launch = f'    add_kernel[(1,)]({args}, backend="{backend}")'
    assert done.stderr == (
        "Traceback (most recent call last):\n"
        f'  File "{script}", line 14, in <module>\n'
        f"{launch}\n"
        f"minitriton.launch_checks.LaunchTypeError: {script}:14:1: error: kernel 'add_kernel': "
        f"{problem}\n"
        f"{launch}\n"
        "    ^\n"
        "help: add_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr)\n"
    )


@triton.jit
def _copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr = 16):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_a_wrong_launch_argument_is_a_type_error_at_the_callers_line() -> None:
    x = np.ones(8, np.float32)
    with pytest.raises(TypeError) as caught:
        _copy[(1,)](x, x, backend="emulator")  # the launch line
    assert isinstance(caught.value, (LaunchTypeError, UserError))
    line = sys._getframe().f_lineno - 2
    text = str(caught.value)
    assert text.startswith(f"{__file__}:{line}:9: error: kernel '_copy': missing argument 'n'")
    assert text.endswith("help: _copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr = 16)")


def test_the_fast_launch_path_falls_back_to_the_located_error() -> None:
    """A binding error in the generated binder is not reported there: the full path locates it."""
    x = np.ones(8, np.float32)
    fast = _copy._fast
    assert fast.binder is not None
    with pytest.raises(TypeError):
        fast.binder(x, x)  # Python's own message, which no user sees
    saved = (fast.entries, fast.cache_size)
    try:  # an entry makes the fast path try every launch first
        fast.entries, fast.cache_size = {("never",): None}, len(_copy.cache)  # type: ignore[dict-item]
        assert fast.launch((x, x), {}, (1,)) is None
        with pytest.raises(LaunchTypeError, match="missing argument 'n'"):
            _copy[(1,)](x, x, backend="emulator")
    finally:
        fast.entries, fast.cache_size = saved


def test_ipython_shows_the_short_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """IPython calls ``_render_traceback_``; MINITRITON_TRACEBACK=1 makes it fall back."""
    x = np.ones(8, np.float32)
    monkeypatch.delenv(TRACEBACK_ENV, raising=False)
    with pytest.raises(LaunchTypeError) as caught:
        _copy[(1,)](x, x, backend="emulator")
    lines = caught.value._render_traceback_()
    assert lines[0] == "Traceback (most recent call last):"
    assert not any("minitriton/" in line for line in lines)
    assert any(f'"{__file__}"' in line for line in lines)
    assert lines[-1] == "help: _copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr = 16)"
    monkeypatch.setenv(TRACEBACK_ENV, "1")
    with pytest.raises(NotImplementedError):
        caught.value._render_traceback_()
