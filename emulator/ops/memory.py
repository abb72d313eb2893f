"""Semantics of memory ops: ``tt.addptr``, ``tt.load``, ``tt.store`` and the atomics.

Every access is checked against its buffer on the lanes the mask enables;
an out-of-bounds access raises a located :class:`EmulatorError` naming the
parameter, its size, the program and the first offending offsets and lanes.
Disabled lanes are never read (a masked load without ``other`` gives 0).

Order, as sequential execution in grid order would give it:

* a batched store writes its lanes in program-major, then lane order, so
  where two lanes write one address the highest program id wins;
* an atomic runs lane by lane in that same order and returns the old
  values. Duplicate addresses are handled in "occurrence rank" levels (all
  first occurrences, then all second ones, ...), and very long runs of one
  address with ``ufunc.accumulate``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from minitriton.emulator.errors import EmulatorError, oob_report
from minitriton.emulator.interpreter import ProgramState
from minitriton.emulator.lanes import (
    LoadedRuns,
    RunsAccess,
    addptr_runs,
    runs_access,
    store_rows,
)
from minitriton.emulator.mask_hint import mask_help
from minitriton.emulator.memory import Buffer, note_reads
from minitriton.emulator.registry import semantics
from minitriton.emulator.rows import Rows, complete_despite_interrupt, find_rows
from minitriton.emulator.values import RVal, from_compute, to_compute
from minitriton.ir.core import Operation
from minitriton.ir.ops import AddPtrOp, AtomicCASOp, AtomicRMWOp, LoadOp, StoreOp

# ---------------------------------------------------------------- bounds


def check_bounds(
    op: Operation, state: ProgramState, ptr: RVal, mask: RVal | None, verb: str
) -> Buffer:
    """Return the buffer of ``ptr``; raise if an enabled lane is outside it."""
    buf = state.interp.memory[ptr.buffer or 0]
    offsets = ptr.data
    if offsets.size and offsets.min() >= 0 and offsets.max() < buf.size:
        return buf  # fast path: no lane is out of bounds, masked or not
    bad = _outside(offsets, buf.size)
    if mask is not None:
        bad = bad & mask.data
    if bad.any():
        raise _oob_error(op, state, buf, ptr, bad, verb, masked=mask is not None)
    return buf


def check_writable(op: Operation, state: ProgramState, buf: Buffer) -> None:
    """A write to read-only memory is a located error.

    The launcher refuses read-only arguments that a kernel stores to; an
    array found by its address (a pointer made from an integer) is checked
    here, at the write.
    """
    if not buf.flat.flags.writeable:
        raise state.interp.error(
            op,
            state,
            f"the kernel writes to '{buf.name}', which is read-only",
            ["pass the address of a writable array (arr.copy())"],
        )


def _outside(offsets: np.ndarray, size: int) -> np.ndarray:
    """Where ``offsets`` fall outside ``[0, size)``.

    Negative offsets become huge as unsigned numbers of their own width, so
    one comparison catches both ends (an int32 offset array serves buffers
    of up to 2^31 elements this way; above that it is widened first).
    """
    if offsets.dtype != np.int64 and size > np.iinfo(offsets.dtype).max:
        offsets = offsets.astype(np.int64)
    return offsets.view(f"u{offsets.itemsize}") >= np.uint64(size)


def _oob_error(
    op: Operation, state: ProgramState, buf: Buffer, ptr: RVal, bad: np.ndarray, verb: str,
    masked: bool = False,
) -> EmulatorError:  # fmt: skip
    shape = op.operands[0].shape
    offsets = np.broadcast_to(ptr.data, bad.shape)
    row = 0
    if bad.ndim > len(shape):  # batched: report the first program (in grid order)
        row = int(np.argmax(bad.reshape(bad.shape[0], -1).any(axis=1)))
        bad, offsets = bad[row], offsets[row]
    lanes = np.flatnonzero(bad)
    outside = offsets.reshape(-1)[lanes]
    message, details = oob_report(
        op.name, verb, buf.name, buf.size, repr(buf.dtype), shape, lanes, outside[:3]
    )
    help = mask_help(op, state, row, buf.name, buf.size, lanes, outside, masked)
    return state.interp.error(op, state, message, details, row, help=help)


# ---------------------------------------------------------------- pointers


@semantics(AddPtrOp)
def _addptr(op: Operation, state: ProgramState, ptr: RVal, offset: RVal) -> RVal:
    """Pointer plus an element offset (computed in 64 bits; the offset already wrapped)."""
    runs = addptr_runs(ptr, offset)  # a splat pointer plus lane runs stays lazy
    if runs is not None:
        return runs
    data = _offsets_from_base(ptr.data, offset.data) if op.results[0].shape else None
    if data is None:
        data = np.add(ptr.data, offset.data, dtype=np.int64)  # one pass, no temporary
    return RVal(data, ptr.batched or offset.batched, ptr.buffer)


def _offsets_from_base(base: np.ndarray, offset: np.ndarray) -> np.ndarray | None:
    """``offset`` itself when ``base`` is element 0 of its buffer everywhere, else None.

    ``x_ptr + offsets`` on an argument's pointer is the commonest ``tt.addptr``:
    the sum is the offsets themselves, so the block of (often 32-bit) offsets
    serves as the pointer's data, without a new 64-bit block per pointer
    (which a first launch pays for in fresh pages). Values are never written
    in place, so sharing the array is safe; an offset block smaller than the
    result (a broadcast) takes the general path, and so do scalar pointers
    (``x_ptr + row * stride``): small, and cheaper to add to in 64 bits.
    """
    if offset.dtype not in _OFFSET_DTYPES or not base.size or any(base.strides):
        return None
    if base.item(0) != 0:
        return None
    if np.broadcast_shapes(base.shape, offset.shape) != offset.shape:
        return None
    return offset


#: Offset dtypes a pointer's data may keep as they are (signed, so never huge).
_OFFSET_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


# ---------------------------------------------------------------- load, store


@semantics(LoadOp)
def _load(
    op: Operation,
    state: ProgramState,
    ptr: RVal,
    mask: RVal | None = None,
    other: RVal | None = None,
) -> RVal:
    """Gather; disabled lanes take ``other`` (0 without it) and are never read."""
    batched = any(v is not None and v.batched for v in (ptr, mask, other))
    buf = state.interp.memory[ptr.buffer or 0]
    if buf.reads is not None:  # a watched argument (a strided view): note what is read
        note_reads(buf, ptr.data, None if mask is None else mask.data)
    access = runs_access(ptr, mask, buf.size, store=False)
    if access is not None and (ptr.batched or not batched):
        loaded = LoadedRuns(buf.flat, access, other, batched)
        return loaded if state.interp.lazy_loads else RVal(loaded.data, batched)
    shape = np.broadcast_shapes(*(v.data.shape for v in (ptr, mask, other) if v is not None))
    rows = find_rows(ptr.data, buf.size) if shape == ptr.data.shape else None
    if rows is None or not edge_rows_in_bounds(buf, ptr.data, mask, rows):
        check_bounds(op, state, ptr, mask, "from")  # with rows: raises, naming the first bad lane
    if rows is not None:
        return RVal(_load_rows(buf.flat, ptr.data, rows, mask, other), batched)
    if mask is None:
        return RVal(np.asarray(buf.flat[ptr.data]), batched)
    fill = other.data if other is not None else np.zeros((), dtype=buf.flat.dtype)
    shape = np.broadcast_shapes(ptr.data.shape, mask.data.shape)
    if buf.size == 0:  # every enabled lane would have been out of bounds
        return RVal(np.broadcast_to(fill, shape).copy(), batched)
    # Disabled lanes may point anywhere: clip them to a valid index, then overwrite.
    values = _take_clipped(buf.flat, ptr.data, shape)
    np.copyto(values, fill, where=np.logical_not(mask.data))
    return RVal(values, batched)


def _load_rows(
    flat: np.ndarray, offsets: np.ndarray, rows: Rows, mask: RVal | None, other: RVal | None
) -> np.ndarray:
    """A load whose offsets are :class:`Rows`: a copy of the view, the edge rows gathered.

    The enabled lanes were checked already. The disabled lanes of the rows
    inside the buffer are read with the rest (they are inside it too), then
    overwritten, which is cheaper than a masked copy.
    """
    shape = (rows.count, rows.width)
    values = np.empty(offsets.shape, dtype=flat.dtype)
    grid, inside = values.reshape(shape), slice(rows.first, rows.stop)
    grid[inside] = rows.view(flat)
    if mask is None:
        return values
    on = np.broadcast_to(mask.data, offsets.shape).reshape(shape)
    fill = np.zeros((), flat.dtype)
    if other is not None:
        fill = np.broadcast_to(other.data, offsets.shape).reshape(shape)
    if not on[inside].all():
        np.copyto(grid[inside], fill if fill.ndim == 0 else fill[inside], where=~on[inside])
    lanes = offsets.reshape(shape)
    for row in rows.edge():  # disabled lanes there may point anywhere: clipped, then overwritten
        grid[row] = fill if fill.ndim == 0 else fill[row]
        if flat.size:
            np.copyto(grid[row], np.take(flat, lanes[row], mode="clip"), where=on[row])
    return values


def edge_rows_in_bounds(buf: Buffer, offsets: np.ndarray, mask: RVal | None, rows: Rows) -> bool:
    """True when the enabled lanes of the rows not wholly inside ``buf`` are inside it."""
    edge = rows.edge()
    if not edge:
        return True
    if mask is None:
        return False  # every lane of an edge row is enabled, and some lane is outside
    shape = (rows.count, rows.width)
    lanes = offsets.reshape(shape)[edge]
    on = np.broadcast_to(mask.data, offsets.shape).reshape(shape)[edge]
    return not (_outside(lanes, buf.size) & on).any()


#: Most lanes one ``np.take`` gets when NumPy would copy the offsets (see below).
TAKE_CHUNK = 1 << 15


def _take_clipped(flat: np.ndarray, offsets: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``flat[offsets]`` broadcast to ``shape``, out-of-range offsets clipped to the ends.

    ``np.take`` copies its index array unless it is a writable ``intp``
    array of the right shape: a broadcast view, or 32-bit offsets (the
    pointer data of ``x_ptr + offsets``), would cost a 64-bit copy as big as
    the block, touched for the first time in a fresh process. Those are
    taken a slice of rows at a time, so the copies stay small and reused.
    """
    if offsets.shape == shape and offsets.dtype == np.intp and offsets.flags.writeable:
        return np.asarray(np.take(flat, offsets, mode="clip"))
    offsets = np.broadcast_to(offsets, shape)
    if not shape or offsets.size <= TAKE_CHUNK:
        return np.asarray(np.take(flat, offsets, mode="clip"))
    out = np.empty(shape, dtype=flat.dtype)
    step = _rows_per_chunk(shape)
    for row in range(0, shape[0], step):
        np.take(flat, offsets[row : row + step], mode="clip", out=out[row : row + step])
    return out


def _rows_per_chunk(shape: tuple[int, ...]) -> int:
    """How many rows (of the leading axis) make about :data:`TAKE_CHUNK` lanes."""
    lanes_per_row = max(1, int(np.prod(shape[1:], dtype=np.int64)))
    return max(1, TAKE_CHUNK // lanes_per_row)


@semantics(StoreOp)
def _store(
    op: Operation, state: ProgramState, ptr: RVal, value: RVal, mask: RVal | None = None
) -> None:
    """Scatter the enabled lanes, program-major then lane order (last writer wins).

    Every write of the store runs to its end, even through Ctrl-C (see
    :func:`~minitriton.emulator.rows.complete_despite_interrupt`).
    """
    buf = state.interp.memory[ptr.buffer or 0]
    check_writable(op, state, buf)
    access = runs_access(ptr, mask, buf.size, store=True)
    if access is not None and (ptr.batched or not value.batched):
        complete_despite_interrupt(_runs_writes(buf.flat, access, value))
        return
    parts = [ptr.data, value.data] + ([mask.data] if mask is not None else [])
    shape = np.broadcast_shapes(*(p.shape for p in parts))
    rows = find_rows(ptr.data, buf.size) if ptr.data.shape == shape else None
    if rows is not None and not rows.no_overlap():
        rows = None  # overlapping rows: the lane order decides, so scatter in that order
    if rows is None or not edge_rows_in_bounds(buf, ptr.data, mask, rows):
        check_bounds(op, state, ptr, mask, "to")  # with rows: raises, naming the first bad lane
    values = np.broadcast_to(value.data, shape)
    enabled = None if mask is None else np.broadcast_to(mask.data, shape)
    if rows is not None:
        complete_despite_interrupt(_row_writes(buf.flat, ptr.data, values, enabled, rows))
        return
    offsets = np.broadcast_to(ptr.data, shape)
    if enabled is not None and enabled.all():
        enabled = None
    complete_despite_interrupt(_scatters(buf.flat, offsets, values, enabled))


def _runs_writes(flat: np.ndarray, access: RunsAccess, value: RVal) -> list[Callable[[], None]]:
    """The writes of a store through lane runs (checked already, no two rows overlapping).

    A lazy value of the store's layout is written piece by piece, its full
    rows computed straight into the buffer (:func:`~minitriton.emulator.lanes.store_rows`).
    """
    first, stop = access.first, access.stop
    pieces = store_rows(value, access, flat)
    if pieces is None:
        grid = np.broadcast_to(value.data, (access.counts.size, access.runs.width))
        write_full: Callable[[np.ndarray], None] = partial(_copy_rows, grid[first:stop])
        row_values: Callable[[int], np.ndarray] = grid.__getitem__
    else:
        rest, index = pieces.rest(), pieces.rest_index
        write_full, row_values = pieces.write_full, lambda row: rest[index(row)]
    steps: list[Callable[[], None]] = []
    if stop > first:
        steps.append(partial(write_full, access.view(flat, writeable=True)))
    for row in access.partial:
        lanes = access.lanes(row)
        steps.append(partial(_copy_lanes, flat, lanes, row_values(row)[: lanes.stop - lanes.start]))
    return steps


def _copy_rows(rows: np.ndarray, view: np.ndarray) -> None:
    np.copyto(view, rows, casting="unsafe")


def _copy_lanes(flat: np.ndarray, lanes: slice, values: np.ndarray) -> None:
    np.copyto(flat[lanes], values, casting="unsafe")


def _row_writes(
    flat: np.ndarray, offsets: np.ndarray, values: np.ndarray, enabled: np.ndarray | None,
    rows: Rows,
) -> list[Callable[[], None]]:  # fmt: skip
    """The writes of a store whose offsets are non-overlapping :class:`Rows`."""
    shape = (rows.count, rows.width)
    grid, lanes = values.reshape(shape), offsets.reshape(shape)
    view, inside = rows.view(flat, writeable=True), slice(rows.first, rows.stop)
    if enabled is None:
        return [partial(_copy_rows, grid[inside], view)]
    on = enabled.reshape(shape)
    steps: list[Callable[[], None]] = []
    if on[inside].all():  # a plain copy is several times faster than a masked one
        steps.append(partial(_copy_rows, grid[inside], view))
    else:
        steps.append(lambda: np.copyto(view, grid[inside], casting="unsafe", where=on[inside]))
    for row in rows.edge():
        steps.append(partial(_scatter_lanes, flat, lanes[row], grid[row], on[row]))
    return steps


def _scatters(
    flat: np.ndarray, offsets: np.ndarray, values: np.ndarray, enabled: np.ndarray | None
) -> list[Callable[[], None]]:
    """The writes of ``flat[offsets] = values`` on the ``enabled`` lanes (all if None), in order.

    NumPy assigns repeated indices of a 1-D index array in order, so the last
    lane wins. It scatters through 32-bit indices three times slower than
    through ``intp`` ones: big blocks of those go a slice of rows at a time,
    widened (and compressed to the enabled lanes) there, so the copies stay
    small. ``intp`` offsets go in one piece, faster.
    """
    if offsets.dtype == np.intp or not offsets.shape or offsets.size <= TAKE_CHUNK:
        return [lambda: _scatter_lanes(flat, offsets, values, enabled)]
    step = _rows_per_chunk(offsets.shape)
    steps: list[Callable[[], None]] = []
    for row in range(0, offsets.shape[0], step):
        rows = slice(row, row + step)
        lanes = None if enabled is None else enabled[rows]
        steps.append(partial(_scatter_lanes, flat, offsets[rows], values[rows], lanes))
    return steps


def _scatter_lanes(
    flat: np.ndarray, offsets: np.ndarray, values: np.ndarray, enabled: np.ndarray | None
) -> None:
    if enabled is not None and not enabled.all():
        offsets, values = offsets[enabled], values[enabled]
    flat[offsets.reshape(-1).astype(np.intp, copy=False)] = values.reshape(-1)


# ---------------------------------------------------------------- atomics


def _lanes(state: ProgramState, op: Operation, *vals: RVal | None) -> list[np.ndarray | None]:
    """Operands with one row per program, flattened in program-major, lane order.

    Even an unbatched atomic runs once per program, so everything is broadcast
    to the batch.
    """
    shape = (state.size, *op.operands[0].shape)
    out: list[np.ndarray | None] = []
    for v in vals:
        out.append(None if v is None else np.broadcast_to(v.rows(state.size), shape).reshape(-1))
    return out


def _atomic_result(op: Operation, state: ProgramState, old: np.ndarray, batched: bool) -> RVal:
    shape = op.operands[0].shape
    if state.size == 1 and not batched:
        return RVal(old.reshape(shape), False)
    return RVal(old.reshape((state.size, *shape)), True)


@semantics(AtomicRMWOp)
def _atomic_rmw(
    op: Operation, state: ProgramState, ptr: RVal, val: RVal, mask: RVal | None = None
) -> RVal:
    """Read-modify-write lane by lane in grid order; returns the old values (0 where masked)."""
    buf = check_bounds(op, state, _batched_ptr(state, ptr), mask, "at")
    check_writable(op, state, buf)
    offsets, values, enabled = _lanes(state, op, ptr, val, mask)
    assert offsets is not None and values is not None
    old = np.zeros(offsets.shape, dtype=buf.flat.dtype)
    sel = enabled if enabled is not None else slice(None)
    old[sel] = sequential_rmw(buf, offsets[sel], values[sel], op.attrs["kind"])
    batched = any(v is not None and v.batched for v in (ptr, val, mask))
    return _atomic_result(op, state, old, batched)


@semantics(AtomicCASOp)
def _atomic_cas(op: Operation, state: ProgramState, ptr: RVal, cmp: RVal, val: RVal) -> RVal:
    """Compare-and-swap lane by lane in grid order (bitwise compare); returns the old values."""
    buf = check_bounds(op, state, _batched_ptr(state, ptr), None, "at")
    check_writable(op, state, buf)
    offsets, cmps, values = _lanes(state, op, ptr, cmp, val)
    assert offsets is not None and cmps is not None and values is not None
    old = np.empty(offsets.shape, dtype=buf.flat.dtype)
    bits = np.dtype(f"u{buf.flat.dtype.itemsize}")
    for level in _rank_levels(offsets):
        addr = offsets[level]
        current = buf.flat[addr]
        old[level] = current
        hit = current.view(bits) == cmps[level].view(bits)
        buf.flat[addr[hit]] = values[level][hit]
    batched = ptr.batched or cmp.batched or val.batched
    return _atomic_result(op, state, old, batched)


def _batched_ptr(state: ProgramState, ptr: RVal) -> RVal:
    # Bounds errors must name a program, so check the per-program view.
    return ptr if ptr.batched or state.size == 1 else RVal(ptr.rows(state.size), True, ptr.buffer)


_COMBINE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "xchg": lambda old, new: new,
}
_LONG_RUN = 32  # runs of one address longer than this use ufunc.accumulate


def _combine_fn(kind: str, dtype: np.dtype) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    if kind in ("max", "min"):
        is_int = dtype.kind in "iub"
        if kind == "max":
            return np.maximum if is_int else np.fmax
        return np.minimum if is_int else np.fmin
    return _COMBINE[kind]


def sequential_rmw(buf: Buffer, offsets: np.ndarray, values: np.ndarray, kind: str) -> np.ndarray:
    """Apply ``mem[o] = f(mem[o], v)`` for each lane in order; return the old values."""
    elem = buf.dtype
    old = np.empty(offsets.shape, dtype=buf.flat.dtype)
    fn = _combine_fn(kind, to_compute(buf.flat[:0], elem).dtype)
    long_runs = _long_runs(offsets) if elem.name != "bf16" else []
    done = np.zeros(offsets.shape, dtype=bool)
    for lanes in long_runs:
        old[lanes] = _accumulate_run(buf, offsets[lanes[0]], values[lanes], fn, kind)
        done[lanes] = True
    rest = np.flatnonzero(~done)
    for level in _rank_levels(offsets[rest]):
        lanes = rest[level]
        addr = offsets[lanes]
        current = buf.flat[addr]
        old[lanes] = current
        new = fn(to_compute(current, elem), to_compute(values[lanes], elem))
        buf.flat[addr] = from_compute(new, elem)
    return old


def _rank_levels(offsets: np.ndarray) -> list[np.ndarray]:
    """Lane indices grouped by occurrence rank: level k holds each address's k-th lane."""
    if offsets.size == 0:
        return []
    order = np.argsort(offsets, kind="stable")
    starts, counts = _runs(offsets[order])
    rank = np.empty(offsets.shape, dtype=np.int64)
    rank[order] = np.arange(offsets.size) - np.repeat(starts, counts)
    by_rank = np.argsort(rank, kind="stable")
    bounds = np.searchsorted(rank[by_rank], np.arange(int(rank.max()) + 2))
    return [by_rank[bounds[k] : bounds[k + 1]] for k in range(len(bounds) - 1)]


def _runs(sorted_offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    edges = np.flatnonzero(sorted_offsets[1:] != sorted_offsets[:-1]) + 1
    starts = np.concatenate([[0], edges])
    counts = np.diff(np.concatenate([starts, [sorted_offsets.size]]))
    return starts, counts


def _long_runs(offsets: np.ndarray) -> list[np.ndarray]:
    """Lane indices (in order) of each address used more than ``_LONG_RUN`` times."""
    if offsets.size <= _LONG_RUN:
        return []
    order = np.argsort(offsets, kind="stable")
    starts, counts = _runs(offsets[order])
    return [order[s : s + c] for s, c in zip(starts, counts) if c > _LONG_RUN]


def _accumulate_run(
    buf: Buffer, address: np.integer, values: np.ndarray, fn: Callable, kind: str
) -> np.ndarray:
    # Exactly sequential: accumulate walks the run left to right in the dtype.
    current = buf.flat[address : address + 1].copy()
    if kind == "xchg":
        buf.flat[address] = values[-1]
        return np.concatenate([current, values[:-1]])
    assert isinstance(fn, np.ufunc)  # every kind but xchg combines with a ufunc
    acc = fn.accumulate(np.concatenate([current, values]).astype(buf.flat.dtype))
    buf.flat[address] = acc[-1]
    return acc[:-1]
