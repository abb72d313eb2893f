"""Semantics of constants, program ids, casts, pointer arithmetic and shape ops.

Shape ops act on the IR dimensions; a batched value has one extra leading
program axis, so its axes shift by one (``_lead``).
"""

from __future__ import annotations

import numpy as np

from minitriton.emulator.interpreter import ProgramState
from minitriton.emulator.memory import ADDRESS_SPACING
from minitriton.emulator.registry import semantics
from minitriton.emulator.values import RVal, cast_values, scalar_constant
from minitriton.ir.core import Operation
from minitriton.ir.types import PointerType, ScalarType, element_type


def _lead(x: RVal) -> int:
    """Number of leading program axes (1 if batched)."""
    return 1 if x.batched else 0


def _full_shape(x: RVal, shape: tuple[int, ...]) -> tuple[int, ...]:
    return (x.data.shape[0], *shape) if x.batched else shape


# ---------------------------------------------------------------- sources


@semantics("arith.constant")
def _constant(op: Operation, state: ProgramState) -> RVal:
    """A scalar, or a block filled with one value (cached: values are immutable)."""
    cached = state.interp.cache.get(op)
    if cached is not None:
        return cached
    t = op.results[0].type
    elem = element_type(t)
    assert isinstance(elem, ScalarType)
    value = scalar_constant(op.attrs["value"], elem)
    rval = RVal(np.full(op.results[0].shape, value, dtype=value.dtype), False)
    state.interp.cache[op] = rval
    return rval


@semantics("tt.get_program_id")
def _program_id(op: Operation, state: ProgramState) -> RVal:
    """The program id along ``axis``: unbatched when equal for the whole batch."""
    ids = state.pids[:, op.attrs["axis"]]
    if np.all(ids == ids[0]):
        return RVal(np.array(ids[0], dtype=np.int32), False)
    return RVal(ids.astype(np.int32), True)


@semantics("tt.get_num_programs")
def _num_programs(op: Operation, state: ProgramState) -> RVal:
    """The grid size along ``axis``."""
    return RVal(np.array(state.interp.grid[op.attrs["axis"]], dtype=np.int32), False)


@semantics("tt.make_range")
def _make_range(op: Operation, state: ProgramState) -> RVal:
    """``[start, end)`` as int32."""
    return RVal(np.arange(op.attrs["start"], op.attrs["end"], dtype=np.int32), False)


# ---------------------------------------------------------------- casts, pointers


@semantics("arith.cast")
def _cast(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """Value conversion (see :func:`~minitriton.emulator.values.cast_values`)."""
    src = element_type(op.operands[0].type)
    dst = element_type(op.results[0].type)
    if isinstance(src, PointerType) and isinstance(dst, PointerType):
        return _cast_ptr(state, x, src, dst)
    if isinstance(src, PointerType):
        assert isinstance(dst, ScalarType)
        buf = state.interp.memory[x.buffer or 0]
        nbytes = np.multiply(x.data, src.pointee.numpy.itemsize, dtype=np.int64)
        address = buf.base_address + nbytes
        return RVal(cast_values(address, ScalarType("i64"), dst), x.batched)
    if isinstance(dst, PointerType):
        assert isinstance(src, ScalarType)
        return _int_to_ptr(op, state, x, src, dst)
    return RVal(np.asarray(cast_values(x.data, src, dst)), x.batched)


def _cast_ptr(state: ProgramState, x: RVal, src: PointerType, dst: PointerType) -> RVal:
    # Same memory seen through another element type: offsets scale by the size ratio.
    memory = state.interp.memory
    buffer = memory.view(x.buffer or 0, dst.pointee)
    nbytes = np.multiply(x.data, src.pointee.numpy.itemsize, dtype=np.int64)
    return RVal(nbytes // dst.pointee.numpy.itemsize, x.batched, buffer)


def _int_to_ptr(
    op: Operation, state: ProgramState, x: RVal, src: ScalarType, dst: PointerType
) -> RVal:
    memory = state.interp.memory
    address = np.asarray(cast_values(x.data, src, ScalarType("i64")))
    roots = np.unique(address // ADDRESS_SPACING - 1)
    root = memory.root_of_address(int(address.flat[0])) if address.size else None
    if root is None or len(roots) != 1:
        raise state.interp.error(
            op, state, "integer cast to a pointer is not an argument's address"
        )
    buffer = memory.view(root, dst.pointee)
    offsets = (address - memory[root].base_address) // dst.pointee.numpy.itemsize
    return RVal(offsets, x.batched, buffer)


@semantics("tt.addptr")
def _addptr(op: Operation, state: ProgramState, ptr: RVal, offset: RVal) -> RVal:
    """Pointer plus an element offset (computed in 64 bits; the offset already wrapped)."""
    data = _offsets_from_base(ptr.data, offset.data) if op.results[0].shape else None
    if data is None:
        data = np.add(ptr.data, offset.data, dtype=np.int64)  # one pass, no temporary
    return RVal(data, ptr.batched or offset.batched, ptr.buffer)


def _offsets_from_base(base: np.ndarray, offset: np.ndarray) -> np.ndarray | None:
    """``offset`` itself when ``base`` is element 0 of its buffer everywhere, else None.

    ``x_ptr + offsets`` on an argument's pointer is the commonest ``tt.addptr``:
    the sum is the offsets themselves, so the block of (often 32-bit) offsets
    serves as the pointer's data, without a new 64-bit block per pointer
    (which a first launch pays for in fresh pages). Values are never written
    in place, so sharing the array is safe; an offset block smaller than the
    result (a broadcast) takes the general path, and so do scalar pointers
    (``x_ptr + row * stride``): small, and cheaper to add to in 64 bits.
    """
    if offset.dtype not in _OFFSET_DTYPES or not base.size or any(base.strides):
        return None
    if base.item(0) != 0:
        return None
    if np.broadcast_shapes(base.shape, offset.shape) != offset.shape:
        return None
    return offset


#: Offset dtypes a pointer's data may keep as they are (signed, so never huge).
_OFFSET_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


# ---------------------------------------------------------------- shapes


@semantics("tt.splat")
def _splat(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """A block filled with a scalar (a broadcast view: values are never written)."""
    shape = op.results[0].shape
    data = x.data.reshape(x.data.shape + (1,) * len(shape))
    return RVal(np.broadcast_to(data, _full_shape(x, shape)), x.batched, x.buffer)


@semantics("tt.broadcast")
def _broadcast(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """Expand size-1 dimensions."""
    shape = _full_shape(x, op.results[0].shape)
    return RVal(np.broadcast_to(x.data, shape), x.batched, x.buffer)


@semantics("tt.expand_dims")
def _expand_dims(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """Insert a dimension of size 1."""
    data = np.expand_dims(x.data, op.attrs["axis"] + _lead(x))
    return RVal(data, x.batched, x.buffer)


@semantics("tt.reshape")
def _reshape(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """Row-major reshape."""
    data = x.data.reshape(_full_shape(x, op.results[0].shape))
    return RVal(data, x.batched, x.buffer)


@semantics("tt.trans")
def _trans(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """Permute dimensions by ``order``."""
    lead = _lead(x)
    axes = list(range(lead)) + [a + lead for a in op.attrs["order"]]
    return RVal(np.transpose(x.data, axes), x.batched, x.buffer)


@semantics("tt.hint", "ttg.convert_layout")
def _identity(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """Hints and the GPU backend's layout changes never change values."""
    return x


@semantics("tt.barrier")
def _barrier(op: Operation, state: ProgramState) -> None:
    """A no-op: each program's ops already run in order."""
