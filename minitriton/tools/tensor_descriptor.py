"""``triton.tools.tensor_descriptor.TensorDescriptor``: a host-side tensor descriptor.

The host describes a tensor (its base, shape and strides) and the block shape
of the tiles a kernel copies, and passes the descriptor as a kernel argument::

    a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K])
    kernel[grid](a_desc, ...)

    @triton.jit
    def kernel(a_desc, ...):
        tile = a_desc.load([pid_m * BLOCK_M, k])     # out-of-range elements read as 0
        a_desc.store([pid_m * BLOCK_M, k], tile)     # out-of-range elements are not written

As in Triton, the kernel is specialized on the block shape, the rank and the
padding (``"zero"`` or ``"nan"``); the base, shape and strides are run-time
arguments: the launcher passes them as ``a_desc`` (the base pointer),
``a_desc_shape0`` ... (``int32``) and ``a_desc_stride0`` ... (``int64``), one
per dimension but the last, whose stride is 1. The block shape may change
until the launch (tutorial 09's autotune ``pre_hook`` sets it).

The checks are Triton's: rank 1 to 5, a 16-byte-aligned base, strides but the
last a multiple of 16 bytes, the last stride 1, positive sizes, block sizes
that are powers of two. They are the Tensor Memory Accelerator's rules, which
Triton's TMA copies need; MiniTriton does not use the TMA engine yet (on
sm_90a, descriptor tiles feeding ``tl.dot`` are copied with ``cp.async``, see
:mod:`minitriton.backend.passes.sink_transposes`). NumPy arrays are accepted as well
as tensors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

PADDINGS = ("zero", "nan")


@dataclass
class TensorDescriptor:
    """A tensor, its shape and strides, and the block shape of the tiles to copy."""

    base: Any
    shape: list[int]
    strides: list[int]
    block_shape: list[int]
    padding: str = "zero"
    #: Marks the class for the launch fast path (:func:`minitriton.jit.descriptor_key`).
    fast_launch: ClassVar[bool] = True

    def __post_init__(self) -> None:
        self.shape = [int(s) for s in self.shape]
        self.strides = [int(s) for s in self.strides]
        problem = check_layout(self)
        if problem:
            raise ValueError(f"TensorDescriptor: {problem}")

    @staticmethod
    def from_tensor(tensor: Any, block_shape: list[int], padding: str = "zero") -> TensorDescriptor:
        """The descriptor of a whole tensor or array (its shape and strides)."""
        return TensorDescriptor(tensor, list(tensor.shape), element_strides(tensor),
                                list(block_shape), padding)  # fmt: skip


def element_strides(tensor: Any) -> list[int]:
    """Strides in elements: torch's ``stride()``, NumPy's byte strides divided."""
    if hasattr(tensor, "stride"):
        return [int(s) for s in tensor.stride()]
    return [s // element_bytes(tensor) for s in tensor.strides]  # NumPy: bytes


def element_bytes(tensor: Any) -> int:
    """The size of one element of an array or tensor."""
    dtype = tensor.dtype
    size = getattr(dtype, "itemsize", None)
    return int(size) if size is not None else int(tensor.element_size())


def check_layout(desc: TensorDescriptor) -> str:
    """What is wrong with the descriptor's base, shape and strides ("" if nothing)."""
    rank = len(desc.shape)
    if not 1 <= rank <= 5:
        return f"the rank must be 1 to 5, got {rank}"
    if len(desc.strides) != rank:
        return f"{rank} sizes but {len(desc.strides)} strides"
    if any(s <= 0 for s in desc.shape):
        return f"every size must be positive, got shape {desc.shape}"
    if desc.strides[-1] != 1:
        return f"the last dimension must be contiguous (stride 1), got strides {desc.strides}"
    itemsize = element_bytes(desc.base)
    for stride in desc.strides[:-1]:
        if stride * itemsize % 16:
            return (f"strides must be multiples of 16 bytes, got {stride} elements of "
                    f"{itemsize} bytes")  # fmt: skip
    from minitriton.signature import address_of

    if address_of(getattr(desc.base, "bits", desc.base)) % 16:  # a bf16 view: its bits
        return "the base must be 16-byte aligned"
    if desc.padding not in PADDINGS:
        return f"padding must be 'zero' or 'nan', got {desc.padding!r}"
    return ""


def check_block_shape(desc: TensorDescriptor) -> str:
    """What is wrong with the block shape at launch ("" if nothing)."""
    block = list(desc.block_shape)
    if len(block) != len(desc.shape):
        return f"block_shape {block} has {len(block)} dimensions, the tensor {len(desc.shape)}"
    for size in block:
        if not isinstance(size, (int, np.integer)) or size < 1 or size & (size - 1):
            return f"block sizes must be powers of two, got block_shape {block}"
    return ""
