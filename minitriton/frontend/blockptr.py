"""Block pointers (``tl.make_block_ptr``, ``tl.advance``), lowered in the frontend.

Triton lowers a block pointer to a ``!tt.ptr<tensor<...>>`` value and, on
GPUs with a Tensor Memory Accelerator, to TMA copies. MiniTriton has no such
type and no TMA: a block pointer is a compile-time :class:`BlockPointer`
holding run-time IR values (the base pointer, ``shape`` and ``strides`` as
``int64`` scalars, ``offsets`` as ``int32`` scalars) plus its compile-time
``block_shape`` and ``order``.

``tl.load``/``tl.store`` through a block pointer lower to ordinary pointer
arithmetic, as Triton's ``RewriteTensorPointer`` pass does on GPUs without
TMA. For a 2-D block::

    idx0 = off0 + tl.arange(0, BLOCK_0)          # int32
    idx1 = off1 + tl.arange(0, BLOCK_1)
    ptrs = base + idx0[:, None] * stride0 + idx1[None, :] * stride1   # int64 offsets
    mask = (idx_d >= 0) & (idx_d < shape_d) for each d in boundary_check

and the load is ``tt.load ptrs, mask, other`` with ``other`` from
``padding_option`` (``"zero"`` -> 0, ``"nan"`` -> NaN, ``""`` -> none:
out-of-bounds lanes are undefined, 0 in practice). Only the dimensions in
``boundary_check`` are checked; ``order`` is a layout hint and is ignored.
``tl.advance`` returns a new :class:`BlockPointer` whose offsets are the old
ones plus the given ones. The IR therefore shows only plain pointer ops.

Because a block pointer is an :class:`~minitriton.frontend.semantic.Aggregate`,
it can be loop-carried, merged by ``scf.if`` and passed to and returned from
``@jit`` helpers: the lowerer flattens it to its run-time fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from minitriton.diagnostics import error
from minitriton.frontend import semantic as S
from minitriton.frontend.builder import Builder
from minitriton.frontend.mangle import mangle_type
from minitriton.frontend.semantic import Aggregate, Tensor
from minitriton.ir import ops
from minitriton.ir.types import I1, I8, I32, I64, BlockType, PointerType, ScalarType

PADDING_VALUES = {"": None, "zero": 0, "nan": float("nan")}


# eq=False: compared by identity, like the Tensor values it holds.
@dataclass(eq=False)
class BlockPointer(Aggregate):
    """A block pointer: run-time base/shape/strides/offsets, compile-time block shape."""

    kind = "block pointer"

    base: Tensor
    shape: tuple[Tensor, ...]
    strides: tuple[Tensor, ...]
    offsets: tuple[Tensor, ...]
    block_shape: tuple[int, ...]
    order: tuple[int, ...]

    @property
    def rank(self) -> int:
        """The number of dimensions."""
        return len(self.block_shape)

    @property
    def element(self) -> ScalarType:
        """The pointee type."""
        return S.pointee_of(self.base)

    @property
    def block_type(self) -> BlockType:
        """The type of a block loaded through this pointer."""
        return BlockType(self.block_shape, self.element)

    @property
    def dtype(self) -> PointerType:
        """Triton's type of a block pointer: a pointer to the block type.

        ``p.dtype.element_ty`` is then the block type, which ``.to()`` accepts
        (it casts to the block's element type), as in Triton.
        """
        return PointerType(self.block_type)  # type: ignore[arg-type]

    @property
    def type(self) -> PointerType:
        """The same as :attr:`dtype` (Triton's ``.type`` of a block pointer)."""
        return self.dtype

    def fields(self) -> list[Tensor]:
        """``[base, *shape, *strides, *offsets]``."""
        return [self.base, *self.shape, *self.strides, *self.offsets]

    def field_names(self) -> list[str]:
        """``base``, ``shape0`` ..., ``stride0`` ..., ``off0`` ..."""
        dims = range(self.rank)
        return ["base", *(f"{k}{d}" for k in ("shape", "stride", "off") for d in dims)]

    def with_fields(self, fields: list[Tensor]) -> BlockPointer:
        """The same block pointer over new run-time fields."""
        r = self.rank
        shape, strides, offsets = fields[1 : 1 + r], fields[1 + r : 1 + 2 * r], fields[1 + 2 * r :]
        return BlockPointer(
            fields[0], tuple(shape), tuple(strides), tuple(offsets), self.block_shape, self.order
        )

    def static_key(self) -> tuple[Any, ...]:
        """The block shape and order (the field types carry the element type)."""
        return self.block_shape, self.order

    def mangle(self) -> str:
        """``Pfp16S16_32So10``: Triton's block-pointer mangling, plus the order."""
        return f"P{mangle_type(self.block_type)}o{''.join(map(str, self.order))}"

    def describe(self) -> str:
        """``block pointer to tensor<16x32xf16>``."""
        return f"block pointer to {self.block_type}"


# ---------------------------------------------------------------- construction


def make_block_ptr(
    b: Builder, base: Any, shape: Any, strides: Any, offsets: Any, block_shape: Any, order: Any
) -> BlockPointer:
    """``tl.make_block_ptr``, with Triton's checks."""
    if not isinstance(base, Tensor) or base.is_block or not isinstance(base.dtype, PointerType):
        raise error(
            b.loc,
            f"make_block_ptr: base must be a scalar pointer, got {S.describe(base)}",
        )
    if base.dtype.pointee == I1:
        # As Triton: bool memory is read and written as int8.
        base = S.cast(b, base, PointerType(I8))
    block = _int_tuple(b, block_shape, "block_shape")
    S.check_block_shape(b, block)
    rank = len(block)
    parts = {"shape": shape, "strides": strides, "offsets": offsets, "order": order}
    for name, value in parts.items():
        if not isinstance(value, (tuple, list)) or len(value) != rank:
            raise error(
                b.loc,
                f"make_block_ptr: {name} must be a tuple of {rank} values, one per "
                f"dimension of block_shape {list(block)}, got {S.describe(value)}",
            )
    order_t = _int_tuple(b, order, "order")
    if sorted(order_t) != list(range(rank)):
        raise error(
            b.loc, f"make_block_ptr: order {list(order_t)} is not a permutation of the dims"
        )
    return BlockPointer(
        base,
        tuple(_index(b, v, I64, "shape") for v in shape),
        tuple(_index(b, v, I64, "strides") for v in strides),
        tuple(_index(b, v, I32, "offsets") for v in offsets),
        block,
        order_t,
    )


def advance(b: Builder, ptr: Any, offsets: Any) -> BlockPointer:
    """``tl.advance``: a new block pointer whose offsets are moved by ``offsets``."""
    bp = expect_block_pointer(b, ptr, "tl.advance")
    if not isinstance(offsets, (tuple, list)) or len(offsets) != bp.rank:
        got = len(offsets) if isinstance(offsets, (tuple, list)) else S.describe(offsets)
        raise error(
            b.loc,
            f"tl.advance: expected {bp.rank} offsets for a block pointer of rank {bp.rank}, "
            f"got {got}",
        )
    moved = []
    for old, delta in zip(bp.offsets, offsets):
        if not isinstance(delta, Tensor) and delta == 0:
            moved.append(old)  # nothing to add
            continue
        moved.append(S.binary(b, "+", old, _index(b, delta, I32, "offsets")))
    return BlockPointer(bp.base, bp.shape, bp.strides, tuple(moved), bp.block_shape, bp.order)


def expect_block_pointer(b: Builder, ptr: Any, what: str) -> BlockPointer:
    """``ptr`` if it is a block pointer, else a located error."""
    if not isinstance(ptr, BlockPointer):
        raise error(
            b.loc,
            f"{what} needs a block pointer (tl.make_block_ptr), got {S.describe(ptr)}",
        )
    return ptr


def _int_tuple(b: Builder, value: Any, what: str) -> tuple[int, ...]:
    items = value if isinstance(value, (tuple, list)) else (value,)
    for v in items:
        if isinstance(v, bool) or not isinstance(v, int):
            raise error(
                b.loc,
                f"make_block_ptr: {what} must be a tuple of compile-time integers, "
                f"got {S.describe(v)}",
            )
    return tuple(items)


def _index(b: Builder, value: Any, t: ScalarType, what: str) -> Tensor:
    """One entry of shape/strides (``int64``) or offsets (``int32``), as Triton checks it."""
    if isinstance(value, bool) or not (isinstance(value, (int, Tensor))):
        raise error(b.loc, f"{what} must hold integers, got {S.describe(value)}")
    if not isinstance(value, Tensor):
        if not -(2 ** (t.bitwidth - 1)) <= value < 2 ** (t.bitwidth - 1):
            raise error(b.loc, f"block pointer {what} must fit in {t!r}, got {value}")
        return S.constant(b, value, t)
    if value.is_block or not isinstance(value.dtype, ScalarType) or not value.dtype.is_int():
        raise error(b.loc, f"{what} must hold integer scalars, got {value.type}")
    if t == I32 and value.dtype != I32:
        raise error(
            b.loc,
            f"block pointer offsets must be int32, got {value.type}",
            help="add a .to(tl.int32), or use a tensor of pointers for 64-bit offsets",
        )
    return S.cast(b, value, t)


# ---------------------------------------------------------------- memory access


def boundary_dims(b: Builder, bp: BlockPointer, boundary_check: Any) -> list[int]:
    """Triton's canonical ``boundary_check``: sorted, unique dims of the block."""
    if boundary_check is None:
        return []
    dims = boundary_check if isinstance(boundary_check, (tuple, list)) else (boundary_check,)
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d < bp.rank:
            raise error(
                b.loc,
                f"boundary_check: {S.describe(d)} is not a dimension of a block pointer "
                f"of rank {bp.rank}",
            )
    if len(set(dims)) != len(dims):
        raise error(b.loc, f"boundary_check: duplicate dimension in {list(dims)}")
    return sorted(dims)


def pointers_and_mask(b: Builder, bp: BlockPointer, checked: list[int]) -> tuple[Tensor, Any]:
    """The block of pointers a block pointer addresses, and its bounds mask (or None)."""
    offset: Tensor | None = None
    mask: Tensor | None = None
    for d in range(bp.rank):
        size = bp.block_shape[d]
        lane = Tensor(
            b.value(ops.MakeRangeOp, [], BlockType((size,), I32), {"start": 0, "end": size})
        )
        # The index in 64 bits, as Triton's block pointers keep their offsets: LLVM can
        # then turn the next tile's address into this one's plus a step, in loops.
        wide = S.binary(b, "+", S.cast(b, bp.offsets[d], I64), S.cast(b, lane, I64))
        idx = _along(b, wide, d, bp.rank)
        term = S.binary(b, "*", idx, bp.strides[d])
        offset = term if offset is None else S.binary(b, "+", offset, term)
        if d in checked:
            inside = S.logical(
                b, "and", S.compare(b, ">=", idx, 0), S.compare(b, "<", idx, bp.shape[d])
            )
            mask = inside if mask is None else S.logical(b, "and", mask, inside)
    assert offset is not None  # rank >= 1: block_shape is never empty
    ptrs = S.broadcast_to(b, S.pointer_arith(b, "+", bp.base, offset), bp.block_shape)
    if mask is not None:
        mask = S.broadcast_to(b, mask, bp.block_shape)
    return ptrs, mask


def _along(b: Builder, x: Tensor, dim: int, rank: int) -> Tensor:
    """The 1-D block ``x`` as dimension ``dim`` of a rank-``rank`` block (size 1 elsewhere)."""
    for axis in range(rank):
        if axis != dim:
            x = S.expand_dims(b, x, axis)
    return x


def padding_value(b: Builder, bp: BlockPointer, padding_option: Any) -> Any:
    """The ``other`` of a block-pointer load for ``padding_option``."""
    if padding_option is None:
        return None
    if not isinstance(padding_option, str) or padding_option not in PADDING_VALUES:
        raise error(
            b.loc,
            f"padding_option {padding_option!r} is not supported",
            help="use 'zero' or 'nan'",
        )
    value = PADDING_VALUES[padding_option]
    if padding_option == "nan" and not bp.element.is_float():
        raise error(b.loc, "padding_option 'nan' is not supported for integer block pointers")
    return value


def is_block_pointer(x: Any) -> bool:
    """True for block pointers."""
    return isinstance(x, BlockPointer)
