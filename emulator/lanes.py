"""Lazy blocks of consecutive lanes: ``tl.arange``, offsets built on it, and masks of them.

The commonest address of a kernel is ``x_ptr + pid * BLOCK + tl.arange(0, BLOCK)``
with the mask ``offsets < n``. Batched over the programs, each is a block as
big as the data (the vector add's offsets are 97 x 1024), yet all it says is
where each program's run starts and, for the mask, how many of its lanes are
on. Made as arrays, those blocks are fresh memory in a fresh process, and
their pages are a large part of a first launch's time; the loads and stores
then have to find the runs in them again (:mod:`.rows`).

So these values are kept in that form, and made into arrays only when an op
without a shortcut reads ``.data``:

* :class:`LaneRuns`: row ``r`` is ``starts[r] + arange(width)`` (one row if
  unbatched). ``tt.make_range`` makes one; ``arith.add`` of a per-row scalar
  (a splat) and ``tt.addptr`` onto a splat pointer keep the form;
* :class:`LanePrefix`: row ``r`` has its first ``counts[r]`` lanes on.
  ``arith.cmp`` of runs ``<`` (or ``<=``) a splat, or of a splat ``>`` (or
  ``>=``) runs, makes one;
* :class:`LoadedRuns`: what ``tt.load`` through such runs reads, read only
  when used. ``arith.add``, ``sub`` and ``mul`` over such loads are deferred
  too (:class:`DeferredUfunc`, made by :func:`elementwise`): a store of the
  same layout computes them straight from the buffers' views into its own
  memory, so a stored ``x + y`` makes no block at all. The emulator makes
  loads lazy only in a launch whose one write is the kernel's last op
  (``Interpreter.lazy_loads``): nothing can change the memory between a load
  and its use.

``tt.load`` and ``tt.store`` (``ops/memory.py``) read these forms directly
(:func:`runs_access`). A value stays in this form only where no lane's
number wraps around its integer type, so its array, once made, holds exactly
the numbers the plain computation gives.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from minitriton.emulator.rows import strided_rows
from minitriton.emulator.values import RVal

#: At most this many rows a load or store copies one by one (partial or outside the run).
MAX_PARTIAL_ROWS = 8


class _Lazy(RVal):
    """A value whose array is made on the first read of ``.data`` (by :meth:`make`).

    Such a value is never written in place (see :func:`is_lazy`).
    """

    def __init__(self, batched: bool, buffer: int | None = None, **fields: Any) -> None:
        for name, value in (("batched", batched), ("buffer", buffer), *fields.items()):
            object.__setattr__(self, name, value)

    @property
    def data(self) -> np.ndarray:
        """The value as an array, made on the first read."""
        made = self.__dict__.get("_made")
        if made is None:
            made = self.make()
            self.__dict__["_made"] = made
        return made

    def make(self) -> np.ndarray:
        """The value as a new array."""
        raise NotImplementedError


class LaneRuns(_Lazy):
    """Row ``r`` of the block is ``starts[r] + arange(width)``, in ``dtype``.

    ``starts`` is a 0-d array (unbatched: one row shared by every program)
    or one entry per program of the batch, always ``int64``.
    """

    starts: np.ndarray
    width: int
    _dtype: np.dtype

    def __init__(
        self, starts: np.ndarray, width: int, dtype: Any, buffer: int | None = None
    ) -> None:
        dtype = np.dtype(dtype)
        super().__init__(starts.ndim == 1, buffer, starts=starts, width=width, _dtype=dtype)

    @property
    def shape(self) -> tuple[int, ...]:
        """``(programs, width)``, or ``(width,)`` unbatched."""
        return (*self.starts.shape, self.width)

    @property
    def dtype(self) -> np.dtype:
        """The integer dtype of the offsets."""
        return self._dtype

    def make(self) -> np.ndarray:
        """The offsets as an array."""
        lanes = np.arange(self.width, dtype=self.dtype)
        return np.add(self.starts.astype(self.dtype)[..., None], lanes)

    def take(self, rows: np.ndarray) -> RVal:
        """The rows ``rows`` of a batched value, still lazy."""
        if not self.batched:
            return self
        return LaneRuns(self.starts[rows], self.width, self.dtype, self.buffer)


class LanePrefix(_Lazy):
    """A mask whose row ``r`` has its first ``counts[r]`` lanes on (of ``width``)."""

    counts: np.ndarray
    width: int

    def __init__(self, counts: np.ndarray, width: int) -> None:
        super().__init__(counts.ndim == 1, counts=counts, width=width)

    @property
    def shape(self) -> tuple[int, ...]:
        """``(programs, width)``, or ``(width,)`` unbatched."""
        return (*self.counts.shape, self.width)

    @property
    def dtype(self) -> np.dtype:
        """Always bool."""
        return np.dtype(bool)

    def make(self) -> np.ndarray:
        """The mask as an array."""
        return np.arange(self.width) < self.counts[..., None]

    def take(self, rows: np.ndarray) -> RVal:
        """The rows ``rows`` of a batched value, still lazy."""
        if not self.batched:
            return self
        return LanePrefix(self.counts[rows], self.width)


def is_lazy(value: RVal) -> bool:
    """True for a value whose ``.data`` is made on demand (it must never be written in place)."""
    return isinstance(value, _Lazy)


def row_scalars(value: RVal) -> np.ndarray | None:
    """The per-row value of a 1-D block that is constant along its lanes (a splat), or None.

    The answer is 0-d for an unbatched block, one entry per program otherwise.
    """
    if is_lazy(value):
        return None
    data = value.data
    if data.ndim != (2 if value.batched else 1) or data.strides[-1] != 0:
        return None
    return data[..., 0]


def make_range(start: int, end: int) -> LaneRuns:
    """``tl.arange(start, end)``: one int32 run."""
    return LaneRuns(np.array(start, dtype=np.int64), end - start, np.int32)


def add_runs(a: RVal, b: RVal) -> LaneRuns | None:
    """``runs + splat`` (either order) as runs, or None when the form does not apply."""
    runs, other = (a, b) if isinstance(a, LaneRuns) else (b, a)
    if not isinstance(runs, LaneRuns) or runs.buffer is not None:
        return None
    shift = row_scalars(other)
    if shift is None or shift.dtype != runs.dtype:
        return None
    return _shifted(runs, shift, runs.dtype, None)


def addptr_runs(ptr: RVal, offsets: RVal) -> LaneRuns | None:
    """``splat(pointer) + runs`` as runs into the pointer's buffer, or None."""
    base = row_scalars(ptr)
    if not isinstance(offsets, LaneRuns) or offsets.buffer is not None or base is None:
        return None
    # From element 0 of an argument the offsets are the pointer's data as they are
    # (see ops/memory.py): keep their dtype, so a made array is no larger.
    zero = not base.ndim and int(base) == 0
    return _shifted(offsets, base, offsets.dtype if zero else np.dtype(np.int64), ptr.buffer)


def _shifted(
    runs: LaneRuns, shift: np.ndarray, dtype: np.dtype, buffer: int | None
) -> LaneRuns | None:
    """``runs`` moved by ``shift`` per row, or None if a lane would wrap around ``dtype``."""
    starts = runs.starts + shift.astype(np.int64)
    low, high = _limits(dtype)
    if starts.size and (starts.min() < low or starts.max() + runs.width - 1 > high):
        return None
    return LaneRuns(starts, runs.width, dtype, buffer)


@functools.lru_cache(maxsize=16)
def _limits(dtype: np.dtype) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype (``np.iinfo`` is slow to ask)."""
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


#: ``splat > runs`` is ``runs < splat``; ``splat >= runs`` is ``runs <= splat``.
_MIRRORED = {"gt": "lt", "ge": "le"}


def compare_runs(pred: str, a: RVal, b: RVal) -> LanePrefix | None:
    """``runs < splat`` or ``runs <= splat`` (signed, either order) as a prefix mask, or None."""
    if isinstance(b, LaneRuns) and pred in _MIRRORED:
        pred, a, b = _MIRRORED[pred], b, a
    bound = row_scalars(b)
    if not isinstance(a, LaneRuns) or a.buffer is not None or bound is None:
        return None
    if pred not in ("lt", "le") or a.dtype.kind != "i" or bound.dtype != a.dtype:
        return None
    counts = bound.astype(np.int64) - a.starts + (pred == "le")
    return LanePrefix(np.clip(counts, 0, a.width), a.width)


class RunsAccess:
    """Where a load or store through :class:`LaneRuns` goes, row by row.

    ``full`` rows (every lane on) between ``first`` and ``stop`` are copied
    through one strided view; the few others (``partial``) one by one, their
    first ``counts[r]`` lanes only.
    """

    def __init__(self, runs: LaneRuns, counts: np.ndarray, first: int, stop: int, step: int):
        self.runs, self.counts = runs, counts
        self.first, self.stop, self.step = first, stop, step
        on = np.flatnonzero(counts)
        self.partial: list[int] = on[(on < first) | (on >= stop)].tolist()

    def view(self, flat: np.ndarray, writeable: bool = False) -> np.ndarray:
        """The ``(stop - first, width)`` view of ``flat`` that the full rows select."""
        rows = self.stop - self.first
        base = int(self.runs.starts.reshape(-1)[self.first]) if rows > 0 else 0
        return strided_rows(flat, base, rows, self.runs.width, self.step, writeable)

    def lanes(self, row: int) -> slice:
        """The elements of ``flat`` that the on lanes of ``row`` select."""
        start = int(self.runs.starts.reshape(-1)[row])
        return slice(start, start + int(self.counts[row]))


def runs_access(ptr: RVal, mask: RVal | None, size: int, store: bool) -> RunsAccess | None:
    """How to access ``size`` elements through ``ptr`` under ``mask``, or None.

    None means the general path must run: the pointer or the mask is not in
    lazy form, an on lane lies outside the buffer (the general path names
    it), rows overlap in a store (the lane order decides), or too many rows
    would be copied one by one.
    """
    if not isinstance(ptr, LaneRuns) or ptr.buffer is None:
        return None
    starts = ptr.starts.reshape(-1)
    width = ptr.width
    if mask is None:
        counts = np.full(starts.shape, width, dtype=np.int64)
    elif isinstance(mask, LanePrefix) and mask.width == width and ptr.batched >= mask.batched:
        counts = np.broadcast_to(mask.counts, starts.shape)
    else:
        return None  # a plain mask, or one with more rows than the pointer
    if ((counts > 0) & ((starts < 0) | (starts + counts > size))).any():
        return None
    if store and not _disjoint(starts, counts):
        return None  # two rows write one element: the lane order decides
    first, stop, step = _full_run(starts, counts, width)
    access = RunsAccess(ptr, counts, first, stop, step)
    return access if len(access.partial) <= MAX_PARTIAL_ROWS else None


def _full_run(starts: np.ndarray, counts: np.ndarray, width: int) -> tuple[int, int, int]:
    """``(first, stop, step)``: the full rows, when they are rows ``first`` to ``stop``
    and their starts go up by ``step`` (>= 0); else an empty range."""
    full = np.flatnonzero(counts == width)
    if not full.size:
        return 0, 0, width
    first, stop = int(full[0]), int(full[-1]) + 1
    step = int(starts[first + 1] - starts[first]) if stop - first > 1 else width
    expected = starts[first] + step * np.arange(stop - first)
    if step < 0 or stop - first != full.size or not (starts[first:stop] == expected).all():
        return 0, 0, width  # in several pieces, or not evenly spaced: copied one by one
    return first, stop, step


def _disjoint(starts: np.ndarray, counts: np.ndarray) -> bool:
    """True when no two rows' on lanes share an element (the order of writes is then free)."""
    on = counts > 0
    begin, count = starts[on], counts[on]
    if not (begin[1:] >= begin[:-1]).all():  # rows out of order (rare): sort them first
        order = np.argsort(begin, kind="stable")
        begin, count = begin[order], count[order]
    return bool((begin[1:] >= begin[:-1] + count[:-1]).all())


@functools.lru_cache(maxsize=64)
def _rest_rows(rows: int, first: int, stop: int) -> np.ndarray:
    """The rows other than ``first`` to ``stop`` (read-only: shared by every caller)."""
    rest = np.concatenate((np.arange(first), np.arange(stop, rows)))
    rest.flags.writeable = False
    return rest


# ---------------------------------------------------------------- loads and what they feed


class _Rows(_Lazy):
    """A lazy block in two pieces: rows ``first`` to ``stop`` (:meth:`full`) and the others.

    ``layout`` is ``(rows, width, first, stop)``; values of one layout
    combine piece by piece. The other rows are :meth:`rest_rows`, their
    values :meth:`rest`.
    """

    layout: tuple[int, int, int, int]

    @property
    def shape(self) -> tuple[int, ...]:
        """``(programs, width)``, or ``(width,)`` unbatched."""
        rows, width, _, _ = self.layout
        return (rows, width) if self.batched else (width,)

    def make(self) -> np.ndarray:
        """The block, computed now."""
        rows, width, first, stop = self.layout
        grid = np.empty((rows, width), dtype=self.dtype)
        self.write_full(grid[first:stop])
        grid[self.rest_rows()] = self.rest()
        return grid if self.batched else grid[0]

    def rest_rows(self) -> np.ndarray:
        """The indices of the rows other than ``first`` to ``stop``."""
        rows, _, first, stop = self.layout
        return _rest_rows(rows, first, stop)

    def rest_index(self, row: int) -> int:
        """Where the values of ``row`` (not one of ``first`` to ``stop``) are in :meth:`rest`."""
        _, _, first, stop = self.layout
        return row if row < first else row - (stop - first)

    def full(self) -> np.ndarray:
        """The values of rows ``first`` to ``stop``."""
        raise NotImplementedError

    def rest(self) -> np.ndarray:
        """The values of the other rows (:meth:`rest_rows`), as a new array."""
        raise NotImplementedError

    def write_full(self, view: np.ndarray) -> None:
        """Write the values of rows ``first`` to ``stop`` into ``view`` (a store's)."""
        np.copyto(view, self.full(), casting="unsafe")

    def buffers(self) -> list[np.ndarray]:
        """The memory this value reads."""
        raise NotImplementedError


class LoadedRuns(_Rows):
    """A load through lane runs (bounds checked already), read from its buffer when used.

    Its full rows are one strided view of the buffer; the other rows take
    ``other`` (0 without it), then their on lanes.
    """

    flat: np.ndarray
    access: RunsAccess
    other: RVal | None

    def __init__(
        self, flat: np.ndarray, access: RunsAccess, other: RVal | None, batched: bool
    ) -> None:
        layout = (access.counts.size, access.runs.width, access.first, access.stop)
        super().__init__(batched, flat=flat, access=access, other=other, layout=layout)

    @property
    def dtype(self) -> np.dtype:
        """The buffer's dtype."""
        return self.flat.dtype

    def full(self) -> np.ndarray:
        """The full rows: a view of the buffer."""
        return self.access.view(self.flat)

    def rest(self) -> np.ndarray:
        """The other rows: ``other``, then the on lanes of the partial rows."""
        rows, access = self.rest_rows(), self.access
        if self.other is None:
            values = np.zeros((rows.size, self.layout[1]), dtype=self.dtype)
        else:
            values = np.broadcast_to(self.other.data, self.layout[:2])[rows]
        for row in access.partial:
            lanes = access.lanes(row)
            values[self.rest_index(row), : lanes.stop - lanes.start] = self.flat[lanes]
        return values

    def buffers(self) -> list[np.ndarray]:
        """The memory this value reads."""
        return [self.flat]


class DeferredUfunc(_Rows):
    """``ufunc(*args)`` over lazy loads, computed where it is used.

    A store through the same layout computes the full rows straight into
    its own view of memory (:meth:`write_full`), so ``x + y`` stored makes
    no block at all; any other use makes the block on its first read.
    """

    ufunc: np.ufunc
    args: tuple[RVal, ...]

    def __init__(self, ufunc: np.ufunc, args: tuple[RVal, ...], layout: tuple[int, ...]) -> None:
        batched = any(a.batched for a in args)
        super().__init__(batched, ufunc=ufunc, args=args, layout=layout)

    @property
    def dtype(self) -> np.dtype:
        """The operands' dtype."""
        return self.args[0].dtype

    def full(self) -> np.ndarray:
        """The full rows: of the block if made already, else computed into a new array."""
        made = self.__dict__.get("_made")
        if made is not None:
            rows, width, first, stop = self.layout
            return made.reshape(rows, width)[first:stop]
        return self.ufunc(*self._pieces(full=True))

    def rest(self) -> np.ndarray:
        """The other rows, computed into a new array."""
        return self.ufunc(*self._pieces(full=False))

    def write_full(self, view: np.ndarray) -> None:
        """Compute the full rows into ``view``."""
        if view.dtype != self.dtype:
            super().write_full(view)
            return
        self.ufunc(*self._pieces(full=True), out=view)

    def buffers(self) -> list[np.ndarray]:
        """The memory this value reads."""
        return [b for a in self.args if isinstance(a, _Rows) for b in a.buffers()]

    def _pieces(self, full: bool) -> list[np.ndarray]:
        rows, width, first, stop = self.layout
        out = []
        for arg in self.args:
            if isinstance(arg, _Rows):
                out.append(arg.full() if full else arg.rest())
                continue
            grid = np.broadcast_to(arg.data, (rows, width))
            out.append(grid[first:stop] if full else grid[self.rest_rows()])
        return out


def elementwise(
    ufunc: np.ufunc, args: tuple[RVal, ...], dtype: np.dtype, out: np.ndarray | None = None
) -> RVal | None:
    """``ufunc(*args)`` over lazy loads (:class:`LoadedRuns`), read straight from their buffers.

    With ``out`` (a block of the result's shape, which an operand leaves
    free) the result is computed into it now; otherwise it is deferred to
    its use (:class:`DeferredUfunc`). None when no operand is lazy in this
    way, when operands of different row layouts meet, or when an operand is
    not of ``dtype``: the caller then computes as usual, making the loads
    into arrays.
    """
    rows_args = [a for a in args if isinstance(a, _Rows)]
    if not rows_args or any(a.layout != rows_args[0].layout for a in rows_args):
        return None
    if any(a.dtype != dtype for a in args):
        return None
    deferred = DeferredUfunc(ufunc, args, rows_args[0].layout)
    if out is None:
        return deferred
    rows, width, first, stop = deferred.layout
    grid = out.reshape(rows, width)
    deferred.write_full(grid[first:stop])
    grid[deferred.rest_rows()] = deferred.rest()
    return RVal(out, deferred.batched)


def store_rows(value: RVal, access: RunsAccess, flat: np.ndarray) -> _Rows | None:
    """``value`` if a store through ``access`` into ``flat`` may write it piece by piece.

    That needs the store's own layout, and no memory shared with what the
    value reads: a step of a store runs again after Ctrl-C
    (:func:`~minitriton.emulator.rows.complete_despite_interrupt`), and
    computing into memory that is also read would not give the same values
    twice.
    """
    if not isinstance(value, _Rows):
        return None
    layout = (access.counts.size, access.runs.width, access.first, access.stop)
    if value.layout != layout or any(np.may_share_memory(b, flat) for b in value.buffers()):
        return None
    return value
