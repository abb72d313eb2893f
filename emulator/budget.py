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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

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
    return _env_above_zero(TIMEOUT_ENV, float, "a number of seconds")


@contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    """Launches inside run for at most ``seconds`` (None: no limit)."""
    budget = None if seconds is None else (time.monotonic() + seconds, seconds)
    with _innermost(_deadline, budget):
        yield


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
    return _env_above_zero(STEPS_ENV, _whole_number, "a whole number of steps")


def _whole_number(text: str) -> int:
    return int(text.replace("_", ""))  # 1_000_000 reads as Python writes it


@contextmanager
def step_budget(steps: int | None) -> Iterator[None]:
    """Launches inside execute at most ``steps`` ops per program, summed (None: no limit)."""
    with _innermost(_max_steps, steps):
        yield


_N = TypeVar("_N", int, float)
_B = TypeVar("_B")


def _env_above_zero(name: str, parse: Callable[[str], _N], expected: str) -> _N | None:
    """The environment variable ``name`` read by ``parse``: None if unset or blank.

    A value that does not parse, or is not above 0, is a ``ValueError`` saying
    what was ``expected``.
    """
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    problem = f"{name}={text!r}: expected {expected} above 0"
    try:
        value = parse(text)
    except ValueError:
        raise ValueError(problem) from None
    if not value > 0:
        raise ValueError(problem)
    return value


@contextmanager
def _innermost(stack: list[_B], budget: _B | None) -> Iterator[None]:
    """``budget`` is the innermost one of ``stack`` inside the block (None: no change)."""
    if budget is None:
        yield
        return
    stack.append(budget)
    try:
        yield
    finally:
        stack.pop()


def max_steps() -> int | None:
    """The innermost step budget, or None (an interpreter reads it when it starts)."""
    return _max_steps[-1] if _max_steps else None
