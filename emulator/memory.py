"""The emulator's memory: one buffer per array argument.

Each NumPy array passed for a pointer argument becomes a :class:`Buffer`, a
1-D view of the array's memory, named after the kernel parameter. A pointer
value is an integer array of element offsets into one buffer (``int64``, or
the offsets block itself, see :mod:`minitriton.emulator.values`) plus the
buffer's id, so every access can be checked against the buffer's size: the
emulator never reads or writes outside an argument.

Casting a pointer to another pointee type makes a *view* buffer (same
memory, other dtype). Casting a pointer to ``i64`` gives a made-up byte
address: each argument owns a 2^40-byte address range, so the address can
be cast back.

Casting an integer to a pointer (:meth:`Memory.resolve`) accepts such a
made-up address, or a host address (``tensor.data_ptr()``,
``array.ctypes.data``) inside an argument's array, or inside any other live
NumPy array or torch CPU tensor: :mod:`~minitriton.emulator.hostmem` finds
it, and it becomes one more buffer of the launch, named after the variable
that holds it. An integer that no array holds still casts: the pointer keeps
the raw byte address (buffer id :data:`RAW_ADDRESSES`), pointer arithmetic,
``tl.where`` and casts back to integers work on it, and it is resolved when
a load, store or atomic uses it, on the lanes the mask enables; only then is
an address outside every array an error. (Kernels cast random integers to
pointers they never dereference: Triton's ``test_where``.)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from minitriton.emulator.hostmem import find_array
from minitriton.ir.types import U8, ScalarType

ADDRESS_SPACING = 1 << 40
#: The buffer id of pointers that hold raw byte addresses, not offsets (see the module doc).
RAW_ADDRESSES = -1

#: The arguments whose reads the launches of this context record (see :func:`watching_reads`).
_WATCHED_READS: ContextVar[dict[str, np.ndarray | None] | None] = ContextVar(
    "watched_reads", default=None
)


@contextmanager
def watching_reads(names: Sequence[str]) -> Iterator[dict[str, np.ndarray | None]]:
    """Record which elements loads read from the arguments ``names``, for launches inside.

    Yields a dict that maps each name to a bool array over the argument's
    buffer once a launch has bound it (None before). Only these buffers pay
    for the bookkeeping: the launcher watches strided views, whose gaps a
    kernel indexing them as contiguous memory would read.
    """
    watched: dict[str, np.ndarray | None] = dict.fromkeys(names)
    token = _WATCHED_READS.set(watched if names else None)
    try:
        yield watched
    finally:
        _WATCHED_READS.reset(token)


def note_reads(buf: Buffer, offsets: np.ndarray, mask: np.ndarray | None) -> None:
    """Mark in ``buf.reads`` the elements at the enabled ``offsets`` (those inside ``buf``)."""
    if buf.reads is None:
        return
    if mask is not None:
        shape = np.broadcast_shapes(offsets.shape, mask.shape)
        offsets = np.broadcast_to(offsets, shape)[np.broadcast_to(mask, shape)]
    flat = np.asarray(offsets).reshape(-1)
    buf.reads[flat[(flat >= 0) & (flat < buf.size)]] = True


@dataclass
class Buffer:
    """The memory of one pointer argument, seen as ``dtype`` elements."""

    name: str
    flat: np.ndarray
    dtype: ScalarType
    root: int  # id of the argument buffer this is a view of (itself if none)
    #: Which elements loads read, for an argument named in :func:`watching_reads`.
    reads: np.ndarray | None = None

    @property
    def size(self) -> int:
        """Number of elements."""
        return int(self.flat.shape[0])

    @property
    def base_address(self) -> int:
        """The made-up byte address of element 0."""
        return (self.root + 1) * ADDRESS_SPACING


class Memory:
    """All buffers of one launch, indexed by buffer id."""

    def __init__(self) -> None:
        self.buffers: list[Buffer] = []
        self._views: dict[tuple[int, str], int] = {}
        # Contents of buffers found by address after a snapshot: restore() undoes them too.
        self._found_saved: dict[int, np.ndarray] | None = None

    def add(self, name: str, array: np.ndarray, dtype: ScalarType) -> int:
        """Register the array of argument ``name``; returns its buffer id."""
        flat = array.ravel(order="A")  # a view: the array is contiguous (checked by the caller)
        buffer = Buffer(name, flat, dtype, len(self.buffers))
        watched = _WATCHED_READS.get()
        if watched is not None and name in watched:
            buffer.reads = watched[name] = np.zeros(flat.shape[0], dtype=bool)
        self.buffers.append(buffer)
        return len(self.buffers) - 1

    def __getitem__(self, buffer_id: int) -> Buffer:
        return self.buffers[buffer_id]

    def view(self, buffer_id: int, dtype: ScalarType) -> int:
        """The id of a buffer over the same memory as ``buffer_id``, typed ``dtype``."""
        root = self.buffers[buffer_id].root
        key = (root, dtype.name)
        if self.buffers[root].dtype == dtype:
            return root
        if key not in self._views:
            src = self.buffers[root]
            usable = src.flat.nbytes - src.flat.nbytes % dtype.numpy.itemsize
            raw = src.flat.view(np.uint8)[:usable]
            self.buffers.append(Buffer(src.name, raw.view(dtype.numpy), dtype, root))
            self._views[key] = len(self.buffers) - 1
        return self._views[key]

    def root_of_address(self, address: int) -> int | None:
        """The argument buffer whose address range holds ``address``, if any."""
        root = address // ADDRESS_SPACING - 1
        if 0 <= root < len(self.buffers) and self.buffers[root].root == root:
            return root
        return None

    def host_address(self, root: int) -> int:
        """The host address of the first byte of argument buffer ``root``."""
        return int(self.buffers[root].flat.__array_interface__["data"][0])

    def resolve(self, address: int) -> tuple[int, int] | None:
        """The argument buffer holding byte ``address``, and the address of its byte 0.

        ``address`` is a host address or a made-up one (see the module
        docstring); ``None`` if no live array holds it.
        """
        for i, buf in enumerate(self.buffers):
            if buf.root == i:
                start = self.host_address(i)
                if start <= address < start + buf.flat.nbytes:
                    return i, start
        root = self.root_of_address(address)
        if root is not None:
            return root, self.buffers[root].base_address
        found = find_array(address)
        if found is None:
            return None
        root = self.add(found.name, found.data, U8)
        if self._found_saved is not None:
            self._found_saved[root] = found.data.copy()
        return root, found.start

    def snapshot(self) -> list[np.ndarray]:
        """Copies of every argument buffer (to undo a batched run)."""
        self._found_saved = {}
        return [b.flat.copy() for i, b in enumerate(self.buffers) if b.root == i]

    def restore(self, saved: list[np.ndarray]) -> None:
        """Write back the contents saved by :meth:`snapshot`."""
        roots = [b for i, b in enumerate(self.buffers) if b.root == i]
        for buf, data in zip(roots, saved):
            if buf.flat.flags.writeable:  # read-only memory was not written
                buf.flat[...] = data
        for root, data in (self._found_saved or {}).items():
            if self.buffers[root].flat.flags.writeable:
                self.buffers[root].flat[...] = data
