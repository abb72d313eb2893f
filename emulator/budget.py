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

A launch without a budget that runs long says so: when standard error is a
terminal, a one-line :class:`LongRunNotice` comes after 10 s and again every
30 s, with the kernel, the program and the line, and how to stop it or set a
budget. The interpreter looks for it where it looks at the budget's clock.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO, TypeVar

from minitriton.diagnostics import Diagnostic, Location, UserError

TIMEOUT_ENV = "MINITRITON_TIMEOUT"
#: Seconds before the first "still running" notice, and between two.
NOTICE_AFTER = 10.0
NOTICE_EVERY = 30.0
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


class LongRunNotice:
    """Tells a person at a terminal that a launch is still running, and where."""

    def __init__(self, kernel: str, stream: TextIO, clock: Callable[[], float] = time.monotonic):
        self.kernel = kernel
        self.stream = stream
        self.clock = clock
        self.start = clock()
        self.due = self.start + NOTICE_AFTER

    def poll(self, loc: Location | None, pid: tuple[int, int, int]) -> None:
        """Print the notice if it is due (the interpreter calls this every few ops)."""
        now = self.clock()
        if now < self.due:
            return
        self.due = now + NOTICE_EVERY
        where = f"{loc.file}:{loc.line}" if loc is not None else "?"
        pid_text = "(" + ", ".join(str(p) for p in pid) + ")"
        print(f"minitriton: kernel '{self.kernel}' still running after {now - self.start:.0f} s, "
              f"program {pid_text} at {where}; Ctrl-C stops it (and says where), "
              f"{TIMEOUT_ENV}=SECONDS or timeout= sets a time budget", file=self.stream,
              flush=True)  # fmt: skip


def long_run_notice(kernel: str) -> LongRunNotice | None:
    """A notice for a launch, when standard error is a terminal and no budget is set."""
    stream = sys.stderr
    if has_budget() or max_steps() is not None or not _is_terminal(stream):
        return None
    return LongRunNotice(kernel, stream)


def _is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # replaced by an object without isatty, or closed
        return False
