"""Accumulator layouts chosen before the layout plan runs.

A tensor-core dot produces its result in the accumulator layout of its
instructions (:func:`~minitriton.backend.accelerate_matmul.dot_result_layout`).
Converting it away inside a K loop would cost a trip through shared memory
every iteration, so the accumulator layout is *seeded* before the layout
plan's backward walk (whose first demand wins):

* the dot's result;
* a loop-carried value whose ``scf.yield`` operand is seeded: the loop's
  result, its initial value and the region argument;
* elementwise ``arith``/``math`` ops of the same shape with a seeded operand
  (``acc * alpha[:, None]``, ``acc.to(tl.float16)``), so epilogues run in
  registers where the accumulator lives, and one conversion happens at the
  store (see :mod:`~minitriton.backend.lower_wgmma`'s epilogue).
"""

from __future__ import annotations

from minitriton.backend.accelerate_matmul import dot_result_layout
from minitriton.backend.layouts import Layout
from minitriton.backend.mma_v3 import accumulator_layout, shape_of_async_dot
from minitriton.ir.core import Operation, Value
from minitriton.ir.ops import FuncOp
from minitriton.ir.types import BlockType

_PROPAGATE = ("arith.", "math.", "ttng.warp_group_dot_wait")


def accumulator_seeds(func: FuncOp, num_warps: int, arch: str) -> dict[int, Layout]:
    """``id(value) -> layout`` for every value that should live in an accumulator layout."""
    seeds: dict[int, Layout] = {}
    for op in func.walk():
        if op.name == "tt.dot":
            layout = dot_result_layout(op, arch, num_warps)
            if layout is not None:
                seeds[id(op.result)] = layout
        if op.name == "ttng.warp_group_dot":
            seeds[id(op.result)] = accumulator_layout(shape_of_async_dot(op, num_warps))
    if not seeds:
        return seeds
    changed = True
    while changed:
        changed = False
        for op in func.walk():
            changed |= _seed_op(op, seeds)
    return seeds


def _seed(seeds: dict[int, Layout], v: Value, layout: Layout) -> bool:
    if id(v) in seeds or not isinstance(v.type, BlockType) or v.shape != layout.shape:
        return False
    seeds[id(v)] = layout
    return True


def _seed_op(op: Operation, seeds: dict[int, Layout]) -> bool:
    if op.name == "scf.for":
        return _seed_loop(op, seeds)
    if not op.name.startswith(_PROPAGATE) or len(op.results) != 1:
        return False
    for v in op.operands:
        layout = seeds.get(id(v))
        if layout is not None:
            return _seed(seeds, op.result, layout)
    return False


def _seed_loop(op: Operation, seeds: dict[int, Layout]) -> bool:
    body = op.regions[0]
    changed = False
    for i, v in enumerate(body.block.terminator.operands):
        layout = seeds.get(id(v))
        if layout is None:
            continue
        for related in (op.results[i], op.operands[3 + i], body.args[1 + i]):
            changed |= _seed(seeds, related, layout)
    return changed
