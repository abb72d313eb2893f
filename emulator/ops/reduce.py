"""Semantics of the ``reduce`` family (``tt.reduce``, ``tt.scan``, ``tt.sort``, ``tt.histogram``).

And of ``tt.map_elementwise``. Combiner regions run *vectorized*: the
region's ops are applied to whole NumPy arrays of many pairs at once.

* A reduction combines neighbours pairwise, ``(x0, x1), (x2, x3), ...``,
  halving the axis each step (log2(n) region runs). Left operands always
  come from lower indices, so an associative combiner that is not
  commutative (argmax's first-index tie break) still gives the sequential
  answer. Float sums therefore use a tree order, as the GPU does, not
  NumPy's.
* A scan uses Hillis-Steele: step ``d`` combines element ``i - d`` with
  element ``i``, for ``d = 1, 2, 4, ...``.
* ``tt.histogram`` counts with one ``np.bincount`` over every program's
  values at once (each program's bins offset by its row).
* ``tt.map_elementwise`` runs its region once, on every element of every
  program at once, one element per row.
"""

from __future__ import annotations

import numpy as np

from minitriton.emulator import speed
from minitriton.emulator.interpreter import ProgramState
from minitriton.emulator.registry import semantics
from minitriton.emulator.values import RVal, storage_dtype, to_compute
from minitriton.ir.core import Operation, Region
from minitriton.ir.ops import HistogramOp, MapElementwiseOp, ReduceOp, ScanOp, SortOp
from minitriton.ir.types import ScalarType, element_type, shape_of


def _combine(
    region: Region, state: ProgramState, left: list[np.ndarray], right: list[np.ndarray]
) -> list[np.ndarray]:
    """Apply the combiner region to arrays of left and right operands (see :func:`_per_row`).

    The speed layer may give the same arrays faster (a combiner of elementwise
    ops runs them on whole arrays: :func:`minitriton.emulator.speed.combine_fast`).
    """
    if left[0].size == 0:
        return [np.asarray(a) for a in left]
    fast = speed.combine_fast(region, state, left, right)
    if fast is not None:
        return fast
    return _per_row(region, state, left + right)


def _per_row(region: Region, state: ProgramState, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Run ``region`` once on every element of ``arrays`` (broadcast to one shape).

    Every element is one row of a batch: the region's scalars are the
    elements' own values, so any op a combine or mapped function may use (a
    splat to ``[1]``, a per-element ``if``, a helper call) sees its usual
    shapes. The arrays lead with a program axis (of one row when the operands
    are the same for every program), which gives each element its program's
    row of the kernel values the region may read.
    """
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    count = int(np.prod(shape, dtype=np.int64))
    programs = shape[0]
    rows = np.repeat(np.arange(programs) if programs == state.size else [0], count // programs)
    scope = state.child(rows)
    scope.programs = programs  # the step budget counts programs, not elements
    args = [RVal(np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(count), True)
            for a in arrays]  # fmt: skip
    out = state.interp.run_region(region, scope, args)
    return [o.data.reshape(shape) if o.batched else np.broadcast_to(o.data, shape) for o in out]


def _reads_kernel_values(region: Region) -> bool:
    """True if the region uses a value defined outside it (CSE may share a constant)."""
    ops = [inner for top in region.ops for inner in top.walk()]
    inside = {id(a) for a in region.args}
    for op in ops:
        inside.update(id(r) for r in op.results)
        inside.update(id(a) for r in op.regions for a in r.args)
    return any(id(v) not in inside for op in ops for v in op.operands)


def _axis_last(op: Operation, state: ProgramState, xs: tuple[RVal, ...]) -> tuple[list, bool, int]:
    """The operands with a leading program axis and the combined axis last.

    Returns the arrays, whether the result is batched, and where the axis
    goes back. Operands the same for every program get a program axis of one
    row (combined once), unless the combiner reads a kernel value, which may
    differ between programs.
    """
    batched = any(x.batched for x in xs)
    if not batched and state.size > 1 and _reads_kernel_values(op.regions[0]):
        batched = True
    arrays = [x.rows(state.size) if batched else x.data[None] for x in xs]
    axis = op.attrs.get("axis")
    if axis is None:  # all dimensions at once
        arrays = [a.reshape((a.shape[0], -1)) for a in arrays]
        axis = 0
    return [np.moveaxis(a, axis + 1, -1) for a in arrays], batched, axis + 1


@semantics(ReduceOp)
def _reduce(op: Operation, state: ProgramState, *xs: RVal) -> list[RVal]:
    """Pairwise tree reduction along ``axis`` with the combiner region."""
    arrays, batched, _ = _axis_last(op, state, xs)
    region = op.regions[0]
    # BEGIN EXERCISE c5-reduce
    # STUB: raise NotImplementedError("c5-reduce: combine neighbours pairwise until one is left")
    while arrays[0].shape[-1] > 1:
        n = arrays[0].shape[-1]
        pairs = n - n % 2
        left = [a[..., 0:pairs:2] for a in arrays]
        right = [a[..., 1:pairs:2] for a in arrays]
        combined = _combine(region, state, left, right)
        if n % 2:  # an odd element waits for the next level
            combined = [np.concatenate([c, a[..., -1:]], axis=-1) for c, a in zip(combined, arrays)]
        arrays = combined
    # END EXERCISE
    return [_result(a[..., 0], batched) for a in arrays]


def _result(data: np.ndarray, batched: bool) -> RVal:
    """A result with its program axis (dropped when the operands were the same for all)."""
    return RVal(np.array(data if batched else data[0]), batched)  # np.array keeps 0-d


@semantics(ScanOp)
def _scan(op: Operation, state: ProgramState, *xs: RVal) -> list[RVal]:
    """Inclusive Hillis-Steele scan along ``axis`` (``reverse`` scans from the end).

    A reverse scan is Triton's: flip, scan, flip. The running value, which
    comes from the end, is the combiner's left operand, as on the GPU.
    """
    arrays, batched, axis = _axis_last(op, state, xs)
    reverse = bool(op.attrs.get("reverse", False))
    if reverse:
        arrays = [a[..., ::-1] for a in arrays]
    n = arrays[0].shape[-1]
    d = 1
    while d < n:
        prev = [a[..., :-d] for a in arrays]
        cur = [a[..., d:] for a in arrays]
        combined = _combine(op.regions[0], state, prev, cur)
        arrays = [np.concatenate([a[..., :d], c], axis=-1) for a, c in zip(arrays, combined)]
        d *= 2
    if reverse:
        arrays = [a[..., ::-1] for a in arrays]
    return [_result(np.ascontiguousarray(np.moveaxis(a, -1, axis)), batched) for a in arrays]


@semantics(SortOp)
def _sort(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """Sort along ``dim``; NaNs go last (first when descending)."""
    elem = element_type(op.operands[0].type)
    assert isinstance(elem, ScalarType)
    axis = op.attrs["dim"] + (1 if x.batched else 0)
    order = np.argsort(to_compute(x.data, elem), axis=axis, kind="stable")
    if op.attrs["descending"]:
        order = np.flip(order, axis=axis)
    return RVal(np.take_along_axis(x.data, order, axis=axis), x.batched)


@semantics(MapElementwiseOp)
def _map_elementwise(op: Operation, state: ProgramState, *xs: RVal) -> list[RVal]:
    """The region on every element at once: one element per row of a batch."""
    batched = any(x.batched for x in xs)
    if not batched and state.size > 1 and _reads_kernel_values(op.regions[0]):
        batched = True  # the region reads values that may differ between programs
    arrays = [x.rows(state.size) if batched else x.data[None] for x in xs]
    shape = (arrays[0].shape[0], *op.results[0].shape)
    if 0 in shape:
        empty = [np.zeros(shape, dtype=storage_dtype(r.type)) for r in op.results]
        return [RVal(e if batched else e[0], batched) for e in empty]
    full = _per_row(op.regions[0], state, arrays)
    return [RVal(f if batched else f[0], batched) for f in full]


@semantics(HistogramOp)
def _histogram(op: Operation, state: ProgramState, x: RVal, mask: RVal | None = None) -> RVal:
    """How many values (of lanes ``mask`` enables) equal each bin; the others are left out."""
    bins = shape_of(op.result.type)[0]
    batched = x.batched or (mask is not None and mask.batched)
    values = np.asarray(x.data).astype(np.int64)
    keep = (values >= 0) & (values < bins)
    if mask is not None:
        keep = keep & np.asarray(mask.data, dtype=bool)
    if not batched:
        return RVal(np.bincount(values[keep], minlength=bins).astype(np.int32), False)
    values, keep = np.broadcast_arrays(values, keep)  # (programs, n) both
    rows = np.arange(keep.shape[0])[:, None] * bins
    counts = np.bincount((values + rows)[keep], minlength=keep.shape[0] * bins)
    return RVal(counts.reshape(keep.shape[0], bins).astype(np.int32), True)
