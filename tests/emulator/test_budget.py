"""Nothing runs forever without a way out: the emulator's time budget, Ctrl-C, debugger limits."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator import EmulatorError, schedule
from minitriton.emulator.budget import KernelInterrupt
from minitriton.emulator.debug.debug_expr import ExprError, Scope, evaluate
from minitriton.emulator.memory import Memory
from minitriton.launch_checks import LaunchError


@triton.jit
def spin_forever(lock_ptr, out_ptr):
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:  # the lock is never released
        pass
    tl.store(out_ptr, 1.0)


@triton.jit
def loop_forever(out_ptr, n):
    i = 0
    while i < n:  # i never changes
        i = i * 1
    tl.store(out_ptr, 1.0)


def test_a_spin_lock_that_is_never_released_runs_out_of_time() -> None:
    lock, out = np.ones(1, np.int32), np.zeros(1, np.float32)
    with pytest.raises(EmulatorError) as info:
        spin_forever[(2,)](lock, out, backend="emulator", timeout=0.5)
    message = str(info.value)
    assert "error: kernel 'spin_forever' ran past its time budget of 0.5 s" in message
    # Both programs spin; the cooperative scheduler may be running either of them.
    assert re.search(r"in program \([01], 0, 0\)", message)
    assert "while tl.atomic_cas(lock_ptr, 0, 1) == 1:" in message
    np.testing.assert_array_equal(lock, [1])


def test_the_budget_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINITRITON_TIMEOUT", "0.5")
    with pytest.raises(EmulatorError, match="ran past its time budget of 0.5 s"):
        loop_forever[(1,)](np.zeros(1, np.float32), 5, backend="emulator")


@pytest.mark.parametrize("value", ["soon", "0", "-3"])
def test_a_bad_budget_in_the_environment(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("MINITRITON_TIMEOUT", value)
    with pytest.raises(LaunchError, match="MINITRITON_TIMEOUT="):
        loop_forever[(1,)](np.zeros(1, np.float32), 0, backend="emulator")


@pytest.mark.parametrize("value", [0, -1.0, "5", True])
def test_a_bad_timeout_keyword(value: object) -> None:
    with pytest.raises(LaunchError, match="kernel 'loop_forever': timeout="):
        loop_forever[(1,)](np.zeros(1, np.float32), 0, backend="emulator", timeout=value)


def test_a_finished_kernel_is_within_its_budget() -> None:
    out = np.zeros(1, np.float32)
    loop_forever[(4,)](out, 0, backend="emulator", timeout=30)
    assert out[0] == 1.0


def test_ctrl_c_names_the_kernel_program_and_line(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = schedule.Interpreter.execute_op

    def interrupt_later(self, op, state):  # noqa: ANN001, ANN202
        calls.append(op)
        if len(calls) == 200:
            raise KeyboardInterrupt
        return real(self, op, state)

    monkeypatch.setattr(schedule.Interpreter, "execute_op", interrupt_later)
    out = np.zeros(1, np.float32)
    with pytest.raises(KernelInterrupt) as info:
        loop_forever[(1,)](out, 5, backend="emulator")
    text = str(info.value)
    assert "note: interrupted while kernel 'loop_forever' ran program (0, 0, 0)" in text
    assert "i = i * 1" in text or "while i < n" in text
    assert isinstance(info.value, KeyboardInterrupt)


def test_minitriton_run_prints_where_ctrl_c_stopped(tmp_path: Path) -> None:
    script = tmp_path / "interrupted.py"
    script.write_text(
        textwrap.dedent(
            """\
            import numpy as np
            import minitriton as triton
            import minitriton.language as tl
            from minitriton.emulator import interpreter

            real = interpreter.Interpreter.execute_op
            count = [0]

            def execute_op(self, op, state):
                count[0] += 1
                if count[0] == 100:
                    raise KeyboardInterrupt
                return real(self, op, state)

            interpreter.Interpreter.execute_op = execute_op


            @triton.jit
            def k(out_ptr, n):
                i = 0
                while i < n:
                    i = i * 1
                tl.store(out_ptr, 1.0)


            k[(1,)](np.zeros(1, np.float32), 5, backend="emulator")
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "minitriton", "run", str(script)], capture_output=True, text=True
    )
    assert done.returncode == 130
    assert "note: interrupted while kernel 'k' ran program (0, 0, 0)" in done.stderr
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- debugger expressions


def scope() -> Scope:
    return Scope({"x": np.arange(1024, dtype=np.int32)}, (0, 0, 0), (1, 1, 1), Memory())


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("2**2**40", "the result would have about 1099511627776 bits"),
        ("1 << 10**12", "the result would have about 1000000000001 bits"),
        ("'a' * 10**9", "the result would have 1000000000 elements"),
        ("x[:, None] * x[None, :] * x[:, None, None]", "the result would be a block of shape"),
    ],
)
def test_debugger_results_have_a_size_limit(expr: str, message: str) -> None:
    with pytest.raises(ExprError) as info:
        evaluate(expr, scope())
    assert str(info.value).startswith(message)


def test_debugger_results_within_the_limit() -> None:
    assert evaluate("2**100", scope()) == 2**100
    assert evaluate("'ab' * 3", scope()) == "ababab"
    assert evaluate("(x[:, None] * x[None, :]).shape", scope()) == (1024, 1024)
