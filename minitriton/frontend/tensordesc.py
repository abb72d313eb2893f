"""Tensor descriptors: ``tl.make_tensor_descriptor`` and ``desc.load`` / ``desc.store``.

Triton 3.x's replacement for block pointers::

    desc = tl.make_tensor_descriptor(base, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    tile = desc.load([pid_m * BM, 0])      # out-of-bounds elements read as 0
    desc.store([pid_m * BM, 0], tile)      # out-of-bounds elements are not written

``desc.gather(rows, col)`` and ``desc.scatter(value, rows, col)`` (Triton
3.4's, for a 2-D descriptor whose block is one row) read and write the rows
named by a 1-D block of indices, ``block_shape[1]`` columns from ``col``;
Triton lowers them to Blackwell's TMA gathers, and has them nowhere else.

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
from minitriton.ir import ops
from minitriton.ir import types as T
from minitriton.language import core as tl_core


class TensorDescriptor(BP.BlockPointer):
    """A tensor descriptor: base, shape, strides and block shape (offsets are always 0)."""

    kind = "tensor descriptor"
    #: What out-of-range elements read as: ``"zero"`` or ``"nan"`` (a host descriptor's).
    padding = "zero"

    @property
    def dtype(self) -> Any:
        """The element type (``desc.dtype``, as in Triton)."""
        return self.element

    @property
    def type(self) -> Any:
        """Triton's ``tl.tensor_descriptor_type``: the block type, and its sizes are ``int32``
        and its strides ``int64`` (as Triton types them; the fields here are wider)."""
        sizes = tl_core.tuple_type([tl_core.int32] * self.rank)
        strides = tl_core.tuple_type([tl_core.int64] * self.rank)
        return tl_core.tensor_descriptor_type(self.block_type, sizes, strides)

    def with_fields(self, fields: list[Tensor]) -> TensorDescriptor:
        """The same descriptor over new run-time fields (as carried through a loop)."""
        bp = super().with_fields(fields)
        return _descriptor(bp, self.padding)

    def static_key(self) -> tuple[Any, ...]:
        """The block pointer's key and the padding."""
        return (*super().static_key(), self.padding)

    def mangle(self) -> str:
        """``D`` and the block pointer's mangling (``DN`` for NaN padding)."""
        return ("DN" if self.padding == "nan" else "D") + super().mangle()

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
    return _descriptor(bp, "zero")


def _descriptor(bp: BP.BlockPointer, padding: str) -> TensorDescriptor:
    desc = TensorDescriptor(bp.base, bp.shape, bp.strides, bp.offsets, bp.block_shape, bp.order)
    desc.padding = padding
    return desc


def from_kernel_args(
    b: Builder, args: list[Tensor], block_shape: tuple[int, ...], padding: str
) -> TensorDescriptor:
    """A host-side descriptor argument, from its base, sizes and strides but the last.

    The last stride is the constant 1 (the launcher checked it), so the
    innermost dimension stays contiguous for the backend's vectorization.
    """
    rank = len(block_shape)
    base, shape, strides = args[0], args[1 : 1 + rank], [*args[1 + rank :], 1]
    return _descriptor(make_tensor_descriptor(b, base, shape, strides, list(block_shape)), padding)


def padding_value(desc: TensorDescriptor) -> float:
    """What ``desc.load`` reads out of range: 0, or NaN for ``padding="nan"``."""
    return float("nan") if desc.padding == "nan" else 0


def _at(b: Builder, desc: Any, offsets: Any, what: str) -> BP.BlockPointer:
    if not isinstance(desc, TensorDescriptor):
        raise error(b.loc, f"{what} needs a tensor descriptor, got {S.describe(desc)}")
    return BP.advance(b, desc, offsets)


def tile_pointers(b: Builder, desc: Any, offsets: Any, what: str) -> tuple[Tensor, Any]:
    """The tile's pointers and its in-bounds mask (every dimension is checked)."""
    bp = _at(b, desc, offsets, what)
    return BP.pointers_and_mask(b, bp, list(range(bp.rank)))


#: The element types of Triton's descriptor reductions (TMA's ``cp.reduce.async.bulk``
#: has no 64-bit signed add, no fp32 min/max and no 8- or 16-bit integers).
REDUCE_TYPES: dict[str, tuple[T.ScalarType, ...]] = {
    "add": (T.U32, T.I32, T.U64, T.F32, T.F16, T.BF16),
    "min": (T.U32, T.I32, T.U64, T.I64, T.F16, T.BF16),
    "max": (T.U32, T.I32, T.U64, T.I64, T.F16, T.BF16),
    "and": (T.U32, T.I32, T.U64, T.I64),
    "or": (T.U32, T.I32, T.U64, T.I64),
    "xor": (T.U32, T.I32, T.U64, T.I64),
}


def check_reduce_type(b: Builder, kind: str, dtype: T.ScalarType, arch: str | None) -> None:
    """Refuse, as Triton does, a ``desc.atomic_<kind>`` its TMA reductions lack.

    fp16/bf16 min and max need native TMA (``arch`` sm_90 or newer; None is
    the default target, sm_90): Triton has no fallback for them on older
    GPUs, so neither is there one here.
    """
    allowed = REDUCE_TYPES[kind]
    if dtype not in allowed:
        names = ", ".join(t.triton_name for t in allowed)
        raise error(b.loc, f"desc.atomic_{kind} does not support {dtype.triton_name}",
                    help=f"desc.atomic_{kind} takes {names}")  # fmt: skip
    if kind in ("min", "max") and dtype in (T.F16, T.BF16) and not sm90_or_newer(arch):
        raise error(
            b.loc, f"desc.atomic_{kind} on {dtype.triton_name} needs native TMA (sm_90 or newer)",
            help="compile for sm_90 or newer, or reduce a 32-bit integer type",
        )  # fmt: skip


def sm90_or_newer(arch: str | None) -> bool:
    """Whether ``arch`` (``"sm_90a"``) is Hopper, sm_90, or newer (it has native TMA);
    None is the default target, sm_90."""
    digits = "".join(c for c in arch or "" if c.isdigit())
    return not digits or int(digits) >= 90


def row_pointers(
    b: Builder, desc: Any, x_offsets: Any, y_offset: Any, what: str
) -> tuple[Tensor, Tensor]:
    """``desc.gather`` / ``desc.scatter``: the pointers of rows ``x_offsets`` and their mask.

    Triton's checks, in its words: a 2-D descriptor with a one-row block, 1-D
    ``int16`` or ``int32`` offsets, at least 8 rows and 32 bytes of columns.
    """
    if not isinstance(desc, TensorDescriptor):
        raise error(b.loc, f"desc.{what} needs a tensor descriptor, got {S.describe(desc)}")
    if desc.rank != 2 or desc.block_shape[0] != 1:
        raise error(
            b.loc,
            f"descriptor block must have 1 row and be 2D, but got {list(desc.block_shape)}",
            help="make the descriptor with block_shape=[1, BLOCK_Y]",
        )
    if not (isinstance(x_offsets, Tensor) and x_offsets.is_block and len(x_offsets.shape) == 1):
        raise error(b.loc, f"x offsets must be 1D, but got {S.describe(x_offsets)}")
    index_type = S.scalar_dtype(x_offsets)
    if index_type.name not in ("i16", "i32"):
        raise error(
            b.loc, f"x offsets must have dtype int16 or int32, but got {index_type.triton_name}"
        )
    rows = x_offsets.shape[0]
    if rows < 8:
        raise error(b.loc, f"descriptor {what} must have at least 8 rows, but got [{rows}]")
    element = S.pointee_of(desc.base)
    min_cols = 32 // element.bitwidth * 8
    cols = desc.block_shape[1]
    if cols < min_cols:
        raise error(
            b.loc,
            f"descriptor {what} of {element.triton_name} must have at least {min_cols} "
            f"columns, but got {cols}",
        )
    row = S.expand_dims(b, S.cast(b, x_offsets, T.I64), 1)
    lane = Tensor(
        b.value(ops.MakeRangeOp, [], T.BlockType((cols,), T.I32), {"start": 0, "end": cols})
    )
    col = S.expand_dims(b, S.binary(b, "+", S.cast(b, lane, T.I64), S.cast(b, y_offset, T.I64)), 0)
    offset = S.binary(
        b, "+", S.binary(b, "*", row, desc.strides[0]), S.binary(b, "*", col, desc.strides[1])
    )
    inside_rows = S.logical(
        b, "and", S.compare(b, ">=", row, 0), S.compare(b, "<", row, desc.shape[0])
    )
    inside_cols = S.logical(
        b, "and", S.compare(b, ">=", col, 0), S.compare(b, "<", col, desc.shape[1])
    )
    shape = (rows, cols)
    ptrs = S.broadcast_to(b, S.pointer_arith(b, "+", desc.base, offset), shape)
    mask = S.broadcast_to(b, S.logical(b, "and", inside_rows, inside_cols), shape)
    return ptrs, mask
