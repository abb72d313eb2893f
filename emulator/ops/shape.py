"""Semantics of the shape ops: ranges, splat, broadcast, reshape, transpose, hints.

Shape ops act on the IR dimensions; a batched value has one extra leading
program axis, so its axes shift by one (``_lead``).
"""

from __future__ import annotations

import numpy as np

from minitriton.emulator.interpreter import ProgramState
from minitriton.emulator.registry import semantics
from minitriton.emulator.values import RVal
from minitriton.ir.core import Operation
from minitriton.ir.ops import (
    BroadcastOp,
    ExpandDimsOp,
    GatherOp,
    HintOp,
    MakeRangeOp,
    ReshapeOp,
    SplatOp,
    TransOp,
)


def _lead(x: RVal) -> int:
    """Number of leading program axes (1 if batched)."""
    return 1 if x.batched else 0


def _full_shape(x: RVal, shape: tuple[int, ...]) -> tuple[int, ...]:
    return (x.data.shape[0], *shape) if x.batched else shape


# ---------------------------------------------------------------- sources


@semantics(MakeRangeOp)
def _make_range(op: Operation, state: ProgramState) -> RVal:
    """``[start, end)`` as int32."""
    return RVal(np.arange(op.attrs["start"], op.attrs["end"], dtype=np.int32), False)


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


@semantics(GatherOp)
def _gather(op: Operation, state: ProgramState, src: RVal, idx: RVal) -> RVal:
    """``src`` indexed by ``idx`` along ``axis``; an index out of range gives 0."""
    batched = src.batched or idx.batched
    a, i = np.asarray(src.data), np.asarray(idx.data).astype(np.int64)
    if batched:  # both with the program axis in front
        a = a if src.batched else np.broadcast_to(a, (i.shape[0], *a.shape))
        i = i if idx.batched else np.broadcast_to(i, (a.shape[0], *i.shape))
    axis = op.attrs["axis"] + (1 if batched else 0)
    inside = (i >= 0) & (i < a.shape[axis])
    picked = np.take_along_axis(a, np.where(inside, i, 0), axis=axis)
    return RVal(np.where(inside, picked, np.zeros((), a.dtype)), batched)
