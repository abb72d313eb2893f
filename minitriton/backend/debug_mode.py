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

After the launch the host synchronizes and reads the record's first word. If
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

import ctypes
from collections.abc import Sequence
from typing import Any

import numpy as np

from minitriton.backend.driver import (
    DeviceArray,
    Launcher,
    _convert_scalar,
    _cu,
    check,
    device_pointer,
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

    def _clear(self, words: int) -> None:
        check(_cu().cuMemsetD8(self.record.ptr, 0, 8 * words), "cuMemsetD8", self.name)

    def __call__(self, grid: Sequence[int], args: Sequence[Any], stream: Any = None) -> None:
        if len(args) != len(self.user_kinds):
            raise TypeError(
                f"kernel '{self.name}' takes {len(self.user_kinds)} arguments, got {len(args)}"
            )
        copies: list | None = None
        bases: dict[int, tuple[int, int, int]] = {}
        for i, (slot, kind, arg) in enumerate(zip(self.slots, self.user_kinds, args)):
            if kind != "ptr":
                slot.value = _convert_scalar(kind, arg)
                continue
            ptr = device_pointer(arg)
            if ptr is None:
                ptr, copies = self._host_arg(i, arg, copies)
                # A NumPy array's device copy is the buffer; a raw int has no known extent.
                dev = copies[-1][1] if copies else None
                lo, size = (ptr, dev.nbytes) if dev is not None and dev.ptr == ptr else _UNKNOWN
            else:
                lo, size = extent(arg, ptr)
            slot.value = ptr
            bases[i] = (ptr, lo, size)
        n = len(self.user_kinds)
        for k, i in enumerate(self.pointer_args):
            _, lo, size = bases[i]
            self.slots[n + 2 * k].value = lo
            self.slots[n + 2 * k + 1].value = size
        self.slots[-1].value = self.record.ptr
        dims = (tuple(int(g) for g in grid) + (1, 1, 1))[:3]
        self.launch_raw(*dims, stream)
        self._raise_recorded(dims, bases)
        if copies:
            self._copy_back(copies)

    def _raise_recorded(self, grid: tuple[int, int, int], bases: dict) -> None:
        synchronize(self.name)
        head = np.zeros(1, np.int64)
        _copy_words(self.record, head)
        key = int(head[0]) & ((1 << 64) - 1)
        if key == 0:
            return
        words = np.zeros(self.table.record_words, np.uint64)
        _copy_words(self.record, words)
        self._clear(self.table.record_words)
        raise decode(self.table, words, grid, bases)


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
