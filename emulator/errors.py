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

from minitriton.diagnostics import Diagnostic, Location
from minitriton.ir.ops import ASSUME_MESSAGE
from minitriton.runtime.errors import InterpreterError

Pid = tuple[int, int, int]


class EmulatorError(InterpreterError):
    """A located error raised while a kernel runs in the emulator (Triton's
    ``InterpreterError``)."""

    def __init__(
        self,
        loc: Location,
        message: str,
        details: Sequence[str] = (),
        pid: Pid | None = None,
        help: str | None = None,
    ) -> None:
        self.diagnostic = Diagnostic(loc, message)
        self.details = list(details)
        self.pid = pid
        self.help = help  # what to write instead, shown last
        super().__init__(self.render())

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """The diagnostic as a list, like :class:`~minitriton.diagnostics.CompileError`."""
        return [self.diagnostic]

    def render(self) -> str:
        """The full text: the diagnostic, one line per detail, then the help line."""
        helps = [f"help: {self.help}"] if self.help else []
        return "\n".join([self.diagnostic.render(), *(f"  {d}" for d in self.details), *helps])


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


class DeviceCheckError(EmulatorError, RuntimeError):
    """The same located error, raised by the GPU backend's debug mode after a launch.

    The kernel checked its accesses and asserts on the device and recorded
    the first failure (:mod:`minitriton.backend.debug_mode`); the CUDA
    context is still usable. It is also a ``RuntimeError``, the class of
    the error Triton raises for a failed device assertion on a GPU.
    """


def oob_report(
    op_name: str,
    verb: str,
    buf_name: str,
    elements: int,
    dtype: str,
    shape: Sequence[int],
    lanes: np.ndarray,
    offsets: Sequence[int] | np.ndarray,
) -> tuple[str, list[str]]:
    """The message and detail of an out-of-bounds access.

    ``lanes`` are the flat indices of every offending lane, ``offsets`` the
    offsets of (at least) the first three of them.
    """
    offs = [str(int(o)) for o in offsets[:3]]
    size = f"{plural(elements, 'element')} of {dtype}"
    message = f"out-of-bounds {op_name} {verb} '{buf_name}' ({size})"
    if not shape:
        detail = f"offset {offs[0]}"
    elif len(lanes) == 1:
        lane = format_lanes(lanes, tuple(shape))[0]
        detail = f"offset {offs[0]} at lane {lane} (1 lane out of bounds)"
    else:
        lane_text = format_list(format_lanes(lanes[:3], tuple(shape)))
        detail = (
            f"offsets {format_list(offs)} at lanes {lane_text} ({len(lanes)} lanes out of bounds)"
        )
    return message, [detail]


#: One side of a failed comparison: (``"lhs"``, the value's name, its first values, more?).
Side = tuple[str, str, Sequence[str], bool]


def assert_report(
    message: str, shape: Sequence[int], lanes: np.ndarray, sides: Sequence[Side]
) -> tuple[str, list[str]]:
    """The message and details of a failed ``device_assert``.

    ``lanes`` are the flat indices of the false lanes; ``sides`` the compared
    values at the first three of them.
    """
    # A failed tl.assume says so by itself; a device_assert's message follows the header.
    header = "device assertion failed" + (f": {message}" if message else "")
    text = message if message == ASSUME_MESSAGE else header
    details = []
    if shape:
        size = int(np.prod(shape))
        lane_text = format_list(format_lanes(lanes, tuple(shape)), 3)
        details.append(f"false at lanes {lane_text} ({plural(len(lanes), 'lane')} of {size})")
    for side, name, values, more in sides:
        items = list(values[:3]) + (["..."] if more else [])
        label = f" ({name})" if name else ""
        details.append(f"{side}{label}: {', '.join(items)}")
    return text, details
