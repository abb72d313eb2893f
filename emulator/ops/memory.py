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

import time
from collections.abc import Callable
from functools import partial

import numpy as np

from minitriton.emulator.errors import EmulatorError, oob_report
from minitriton.emulator.interpreter import ProgramState
from minitriton.emulator.mask_hint import mask_help
from minitriton.emulator.memory import RAW_ADDRESSES, Buffer, note_reads
from minitriton.emulator.registry import semantics
from minitriton.emulator.rows import complete_despite_interrupt
from minitriton.emulator.values import RVal, from_compute, to_compute
from minitriton.ir.core import Operation
from minitriton.ir.ops import AddPtrOp, AtomicCASOp, AtomicPollOp, AtomicRMWOp, LoadOp, StoreOp
from minitriton.ir.types import PointerType, element_type

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
    if ptr.buffer == RAW_ADDRESSES:  # a raw byte address: the offset counts elements
        pointee = element_type(op.operands[0].type)
        assert isinstance(pointee, PointerType)
        step = np.multiply(offset.data, pointee.pointee.numpy.itemsize, dtype=np.int64)
        return RVal(np.add(ptr.data, step), ptr.batched or offset.batched, ptr.buffer)
    data = np.add(ptr.data, offset.data, dtype=np.int64)  # one pass, no temporary
    return RVal(data, ptr.batched or offset.batched, ptr.buffer)


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
    buf = check_bounds(op, state, ptr, mask, "from")
    if buf.reads is not None:  # a watched argument (a strided view): note what is read
        note_reads(buf, ptr.data, None if mask is None else mask.data)
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
    check_bounds(op, state, ptr, mask, "to")
    parts = [ptr.data, value.data] + ([mask.data] if mask is not None else [])
    shape = np.broadcast_shapes(*(p.shape for p in parts))
    values = np.broadcast_to(value.data, shape)
    enabled = None if mask is None else np.broadcast_to(mask.data, shape)
    offsets = np.broadcast_to(ptr.data, shape)
    if enabled is not None and enabled.all():
        enabled = None
    complete_despite_interrupt(_scatters(buf.flat, offsets, values, enabled))


def _copy_rows(rows: np.ndarray, view: np.ndarray) -> None:
    np.copyto(view, rows, casting="unsafe")


def _copy_lanes(flat: np.ndarray, lanes: slice, values: np.ndarray) -> None:
    np.copyto(flat[lanes], values, casting="unsafe")


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


@semantics(AtomicPollOp)
def _atomic_poll(
    op: Operation, state: ProgramState, ptr: RVal, expected: RVal, timeout: RVal | None = None
) -> RVal:
    """Read the flag until it equals ``expected``, letting the other programs run meanwhile.

    A program whose timeout (nanoseconds of wall time here) runs out gets
    False. When no other program can change the flag any more (see
    :mod:`~minitriton.emulator.cooperative`), a poll with a timeout returns
    False at once and one without is a located error: on a GPU it would hang.
    """
    buf = check_bounds(op, state, _batched_ptr(state, ptr), None, "at")
    offsets, wanted = _lanes(state, op, ptr, expected)
    assert offsets is not None and wanted is not None
    limits = None if timeout is None else timeout.rows(state.size).reshape(-1)
    start = time.perf_counter_ns()
    matched = np.zeros(offsets.shape, dtype=bool)
    waiting = np.ones(offsets.shape, dtype=bool)
    while True:
        seen = buf.flat[offsets]
        matched |= waiting & (seen == wanted)
        waiting &= ~matched
        if limits is not None:
            waiting &= limits > np.uint64(time.perf_counter_ns() - start)
        if not waiting.any():
            break
        if not state.interp.give_way(op, state):
            if limits is None:
                raise _poll_deadlock(op, state, buf, seen, wanted, waiting)
            break
    batched = ptr.batched or expected.batched or (timeout is not None and timeout.batched)
    return _atomic_result(op, state, matched, batched)


def _poll_deadlock(
    op: Operation, state: ProgramState, buf: Buffer, seen: np.ndarray, wanted: np.ndarray,
    waiting: np.ndarray,
) -> EmulatorError:  # fmt: skip
    row = int(np.argmax(waiting))
    return state.interp.error(
        op, state,
        f"tl.atomic_poll waits forever: '{buf.name}' holds {seen[row]}, not {wanted[row]}, "
        "and no other program of the grid can change it (they have finished or wait too)",
        ["on a GPU this kernel would hang"], row,
        help="store the value in another program (one that does not wait for this one), "
             "or give the poll a timeout_ns and test its result",
    )  # fmt: skip


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
