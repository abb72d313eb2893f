"""Where tensor-core dots seed the layout plan: one function for both kinds of dot.

A tensor-core dot wants its accumulator, and what is computed from it, in
the layout of its instructions: converting it away inside a K loop would
cost a trip through shared memory every iteration. Before the layout plan's
backward walk (whose first demand wins), :func:`seed_dot_layouts` fills
``plan.want`` for every such dot of the function, whichever instruction it
takes (:func:`~minitriton.backend.accelerate_matmul.dot_path`):

1. ``mma.sync`` dots (:attr:`~minitriton.backend.accelerate_matmul.DotPath.MMA_V2`,
   sm_80 and later): :func:`~minitriton.backend.mma_plan.plan_mma_dots`
   gives each dot its three layouts (kept in ``plan.mma``), and
   :func:`~minitriton.backend.mma_plan.natural_layouts` flows every
   accumulator layout forwards to what is computed from the result. An
   operand read from a pipeline ring (``ttg.local_load``) is seeded with
   its dot-operand layout and recorded in ``plan.dot_operands``, where the
   code generator finds it;
2. ``wgmma`` dots (sm_90a), and K-major B operands of either kind:
   :func:`~minitriton.backend.accumulators.accumulator_seeds`.

The seeds are written in that order; where both name a value, the later
one stands. The layout plan calls this once, in
:func:`~minitriton.backend.prepare.assign_layouts`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minitriton.backend.accelerate_matmul import DotPath, dot_path
from minitriton.backend.accumulators import accumulator_seeds
from minitriton.backend.irutil import producer
from minitriton.backend.mma_plan import mma_v2_kind, natural_layouts, plan_mma_dots
from minitriton.backend.ops import LocalLoadOp
from minitriton.ir.ops import DotOp

if TYPE_CHECKING:
    from minitriton.backend.prepare import LayoutPlan


def seed_dot_layouts(plan: LayoutPlan) -> None:
    """Seed ``plan.want`` (and ``plan.mma``, ``plan.dot_operands``) for every tensor-core dot."""
    _seed_mma_sync(plan)
    plan.want.update(accumulator_seeds(plan.func, plan.num_warps, plan.arch))


def _seed_mma_sync(plan: LayoutPlan) -> None:
    """Step 1 of the module docstring: the ``mma.sync`` dots."""
    kinds: dict[int, str] = {}
    for op in plan.func.walk():
        if isinstance(op, DotOp) and dot_path(op, plan.arch, plan.num_warps) is DotPath.MMA_V2:
            kind = mma_v2_kind(op)
            assert kind is not None, "dot_path chose mma.sync for a dot that fits it"
            kinds[id(op)] = kind
    if not kinds:
        return
    plan.mma = plan_mma_dots(plan.func, kinds, plan.num_warps)
    plan.want.update(natural_layouts(plan.func, plan.mma))
    for op in plan.func.walk():
        mma = plan.mma.get(id(op))
        if mma is None:
            continue
        for i, v in enumerate(op.operands[:2]):
            if isinstance(producer(v), LocalLoadOp):
                # A pipelined operand is read from its ring straight into the dot's layout.
                plan.want[id(v)] = mma.a if i == 0 else mma.b
                plan.dot_operands[id(v)] = (mma, i)
