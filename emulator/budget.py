"""Time and step budgets for emulator launches, and Ctrl-C that says where the kernel was.

An infinite loop or a spin lock that is never released runs forever in the
emulator. A launch may be given a budget in seconds (``kernel[grid](...,
timeout=5)`` or ``MINITRITON_TIMEOUT=5``) or in steps (``max_steps=10**6`` or
``MINITRITON_MAX_STEPS=1000000``); past either, the op being executed raises
an :class:`~minitriton.emulator.errors.EmulatorError` located in the kernel,
naming the program. Without a budget nothing is checked.

A *step* is one op executed for one program: an op that the emulator runs
for a batch of 8 programs at once counts 8, so the count is the same in
batched and serial execution. Unlike the time budget, a step budget gives
the same verdict on a fast machine and a loaded one.

A ``KeyboardInterrupt`` during a launch becomes a :class:`KernelInterrupt`
(still a ``KeyboardInterrupt``) whose message names the kernel, the program
and the source line that was running, without an internal traceback.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from minitriton.diagnostics import Diagnostic, Location, UserError

TIMEOUT_ENV = "MINITRITON_TIMEOUT"
STEPS_ENV = "MINITRITON_MAX_STEPS"
#: Ops executed between two looks at the clock.
CHECK_EVERY = 256

_deadline: list[tuple[float, float]] = []  # (deadline, seconds) of the innermost budget
_max_steps: list[int] = []  # the innermost step budget


class KernelInterrupt(UserError, KeyboardInterrupt):
    """Ctrl-C while a kernel ran in the emulator; ``str()`` says where it was."""

    def __init__(self, kernel: str, loc: Location, pid: tuple[int, int, int]) -> None:
        pid_text = "(" + ", ".join(str(p) for p in pid) + ")"
        message = f"interrupted while kernel '{kernel}' ran program {pid_text}"
        self.diagnostic = Diagnostic(loc, message, severity="note")
        super().__init__(self.diagnostic.render())


def env_timeout() -> float | None:
    """``MINITRITON_TIMEOUT`` in seconds, or None; a bad value is a ``ValueError``."""
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise ValueError(f"{TIMEOUT_ENV}={text!r}: expected a number of seconds above 0")
    return seconds


@contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    """Launches inside run for at most ``seconds`` (None: no limit)."""
    if seconds is None:
        yield
        return
    _deadline.append((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _deadline.pop()


def over_budget() -> float | None:
    """The budget in seconds if the innermost one has run out, else None."""
    if not _deadline:
        return None
    deadline, seconds = _deadline[-1]
    return seconds if time.monotonic() > deadline else None


def has_budget() -> bool:
    """Whether a time budget is active (the interpreter looks at the clock only then)."""
    return bool(_deadline)


def env_max_steps() -> int | None:
    """``MINITRITON_MAX_STEPS``, or None; a bad value is a ``ValueError``."""
    text = os.environ.get(STEPS_ENV, "").strip()
    if not text:
        return None
    try:
        steps = int(text.replace("_", ""))
    except ValueError:
        steps = 0
    if steps <= 0:
        raise ValueError(f"{STEPS_ENV}={text!r}: expected a whole number of steps above 0")
    return steps


@contextmanager
def step_budget(steps: int | None) -> Iterator[None]:
    """Launches inside execute at most ``steps`` ops per program, summed (None: no limit)."""
    if steps is None:
        yield
        return
    _max_steps.append(steps)
    try:
        yield
    finally:
        _max_steps.pop()


def max_steps() -> int | None:
    """The innermost step budget, or None (an interpreter reads it when it starts)."""
    return _max_steps[-1] if _max_steps else None
