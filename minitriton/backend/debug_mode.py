"""Debug mode's host side: buffer extents in, the error record out.

A kernel compiled with ``debug=True`` (:mod:`~minitriton.backend.lower.debug`)
takes, after its own arguments, the extent of each pointer argument's buffer
and a pointer to the error record. :class:`DebugLauncher` fills them in:

* a NumPy array is copied to the device, and its copy is the buffer;
* a PyTorch tensor's buffer is its whole storage (``untyped_storage()``), so
  a view may reach the rest of its base tensor, as on the emulator's host
  copy of it;
* :class:`~minitriton.backend.driver.DeviceArray`, anything with
  ``__cuda_array_interface__`` (CuPy) or DLPack: the span of its shape and
  strides;
* a plain integer is a raw address whose extent is unknown: accesses through
  it are not checked.

After the launch the host waits for the kernel's stream and reads the
record's first word (copied into page-locked memory behind the kernel). If
a check failed, the record is decoded into the located error the emulator
raises (:class:`~minitriton.emulator.errors.DeviceCheckError`, formatted by
:mod:`minitriton.emulator.errors`; an out-of-bounds report ends with the
emulator's suggested mask where the record tells enough for it,
:func:`minitriton.emulator.mask_hint.help_line`), the record is cleared for the next
launch, NumPy arguments are left as they were before the launch, and the
error is raised. The CUDA context is untouched: the process goes on.

**Deferred reports** (``MINITRITON_DEBUG=async``). Waiting for each kernel
costs what no check can save: on a kernel of a few tens of microseconds the
wait alone makes the launch half as slow again. With ``async`` a launch of
device arrays returns at once, as an unchecked one does. Each launch in
flight gets an error record of its own, from a small pool per kernel, and
its key is copied behind it into its own page-locked word. The first failed
check is raised at the next debug-mode launch of any kernel, by
:func:`minitriton.backend.synchronize`, or printed at exit, with the same
located message and a note saying so. A launch of NumPy arrays still waits
(it copies its outputs back) and reports at once.

**The record** is ``HEADER_WORDS + SLOT_WORDS * slots`` 64-bit words: word 0
is the claim key ``(program << 24) | (site + 1)`` (0: no error); slot
``tid * registers + register`` holds ``(written, slot, a, b)`` where ``a``
is the first address of a failing (vectorized) access, or the raw bits of an
assert's lhs, and ``b`` its rhs. The site's layout turns a slot back into
lanes (:meth:`~minitriton.backend.lower.debug.Site.lane`).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import sys
import threading
import weakref
from collections import deque
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from minitriton.backend.driver import (
    DeviceArray,
    Launcher,
    _cu,
    _error,
    _stream,
    _stream_handle,
    c_driver_function,
    check,
    ensure_context,
    synchronize,
)
from minitriton.backend.lower.debug import HEADER_WORDS, SITE_BITS, SLOT_WORDS, CheckTable, Site
from minitriton.env import DEBUG_ENV
from minitriton.ir.ops import LoadOp, StoreOp

#: The extent of a raw address: the whole 64-bit address space (no check).
_UNKNOWN = (0, (1 << 64) - 1)
#: ``MINITRITON_DEBUG`` (read at each launch): this value defers the reports.
DEFERRED = "async"
#: Records per kernel for deferred launches in flight (one more, 0, serves waited-for launches).
POOL = 16
#: The last line of a deferred launch's error.
DEFERRED_NOTE = (
    f"(found after the launch returned: with {DEBUG_ENV}={DEFERRED}, a failed check is raised"
    " at the next debug-mode launch or by minitriton.backend.synchronize())"
)
#: What a page-locked key word holds until its copy lands (no key is all ones).
_PENDING = (1 << 64) - 1
#: How a report names an access's buffer, by the checked op; a site names its op
#: as the IR spells it, which is also what the report prints.
_VERBS = {LoadOp.name: "from", StoreOp.name: "to"}


def extent(arg: Any, ptr: int) -> tuple[int, int]:
    """``(lo, size)``: the lowest address and byte size of the buffer ``arg`` lies in."""
    if isinstance(arg, DeviceArray):
        return arg.ptr, arg.nbytes
    if getattr(arg, "is_cuda", False) and hasattr(arg, "untyped_storage"):
        storage = arg.untyped_storage()
        return int(storage.data_ptr()), int(storage.nbytes())
    cai = getattr(arg, "__cuda_array_interface__", None)
    if cai is not None:
        itemsize = np.dtype(cai["typestr"]).itemsize
        strides = cai.get("strides") or _row_major(cai["shape"], itemsize)
        return _span(ptr, cai["shape"], strides, itemsize)
    if getattr(arg, "__dlpack_device__", None) is not None:
        return _dlpack_extent(arg, ptr)
    return _UNKNOWN


def _row_major(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _span(ptr: int, shape: Sequence[int], strides: Sequence[int], itemsize: int) -> tuple[int, int]:
    """The bytes a strided array touches (strides in bytes)."""
    if any(n == 0 for n in shape):
        return ptr, 0
    low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    high = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
    return ptr + low, high - low + itemsize


def _dlpack_extent(arg: Any, ptr: int) -> tuple[int, int]:
    from minitriton.backend.driver import _DLTensor

    capsule = arg.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    t = _DLTensor.from_address(get(capsule, b"dltensor"))
    itemsize = max(1, ((t.dtype >> 8) & 0xFF) * ((t.dtype >> 16) & 0xFFFF) // 8)
    shape = [ctypes.cast(t.shape, ctypes.POINTER(ctypes.c_int64))[i] for i in range(t.ndim)]
    if t.strides:
        raw = ctypes.cast(t.strides, ctypes.POINTER(ctypes.c_int64))
        strides = [raw[i] * itemsize for i in range(t.ndim)]
    else:
        strides = list(_row_major(shape, itemsize))
    return _span(ptr, shape, strides, itemsize)


class DebugLauncher(Launcher):
    """A :class:`Launcher` for a debug-mode kernel (see the module docstring)."""

    def __init__(
        self, func: Any, name: str, params: list[str], num_warps: int, shared: int,
        table: CheckTable,
    ) -> None:  # fmt: skip
        self.user_kinds = list(params)
        self.pointer_args = [i for i, k in enumerate(params) if k == "ptr"]
        hidden = ["u64", "u64"] * len(self.pointer_args) + ["ptr"]
        super().__init__(func, name, params + hidden, num_warps, shared)
        self.table = table
        #: Error records: 0 for launches waited for, the others for deferred ones.
        self.records = [self._new_record()]
        self._free: list[int] = []
        self.keys = _HostWords(1 + POOL)

    @property
    def record(self) -> DeviceArray:
        """The record of the launches that are waited for."""
        return self.records[0]

    def _new_record(self) -> DeviceArray:
        record = DeviceArray.empty(self.table.record_words, np.int64)
        _clear(record, self.name)
        return record

    def __call__(self, grid: Sequence[int], args: Sequence[Any], stream: Any = None) -> None:
        ensure_context()  # the record's copies run before the launch, in this thread
        if _in_flight:
            report_deferred()  # an earlier deferred launch's failed check raises here
        pointers: list[tuple[int, Any, int]] = []
        copies = self.fill_slots(args, self.user_kinds, pointers, stream)
        devices = {dev.ptr: dev for _, dev in copies or ()}
        bases: dict[int, tuple[int, int, int]] = {}
        hidden = len(self.user_kinds)
        for i, arg, ptr in pointers:
            lo, size = _buffer(arg, ptr, devices)
            bases[i] = (ptr, lo, size)
            self.slots[hidden].value = lo
            self.slots[hidden + 1].value = size
            hidden += 2
        gx, gy, gz = (tuple(int(g) for g in grid) + (1, 1, 1))[:3]
        grid3 = (gx, gy, gz)
        if not copies and os.environ.get(DEBUG_ENV) == DEFERRED:
            # A report's suggested mask may name an integer argument: keep their values.
            self._launch_deferred(grid3, bases, stream, int_values(self.table, args))
            return
        self.slots[-1].value = self.record.ptr
        self.launch_raw(gx, gy, gz, stream)
        self._raise_recorded(grid3, bases, stream, args)
        if copies:
            self._copy_back(copies)

    def _raise_recorded(
        self, grid: tuple[int, int, int], bases: dict, stream: Any, args: Sequence[Any]
    ) -> None:
        key = self.keys.read(0, self.record.ptr, stream, self.name)
        if key != 0:
            raise self._take_error(0, grid, bases, None, int_values(self.table, args))

    def _take_error(
        self, index: int, grid: tuple[int, int, int], bases: dict, note: str | None = None,
        ints: Sequence[tuple[str, int]] = (),
    ) -> Any:  # fmt: skip
        """Decode record ``index`` into its error, and clear the record for its next launch."""
        record = self.records[index]
        words = np.zeros(self.table.record_words, np.uint64)
        check(_cu().cuMemcpyDtoH(words.ctypes.data, record.ptr, words.nbytes), "cuMemcpyDtoH")
        _clear(record, self.name)
        return decode(self.table, words, grid, bases, note, ints)

    # ------------------------------------------------------------ deferred reports

    def _launch_deferred(
        self, grid: tuple[int, int, int], bases: dict, stream: Any, ints: list[tuple[str, int]]
    ) -> None:
        index = self._free_record()
        record = self.records[index]
        self.slots[-1].value = record.ptr
        self.launch_raw(grid[0], grid[1], grid[2], stream)
        self.keys.copy_behind(index, record.ptr, stream, self.name)
        with _lock:
            _in_flight.append(_InFlight(self, index, grid, bases, stream, ints))
        _arm_exit_report()

    def _free_record(self) -> int:
        """A record no launch in flight writes: a free one, a new one, or the first to finish."""
        if not self._free and len(self.records) <= POOL:
            self.records.append(self._new_record())
            return len(self.records) - 1
        while not self._free:
            report_deferred(wait=True, one=True)
        return self._free.pop()

    def settle(self, launch: _InFlight, key: int) -> None:
        """Give a finished launch's record back; raise its error if its key says one was found."""
        if key != 0:
            # The key may have been read while its copy was still landing: wait, read it whole.
            key = self.keys.read(launch.number, self.records[launch.number].ptr, launch.stream,
                                 self.name)  # fmt: skip
        if key == 0:
            self._free.append(launch.number)
            return
        error = self._take_error(
            launch.number, launch.grid, launch.bases, DEFERRED_NOTE, launch.ints
        )
        self._free.append(launch.number)
        raise error


class _InFlight(NamedTuple):
    """A deferred launch whose key has not been read yet."""

    launcher: DebugLauncher
    number: int  # its record's
    grid: tuple[int, int, int]
    bases: dict
    stream: Any
    ints: Sequence[tuple[str, int]] = ()  # the launch's named integer arguments


#: The deferred launches in flight, in launch order (guarded by ``_lock``: a launch
#: from one thread must not settle the record of another thread's launch).
_in_flight: deque[_InFlight] = deque()
_lock = threading.Lock()


def report_deferred(wait: bool = False, one: bool = False) -> None:
    """Settle the deferred launches that have finished, in launch order; raise the first error.

    With ``wait``, wait for them (all of them, or with ``one`` the first).
    Without, stop at the first one still running: the stream runs them in order.
    """
    while _in_flight:
        with _lock:
            if not _in_flight:
                return
            launch = _in_flight[0]
            key = launch.launcher.keys.peek(launch.number)
            if key is None and not wait:
                return
            _in_flight.popleft()  # first: a driver error while waiting must not leave it queued
        if key is None:
            key = launch.launcher.keys.wait(launch.number, launch.stream, launch.launcher.name)
        launch.launcher.settle(launch, key)
        if one:
            return


def _arm_exit_report() -> None:
    """Once: at exit, print the errors of deferred launches nobody asked about."""
    if not _exit_armed:
        _exit_armed.append(True)
        atexit.register(_report_at_exit)


_exit_armed: list[bool] = []


def _report_at_exit() -> None:
    while _in_flight:
        try:
            report_deferred(wait=True)
        except Exception as e:  # a located error (or a driver already gone): say it, go on
            print(f"minitriton: a deferred debug-mode launch failed:\n{e}", file=sys.stderr)


def _clear(record: DeviceArray, kernel: str) -> None:
    check(_cu().cuMemsetD8(record.ptr, 0, record.nbytes), "cuMemsetD8", kernel)
    # The memset runs on the legacy default stream, which a launch on one of torch's
    # side streams does not wait for: wait here (a new record, or one after an error).
    synchronize(kernel)


def _buffer(arg: Any, ptr: int, devices: dict[int, DeviceArray]) -> tuple[int, int]:
    """``(lo, size)`` of the buffer a pointer argument lies in.

    A NumPy array's device copy (in ``devices``, by address) is its buffer;
    a raw integer address has no known extent.
    """
    if isinstance(arg, int):
        return _UNKNOWN
    if ptr in devices:
        return ptr, devices[ptr].nbytes
    return extent(arg, ptr)


def _free_host(ptr: int) -> None:
    """Free page-locked host memory (nothing if the driver has gone already)."""
    with contextlib.suppress(Exception):
        _cu().cuMemFreeHost(ptr)


class _HostWords:
    """Page-locked host words that records' first words are copied into.

    After a launch the host enqueues an 8-byte copy of the record's key
    behind the kernel on its stream. A launch that is waited for then waits
    for that stream: one synchronization, with no staging through pageable
    memory. A deferred one leaves its word at ``_PENDING`` until the copy
    lands, so the host sees that its kernel is done by reading the word,
    without a call to the driver. The driver is called through ctypes (as the
    launch itself is), which saves cuda-bindings' per-call conversions: this
    is debug mode's fixed cost per launch, and it shows on kernels of a few
    tens of microseconds.
    """

    def __init__(self, count: int) -> None:
        self.ptr = 0
        with contextlib.suppress(Exception):  # no page-locked memory: a plain buffer
            self.ptr = int(check(_cu().cuMemHostAlloc(8 * count, 0), "cuMemHostAlloc"))
        if self.ptr:
            # Freed with the object, or at exit while the modules are still there.
            weakref.finalize(self, _free_host, self.ptr)
        self._plain = (ctypes.c_uint64 * count)() if not self.ptr else None
        self.addr = ctypes.addressof(self._plain) if self._plain is not None else self.ptr
        self.words = (ctypes.c_uint64 * count).from_address(self.addr)
        self._copy = c_driver_function("cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2")
        self._sync = c_driver_function("cuStreamSynchronize")

    def copy_behind(self, i: int, device_ptr: int, stream: Any, kernel: str) -> None:
        """Enqueue the copy of the word at ``device_ptr`` into word ``i``, behind the kernel."""
        self.words[i] = _PENDING
        if self._copy is None:  # no ctypes entry points: cuda-bindings, asynchronously too
            check(_cu().cuMemcpyDtoHAsync(self.addr + 8 * i, device_ptr, 8, _stream(stream)),
                  "cuMemcpyDtoHAsync", kernel)  # fmt: skip
            return
        err = self._copy(ctypes.c_void_p(self.addr + 8 * i), ctypes.c_uint64(device_ptr),
                         ctypes.c_size_t(8), _stream_ptr(stream))  # fmt: skip
        if err:
            raise _error(_cu().CUresult(err), "cuMemcpyDtoHAsync", kernel)

    def peek(self, i: int) -> int | None:
        """Word ``i``, or None while its copy has not landed."""
        value = int(self.words[i])
        return None if value == _PENDING else value

    def wait(self, i: int, stream: Any, kernel: str) -> int:
        """Wait for ``stream``, then return word ``i``."""
        if self._sync is None:
            synchronize(kernel)
        else:
            err = self._sync(_stream_ptr(stream))
            if err:
                raise _error(_cu().CUresult(err), "cuStreamSynchronize", kernel)
        return int(self.words[i])

    def read(self, i: int, device_ptr: int, stream: Any, kernel: str) -> int:
        """Copy the word at ``device_ptr`` into word ``i`` behind ``stream``, wait, return it."""
        self.copy_behind(i, device_ptr, stream, kernel)
        return self.wait(i, stream, kernel)


def _stream_ptr(stream: Any) -> ctypes.c_void_p:
    return ctypes.c_void_p(_stream_handle(stream) if stream is not None else None)


# ------------------------------------------------------------------ decoding


def decode(
    table: CheckTable, words: np.ndarray, grid: tuple[int, int, int], bases: dict,
    note: str | None = None, ints: Sequence[tuple[str, int]] = (),
) -> Any:  # fmt: skip
    """The located error a record describes (``bases``: argument -> (ptr, lo, size)).

    ``note``, if given, is its last detail line; ``ints`` are the launch's
    named integer arguments (:func:`int_values`), which a suggested mask may
    name as its bound.
    """
    from minitriton.emulator.errors import DeviceCheckError, assert_report, oob_report

    key = int(words[0])
    site = table.sites[(key & ((1 << SITE_BITS) - 1)) - 1]
    linear = key >> SITE_BITS
    pid = (linear % grid[0], linear // grid[0] % grid[1], linear // (grid[0] * grid[1]))
    slots = words[HEADER_WORDS : HEADER_WORDS + SLOT_WORDS * site.slots]
    slots = slots.reshape(site.slots, SLOT_WORDS)
    written = np.flatnonzero(slots[:, 0] == 1)
    help = None
    if site.kind == "assert":
        # Threads that hold copies of one element record it alike: one entry per lane.
        found = {site.lane(int(i)): slots[i] for i in written}
        lanes = np.array(sorted(found), dtype=np.int64)
        message, details = assert_report(
            site.message, site.shape, lanes, _sides(site, [found[k] for k in lanes])
        )
    else:
        ptr, lo, size = bases[site.arg]
        bad = _outside(site, slots, written, lo, size)
        lanes = np.array(sorted(bad), dtype=np.int64)
        outside = np.array([(bad[k] - ptr) // site.elem_bytes for k in lanes], dtype=np.int64)
        elems = max(0, size - (ptr - lo)) // max(1, site.elem_bytes)
        message, details = oob_report(
            site.op, _VERBS.get(site.op, "at"), table.arg_names[site.arg], elems,
            table.arg_types[site.arg], site.shape, lanes, outside[:3],
        )  # fmt: skip
        help = _mask_help(site, lanes, outside, table.arg_names[site.arg], elems, ints)
    details = [*details, note] if note else details
    message = f"{message} in program {_pid_text(pid)}"
    return DeviceCheckError(site.loc, message, details, pid, help=help)


def _mask_help(
    site: Site, lanes: np.ndarray, offsets: np.ndarray, buf_name: str, size: int,
    ints: Sequence[tuple[str, int]],
) -> str | None:  # fmt: skip
    """The emulator's help line for the access, where the record tells enough for it.

    The record holds the addresses of the lanes outside, so their offsets
    into the array, and none of the kernel's own values: the help is the
    emulator's where the offset is unnamed or is a named one added to a
    parameter's pointer itself (``x_ptr + offs``: its values are those
    offsets). For a named part of an offset (``cols`` in
    ``x_ptr + row * stride + cols``) the emulator, which sees every value,
    says more (``backend="emulator"``); here the report has no help line.
    """
    from minitriton.emulator.mask_hint import Offsets, help_line, lane_text

    if site.offset_name is None:
        found = Offsets("offsets", offsets, True, False)
    elif site.offset_whole:
        found = Offsets(site.offset_name, offsets, True, True)
    else:
        return None
    where = f"lane {lane_text(lanes[0], site.shape)} (offset {int(offsets[0])}"
    return help_line(found, site.masked, where, buf_name, size, ints)


def int_values(table: CheckTable, args: Sequence[Any]) -> list[tuple[str, int]]:
    """The named integer arguments of a launch and their values."""
    out = []
    for i, name in table.int_args:
        with contextlib.suppress(TypeError, ValueError, IndexError):
            out.append((name, int(args[i])))
    return out


def _outside(
    site: Site, slots: np.ndarray, written: np.ndarray, lo: int, size: int
) -> dict[int, int]:
    """Lane -> address of every element outside ``[lo, lo + size)`` in the recorded groups."""
    bad: dict[int, int] = {}
    eb = site.elem_bytes
    for i in written:
        first = int(slots[i, 2].astype(np.int64))
        for k in range(site.vec):
            addr = first + k * eb
            if not 0 <= addr - lo <= size - eb:
                bad[site.lane(int(i), k)] = addr
    return bad


def _pid_text(pid: tuple[int, int, int]) -> str:
    return "(" + ", ".join(str(p) for p in pid) + ")"


def _sides(site: Site, slots: list[np.ndarray]) -> list[tuple[str, str, list[str], bool]]:
    """``(side, name, values, more)`` of an assert's lhs and rhs at the first failing lanes."""
    out = []
    more = bool(site.shape) and len(slots) > 3
    for k, (side, name, type_name) in enumerate(site.sides):
        values = [_value_text(int(slot[2 + k]), type_name) for slot in slots[:3]]
        out.append((side, name, values, more))
    return out


def _value_text(bits: int, type_name: str) -> str:
    """The value ``bits`` holds as the emulator prints it (``x.item()`` of its NumPy type).

    bf16 prints as its 16 raw bits, as the emulator keeps it.
    """
    from minitriton.ir.types import ScalarType

    st = ScalarType(type_name)
    width = st.bitwidth
    raw = np.array([bits & ((1 << width) - 1) if width < 64 else bits], np.uint64)
    if st.is_bool():
        return str(bool(raw[0]))
    narrow = raw.astype(np.dtype(f"u{max(1, width // 8)}"))
    return str(narrow.view(st.numpy)[0].item())
