"""Assign layouts: every block value gets a distributed layout, conversions where they differ.

This is the step that makes the IR ``ttgir``: after it each op with block
results carries a ``layout`` attribute (``--emit ttgir`` prints them as
Triton's ``#blocked``/``#mma`` aliases in the tensor types), and a
``ttg.convert_layout`` stands wherever an op needs an operand in another
layout than the one it was made in. It runs on every arch, last.

The layout plan (:class:`~minitriton.backend.prepare.LayoutPlan`) works in
three steps:

1. **Seeding the dot layouts** (:func:`~minitriton.backend.dot_seeds.seed_dot_layouts`).
   A tensor-core dot wants its accumulator, and what is computed from it, in
   the layout of its instructions: for ``mma.sync`` (sm_80 and later) the
   MMA plan (:func:`~minitriton.backend.mma_plan.plan_mma_dots`) gives each
   dot its accumulator and operand layouts (chained dots, attention's
   ``P @ V``, put every warp along M so that P stays in registers); for
   ``wgmma`` (sm_90a) :func:`~minitriton.backend.accumulators.accumulator_seeds`
   does. Operands read from a software-pipelined ring (``ttg.local_load``)
   get their dot-operand layout directly.
   Then :func:`~minitriton.backend.coalesce.seed_coalesced_layouts` gives
   each load and store of memory that runs along another dim than the last
   (a column-major tile) a blocked layout of that order, as Triton's
   ``Coalesce`` pass does: 16-byte vectors and coalesced lanes where the
   default layout would load single elements from 32 rows.
2. **Backwards**: each value's users say which layout they want; the first
   demand wins (a store wants its pointers' default layout, an elementwise
   op its result's, a loop-carried value its loop result's). The default
   gives each thread 16 bytes of the kernel's narrowest accessed type along
   the fastest dimension; a store of an accumulator, which goes through
   shared memory anyway, takes 16 bytes of *its own* type instead, so each
   store instruction writes whole 32-byte sectors (an fp8 matmul's fp16
   result: 8 a thread, not 16).
3. **Forwards**: ops that may produce any layout (constants, ranges,
   splats, elementwise ops) produce the wanted one; reductions,
   ``expand_dims``, scans and sorts derive theirs from their operand.
   Where an operand's layout still differs, a cheap producer is recomputed
   in the wanted layout (rematerialized), or a ``ttg.convert_layout``
   (through shared memory) is inserted, hoisted out of the loop when the
   value is loop-invariant.

The plan stays in ``GpuState.plan`` for the code generator, which reads
each value's layout from it.

Precondition: verified IR of one kernel without calls, software-pipelined
where it applies. Postcondition: verified IR; every op with block results has
a ``layout`` attribute, and each operand arrives in the layout its op needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from minitriton.backend.passes.gpu_pipeline import GpuPass, GpuState
from minitriton.backend.prepare import assign_layouts
from minitriton.passes.base import register_pass


@register_pass
@dataclass(frozen=True)
class AssignLayoutsPass(GpuPass):
    """Choose a layout for every block value; insert conversions."""

    name: ClassVar[str] = "assign-layouts"

    def run(self, state: GpuState) -> None:
        state.plan = assign_layouts(state.kernel, state.num_warps, state.arch)
