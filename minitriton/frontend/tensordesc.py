"""Tensor descriptors: ``tl.make_tensor_descriptor`` and ``desc.load`` / ``desc.store``.

Triton 3.x's replacement for block pointers::

    desc = tl.make_tensor_descriptor(base, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    tile = desc.load([pid_m * BM, 0])      # out-of-bounds elements read as 0
    desc.store([pid_m * BM, 0], tile)      # out-of-bounds elements are not written

On GPUs with a Tensor Memory Accelerator these become TMA copies. Here a
descriptor is a block pointer whose offsets stay zero
(:class:`~minitriton.frontend.blockptr.BlockPointer`): ``load`` and
``store`` take the offsets of the tile, check every dimension against the
shape and pad with zeros, so the IR holds plain pointer loads and stores.
The last stride must be 1, as Triton requires.
"""

from __future__ import annotations

from typing import Any

from minitriton.diagnostics import error
from minitriton.frontend import blockptr as BP
from minitriton.frontend import semantic as S
from minitriton.frontend.builder import Builder
from minitriton.frontend.semantic import Tensor


class TensorDescriptor(BP.BlockPointer):
    """A tensor descriptor: base, shape, strides and block shape (offsets are always 0)."""

    kind = "tensor descriptor"

    @property
    def dtype(self) -> Any:
        """The element type (``desc.dtype``, as in Triton)."""
        return self.element

    def with_fields(self, fields: list[Tensor]) -> TensorDescriptor:
        """The same descriptor over new run-time fields (as carried through a loop)."""
        bp = super().with_fields(fields)
        return TensorDescriptor(bp.base, bp.shape, bp.strides, bp.offsets, bp.block_shape, bp.order)

    def mangle(self) -> str:
        """``D`` and the block pointer's mangling."""
        return "D" + super().mangle()

    def describe(self) -> str:
        """``tensor descriptor of tensor<16x32xf16>``."""
        return f"tensor descriptor of {self.block_type}"


def make_tensor_descriptor(
    b: Builder, base: Any, shape: Any, strides: Any, block_shape: Any
) -> TensorDescriptor:
    """``tl.make_tensor_descriptor``, with Triton's checks."""
    rank = len(block_shape) if isinstance(block_shape, (tuple, list)) else 0
    if not isinstance(strides, (tuple, list)) or len(strides) != rank:
        raise error(b.loc, f"make_tensor_descriptor: strides must be a list of {rank} values")
    last = strides[-1] if strides else None
    if not isinstance(last, Tensor) and last != 1:
        raise error(
            b.loc,
            f"make_tensor_descriptor: the last stride must be 1, got {S.describe(last)}",
            help="a descriptor describes row-major tiles: transpose the data or the tile",
        )
    order = tuple(range(rank - 1, -1, -1))
    bp = BP.make_block_ptr(b, base, shape, strides, [0] * rank, block_shape, order)
    return TensorDescriptor(bp.base, bp.shape, bp.strides, bp.offsets, bp.block_shape, bp.order)


def _at(b: Builder, desc: Any, offsets: Any, what: str) -> BP.BlockPointer:
    if not isinstance(desc, TensorDescriptor):
        raise error(b.loc, f"{what} needs a tensor descriptor, got {S.describe(desc)}")
    return BP.advance(b, desc, offsets)


def tile_pointers(b: Builder, desc: Any, offsets: Any, what: str) -> tuple[Tensor, Any]:
    """The tile's pointers and its in-bounds mask (every dimension is checked)."""
    bp = _at(b, desc, offsets, what)
    return BP.pointers_and_mask(b, bp, list(range(bp.rank)))
