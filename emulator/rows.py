"""Row-contiguous accesses: a load or store over runs of consecutive offsets, as one view.

The commonest access of a kernel is a run of consecutive elements per program,
``x_ptr + pid * BLOCK + tl.arange(0, BLOCK)``: batched, a ``(P, BLOCK)`` block
of offsets whose rows are each ``BLOCK`` consecutive numbers, and whose first
offsets step by the same amount from row to row. Such a block of offsets
selects exactly the elements of a strided view of the buffer, so the access
is a copy from (or into) that view instead of a gather (or scatter) through
the offsets: several times faster, and with no 64-bit index arrays, whose
fresh pages are much of a first launch's time.

:func:`find_rows` recognises the pattern from the offsets themselves (nothing
is assumed from the IR), at a cost of one pass over them in small slices.
Offsets still in the lazy form of :mod:`minitriton.emulator.lanes` say where
their runs are, and never come here; these are the offsets made as arrays
(a computed index, a loop-carried pointer).
Rows that are not wholly inside the buffer (the masked tail of the last
program) are left to the caller's general path; so is every other shape of
access. :func:`complete_despite_interrupt` runs the steps of one store so that
Ctrl-C cannot leave it half done (see its docstring).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

#: Offsets compared per slice when checking that rows are consecutive (small, reused memory).
CHECK_LANES = 1 << 15
#: At most this many rows outside the buffer (done one by one) for the view to be used.
MAX_EDGE_ROWS = 8


@dataclass(frozen=True)
class Rows:
    """Offsets whose row ``r`` is ``start + r * step + arange(width)``.

    Rows ``first`` to ``stop - 1`` lie wholly inside the buffer; the others
    (:meth:`edge`) do not, and are never touched through the view.
    """

    start: int
    step: int
    count: int
    width: int
    first: int
    stop: int

    def view(self, flat: np.ndarray, writeable: bool = False) -> np.ndarray:
        """The ``(stop - first, width)`` view of ``flat`` that the inside rows select."""
        base = self.start + self.first * self.step
        return strided_rows(flat, base, self.stop - self.first, self.width, self.step, writeable)

    def edge(self) -> list[int]:
        """The rows not wholly inside the buffer."""
        return [*range(self.first), *range(self.stop, self.count)]

    def no_overlap(self) -> bool:
        """True when no two rows share an element (so the order of writes is irrelevant)."""
        return self.count == 1 or self.step >= self.width


def strided_rows(
    flat: np.ndarray, base: int, rows: int, width: int, step: int, writeable: bool = False
) -> np.ndarray:
    """The ``(rows, width)`` view of ``flat`` whose row ``r`` starts at ``base + r * step``."""
    if rows <= 0:
        return flat[:0].reshape(0, width)
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[base:], shape=(rows, width), strides=(step * item, item), writeable=writeable
    )


def find_rows(offsets: np.ndarray, size: int) -> Rows | None:
    """The :class:`Rows` of a 1-D or 2-D block of offsets into ``size`` elements, or None."""
    run = _runs(offsets)
    if run is None:
        return None
    starts, step = run
    count, width = starts.size, offsets.shape[-1]
    inside = np.flatnonzero((starts >= 0) & (starts + width <= size))
    first, stop = (int(inside[0]), int(inside[-1]) + 1) if inside.size else (0, 0)
    rows = Rows(int(starts[0]), step, count, width, first, stop)
    return rows if len(rows.edge()) <= MAX_EDGE_ROWS else None


#: The last block :func:`_runs` looked at, and what it found (``x + offsets``, ``y +
#: offsets`` and ``out + offsets`` share one block of offsets: one check serves all three).
_last: tuple[weakref.ref[np.ndarray], tuple[np.ndarray, int] | None] | None = None


def forget(block: np.ndarray) -> None:
    """Drop what :func:`_runs` remembers of ``block``, which is about to be overwritten.

    A value's block is written in place only when an elementwise op reuses
    the block of an operand that dies there (``ops/arith.py``); otherwise the
    answer for one array object stays true while it lives.
    """
    global _last
    if _last is not None and _last[0]() is block:
        _last = None


def _runs(offsets: np.ndarray) -> tuple[np.ndarray, int] | None:
    """The rows' first offsets (int64) and their common step, or None if not :class:`Rows`.

    Remembered for the last array object asked about (see :func:`forget`).
    """
    global _last
    if _last is not None and _last[0]() is offsets:
        return _last[1]
    if offsets.ndim not in (1, 2) or offsets.shape[-1] < 2 or offsets.dtype.kind != "i":
        return None
    found = _find_runs(offsets.reshape(1, -1) if offsets.ndim == 1 else offsets)
    _last = (weakref.ref(offsets), found)
    return found


def _find_runs(grid: np.ndarray) -> tuple[np.ndarray, int] | None:
    count, width = grid.shape
    starts = grid[:, 0].astype(np.int64)
    # In 64 bits: a run that wrapped around its own integer width fails here.
    if not np.array_equal(grid[:, -1].astype(np.int64) - starts, np.full(count, width - 1)):
        return None
    step = int(starts[1] - starts[0]) if count > 1 else width
    if step < 0 or (count > 2 and not np.array_equal(np.diff(starts), np.full(count - 1, step))):
        return None
    return (starts, step) if _consecutive(grid) else None


def _consecutive(grid: np.ndarray) -> bool:
    """True when each row of ``grid`` goes up by exactly 1 from lane to lane."""
    per_slice = max(1, CHECK_LANES // grid.shape[1])
    for row in range(0, grid.shape[0], per_slice):
        part = grid[row : row + per_slice]
        if not (np.subtract(part[:, 1:], part[:, :-1]) == 1).all():
            return False
    return True


def complete_despite_interrupt(steps: Sequence[Callable[[], None]]) -> None:
    """Run ``steps`` (the writes of one store); Ctrl-C takes effect once all have run.

    A launch whose only write is its last op takes no copy of its outputs to
    undo it (see :func:`minitriton.emulator.schedule.fails_before_writing`),
    so that one store must not stop half done. A NumPy call is never
    interrupted in the middle: the ``KeyboardInterrupt`` surfaces between
    calls, so the step it stopped is run again (writing the same values twice
    is harmless) and the interrupt is raised after the last step.
    """
    interrupt: KeyboardInterrupt | None = None
    for step in steps:
        try:
            step()
        except KeyboardInterrupt as exc:
            interrupt = exc
            step()
    if interrupt is not None:
        raise interrupt
