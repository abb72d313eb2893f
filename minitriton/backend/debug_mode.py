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
:mod:`minitriton.emulator.errors`), the record is cleared for the next
launch, NumPy arguments are left as they were before the launch, and the
error is raised. The CUDA context is untouched: the process goes on.

**The record** is ``HEADER_WORDS + SLOT_WORDS * slots`` 64-bit words: word 0
is the claim key ``(program << 24) | (site + 1)`` (0: no error); slot
``tid * registers + register`` holds ``(written, slot, a, b)`` where ``a``
is the first address of a failing (vectorized) access, or the raw bits of an
assert's lhs, and ``b`` its rhs. The site's layout turns a slot back into
lanes (:meth:`~minitriton.backend.lower.debug.Site.lane`).
"""

from __future__ import annotations

import contextlib
import ctypes
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from minitriton.backend.driver import (
    DeviceArray,
    Launcher,
    _cu,
    _error,
    _stream_handle,
    c_driver_function,
    check,
    synchronize,
)
from minitriton.backend.lower.debug import HEADER_WORDS, SITE_BITS, SLOT_WORDS, CheckTable, Site

#: The extent of a raw address: the whole 64-bit address space (no check).
_UNKNOWN = (0, (1 << 64) - 1)
_VERBS = {"tt.load": "from", "tt.store": "to"}


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
        self.record = DeviceArray.empty(table.record_words, np.int64)
        self._clear(table.record_words)
        self._head = _HostWord()

    def _clear(self, words: int) -> None:
        check(_cu().cuMemsetD8(self.record.ptr, 0, 8 * words), "cuMemsetD8", self.name)

    def __call__(self, grid: Sequence[int], args: Sequence[Any], stream: Any = None) -> None:
        pointers: list[tuple[int, Any, int]] = []
        copies = self.fill_slots(args, self.user_kinds, pointers)
        devices = {dev.ptr: dev for _, dev in copies or ()}
        bases: dict[int, tuple[int, int, int]] = {}
        hidden = len(self.user_kinds)
        for i, arg, ptr in pointers:
            lo, size = _buffer(arg, ptr, devices)
            bases[i] = (ptr, lo, size)
            self.slots[hidden].value = lo
            self.slots[hidden + 1].value = size
            hidden += 2
        self.slots[-1].value = self.record.ptr
        gx, gy, gz = (tuple(int(g) for g in grid) + (1, 1, 1))[:3]
        self.launch_raw(gx, gy, gz, stream)
        self._raise_recorded((gx, gy, gz), bases, stream)
        if copies:
            self._copy_back(copies)

    def _raise_recorded(self, grid: tuple[int, int, int], bases: dict, stream: Any) -> None:
        key = self._head.read(self.record.ptr, stream, self.name)
        if key == 0:
            return
        words = np.zeros(self.table.record_words, np.uint64)
        _copy_words(self.record, words)
        self._clear(self.table.record_words)
        raise decode(self.table, words, grid, bases)


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


class _HostWord:
    """One page-locked host word that the record's first word is copied into.

    After each launch the host enqueues an 8-byte copy of the record's key
    behind the kernel on its stream and waits for that stream: one
    synchronization, with no staging through pageable memory. The driver
    is called through ctypes (as the launch itself is), which saves
    cuda-bindings' per-call conversions: this is debug mode's fixed cost per
    launch, and it shows on kernels of a few tens of microseconds.
    """

    def __init__(self) -> None:
        self.ptr = 0
        with contextlib.suppress(Exception):  # no page-locked memory: a plain buffer
            self.ptr = int(check(_cu().cuMemHostAlloc(8, 0), "cuMemHostAlloc"))
        if self.ptr:
            # Freed with the object, or at exit while the modules are still there.
            weakref.finalize(self, _free_host, self.ptr)
        self._plain = ctypes.c_uint64() if not self.ptr else None
        self.addr = ctypes.addressof(self._plain) if self._plain is not None else self.ptr
        self.word = ctypes.c_uint64.from_address(self.addr)
        self._copy = c_driver_function("cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2")
        self._sync = c_driver_function("cuStreamSynchronize")

    def read(self, device_ptr: int, stream: Any, kernel: str) -> int:
        """Wait for ``stream``, then return the 64-bit word at ``device_ptr``."""
        if self._copy is None or self._sync is None:  # no ctypes entry points: cuda-bindings
            synchronize(kernel)
            head = np.zeros(1, np.uint64)
            check(_cu().cuMemcpyDtoH(head.ctypes.data, device_ptr, 8), "cuMemcpyDtoH", kernel)
            return int(head[0])
        handle = ctypes.c_void_p(_stream_handle(stream) if stream is not None else None)
        err = self._copy(ctypes.c_void_p(self.addr), ctypes.c_uint64(device_ptr),
                         ctypes.c_size_t(8), handle)  # fmt: skip
        if not err:
            err = self._sync(handle)
        if err:
            raise _error(_cu().CUresult(err), "cuStreamSynchronize", kernel)
        return int(self.word.value)


def _copy_words(record: DeviceArray, out: np.ndarray) -> None:
    check(_cu().cuMemcpyDtoH(out.ctypes.data, record.ptr, out.nbytes), "cuMemcpyDtoH")


# ------------------------------------------------------------------ decoding


def decode(table: CheckTable, words: np.ndarray, grid: tuple[int, int, int], bases: dict) -> Any:
    """The located error a record describes (``bases``: argument -> (ptr, lo, size))."""
    from minitriton.emulator.errors import DeviceCheckError, assert_report, oob_report

    key = int(words[0])
    site = table.sites[(key & ((1 << SITE_BITS) - 1)) - 1]
    linear = key >> SITE_BITS
    pid = (linear % grid[0], linear // grid[0] % grid[1], linear // (grid[0] * grid[1]))
    slots = words[HEADER_WORDS : HEADER_WORDS + SLOT_WORDS * site.slots]
    slots = slots.reshape(site.slots, SLOT_WORDS)
    written = np.flatnonzero(slots[:, 0] == 1)
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
        offsets = [(bad[k] - ptr) // site.elem_bytes for k in lanes[:3]]
        elems = max(0, size - (ptr - lo)) // max(1, site.elem_bytes)
        message, details = oob_report(
            site.op, _VERBS.get(site.op, "at"), table.arg_names[site.arg], elems,
            table.arg_types[site.arg], site.shape, lanes, offsets,
        )  # fmt: skip
    return DeviceCheckError(site.loc, f"{message} in program {_pid_text(pid)}", details, pid)


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
