"""The fast paths of the ops: lazy lanes, row views and in-place results.

They make the layer of :mod:`minitriton.emulator.speed`.

Each function here is registered with ``@fast_path(OpClass)`` beside the
op's semantics, which is its plain NumPy meaning. The interpreter tries the
fast path first; it returns :data:`~minitriton.emulator.speed.DECLINED` for
every case it does not cover, and the semantics run. Whatever a fast path
returns equals what the semantics would (the same numbers, in the same
dtype), and it raises the semantics' errors: ``MINITRITON_EMULATOR_PLAIN=1``
switches this module off and the suite passes either way.

* ``tt.make_range``, ``arith.add`` of a splat, ``tt.addptr`` onto a splat
  pointer and ``arith.cmp`` against a bound keep the lazy forms of
  :mod:`minitriton.emulator.lanes` (runs of consecutive lanes, prefix masks);
* ``tt.load`` and ``tt.store`` through such runs copy strided views of the
  buffer (lazily for a load, where the launch allows it); through offsets
  made as arrays whose rows are runs (:mod:`minitriton.emulator.rows`), they
  copy the rows' view instead of a gather or scatter;
* ``arith.add``, ``sub`` and ``mul`` compute into the block of an operand
  that dies at the op (:func:`dying_block`), and over lazy loads defer to
  their use;
* ``tt.addptr`` on an argument's pointer keeps the offsets block itself as
  the pointer's data;
* a reduction's or scan's combiner made of elementwise ops alone
  (``tl.sum``, ``tl.max``, ``tl.argmax``, ``tl.cumsum``, Welford's combiner
  ...) runs those ops' semantics on the whole arrays of each step of the
  semantics' tree, instead of the region with a scope of one row per pair
  of elements (:func:`~minitriton.emulator.speed.combiner_fast_path`).
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from functools import partial

import numpy as np

from minitriton.emulator import lanes
from minitriton.emulator import rows as row_views
from minitriton.emulator.interpreter import ProgramState
from minitriton.emulator.lanes import LoadedRuns, RunsAccess, store_rows
from minitriton.emulator.memory import RAW_ADDRESSES, Buffer
from minitriton.emulator.ops import memory as mem
from minitriton.emulator.ops.arith import ELEMENTWISE
from minitriton.emulator.registry import SEMANTICS
from minitriton.emulator.rows import Rows, complete_despite_interrupt, find_rows
from minitriton.emulator.speed import DECLINED, combiner_fast_path, fast_path
from minitriton.emulator.values import FP8_FORMATS, RVal
from minitriton.ir.core import Operation, OpResult, Region, Value
from minitriton.ir.ops import (
    AddOp,
    AddPtrOp,
    CastOp,
    CmpOp,
    ConstantOp,
    LoadOp,
    MakeRangeOp,
    MulOp,
    SelectOp,
    StoreOp,
    SubOp,
)
from minitriton.ir.types import ScalarType, element_type

# ---------------------------------------------------------------- lazy lanes


@fast_path(MakeRangeOp)
def _make_range(op: Operation, state: ProgramState) -> RVal:
    """``tl.arange`` as one lazy run of lanes."""
    return lanes.make_range(op.attrs["start"], op.attrs["end"])


@fast_path(CmpOp)
def _cmp(op: Operation, state: ProgramState, a: RVal, b: RVal) -> RVal:
    """``offsets < n`` (and its mirrors) as a lazy prefix mask."""
    if not isinstance(element_type(op.operands[0].type), ScalarType):
        return DECLINED
    prefix = lanes.compare_runs(op.attrs["pred"], a, b)
    return DECLINED if prefix is None else prefix


@fast_path(AddPtrOp)
def _addptr(op: Operation, state: ProgramState, ptr: RVal, offset: RVal) -> RVal:
    """A splat pointer plus lane runs stays lazy; an argument's pointer keeps the offsets."""
    if ptr.buffer == RAW_ADDRESSES:
        return DECLINED  # raw byte addresses: the semantics scale the offset
    runs = lanes.addptr_runs(ptr, offset)
    if runs is not None:
        return runs
    data = offsets_from_base(ptr.data, offset.data) if op.results[0].shape else None
    if data is None:
        return DECLINED
    return RVal(data, ptr.batched or offset.batched, ptr.buffer)


def offsets_from_base(base: np.ndarray, offset: np.ndarray) -> np.ndarray | None:
    """``offset`` itself when ``base`` is element 0 of its buffer everywhere, else None.

    ``x_ptr + offsets`` on an argument's pointer is the commonest ``tt.addptr``:
    the sum is the offsets themselves, so the block of (often 32-bit) offsets
    serves as the pointer's data, without a new 64-bit block per pointer
    (which a first launch pays for in fresh pages). The numbers are the
    semantics' int64 sums, in the offsets' dtype: the code that scales
    pointer offsets widens them first (see :mod:`minitriton.emulator.values`). Sharing the
    array is safe, since :func:`dying_block` never writes into a block that
    another value refers to. An offset block smaller than the result (a
    broadcast) takes the semantics, and so do scalar pointers
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


# ---------------------------------------------------------------- loads and stores


@fast_path(LoadOp)
def _load(
    op: Operation,
    state: ProgramState,
    ptr: RVal,
    mask: RVal | None = None,
    other: RVal | None = None,
) -> RVal:
    """Through lane runs: a strided view (lazy if allowed); through rows: a copy of their view."""
    batched = any(v is not None and v.batched for v in (ptr, mask, other))
    buf = state.interp.memory[ptr.buffer or 0]
    if buf.reads is not None:  # a watched strided view: the semantics note what is read
        return DECLINED
    access = lanes.runs_access(ptr, mask, buf.size, store=False)
    if access is not None and (ptr.batched or not batched):
        loaded = LoadedRuns(buf.flat, access, other, batched)
        return loaded if state.interp.lazy_loads else RVal(loaded.data, batched)
    shape = np.broadcast_shapes(*(v.data.shape for v in (ptr, mask, other) if v is not None))
    rows = find_rows(ptr.data, buf.size) if shape == ptr.data.shape else None
    if rows is None:
        return DECLINED
    if not edge_rows_in_bounds(buf, ptr.data, mask, rows):
        mem.check_bounds(op, state, ptr, mask, "from")  # raises, naming the first bad lane
        return DECLINED
    return RVal(_load_rows(buf.flat, ptr.data, rows, mask, other), batched)


def _load_rows(
    flat: np.ndarray, offsets: np.ndarray, rows: Rows, mask: RVal | None, other: RVal | None
) -> np.ndarray:
    """A load whose offsets are :class:`Rows`: a copy of the view, the edge rows gathered.

    The enabled lanes were checked already. The disabled lanes of the rows
    inside the buffer are read with the rest (they are inside it too), then
    overwritten, which is cheaper than a masked copy.
    """
    shape = (rows.count, rows.width)
    values = np.empty(offsets.shape, dtype=flat.dtype)
    grid, inside = values.reshape(shape), slice(rows.first, rows.stop)
    grid[inside] = rows.view(flat)
    if mask is None:
        return values
    on = np.broadcast_to(mask.data, offsets.shape).reshape(shape)
    fill = np.zeros((), flat.dtype)
    if other is not None:
        fill = np.broadcast_to(other.data, offsets.shape).reshape(shape)
    if not on[inside].all():
        np.copyto(grid[inside], fill if fill.ndim == 0 else fill[inside], where=~on[inside])
    lanes_ = offsets.reshape(shape)
    for row in rows.edge():  # disabled lanes there may point anywhere: clipped, then overwritten
        grid[row] = fill if fill.ndim == 0 else fill[row]
        if flat.size:
            np.copyto(grid[row], np.take(flat, lanes_[row], mode="clip"), where=on[row])
    return values


def edge_rows_in_bounds(buf: Buffer, offsets: np.ndarray, mask: RVal | None, rows: Rows) -> bool:
    """True when the enabled lanes of the rows not wholly inside ``buf`` are inside it."""
    edge = rows.edge()
    if not edge:
        return True
    if mask is None:
        return False  # every lane of an edge row is enabled, and some lane is outside
    shape = (rows.count, rows.width)
    lanes_ = offsets.reshape(shape)[edge]
    on = np.broadcast_to(mask.data, offsets.shape).reshape(shape)[edge]
    return not (mem._outside(lanes_, buf.size) & on).any()


@fast_path(StoreOp)
def _store(
    op: Operation, state: ProgramState, ptr: RVal, value: RVal, mask: RVal | None = None
) -> object:
    """Through lane runs or non-overlapping rows: copies into strided views of the buffer."""
    buf = state.interp.memory[ptr.buffer or 0]
    mem.check_writable(op, state, buf)
    access = lanes.runs_access(ptr, mask, buf.size, store=True)
    if access is not None and (ptr.batched or not value.batched):
        complete_despite_interrupt(_runs_writes(buf.flat, access, value))
        return None
    parts = [ptr.data, value.data] + ([mask.data] if mask is not None else [])
    shape = np.broadcast_shapes(*(p.shape for p in parts))
    rows = find_rows(ptr.data, buf.size) if ptr.data.shape == shape else None
    if rows is None or not rows.no_overlap():
        return DECLINED  # overlapping rows: the lane order decides, so scatter in that order
    if not edge_rows_in_bounds(buf, ptr.data, mask, rows):
        mem.check_bounds(op, state, ptr, mask, "to")  # raises, naming the first bad lane
        return DECLINED
    values = np.broadcast_to(value.data, shape)
    enabled = None if mask is None else np.broadcast_to(mask.data, shape)
    complete_despite_interrupt(_row_writes(buf.flat, ptr.data, values, enabled, rows))
    return None


def _runs_writes(flat: np.ndarray, access: RunsAccess, value: RVal) -> list[Callable[[], None]]:
    """The writes of a store through lane runs (checked already, no two rows overlapping).

    A lazy value of the store's layout is written piece by piece, its full
    rows computed straight into the buffer (:func:`~minitriton.emulator.lanes.store_rows`).
    """
    first, stop = access.first, access.stop
    pieces = store_rows(value, access, flat)
    if pieces is None:
        grid = np.broadcast_to(value.data, (access.counts.size, access.runs.width))
        write_full: Callable[[np.ndarray], None] = partial(mem._copy_rows, grid[first:stop])
        row_values: Callable[[int], np.ndarray] = grid.__getitem__
    else:
        rest, index = pieces.rest(), pieces.rest_index
        write_full, row_values = pieces.write_full, lambda row: rest[index(row)]
    steps: list[Callable[[], None]] = []
    if stop > first:
        steps.append(partial(write_full, access.view(flat, writeable=True)))
    for row in access.partial:
        on = access.lanes(row)
        steps.append(partial(mem._copy_lanes, flat, on, row_values(row)[: on.stop - on.start]))
    return steps


def _row_writes(
    flat: np.ndarray, offsets: np.ndarray, values: np.ndarray, enabled: np.ndarray | None,
    rows: Rows,
) -> list[Callable[[], None]]:  # fmt: skip
    """The writes of a store whose offsets are non-overlapping :class:`Rows`."""
    shape = (rows.count, rows.width)
    grid, lanes_ = values.reshape(shape), offsets.reshape(shape)
    view, inside = rows.view(flat, writeable=True), slice(rows.first, rows.stop)
    if enabled is None:
        return [partial(mem._copy_rows, grid[inside], view)]
    on = enabled.reshape(shape)
    steps: list[Callable[[], None]] = []
    if on[inside].all():  # a plain copy is several times faster than a masked one
        steps.append(partial(mem._copy_rows, grid[inside], view))
    else:
        steps.append(lambda: np.copyto(view, grid[inside], casting="unsafe", where=on[inside]))
    for row in rows.edge():
        steps.append(partial(mem._scatter_lanes, flat, lanes_[row], grid[row], on[row]))
    return steps


# ---------------------------------------------------------------- in-place arithmetic


def _ufunc_path(
    ufunc: np.ufunc, lazy: Callable[[RVal, RVal], RVal | None] | None = None
) -> Callable[..., RVal]:
    """The fast path of an elementwise op that ``ufunc`` computes (but on bool, bf16 and fp8).

    ``lazy``, when given, is tried first on two operands: it returns a value
    in one of :mod:`~minitriton.emulator.lanes`' lazy forms, or None. Then
    the result goes into the block of an operand that dies here
    (:func:`dying_block`) instead of a new one, and loads that ``lanes``
    left lazy are read straight from their buffers.
    """

    def run(op: Operation, state: ProgramState, *args: RVal) -> RVal:
        if lazy is not None and len(args) == 2:
            kept = lazy(*args)
            if kept is not None:
                return kept
        out_type = element_type(op.results[0].type)
        assert isinstance(out_type, ScalarType)
        if out_type.name in _NOT_BY_UFUNC:
            return DECLINED
        target = dying_block(op, state, args, out_type) if state.dying else None
        if target is not None:
            row_views.forget(target)  # its contents change: what rows.py knew of it goes
        result = lanes.elementwise(ufunc, args, out_type.numpy, target)
        if result is None and target is not None:
            batched = any(a.batched for a in args)
            result = RVal(ufunc(*(a.data for a in args), out=target), batched)
        return DECLINED if result is None else result

    return run


#: Result types whose semantics are not the ufunc on the stored values (bool wraps
#: modulo 2, bf16 and fp8 are decoded to fp32 first).
_NOT_BY_UFUNC = frozenset({"i1", "bf16", *FP8_FORMATS})

fast_path(AddOp)(_ufunc_path(np.add, lanes.add_runs))
fast_path(SubOp)(_ufunc_path(np.subtract))
fast_path(MulOp)(_ufunc_path(np.multiply))

#: References to an operand's array that :func:`dying_block` itself accounts for: the
#: operand's RVal, the local name, and ``sys.getrefcount``'s own argument.
_OWN_REFERENCES = 3


def fresh_result(value: object) -> bool:
    """True for the result of an op whose value is always a new block (elementwise, loads)."""
    if not isinstance(value, OpResult):
        return False
    owner = type(value.owner)
    return owner in ELEMENTWISE or owner is LoadOp


def dying_block(
    op: Operation, state: ProgramState, args: tuple[RVal, ...], out_type: ScalarType
) -> np.ndarray | None:
    """An operand's array that the result may be written into, or None.

    A batched value is a fresh block per op; writing the result into the
    block of an operand that dies at this op (its last use in this scope)
    saves a new block, whose fresh pages are much of a first launch's time,
    and keeps the working set in cache. Only a block that nothing else can
    see qualifies:

    * the operand is the result of an op of this scope that makes a new
      value (:func:`fresh_result`), not a block argument (a loop's carried
      value may be another value's block) nor an op that may pass a value on;
    * no other value of this scope is bound to the same runtime value;
    * no other runtime value refers to the array (a pointer made by
      ``x_ptr + offsets`` shares its offsets), nor a view of it, nor a cache.
    """
    if out_type.name in _NOT_BY_UFUNC:
        return None
    for i in range(len(args)):
        value, rval = op.operands[i], args[i]
        if value not in state.dying or state.env.get(value) is not rval or lanes.is_lazy(rval):
            continue
        if not fresh_result(value):
            continue
        block = rval.data
        if (
            block.base is None and block.flags.writeable and block.flags.c_contiguous
            and block.dtype == out_type.numpy
            and block.shape == np.broadcast_shapes(*(a.shape for a in args))
            and all(a.dtype == block.dtype for a in args)
            and sys.getrefcount(block) <= _OWN_REFERENCES
            and sum(v is rval for v in state.env.values()) == 1
        ):  # fmt: skip
            return block
    return None


# ---------------------------------------------------------------- combiners

#: Ops that are elementwise besides those :func:`elementwise` registers: a combiner made
#: of these alone gives each element's result from that element's operands only.
_ALSO_ELEMENTWISE = (CmpOp, SelectOp, CastOp, ConstantOp)


@combiner_fast_path
def _combine_whole(
    region: Region, state: ProgramState, lefts: list[np.ndarray], rights: list[np.ndarray]
) -> list[np.ndarray] | None:
    """A combiner of elementwise ops alone, run on whole arrays: each op's semantics once.

    Such a region (``tl.sum``'s add, ``tl.argmax``'s compares and selects,
    Welford's arithmetic) computes each element's result from that element's
    operands alone, so running its ops on the whole arrays, in the region's
    order, gives what it gives on one element per row. None (the region
    runs) for a region with anything else (a splat, a helper call, an
    ``if``), with pointers, or reading a value defined outside it; and while
    listeners (the debugger, the checks) or a step budget watch every op the
    region runs.
    """
    interp = state.interp
    if interp.listeners or interp.max_steps is not None or not _is_elementwise(region):
        return None
    env: dict[Value, RVal] = {a: RVal(x, True) for a, x in zip(region.args, [*lefts, *rights])}
    *body, ret = region.ops
    for inner in body:
        out = SEMANTICS[type(inner)](inner, state, *(env[v] for v in inner.operands))
        env[inner.results[0]] = out
    shape = lefts[0].shape
    return [np.broadcast_to(env[v].data, shape) for v in ret.operands]


#: What :func:`_is_elementwise` found for each region, for as long as the region lives.
_ELEMENTWISE_REGIONS: weakref.WeakKeyDictionary[Region, bool] = weakref.WeakKeyDictionary()


def _is_elementwise(region: Region) -> bool:
    """Whether every op of ``region`` is elementwise on scalars of the region (remembered)."""
    known = _ELEMENTWISE_REGIONS.get(region)
    if known is not None:
        return known
    inside: set[Value] = set(region.args)
    ok = all(isinstance(a.type, ScalarType) for a in region.args)
    *body, ret = region.ops
    for inner in body:
        kind = type(inner)
        values = [*inner.operands, *inner.results]
        ok = ok and (kind in ELEMENTWISE or kind in _ALSO_ELEMENTWISE) and not inner.regions
        ok = ok and len(inner.results) == 1 and all(isinstance(v.type, ScalarType) for v in values)
        ok = ok and all(v in inside for v in inner.operands)  # nothing from outside
        inside.update(inner.results)
    ok = ok and all(v in inside for v in ret.operands)
    _ELEMENTWISE_REGIONS[region] = ok
    return ok
