"""Semantics of control flow and the grid: ``scf.*``, ``tt.call``, program ids, barriers.

A batch of programs stays together while its control flow is uniform. When
it diverges, each path runs on the sub-batch of programs that takes it, and
the results are merged back row by row (:func:`merge_rows`):

* ``scf.if`` with a per-program condition runs each branch on its programs;
* ``scf.for`` with per-program bounds runs iteration ``k`` on the programs
  whose trip count exceeds ``k``;
* ``scf.while`` shrinks the set of looping programs after each test.
"""

from __future__ import annotations

import numpy as np

from minitriton.emulator.interpreter import ProgramState, merge_rows
from minitriton.emulator.registry import semantics
from minitriton.emulator.values import RVal
from minitriton.ir.core import Operation
from minitriton.ir.ops import (
    BarrierOp,
    CallOp,
    ForOp,
    GridDependencyOp,
    IfOp,
    NumProgramsOp,
    ProgramIdOp,
    WhileOp,
)


@semantics(IfOp)
def _if(op: Operation, state: ProgramState, cond: RVal) -> list[RVal]:
    """Run the branch each program takes; merge the yields by rows."""
    run = state.interp.run_region
    then_region, else_region = op.regions
    if not cond.batched:
        return run(then_region if bool(cond.data) else else_region, state.child(), [])
    taken, skipped = np.flatnonzero(cond.data), np.flatnonzero(~cond.data)
    if len(skipped) == 0:
        return run(then_region, state.child(), [])
    if len(taken) == 0:
        return run(else_region, state.child(), [])
    then_vals = run(then_region, state.child(taken), [])
    else_vals = run(else_region, state.child(skipped), [])
    return [
        merge_rows(state.size, [(taken, t), (skipped, e)], res)
        for t, e, res in zip(then_vals, else_vals, op.results)
    ]


# ---------------------------------------------------------------- for


@semantics(ForOp)
def _for(
    op: Operation, state: ProgramState, lb: RVal, ub: RVal, step: RVal, *inits: RVal
) -> list[RVal]:
    """``for iv in range(lb, ub, step)`` carrying the iter args."""
    if lb.batched or ub.batched or step.batched:
        return _divergent_for(op, state, lb, ub, step, list(inits))
    if int(step.data) == 0:
        raise state.interp.error(op, state, "scf.for with a step of 0 never ends")
    dtype = lb.data.dtype
    carried = list(inits)
    for iv in range(int(lb.data), int(ub.data), int(step.data)):
        args = [RVal(np.array(iv, dtype=dtype), False), *carried]
        carried = state.interp.run_region(op.regions[0], state.child(), args)
    return carried


def trip_counts(lb: np.ndarray, ub: np.ndarray, step: np.ndarray) -> np.ndarray:
    """Iterations of ``range(lb, ub, step)`` for each row (any step sign)."""
    lb, ub, step = (x.astype(np.int64) for x in (lb, ub, step))
    safe = np.where(step == 0, 1, step)
    span = np.where(step > 0, ub - lb, lb - ub)
    return np.maximum(0, -(-span // np.abs(safe)))


def _divergent_for(
    op: Operation, state: ProgramState, lb: RVal, ub: RVal, step: RVal, carried: list[RVal]
) -> list[RVal]:
    size = state.size
    lo, hi, st = (v.rows(size) for v in (lb, ub, step))
    if np.any(st == 0):
        raise state.interp.error(op, state, "scf.for with a step of 0 never ends")
    trips = trip_counts(lo, hi, st)
    for k in range(int(trips.max(initial=0))):
        iv = (lo.astype(np.int64) + k * st.astype(np.int64)).astype(lo.dtype)
        active = np.flatnonzero(trips > k)
        if len(active) == size:
            args = [RVal(iv, True), *carried]
            carried = state.interp.run_region(op.regions[0], state.child(), args)
            continue
        args = [RVal(iv[active], True), *(c.take(active) for c in carried)]
        new = state.interp.run_region(op.regions[0], state.child(active), args)
        idle = np.flatnonzero(trips <= k)
        carried = [
            merge_rows(size, [(idle, c.take(idle)), (active, n)], res)
            for c, n, res in zip(carried, new, op.results)
        ]
    return carried


# ---------------------------------------------------------------- while


@semantics(WhileOp)
def _while(op: Operation, state: ProgramState, *inits: RVal) -> list[RVal]:
    """Test in ``before``; programs whose test fails leave the loop with its args."""
    before, after = op.regions
    run = state.interp.run_region
    size = state.size
    rows = np.arange(size)  # rows of `state` still looping
    carried = list(inits)
    finished: list[tuple[np.ndarray, list[RVal]]] = []
    while True:
        scope = state.child(None if len(rows) == size else rows)
        cond, *args = run(before, scope, carried)
        keep = _continuing(cond, len(rows))
        stop = np.flatnonzero(~keep)
        if len(stop):
            finished.append((rows[stop], [a.take(stop) for a in args] if cond.batched else args))
        go = np.flatnonzero(keep)
        if len(go) == 0:
            break
        if len(go) < len(rows):
            rows, args = rows[go], [a.take(go) for a in args]
        carried = run(after, state.child(None if len(rows) == size else rows), args)
    if len(finished) == 1:
        return finished[0][1]  # everyone left together, in row order
    return [
        merge_rows(size, [(r, vals[i]) for r, vals in finished], res)
        for i, res in enumerate(op.results)
    ]


def _continuing(cond: RVal, n: int) -> np.ndarray:
    if cond.batched:
        return np.asarray(cond.data, dtype=bool)
    return np.full(n, bool(cond.data))


# ---------------------------------------------------------------- calls


@semantics(CallOp)
def _call(op: Operation, state: ProgramState, *args: RVal) -> list[RVal]:
    """Run a helper ``tt.func`` for the same programs."""
    return state.interp.call(op.attrs["callee"], state, args)


# ---------------------------------------------------------------- the grid, barriers


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


@semantics(BarrierOp)
def _barrier(op: Operation, state: ProgramState) -> None:
    """A no-op: each program's ops already run in order."""


@semantics(GridDependencyOp)
def _grid_dependency(op: Operation, state: ProgramState) -> None:
    """A no-op: launches on the emulator run one after another, each to its end."""
