"""Checks no GPU gives a student: uninitialized reads, data races, index overflow.

Out-of-bounds accesses are always errors in the emulator (see
:mod:`minitriton.emulator.ops.memory`); ``device_assert`` is checked in debug mode (see
:mod:`minitriton.emulator.ops.debug`). This module adds three checks, each reported as a located
:class:`CheckError` with the program ids and offsets involved:

* **uninitialized reads**: a load (or atomic) of memory that neither the host
  nor this launch has written. The host marks memory as uninitialized by
  allocating it with :func:`empty` / :func:`empty_like` or by passing an
  array through :func:`uninitialized`; those fill the array with a
  recognizable bit pattern (a NaN for floats), so any later host write makes
  the element initialized again without any bookkeeping. A launch can also
  treat parameters as unwritten with ``poison=["out_ptr"]``.
* **data races**: two programs of one launch store to one element (with
  different values), or one program reads an element that another program
  stores. On a GPU the result then depends on the order in which programs
  run. Atomics are exempt, and so are accesses made while a program holds a
  spin lock (an ``atomic_cas`` that succeeded, until the ``atomic_xchg``
  that releases the same address), and reads of what a program stored
  before it set a flag that the reader then saw with an acquiring
  ``tl.atomic_poll`` (message passing: the poll orders them).
* **index overflow**: an ``i32`` (or narrower) add, sub or mul whose exact
  result does not fit, on a value that feeds a pointer offset: the classic
  ``pid * stride`` overflow of large tensors (Triton semantics item 10).

Switch them on with ``with checking(): ...`` around launches, with
``MINITRITON_CHECKS=all`` (or ``races,uninit,overflow``) in the
environment, with :func:`checked_launch` on an IR module, or with the
debugger's options.
"""

from __future__ import annotations

import contextlib
import sys
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minitriton.emulator.debug.tools import Launch, Tool, using
from minitriton.emulator.errors import EmulatorError, format_lanes, format_list, format_pid, plural
from minitriton.emulator.interpreter import Interpreter, Listener, ProgramState
from minitriton.emulator.memory import Buffer
from minitriton.emulator.values import RVal
from minitriton.ir.core import BlockArgument, Operation, OpResult, Value
from minitriton.ir.ops import (
    AddOp,
    AddPtrOp,
    AtomicCASOp,
    AtomicPollOp,
    AtomicRMWOp,
    ForOp,
    LoadOp,
    Module,
    MulOp,
    StoreOp,
    SubOp,
)
from minitriton.ir.traits import ReadsMemory, UnknownEffects, WritesMemory
from minitriton.ir.types import ScalarType, element_type

CHECK_NAMES = ("races", "uninit", "overflow")


class CheckError(EmulatorError):
    """A finding of one of the checks (an :class:`EmulatorError`, so it renders the same)."""


@dataclass(frozen=True)
class CheckOptions:
    """Which checks run; ``poison`` names parameters whose memory starts unwritten."""

    races: bool = True
    uninitialized: bool = True
    overflow: bool = True
    poison: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> CheckOptions:
        """``"all"``, ``"1"`` or a comma-separated list of :data:`CHECK_NAMES`."""
        names = {n.strip() for n in text.split(",") if n.strip()}
        if names & {"all", "1"}:
            return cls()
        unknown = names - {*CHECK_NAMES, "passes"}
        if unknown:
            raise ValueError(
                f"unknown check {sorted(unknown)[0]!r}; known: {', '.join(CHECK_NAMES)}"
            )
        return cls("races" in names, "uninit" in names, "overflow" in names)

    @property
    def any(self) -> bool:
        """Whether any check is on."""
        return self.races or self.uninitialized or self.overflow


# ---------------------------------------------------------------- poisoned host memory

#: The bit pattern an uninitialized element holds, by element size; for
#: floats these are NaNs, so that a stray read also shows up as NaN.
_PATTERNS: dict[int, bytes] = {
    1: bytes([0xA5]),
    2: np.array([0x7DA5], dtype=np.uint16).tobytes(),  # an f16 NaN
    4: np.array([0x7FA5A5A5], dtype=np.uint32).tobytes(),  # an f32 NaN
    8: np.array([0x7FF4A5A5A5A5A5A5], dtype=np.uint64).tobytes(),  # an f64 NaN
}
_BF16_PATTERN = np.array([0x7FA5], dtype=np.uint16).tobytes()  # a bf16 NaN


@dataclass
class _Poisoned:
    start: int  # address of the first byte
    nbytes: int
    pattern: bytes


_REGISTRY: dict[int, _Poisoned] = {}


def uninitialized(array: np.ndarray, *, bf16: bool = False) -> np.ndarray:
    """Mark ``array`` as uninitialized memory (in place) and return it.

    The array is filled with a recognizable pattern; a kernel that reads an
    element before anyone wrote it is reported by the ``uninit`` check. Host
    writes need no bookkeeping: they overwrite the pattern. Pass
    ``bf16=True`` for bf16 data kept in a ``uint16`` array.
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"uninitialized() takes a NumPy array, got {type(array).__name__}")
    pattern = _BF16_PATTERN if bf16 else _PATTERNS.get(array.dtype.itemsize)
    if pattern is None or not array.flags.c_contiguous:
        raise ValueError(
            "uninitialized() needs a C-contiguous array of 1-, 2-, 4- or 8-byte elements"
        )
    array.view(np.uint8).reshape(-1)[...] = np.tile(np.frombuffer(pattern, np.uint8), array.size)
    start = _address(array)
    _REGISTRY[start] = _Poisoned(start, array.nbytes, pattern)
    owner = array.base if isinstance(array.base, np.ndarray) else array
    weakref.finalize(owner, _REGISTRY.pop, start, None)
    return array


def empty(shape: int | Sequence[int], dtype: Any = np.float32) -> np.ndarray:
    """``np.empty`` whose elements count as uninitialized (see :func:`uninitialized`)."""
    return uninitialized(np.empty(shape, dtype=dtype))


def empty_like(array: np.ndarray, dtype: Any = None) -> np.ndarray:
    """``np.empty_like`` whose elements count as uninitialized."""
    return uninitialized(np.empty(array.shape, dtype=dtype or array.dtype))


def _address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


def initialized_mask(buf: Buffer, poisoned: bool) -> np.ndarray:
    """Per element of ``buf``: False where it still holds an uninitialized pattern."""
    if poisoned:
        return np.zeros(buf.size, dtype=bool)
    init = np.ones(buf.size, dtype=bool)
    if buf.size == 0:
        return init
    lo, hi = _address(buf.flat), _address(buf.flat) + buf.flat.nbytes
    for entry in _REGISTRY.values():
        if entry.start < hi and lo < entry.start + entry.nbytes:
            _clear_poisoned(buf, entry, init)
    return init


def _clear_poisoned(buf: Buffer, entry: _Poisoned, init: np.ndarray) -> None:
    # Compare whole elements of the buffer with the pattern, where both overlap.
    size = buf.flat.dtype.itemsize
    if len(entry.pattern) != size:
        return  # viewed with another element size: leave it initialized
    first = max(0, (entry.start - _address(buf.flat)) // size)
    last = min(buf.size, (entry.start + entry.nbytes - _address(buf.flat)) // size)
    raw = buf.flat.view(np.uint8).reshape(buf.size, size)[first:last]
    init[first:last] &= ~np.all(raw == np.frombuffer(entry.pattern, np.uint8), axis=1)


# ---------------------------------------------------------------- accesses


@dataclass
class Access:
    """The enabled, in-bounds lanes of one memory op for the programs of a batch."""

    buffer: int  # the root buffer's id
    rows: np.ndarray  # row of the batch of each lane
    lanes: np.ndarray  # flat lane index within the block
    offsets: np.ndarray  # element offsets in the accessed (maybe viewed) buffer
    units: np.ndarray  # element index in the root buffer
    pids: np.ndarray  # linear program id of each lane


def lane_data(state: ProgramState, op: Operation, index: int) -> np.ndarray:
    """Operand ``index`` of ``op`` with one row per program, broadcast to the pointer's shape."""
    shape = (state.size, *op.operands[0].shape)
    rval = state.lookup(op.operands[index])
    data = rval.rows(state.size)
    if data.ndim < len(shape):  # a scalar operand of a block op
        data = data.reshape(data.shape + (1,) * (len(shape) - data.ndim))
    return np.broadcast_to(data, shape)


def linear_pids(state: ProgramState) -> np.ndarray:
    """The linear (grid-order) id of each row of ``state``."""
    gx, gy, _ = state.interp.grid
    p = state.pids
    return p[:, 0] + gx * (p[:, 1] + gy * p[:, 2])


def access_of(state: ProgramState, op: Operation) -> tuple[Access, np.ndarray]:
    """The access ``op`` is about to make, and the full enabled mask (OOB lanes included)."""
    ptr = state.lookup(op.operands[0])
    memory = state.interp.memory
    buf = memory[ptr.buffer or 0]
    offsets = lane_data(state, op, 0)
    m = op.mask_operand()
    enabled = (
        np.ones(offsets.shape, dtype=bool) if m is None else lane_data(state, op, m).astype(bool)
    )
    inside = enabled & (offsets >= 0) & (offsets < buf.size)
    flat_inside = inside.reshape(state.size, -1)
    rows, lanes = np.nonzero(flat_inside)
    offs = offsets.reshape(state.size, -1)[rows, lanes]
    root = memory[buf.root]
    units = offs * buf.flat.dtype.itemsize // root.flat.dtype.itemsize
    return Access(buf.root, rows, lanes, offs, units, linear_pids(state)[rows]), enabled


# ---------------------------------------------------------------- the checker


@dataclass
class _BufferState:
    init: np.ndarray | None = None  # uninit check: which elements were written
    writer: np.ndarray | None = None  # races: last plain writer (linear pid), -1 none
    writer_site: np.ndarray | None = None
    reader: np.ndarray | None = None  # races: first plain reader, -1 none
    reader_site: np.ndarray | None = None
    many_readers: np.ndarray | None = None
    atomic: np.ndarray | None = None  # races: last program to use it atomically, -1 none
    atomic_site: np.ndarray | None = None
    locked_writer: np.ndarray | None = None  # races: last writer holding a lock, -1 none
    locked_site: np.ndarray | None = None
    lock: np.ndarray | None = None  # the lock (an id in Checker.lock_ids) it held


@dataclass
class Checker(Listener):
    """The listener that runs the checks for one launch (see the module docstring)."""

    options: CheckOptions = field(default_factory=CheckOptions)
    interp: Interpreter | None = None
    buffers: dict[int, _BufferState] = field(default_factory=dict)
    sites: list[Operation] = field(default_factory=list)
    site_ids: dict[int, int] = field(default_factory=dict)
    locks: dict[int, set[tuple[int, int]]] = field(default_factory=dict)  # pid -> held locks
    offset_ops: set[int] = field(default_factory=set)  # ids of ops feeding pointer offsets
    lock_ids: dict[tuple[int, int], int] = field(default_factory=dict)  # (buffer, unit) -> id
    #: pid -> the programs whose flag it saw with an acquiring poll (their earlier stores
    #: happen before its later loads), transitively.
    synced: dict[int, set[int]] = field(default_factory=dict)

    # -- setup --------------------------------------------------------------
    def attach(self, interp: Interpreter) -> None:
        """Start checking the launch of ``interp`` (done on its first op)."""
        self.interp = interp
        memory = interp.memory
        for i, buf in enumerate(memory.buffers):
            if buf.root == i:
                self.buffers[i] = self._buffer_state(buf)
        if self.options.overflow:
            self.offset_ops = {id(op) for op in offset_producers(interp.module)}

    def _state(self, root: int) -> _BufferState:
        """The tracking state of argument buffer ``root``.

        A buffer that joined the launch after it started (an array found by
        its address, see :mod:`~minitriton.emulator.hostmem`) starts now.
        """
        st = self.buffers.get(root)
        if st is None:
            assert self.interp is not None
            st = self.buffers[root] = self._buffer_state(self.interp.memory[root])
        return st

    def _buffer_state(self, buf: Buffer) -> _BufferState:
        st = _BufferState()
        if self.options.uninitialized:
            st.init = initialized_mask(buf, buf.name in self.options.poison)
        if self.options.races:
            st.writer = np.full(buf.size, -1, dtype=np.int64)
            st.writer_site = np.zeros(buf.size, dtype=np.int32)
            st.reader = np.full(buf.size, -1, dtype=np.int64)
            st.reader_site = np.zeros(buf.size, dtype=np.int32)
            st.many_readers = np.zeros(buf.size, dtype=bool)
            st.atomic = np.full(buf.size, -1, dtype=np.int64)
            st.atomic_site = np.zeros(buf.size, dtype=np.int32)
            st.locked_writer = np.full(buf.size, -1, dtype=np.int64)
            st.locked_site = np.zeros(buf.size, dtype=np.int32)
            st.lock = np.full(buf.size, -1, dtype=np.int64)
        return st

    def checkpoint(self) -> Any:
        """A copy of the tracking state (the debugger rewinds to it)."""
        if self.interp is None:
            return None  # not attached yet: rewinding means starting afresh
        copies = {k: _copy_state(v) for k, v in self.buffers.items()}
        synced = {k: set(v) for k, v in self.synced.items()}
        return copies, {k: set(v) for k, v in self.locks.items()}, synced

    def rewind(self, token: Any) -> None:
        """Go back to a :meth:`checkpoint`."""
        if token is None:
            self.interp, self.buffers, self.locks, self.synced = None, {}, {}, {}
            return
        copies, locks, synced = token
        self.buffers = {k: _copy_state(v) for k, v in copies.items()}
        self.locks = {k: set(v) for k, v in locks.items()}
        self.synced = {k: set(v) for k, v in synced.items()}

    # -- hooks ----------------------------------------------------------------
    def will_execute_op(self, op: Operation, state: ProgramState) -> None:
        """Check loads, stores and atomics before memory changes."""
        if self.interp is not state.interp:
            self.attach(state.interp)
        if not (op.has_trait(ReadsMemory) or op.has_trait(WritesMemory)):
            return
        access, _ = access_of(state, op)
        if isinstance(op, LoadOp):
            self._on_read(op, state, access)
        elif isinstance(op, StoreOp):
            self._on_write(op, state, access)
        else:
            self._on_atomic(op, state, access)

    def did_execute_op(self, op: Operation, state: ProgramState, results: list[RVal]) -> None:
        """Overflow checks, and spin locks taken by ``atomic_cas``."""
        if self.options.overflow and id(op) in self.offset_ops:
            self._check_overflow(op, state, results[0])
        if isinstance(op, AtomicCASOp) and not op.operands[0].shape:
            self._maybe_lock(op, state, results[0])
        if isinstance(op, AtomicPollOp) and op.attrs.get("sem") == "acquire":
            self._synchronize(op, state, results[0])

    # -- uninitialized reads ------------------------------------------------
    def _check_init(self, op: Operation, state: ProgramState, access: Access) -> None:
        init = self._state(access.buffer).init
        if init is None or access.units.size == 0:
            return
        bad = ~init[access.units]
        if bad.any():
            raise self._uninit_error(op, state, access, bad)

    def _uninit_error(
        self, op: Operation, state: ProgramState, a: Access, bad: np.ndarray
    ) -> CheckError:
        row = int(a.rows[np.argmax(bad)])
        sel = bad & (a.rows == row)
        buf = state.interp.memory[a.buffer]
        shape = op.operands[0].shape
        where = _offsets_text(a.offsets[sel], a.lanes[sel], shape)
        why = (
            f"'{buf.name}' is poisoned for this launch (poison=[...])"
            if buf.name in self.options.poison
            else f"'{buf.name}' was allocated uninitialized (minitriton.emulator.empty)"
        )
        details = [
            where,
            why + " and neither the host nor this launch wrote these elements",
        ]
        message = f"read of uninitialized memory: {op.name} from '{buf.name}'"
        return _error(state, op, message, details, row)

    # -- races --------------------------------------------------------------
    def _exempt(self, access: Access) -> np.ndarray:
        """Lanes of programs that hold a spin lock: ordered by the lock, not racing."""
        if not self.locks:
            return np.zeros(access.pids.shape, dtype=bool)
        holding = [p for p, held in self.locks.items() if held]
        return np.isin(access.pids, holding)

    def _on_read(self, op: Operation, state: ProgramState, access: Access) -> None:
        if self.options.uninitialized:
            self._check_init(op, state, access)
        st = self._state(access.buffer)
        if st.writer is None or access.units.size == 0:
            return
        assert st.writer_site is not None  # set with st.writer (_buffer_state)
        keep = ~self._exempt(access)
        units, pids = access.units[keep], access.pids[keep]
        writer = st.writer[units]
        bad = (writer >= 0) & (writer != pids)
        if bad.any() and self.synced:
            ordered = [int(w) in self.synced.get(int(p), ()) for w, p in zip(writer, pids)]
            bad &= ~np.array(ordered, dtype=bool)
        if bad.any():
            raise self._race_error(
                op, state, access, keep, bad, writer, st.writer_site[units], "reads"
            )
        self._record_readers(st, units, pids, self._site(op))

    def _record_readers(
        self, st: _BufferState, units: np.ndarray, pids: np.ndarray, site: int
    ) -> None:
        assert st.reader is not None and st.reader_site is not None and st.many_readers is not None
        fresh = st.reader[units] < 0
        st.reader[units[fresh]] = pids[fresh]
        st.reader_site[units[fresh]] = site
        others = st.reader[units] != pids  # a second program read it (maybe in this very op)
        st.many_readers[units[others]] = True

    def _on_write(self, op: Operation, state: ProgramState, access: Access) -> None:
        st = self._state(access.buffer)
        if st.writer is not None and access.units.size:
            self._check_write_races(op, state, access, st)
        if st.init is not None:
            st.init[access.units] = True

    def _check_write_races(
        self, op: Operation, state: ProgramState, a: Access, st: _BufferState
    ) -> None:
        assert st.writer is not None and st.reader is not None and st.many_readers is not None
        assert st.writer_site is not None and st.reader_site is not None
        keep = ~self._exempt(a)
        units, pids = a.units[keep], a.pids[keep]
        new = self._stored_bits(op, state, a)[keep]
        root = state.interp.memory[a.buffer]
        same_value = root.flat.view(_bits(root.flat.dtype))[units] == new
        writer = st.writer[units]
        waw = (writer >= 0) & (writer != pids) & ~same_value
        if waw.any():
            raise self._race_error(op, state, a, keep, waw, writer, st.writer_site[units], "stores")
        reader = st.reader[units]
        war = (reader >= 0) & ((reader != pids) | st.many_readers[units])
        if war.any():
            raise self._race_error(
                op, state, a, keep, war, reader, st.reader_site[units], "stores", True
            )
        self._check_same_op_writes(op, state, a, keep, units, pids, new)
        self._check_store_after_atomic(op, state, a, keep, st)
        self._check_locked_writes(op, state, a, ~keep, st)
        st.writer[units] = pids
        st.writer_site[units] = self._site(op)

    def _check_store_after_atomic(
        self, op: Operation, state: ProgramState, a: Access, keep: np.ndarray, st: _BufferState
    ) -> None:
        """A plain store to an element that another program updates atomically."""
        assert st.atomic is not None and st.atomic_site is not None
        units, pids = a.units[keep], a.pids[keep]
        other = st.atomic[units]
        bad = (other >= 0) & (other != pids)
        if bad.any():
            raise self._race_error(
                op, state, a, keep, bad, other, st.atomic_site[units], "stores", verb2="updated"
            )

    def _check_locked_writes(
        self, op: Operation, state: ProgramState, a: Access, held: np.ndarray, st: _BufferState
    ) -> None:
        """Stores made under a lock race with another program's stores under another lock."""
        assert st.locked_writer is not None and st.lock is not None and st.locked_site is not None
        if not held.any():
            return
        units, pids = a.units[held], a.pids[held]
        mine = np.array([self._held_lock_ids(int(p)) for p in pids], dtype=object)
        other, their_lock = st.locked_writer[units], st.lock[units]
        same_lock = np.array([t in m for t, m in zip(their_lock, mine)], dtype=bool)
        bad = (other >= 0) & (other != pids) & ~same_lock
        if bad.any():
            raise self._race_error(
                op, state, a, held, bad, other, st.locked_site[units], "stores",
                verb2="stored while holding a different lock",
            )  # fmt: skip
        st.locked_writer[units] = pids
        st.locked_site[units] = self._site(op)
        st.lock[units] = [min(m) if m else -1 for m in mine]

    def _held_lock_ids(self, pid: int) -> set[int]:
        held = self.locks.get(pid, set())
        return {self.lock_ids.setdefault(lock, len(self.lock_ids)) for lock in held}

    def _stored_bits(self, op: Operation, state: ProgramState, a: Access) -> np.ndarray:
        values = lane_data(state, op, 1).reshape(state.size, -1)[a.rows, a.lanes]
        root = state.interp.memory[a.buffer]
        values = np.ascontiguousarray(values.astype(root.flat.dtype, copy=False))
        return values.view(_bits(root.flat.dtype))

    def _check_same_op_writes(
        self, op: Operation, state: ProgramState, a: Access, keep: np.ndarray,
        units: np.ndarray, pids: np.ndarray, bits: np.ndarray,
    ) -> None:  # fmt: skip
        """Lanes of one store (of one program or several) writing one element different values."""
        if units.size < 2:
            return
        order = np.lexsort((pids, units))
        u, p, b = units[order], pids[order], bits[order]
        clash = (u[1:] == u[:-1]) & (b[1:] != b[:-1])
        if not clash.any():
            return
        bad = np.zeros(units.shape, dtype=bool)
        other = np.full(units.shape, -1, dtype=np.int64)
        bad[order[1:][clash]] = True
        other[order[1:][clash]] = p[:-1][clash]
        site = np.full(units.shape, self._site(op), dtype=np.int32)
        raise self._race_error(op, state, a, keep, bad, other, site, "stores")

    def _on_atomic(self, op: Operation, state: ProgramState, access: Access) -> None:
        # Atomics do not race with each other, but they read memory: check it was written.
        if self.options.uninitialized:
            self._check_init(op, state, access)
        st = self._state(access.buffer)
        if st.init is not None:
            st.init[access.units] = True
        if st.atomic is not None and st.writer is not None and access.units.size:
            self._check_atomic_after_store(op, state, access, st, writes=not isinstance(
                op, AtomicPollOp))  # fmt: skip
        if isinstance(op, AtomicRMWOp) and op.attrs.get("kind") == "xchg":
            self._maybe_unlock(access)

    def _check_atomic_after_store(
        self, op: Operation, state: ProgramState, a: Access, st: _BufferState, writes: bool
    ) -> None:
        """An atomic on an element that another program stored plainly (a poll only reads:
        the element keeps its last atomic writer, the program a poll synchronizes with)."""
        assert st.atomic is not None and st.atomic_site is not None and st.writer is not None
        assert st.writer_site is not None
        keep = np.ones(a.units.shape, dtype=bool)
        writer = st.writer[a.units]
        bad = (writer >= 0) & (writer != a.pids)
        if bad.any():
            raise self._race_error(
                op, state, a, keep, bad, writer, st.writer_site[a.units], "updates"
            )
        if writes:
            st.atomic[a.units] = a.pids
            st.atomic_site[a.units] = self._site(op)

    def _synchronize(self, op: Operation, state: ProgramState, seen: RVal) -> None:
        """A poll that saw its flag orders the flag's last atomic writer's stores before it."""
        ptr = state.lookup(op.operands[0])
        buf = state.interp.memory[ptr.buffer or 0]
        st = self._state(buf.root)
        if st.atomic is None:
            return
        root_size = state.interp.memory[buf.root].flat.dtype.itemsize
        for row, pid in enumerate(linear_pids(state)):
            if not bool(np.asarray(seen.program(row))):
                continue
            unit = int(np.asarray(ptr.program(row))) * buf.flat.dtype.itemsize // root_size
            writer = int(st.atomic[unit])
            if writer >= 0 and writer != int(pid):
                mine = self.synced.setdefault(int(pid), set())
                mine |= {writer} | self.synced.get(writer, set())

    def _maybe_lock(self, op: Operation, state: ProgramState, old: RVal) -> None:
        ptr = state.lookup(op.operands[0])
        cmp = state.lookup(op.operands[1])
        root = state.interp.memory[ptr.buffer or 0].root
        for row, pid in enumerate(linear_pids(state)):
            if np.asarray(old.program(row)) == np.asarray(cmp.program(row)):
                unit = int(np.asarray(ptr.program(row)))
                self.locks.setdefault(int(pid), set()).add((root, unit))

    def _maybe_unlock(self, access: Access) -> None:
        for pid, unit in zip(access.pids, access.units):
            self.locks.get(int(pid), set()).discard((access.buffer, int(unit)))

    def _site(self, op: Operation) -> int:
        if id(op) not in self.site_ids:
            self.site_ids[id(op)] = len(self.sites)
            self.sites.append(op)
        return self.site_ids[id(op)]

    def _race_error(
        self, op: Operation, state: ProgramState, a: Access, keep: np.ndarray, bad: np.ndarray,
        other: np.ndarray, other_site: np.ndarray, verb: str, other_read: bool = False,
        verb2: str | None = None,
    ) -> CheckError:  # fmt: skip
        k = int(np.argmax(bad))
        idx = np.flatnonzero(keep)  # lanes of `a` that were checked
        row = int(a.rows[idx[k]])
        sel_rows = a.rows[idx] == row
        sel = bad & sel_rows & (other == other[k])
        buf = state.interp.memory[a.buffer]
        them = format_pid(_unlinear(int(other[k]), state.interp.grid))
        site = self.sites[int(other_site[k])].loc
        their_verb = verb2 or ("read" if other_read else "stored")
        if verb == "reads":
            message = f"data race: {op.name} from '{buf.name}' reads what program {them} stored"
        elif verb == "updates":
            message = (
                f"data race: {op.name} updates '{buf.name}' where program {them} stored plainly"
            )
        elif int(other[k]) == int(a.pids[idx[k]]) and not verb2:
            message = f"data race: lanes of one {op.name} to '{buf.name}' store different values"
            them, their_verb = "this program", "also stored"
        else:
            message = (
                f"data race: {op.name} to '{buf.name}' overwrites what program {them} {their_verb}"
            )
        shape = op.operands[0].shape
        details = [
            _offsets_text(a.offsets[idx][sel], a.lanes[idx][sel], shape),
            f"program {them} {their_verb} them at {site.file}:{site.line}:{site.col}"
            if them != "this program"
            else "on the GPU, which lane's value lands is unspecified",
            "the result depends on the order in which programs run; give each program "
            "its own elements, or use tl.atomic_* operations",
        ]
        return _error(state, op, message, details, row)

    # -- overflow ---------------------------------------------------------------
    def _check_overflow(self, op: Operation, state: ProgramState, result: RVal) -> None:
        elem = element_type(op.results[0].type)
        if not (isinstance(elem, ScalarType) and elem.is_signed() and 8 <= elem.bitwidth <= 32):
            return
        a, b = (np.asarray(state.lookup(v).data, dtype=np.int64) for v in op.operands)
        exact = _ARITH[type(op)][0](a, b)
        bad = exact != np.asarray(result.data, dtype=np.int64)
        if bad.any():
            raise self._overflow_error(op, state, result, a, b, exact, bad)

    def _overflow_error(
        self, op: Operation, state: ProgramState, result: RVal, a: np.ndarray, b: np.ndarray,
        exact: np.ndarray, bad: np.ndarray,
    ) -> CheckError:  # fmt: skip
        row = 0
        if result.batched:
            row = int(np.argmax(bad.reshape(bad.shape[0], -1).any(axis=1)))
        shape = op.results[0].shape
        full = (state.size, *shape)
        pick = [np.broadcast_to(x if result.batched else x[None], full)[row].reshape(-1)
                for x in (a, b, exact, np.asarray(result.data, dtype=np.int64), bad)]  # fmt: skip
        lane = int(np.argmax(pick[4]))
        sym = _ARITH[type(op)][1]
        t = element_type(op.results[0].type)
        message = f"integer overflow in {op.name}: the {t!r} result feeds a pointer offset"
        first = f"{pick[0][lane]} {sym} {pick[1][lane]} = {pick[2][lane]} does not fit in {t!r}"
        where = f" at lane {format_lanes(np.array([lane]), shape)[0]}" if shape else ""
        count = f"; {plural(int(pick[4].sum()), 'lane')} overflow" if shape else ""
        details = [
            f"{first} (it wraps to {pick[3][lane]}){where}{count}",
            "compute the offset in 64 bits, e.g. pid.to(tl.int64) * stride",
        ]
        return _error(state, op, message, details, row)


def _copy_state(st: _BufferState) -> _BufferState:
    return _BufferState(*(None if a is None else a.copy() for a in vars(st).values()))


def _bits(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"u{np.dtype(dtype).itemsize}")


def _unlinear(linear: int, grid: tuple[int, int, int]) -> tuple[int, int, int]:
    gx, gy, _ = grid
    return (linear % gx, (linear // gx) % gy, linear // (gx * gy))


def _offsets_text(offsets: np.ndarray, lanes: np.ndarray, shape: tuple[int, ...]) -> str:
    offs = [str(int(o)) for o in offsets[:3]]
    if not shape:
        return f"offset {offs[0]}"
    lane_text = format_list(format_lanes(lanes[:3], shape))
    return f"offsets {format_list(offs)} at lanes {lane_text} ({plural(len(offsets), 'lane')})"


def _error(
    state: ProgramState, op: Operation, message: str, details: list[str], row: int
) -> CheckError:
    pid = state.pid(row)
    return CheckError(op.loc, f"{message} in program {format_pid(pid)}", details, pid)


# ---------------------------------------------------------------- offset slices

#: The integer ops an offset is computed with: their exact result, their symbol.
_ARITH: dict[type[Operation], tuple[Callable[..., np.ndarray], str]] = {
    AddOp: (np.add, "+"),
    SubOp: (np.subtract, "-"),
    MulOp: (np.multiply, "*"),
}


def offset_producers(module: Module) -> list[Operation]:
    """The integer add/sub/mul ops whose results flow into a ``tt.addptr`` offset.

    Walks backwards from every offset: through any op's operands, through
    loop-carried values (their initial and yielded values), but not into the
    results of loads, calls or atomics (data, not index arithmetic).
    """
    loops = _loop_of_arg(module)
    seen: set[int] = set()
    found: list[Operation] = []
    work: list[Value] = [op.operands[1] for op in module.walk() if isinstance(op, AddPtrOp)]
    while work:
        value = work.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        work.extend(_sources(value, loops))
        owner = value.owner if isinstance(value, OpResult) else None
        if owner is not None and type(owner) in _ARITH:
            found.append(owner)
    return found


def _loop_of_arg(module: Module) -> dict[int, Operation]:
    """Block argument id -> the ``scf.for`` whose body it belongs to."""
    return {
        id(arg): op
        for op in module.walk()
        if isinstance(op, ForOp)
        for arg in op.regions[0].block.args
    }


def _sources(value: Value, loops: dict[int, Operation]) -> list[Value]:
    """The values ``value`` is computed from."""
    if isinstance(value, OpResult):
        owner = value.owner
        if owner.has_trait(ReadsMemory) or owner.has_trait(UnknownEffects):
            return []
        if isinstance(owner, ForOp):
            return _carried(owner, value.index)
        return list(owner.operands)
    loop = loops.get(id(value))
    if not isinstance(value, BlockArgument) or loop is None:
        return []
    if value.index == 0:  # the induction variable
        return list(loop.operands[:3])
    return _carried(loop, value.index - 1)


def _carried(loop: Operation, k: int) -> list[Value]:
    """The initial and the yielded value of the ``k``-th loop-carried variable."""
    body = loop.regions[0].block
    term = body.ops[-1] if body.ops else None
    yields = term.operands[k : k + 1] if term is not None else []
    return [*loop.operands[3 + k : 4 + k], *yields]


# ---------------------------------------------------------------- switching checks on


class Checks(Tool):
    """The tool that attaches a :class:`Checker` to every launch.

    With ``fits`` (``minitriton check`` sets it) it also warns, once per
    kernel configuration and on stderr, when the configuration would not fit
    the GPU the emulator stands for
    (:func:`minitriton.resources.emulated_warning`, which compiles the
    kernel for that GPU); ``warnings`` lists them.
    """

    def __init__(self, options: CheckOptions | None = None, fits: bool = False) -> None:
        self.options = options or CheckOptions()
        self.fits = fits
        self.warnings: list[str] = []

    def listeners(self, launch: Launch) -> list[Listener]:
        """A fresh checker per launch."""
        if self.fits:
            self._warn_if_too_big(launch)
        if not self.options.any:
            return []
        return [Checker(self.options)]

    def _warn_if_too_big(self, launch: Launch) -> None:
        from minitriton.resources import emulated_warning

        text = emulated_warning(launch.compiled)
        if text is not None and text not in self.warnings:
            self.warnings.append(text)
            print(f"minitriton: warning: {text}", file=sys.stderr)


@contextlib.contextmanager
def checking(
    races: bool = True, uninitialized: bool = True, overflow: bool = True,
    poison: Sequence[str] = (),
) -> Iterator[Checks]:  # fmt: skip
    """Run the checks on every launch inside the ``with`` block."""
    tool = Checks(CheckOptions(races, uninitialized, overflow, tuple(poison)))
    with using(tool):
        yield tool


def checked_launch(
    module: Module,
    grid: Sequence[int],
    args: Sequence[Any],
    *,
    debug: bool = True,
    races: bool = True,
    uninitialized: bool = True,
    overflow: bool = True,
    poison: Sequence[str] = (),
    listeners: Sequence[Listener] = (),
) -> None:
    """:func:`minitriton.emulator.launch` with the checks (``debug`` on by default)."""
    from minitriton.emulator.schedule import run_grid

    checker = Checker(CheckOptions(races, uninitialized, overflow, tuple(poison)))
    interp = Interpreter(module, args, grid, debug=debug, listeners=[checker, *listeners])
    run_grid(interp)
