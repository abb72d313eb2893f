"""Which output elements a kernel stored to: the emulator's write tracking.

The grader tells "never written" from "written with a wrong value" (or a
NaN) by watching the emulator's stores, not by guessing from a NaN
sentinel. :class:`WriteTracker` is an emulator tool (see
:mod:`minitriton.emulator.debug.tools`): while it is active, every ``tt.store``
and atomic of every launch records the host addresses it wrote.
:meth:`WriteTracker.written` then maps an output array, strided views
included, onto those addresses.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from minitriton.emulator.debug.checks import access_of
from minitriton.emulator.debug.tools import Launch, Tool
from minitriton.emulator.interpreter import Listener, ProgramState
from minitriton.ir.core import Operation
from minitriton.ir.traits import WritesMemory


class _StoreListener(Listener):
    """Adds the byte address of every element a store or atomic writes to ``sink``."""

    def __init__(self, sink: list[np.ndarray]) -> None:
        self.sink = sink

    def will_execute_op(self, op: Operation, state: ProgramState) -> None:
        """Record the in-bounds, enabled lanes of a write."""
        if not op.has_trait(WritesMemory):
            return
        access, _ = access_of(state, op)
        root = state.interp.memory[access.buffer].flat
        start = int(root.__array_interface__["data"][0])
        self.sink.append(start + access.units.astype(np.int64) * root.dtype.itemsize)


class WriteTracker(Tool):
    """An emulator tool that remembers the host addresses every launch wrote."""

    def __init__(self) -> None:
        self._parts: list[np.ndarray] = []

    def listeners(self, launch: Launch) -> list[Listener]:
        """One store listener per launch."""
        return [_StoreListener(self._parts)]

    def addresses(self) -> np.ndarray:
        """Every byte address written so far, sorted and unique."""
        if not self._parts:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(self._parts))

    def written(self, outputs: Sequence[np.ndarray]) -> list[np.ndarray | None]:
        """Per output, a mask of the elements some store wrote.

        None for an output that no store touched at all: the spec built it
        on the host (a copy, a sum), so "never written" would be a lie.
        """
        seen = self.addresses()
        masks: list[np.ndarray | None] = []
        for out in outputs:
            mask = np.isin(element_addresses(out), seen) if out.size else None
            masks.append(mask if mask is not None and mask.any() else None)
        return masks


def element_addresses(a: np.ndarray) -> np.ndarray:
    """The byte address of each element of ``a`` (any strides), shaped like ``a``."""
    start = int(a.__array_interface__["data"][0])
    if a.ndim == 0:
        return np.array(start, dtype=np.int64)
    idx = np.indices(a.shape, dtype=np.int64)
    strides = np.array(a.strides, dtype=np.int64).reshape((-1,) + (1,) * a.ndim)
    return start + (idx * strides).sum(axis=0)
