"""``triton.tools.ragged_tma``: descriptors over a concatenation of unequal subarrays.

MoE kernels keep each expert's rows one after another in one tensor and
read ``T[slice_off : slice_off + slice_size]`` with bounds checked against
the slice, not the tensor. :func:`create_ragged_descriptor` makes a
descriptor with two extra leading dimensions for that; the device functions
turn ``(slice_off, slice_size, row)`` into coordinates whose bounds check is
``row < slice_size``:

* the ragged dimension's size becomes ``2**30`` and its coordinate
  ``2**30 - slice_size + row``, in bounds exactly while ``row < slice_size``;
* the two new dimensions, of coordinates ``2**30`` and ``slice_off +
  slice_size``, have strides ``2**34 - s`` and ``s`` (``s`` the ragged
  stride). With 64-bit wraparound the element offset comes out as
  ``(slice_off + row) * s``: the row of the slice.

It works the same on both backends: descriptors are bounds-checked per
dimension and addressed in 64 bits (Triton's module relies on the same
arithmetic in the TMA engine).
"""

# mypy: disable-error-code="assignment,operator"
# (the @jit functions below are kernel code: their constexpr parameters are not Python ints)
from __future__ import annotations

from typing import Any

import minitriton as triton
import minitriton.language as tl
from minitriton.tools.tensor_descriptor import TensorDescriptor, element_strides

#: The ragged dimension's size and the base of its coordinates.
_BILLION = 1 << 30
#: The two leading dimensions' size: large, and within 32 bits.
_MAX_INT = 0x7FFF0000


def create_ragged_descriptor(tensor: Any, block_shape: list[int], ragged_dim: int = 0) -> Any:
    """A descriptor of ``tensor`` (2- or 3-D) whose ``ragged_dim`` holds slices of any size."""
    shape = list(tensor.shape)
    rank = len(shape)
    ragged_dim = ragged_dim + rank if ragged_dim < 0 else ragged_dim
    if not 0 <= ragged_dim < rank - 1:
        raise ValueError("last dimension cannot be ragged")
    if rank > 3:
        raise ValueError("read-write ragged descriptors must have at most 3 dimensions")
    if len(block_shape) != rank:
        raise ValueError("block shape must have same length as tensor shape")
    if shape[ragged_dim] > _BILLION:
        raise ValueError("number of rows may not exceed 2**30")
    strides = element_strides(tensor)
    ragged_stride = strides[ragged_dim]
    shape[ragged_dim] = _BILLION
    return TensorDescriptor(tensor, [_MAX_INT, _MAX_INT, *shape],
                            [2**34 - ragged_stride, ragged_stride, *strides],
                            [1, 1, *block_shape])  # fmt: skip


@triton.jit
def to_ragged_indices(slice_off, slice_size, row):
    """The coordinates of ``row`` of the slice in a ragged descriptor's first dimensions."""
    billion = 0x40000000
    return billion, slice_off + slice_size, billion - slice_size + row


@triton.jit
def load_ragged(TMA, slice_off, slice_size, coords, ragged_dim: tl.constexpr = 0):
    """The block at ``coords`` of ``T[slice_off : slice_off + slice_size]``; rows past the
    slice read as zero."""
    tl.static_assert(
        len(TMA.shape) == len(coords) + 2, "TMA must be a read-write ragged descriptor"
    )
    c0, c1, c2 = to_ragged_indices(slice_off, slice_size, coords[ragged_dim])
    data = TMA.load([c0, c1] + coords[:ragged_dim] + [c2] + coords[ragged_dim + 1 :])
    return tl.reshape(data, data.shape[2:])


@triton.jit
def store_ragged(TMA, slice_off, slice_size, coords, data, ragged_dim: tl.constexpr = 0):
    """Write ``data`` at ``coords`` of the slice; rows past the slice are not written."""
    c0, c1, c2 = to_ragged_indices(slice_off, slice_size, coords[ragged_dim])
    data = tl.reshape(data, [1, 1] + data.shape)
    TMA.store([c0, c1] + coords[:ragged_dim] + [c2] + coords[ragged_dim + 1 :], data)


@triton.jit
def atomic_add_ragged(TMA, slice_off, slice_size, coords, data, ragged_dim: tl.constexpr = 0):
    """Add ``data`` at ``coords`` of the slice, atomically; rows past the slice are skipped."""
    c0, c1, c2 = to_ragged_indices(slice_off, slice_size, coords[ragged_dim])
    data = tl.reshape(data, [1, 1] + data.shape)
    TMA.atomic_add([c0, c1] + coords[:ragged_dim] + [c2] + coords[ragged_dim + 1 :], data)
