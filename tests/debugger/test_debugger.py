"""The stepping debugger: scripted sessions with their transcripts asserted."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from minitriton.emulator import Debugger, DebugValue, EmulatorError
from minitriton.emulator.debug.debugger import DebuggerQuit
from tests.debugger.buggy_kernels import same_block_kernel, softmax_no_mask
from tests.debugger.debug_kernels import run_scale, sum_rows_kernel

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]

SESSION = """\
n
n
n
p offs
p mask.sum()
n
s
w
s
locals
n
back
ir
finish
p y
back
p tl.load(out_ptr + offs, mask=mask)
n
p tl.load(out_ptr + offs, mask=mask)
pid 1
p tl.load(out_ptr + tl.arange(0, 8))
b 24, x.sum() > 10
b
c
p x
c
"""


def run_cli(args: list[str], stdin: str, cwd: Path = HERE) -> subprocess.CompletedProcess[str]:
    """``python -m minitriton ARGS`` with ``stdin`` piped in."""
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    env.pop("MINITRITON_CHECKS", None)
    return subprocess.run(
        [sys.executable, "-m", "minitriton", *args], input=stdin, capture_output=True,
        text=True, cwd=cwd, env=env, timeout=120,
    )  # fmt: skip


def test_cli_session_transcript(golden: Callable[[str, str], None]) -> None:
    """Stepping, stepping into a helper, printing, back, ir, pid, conditional breakpoints.

    The whole transcript is compared with goldens/scale_session.txt.
    """
    result = run_cli(["debug", "debug_kernels.py", "--pid", "2"], SESSION)
    assert result.stderr == ""
    assert result.returncode == 0
    golden(result.stdout, "scale_session.txt")


def test_cli_quit_stops_the_script() -> None:
    result = run_cli(["debug", "debug_kernels.py", "-c", "n", "-c", "p pid"], "q\n")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[-4:] == ["(mtdb) p pid", "0", "(mtdb) q", "quit"]
    assert "result" not in result.stdout  # the script stopped at the launch


def test_cli_unknown_kernel_is_an_error_after_the_script_ran() -> None:
    result = run_cli(["debug", "debug_kernels.py", "--kernel", "nope"], "")
    assert result.returncode == 1
    assert "result [ 1.  3." in result.stdout
    assert result.stdout.rstrip().endswith(
        "the script finished\n"
        "*** no kernel named 'nope' was launched (the script launched: scale_kernel (1x))"
    )
    result = run_cli(["debug", "debug_kernels.py", "--launch", "2"], "")
    assert result.returncode == 1
    assert result.stdout.rstrip().endswith(
        "*** scale_kernel was launched 1 time(s): there is no launch number 2 to debug"
    )


COMPILE_ERROR = """\
import numpy as np
import minitriton as triton
import minitriton.language as tl


@triton.jit
def bad(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), undefined_name)


bad[(1,)](np.zeros(8, np.float32), BLOCK=8)
"""


def test_cli_compile_error_is_printed_once_without_traceback(tmp_path: Path) -> None:
    script = tmp_path / "bad.py"
    script.write_text(COMPILE_ERROR)
    result = run_cli(["debug", str(script)], "")
    assert result.returncode == 1
    both = result.stdout + result.stderr
    assert both.count("error: name 'undefined_name' is not defined") == 1
    assert f"{script}:8:43: error: name 'undefined_name' is not defined" in result.stdout
    assert "Traceback" not in both and "raised" not in both


NEW_COMMANDS = """\
b _scale
b nosuch
b debug_kernels.py:oops
b debug_kernels.py:24
c
p factor
locals
w
up
w
p BLOCK
p factor
down
down
display y
n
n
display
n
undisplay y
display
b
c
"""


def test_cli_functions_frames_displays_and_returns(golden: Callable[[str, str], None]) -> None:
    """b FUNCTION and FILE:LINE, a helper's constant argument, up/down, display, --Return--."""
    result = run_cli(["debug", "debug_kernels.py", "--pid", "1"], NEW_COMMANDS)
    assert (result.returncode, result.stderr) == (0, "")
    golden(result.stdout, "new_commands_session.txt")
    out = result.stdout
    assert "Breakpoint 1 at debug_kernels.py:12" in out  # _scale's first line
    assert "(mtdb) p factor\n2.0\n" in out  # the folded constant argument
    assert "--Return--\n> debug_kernels.py:13 _scale" in out


def test_until_leaves_a_loop(in_test_dir: Path) -> None:
    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    dbg = Debugger.launch(sum_rows_kernel, (3,), x, np.zeros(3, np.float32), 8, BLOCK=2)
    dbg.command("until 33")  # into the loop's body
    assert dbg.stop is not None and dbg.stop.loc is not None and dbg.stop.loc.line == 33
    dbg.command("n")
    assert dbg.stop.loc.line == 33  # 'n' runs one iteration at a time
    np.testing.assert_array_equal(dbg.eval("start"), 2)
    out = dbg.command("until")
    assert out.splitlines()[0].startswith("> debug_kernels.py:34 sum_rows_kernel")
    np.testing.assert_array_equal(dbg.eval("acc"), [0 + 2 + 4 + 6, 1 + 3 + 5 + 7])
    assert dbg.command("until 20").startswith('*** "until" line number is smaller')
    dbg.quit()


def test_terminal_prompt_has_history() -> None:
    """On a terminal the prompt edits lines with readline: the Up arrow repeats a command."""
    pty = pytest.importorskip("pty")
    pytest.importorskip("readline")
    import select
    import time

    child, fd = pty.fork()
    if child == 0:  # the child: the debugger on a pseudo-terminal
        os.chdir(HERE)
        os.environ["PYTHONPATH"] = str(REPO_ROOT)
        os.execv(sys.executable, [sys.executable, "-m", "minitriton", "debug", "debug_kernels.py"])
    seen = b""

    def until_prompt(count: int) -> None:
        nonlocal seen
        deadline = time.monotonic() + 60
        while seen.count(b"(mtdb) ") < count and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    seen += os.read(fd, 4096)
                except OSError:
                    return

    until_prompt(1)
    os.write(fd, b"p BLOCK\r")
    until_prompt(2)
    os.write(fd, b"\x1b[A\r")  # the Up arrow, then Enter
    until_prompt(3)
    os.write(fd, b"q\r")
    os.waitpid(child, 0)
    text = seen.decode().replace("\r", "")
    assert "\\x1b" not in text and "^[[A" not in text
    assert text.count("(mtdb) p BLOCK\n4\n") == 2


def test_api_returns_values(in_test_dir: Path) -> None:
    dbg = Debugger(run_scale, pid=1)
    assert dbg.intro.splitlines()[-1] == "-> pid = tl.program_id(0)"
    dbg.next()
    dbg.next()
    offs = dbg.print("offs")
    assert isinstance(offs, DebugValue)
    np.testing.assert_array_equal(offs.value, [4, 5, 6, 7])
    assert offs.type == "int32[4]"
    assert repr(offs) == "int32[4] [4, 5, 6, 7]"
    assert "<table" in offs._repr_html_()
    assert dbg.eval("tl.program_id(0) * 10") == 10
    assert set(dbg.locals()) == {"BLOCK", "n", "offs", "out_ptr", "pid", "x_ptr"}
    assert dbg.locals()["x_ptr"].preview() == "x_ptr + 0"
    assert "20  ->" in repr(dbg)
    assert dbg.cont().endswith("the script finished")


def test_api_breakpoint_condition_in_a_loop(in_test_dir: Path) -> None:
    """The condition is evaluated per program, each time the line runs."""
    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    out = np.zeros(3, np.float32)
    dbg = Debugger.launch(sum_rows_kernel, (3,), x, out, 8, BLOCK=4)
    assert "Breakpoint 1" in dbg.command("b 33, acc.sum() > 40")
    stop = dbg.command("c")
    assert "program (2, 0, 0) (breakpoint 1)" in stop  # row 1 sums to 38 after one step
    assert dbg.eval("start") == 4
    np.testing.assert_array_equal(dbg.eval("acc"), [16, 17, 18, 19])
    dbg.command("clear")
    dbg.cont()
    np.testing.assert_array_equal(out, x.sum(axis=1))


def test_api_errors_in_expressions_are_messages(in_test_dir: Path) -> None:
    dbg = Debugger(run_scale)
    assert dbg.command("p nothing").startswith("*** name 'nothing' is not defined here")
    assert dbg.command("p 1 +").startswith("***")
    assert dbg.command("b 3").startswith("*** line 3 of debug_kernels.py has no kernel code")
    assert dbg.command("frobnicate").startswith("*** unknown command")
    assert dbg.command("back") == "*** already at the first line of this program"
    with pytest.raises(DebuggerQuit):
        dbg.quit()
        raise dbg.result  # type: ignore[misc]


def test_post_mortem_after_out_of_bounds(in_test_dir: Path) -> None:
    """An error stops the debugger where it happened; 'back' goes to the failing line."""
    x = np.ones((3, 5), np.float32)
    y = np.zeros_like(x)
    dbg = Debugger.launch(softmax_no_mask, (3,), y, x, 5, 5, BLOCK=8)
    text = dbg.cont()
    assert (
        "error: out-of-bounds tt.load from 'in_ptr' (15 elements of fp32) in program (2, 0, 0)"
        in text
    )
    assert "post-mortem" in text
    assert dbg.eval("row") == 2
    back = dbg.back()
    assert "> buggy_kernels.py:68 softmax_no_mask, program (2, 0, 0)" in back
    ptrs = dbg.print("in_ptr + row * stride + cols")
    assert repr(ptrs) == "in_ptr + [10, 11, 12, 13, 14, 15, 16, 17]"
    assert "post-mortem" in dbg.cont()  # the same error again
    assert "error: out-of-bounds" in dbg.cont()  # 'c' ends the launch with it
    assert dbg.finished and isinstance(dbg.result, EmulatorError)


def test_race_found_under_the_debugger(in_test_dir: Path) -> None:
    x = np.arange(8, dtype=np.float32)
    dbg = Debugger.launch(same_block_kernel, (2,), x, np.zeros(8, np.float32), 8, BLOCK=4, pid=1)
    text = dbg.cont()
    assert "data race: tt.store to 'out_ptr' overwrites what program (0, 0, 0) stored" in text
    assert "in program (1, 0, 0)" in text
    dbg.quit()


def test_debugging_later_launch_and_pid_outside_grid(in_test_dir: Path) -> None:
    def twice() -> None:
        run_scale(8, 4)
        run_scale(12, 4)

    dbg = Debugger(twice, launch=2, pid=2)
    assert "grid (3, 1, 1), program (2, 0, 0)" in dbg.intro
    outside = Debugger(run_scale, pid=5)
    assert "program (5, 0, 0) is outside the grid: debugging (0, 0, 0)" in outside.intro
    outside.quit()
    assert dbg.command("pid 7") == "*** program (7, 0, 0) is outside the grid (3, 1, 1)"
    dbg.finish(all=True)
    assert dbg.finished and dbg.result is None


def test_a_paused_session_leaves_other_threads_launches_alone(in_test_dir: Path) -> None:
    """The notebook case: the debugger waits in its thread; the next cell launches plainly.

    With a breakpoint set, the session takes over its own thread's later
    launches to stop at it; a launch from another thread must not stop there
    (nobody would ever resume it) but run as without the session.
    """
    import threading

    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    dbg = Debugger.launch(sum_rows_kernel, (3,), x, np.zeros(3, np.float32), 8, BLOCK=4)
    assert "Breakpoint 1" in dbg.command("b 33")
    out = np.zeros(3, np.float32)

    def cell() -> None:
        sum_rows_kernel[(3,)](x, out, 8, BLOCK=4, backend="emulator")

    other = threading.Thread(target=cell, daemon=True)
    other.start()
    other.join(timeout=30)
    stuck = other.is_alive()
    dbg.quit()
    assert not stuck, "a launch from another thread stopped at the session's breakpoint"
    np.testing.assert_array_equal(out, x.sum(axis=1))
