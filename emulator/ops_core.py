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
from minitriton.ir.ops import (
    AddPtrOp,
    BarrierOp,
    BroadcastOp,
    CastOp,
    ConstantOp,
    ExpandDimsOp,
    HintOp,
    MakeRangeOp,
    NumProgramsOp,
    ProgramIdOp,
    ReshapeOp,
    SplatOp,
    TransOp,
)
from minitriton.ir.types import PointerType, ScalarType, element_type


def _lead(x: RVal) -> int:
    """Number of leading program axes (1 if batched)."""
    return 1 if x.batched else 0


def _full_shape(x: RVal, shape: tuple[int, ...]) -> tuple[int, ...]:
    return (x.data.shape[0], *shape) if x.batched else shape


# ---------------------------------------------------------------- sources


@semantics(ConstantOp)
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


@semantics(ProgramIdOp)
def _program_id(op: Operation, state: ProgramState) -> RVal:
    """The program id along ``axis``: unbatched when equal for the whole batch."""
    ids = state.pids[:, op.attrs["axis"]]
    if np.all(ids == ids[0]):
        return RVal(np.array(ids[0], dtype=np.int32), False)
    return RVal(ids.astype(np.int32), True)


@semantics(NumProgramsOp)
def _num_programs(op: Operation, state: ProgramState) -> RVal:
    """The grid size along ``axis``."""
    return RVal(np.array(state.interp.grid[op.attrs["axis"]], dtype=np.int32), False)


@semantics(MakeRangeOp)
def _make_range(op: Operation, state: ProgramState) -> RVal:
    """``[start, end)`` as int32."""
    return RVal(np.arange(op.attrs["start"], op.attrs["end"], dtype=np.int32), False)


# ---------------------------------------------------------------- casts, pointers


@semantics(CastOp)
def _cast(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """Value conversion (see :func:`~minitriton.emulator.values.cast_values`)."""
    src = element_type(op.operands[0].type)
    dst = element_type(op.results[0].type)
    if isinstance(src, PointerType) and isinstance(dst, PointerType):
        return _cast_ptr(state, x, src, dst)
    if isinstance(src, PointerType):
        assert isinstance(dst, ScalarType)
        buf = state.interp.memory[x.buffer or 0]
        address = buf.base_address + x.data * src.pointee.numpy.itemsize
        return RVal(cast_values(address, ScalarType("i64"), dst), x.batched)
    if isinstance(dst, PointerType):
        assert isinstance(src, ScalarType)
        return _int_to_ptr(op, state, x, src, dst)
    return RVal(np.asarray(cast_values(x.data, src, dst)), x.batched)


def _cast_ptr(state: ProgramState, x: RVal, src: PointerType, dst: PointerType) -> RVal:
    # Same memory seen through another element type: offsets scale by the size ratio.
    memory = state.interp.memory
    buffer = memory.view(x.buffer or 0, dst.pointee)
    nbytes = x.data * src.pointee.numpy.itemsize
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


@semantics(AddPtrOp)
def _addptr(op: Operation, state: ProgramState, ptr: RVal, offset: RVal) -> RVal:
    """Pointer plus an element offset (computed in 64 bits; the offset already wrapped)."""
    data = np.add(ptr.data, offset.data, dtype=np.int64)  # one pass, no temporary
    return RVal(data, ptr.batched or offset.batched, ptr.buffer)


# ---------------------------------------------------------------- shapes


@semantics(SplatOp)
def _splat(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """A block filled with a scalar (a broadcast view: values are never written)."""
    shape = op.results[0].shape
    data = x.data.reshape(x.data.shape + (1,) * len(shape))
    return RVal(np.broadcast_to(data, _full_shape(x, shape)), x.batched, x.buffer)


@semantics(BroadcastOp)
def _broadcast(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """Expand size-1 dimensions."""
    shape = _full_shape(x, op.results[0].shape)
    return RVal(np.broadcast_to(x.data, shape), x.batched, x.buffer)


@semantics(ExpandDimsOp)
def _expand_dims(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """Insert a dimension of size 1."""
    data = np.expand_dims(x.data, op.attrs["axis"] + _lead(x))
    return RVal(data, x.batched, x.buffer)


@semantics(ReshapeOp)
def _reshape(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """Row-major reshape."""
    data = x.data.reshape(_full_shape(x, op.results[0].shape))
    return RVal(data, x.batched, x.buffer)


@semantics(TransOp)
def _trans(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """Permute dimensions by ``order``."""
    lead = _lead(x)
    axes = list(range(lead)) + [a + lead for a in op.attrs["order"]]
    return RVal(np.transpose(x.data, axes), x.batched, x.buffer)


@semantics(HintOp)
def _hint(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """Hints never change values."""
    return x


@semantics(BarrierOp)
def _barrier(op: Operation, state: ProgramState) -> None:
    """A no-op: each program's ops already run in order."""
