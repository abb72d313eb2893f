"""Located run-time errors of the emulator.

An :class:`EmulatorError` renders like every other MiniTriton diagnostic
(``file:line:col: error: message``, the source line and a caret) and adds
the details that only exist at run time: the program id and the values
involved, one indented line each::

    kernel.py:14:9: error: out-of-bounds tt.load from 'x_ptr' (98432 elements of fp32) \
in program (96, 0, 0)
        x = tl.load(x_ptr + offsets)
            ^
      offsets 98432, 98433, ... at lanes 128, 129, ... (896 lanes out of bounds)

(the first line is one line; it is split here only to fit the page).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from minitriton.diagnostics import Diagnostic, Location, UserError

Pid = tuple[int, int, int]


class EmulatorError(UserError, Exception):
    """A located error raised while a kernel runs in the emulator."""

    def __init__(
        self, loc: Location, message: str, details: Sequence[str] = (), pid: Pid | None = None
    ) -> None:
        self.diagnostic = Diagnostic(loc, message)
        self.details = list(details)
        self.pid = pid
        super().__init__(self.render())

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """The diagnostic as a list, like :class:`~minitriton.diagnostics.CompileError`."""
        return [self.diagnostic]

    def render(self) -> str:
        """The full text: the diagnostic, then one line per detail."""
        return "\n".join([self.diagnostic.render(), *(f"  {d}" for d in self.details)])


def format_pid(pid: Sequence[int]) -> str:
    """``(96, 0, 0)``."""
    return "(" + ", ".join(str(int(p)) for p in pid) + ")"


def format_list(items: Sequence[str], limit: int = 2) -> str:
    """The first ``limit`` items, then ``...`` if there are more."""
    shown = list(items[:limit])
    if len(items) > limit:
        shown.append("...")
    return ", ".join(shown)


def format_lanes(flat_lanes: np.ndarray, shape: tuple[int, ...]) -> list[str]:
    """Lane numbers as text: ``5`` in a 1-D block, ``(1, 3)`` in a 2-D block."""
    if len(shape) <= 1:
        return [str(int(i)) for i in flat_lanes]
    coords = np.unravel_index(flat_lanes, shape)
    return [format_pid([int(c[k]) for c in coords]) for k in range(len(flat_lanes))]


def plural(n: int, word: str) -> str:
    """``1 lane`` / ``3 lanes``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
