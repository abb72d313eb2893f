"""``triton.tools.tensor_descriptor.TensorDescriptor``: a host-side tensor descriptor.

Triton lets the host build a descriptor and pass it to a kernel. MiniTriton
does not pass descriptors as arguments yet: launching with one is an error
that says to build the descriptor inside the kernel with
``tl.make_tensor_descriptor(base, shape, strides, block_shape)``, which runs
on both backends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class TensorDescriptor:
    """A tensor, its shape and strides, and the block shape of the tiles to copy."""

    base: Any
    shape: list[int]
    strides: list[int]
    block_shape: list[int]
    padding: str = "zero"

    @staticmethod
    def from_tensor(tensor: Any, block_shape: list[int], padding: str = "zero") -> TensorDescriptor:
        """The descriptor of a whole tensor (its shape and strides)."""
        shape, strides = list(tensor.shape), list(tensor.stride())
        return TensorDescriptor(tensor, shape, strides, block_shape, padding)


NOT_SUPPORTED = (
    "host-side TensorDescriptor arguments are not supported yet: pass the tensor, its shape "
    "and strides, and build the descriptor in the kernel with "
    "tl.make_tensor_descriptor(base, shape, strides, block_shape)"
)
