"""A masked ``tt.load`` hands its offsets to ``np.take`` without a copy.

``np.take`` copies a read-only index array, and every ``broadcast_to`` view
is read-only: for a block of 64-bit offsets that copy is as big as the
offsets. The offsets of the load's own shape go to it as they are.
"""

from __future__ import annotations

import numpy as np

from minitriton.emulator.ops.memory import _indices


def test_offsets_of_the_right_shape_are_passed_as_they_are() -> None:
    offsets = np.arange(12, dtype=np.int64).reshape(3, 4)
    assert _indices(offsets, (3, 4)) is offsets


def test_other_offsets_are_broadcast() -> None:
    row = np.arange(4, dtype=np.int64)
    out = _indices(row, (3, 4))
    assert out.shape == (3, 4) and np.shares_memory(out, row)
    np.testing.assert_array_equal(out, np.tile(row, (3, 1)))


def test_read_only_offsets_stay_read_only() -> None:
    """Offsets a splat made (a read-only view) are never written through."""
    view = np.broadcast_to(np.int64(5), (3, 4))
    out = _indices(view, (3, 4))
    assert not out.flags.writeable
    np.testing.assert_array_equal(out, np.full((3, 4), 5))
