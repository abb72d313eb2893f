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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minitriton.ir.types import ScalarType

ADDRESS_SPACING = 1 << 40


@dataclass
class Buffer:
    """The memory of one pointer argument, seen as ``dtype`` elements."""

    name: str
    flat: np.ndarray
    dtype: ScalarType
    root: int  # id of the argument buffer this is a view of (itself if none)

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

    def add(self, name: str, array: np.ndarray, dtype: ScalarType) -> int:
        """Register the array of argument ``name``; returns its buffer id."""
        flat = array.ravel(order="A")  # a view: the array is contiguous (checked by the caller)
        self.buffers.append(Buffer(name, flat, dtype, len(self.buffers)))
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

    def snapshot(self) -> list[np.ndarray]:
        """Copies of every argument buffer (to undo a batched run)."""
        return [b.flat.copy() for i, b in enumerate(self.buffers) if b.root == i]

    def restore(self, saved: list[np.ndarray]) -> None:
        """Write back the contents saved by :meth:`snapshot`."""
        roots = [b for i, b in enumerate(self.buffers) if b.root == i]
        for buf, data in zip(roots, saved):
            buf.flat[...] = data
