"""Scalar combiners: a reduction's or scan's combine function computes on elements only.

Each thread runs a ``tl.reduce`` or ``tl.associative_scan`` combiner on its
own pair of elements, so a block made inside one has no layout to live in.
Inlined helpers leave dead ones behind (Inductor's ``is_floating(x)`` builds
``x + tl.zeros((1,), tl.int1)`` only to read its dtype); this pass deletes
the ops in combiners that have no effect and no used result, as Triton's
canonicalizer drops them after inlining, and reports a block that is still
used there as a located error ("on the GPU a combine function works on
single elements"), which says to compute on the scalar arguments instead.

Runs on every arch, right after ``inline-calls``; kernels without
reductions or scans are unchanged.

Precondition: verified IR without calls (after ``inline-calls``).
Postcondition: verified IR; every op in a combine region has scalar results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from minitriton.backend.passes.gpu_pipeline import GpuPass, GpuState
from minitriton.backend.prepare import scalar_combiners
from minitriton.passes.base import register_pass


@register_pass
@dataclass(frozen=True)
class ScalarCombinersPass(GpuPass):
    """Delete dead block ops in combiners; reject live ones."""

    name: ClassVar[str] = "scalar-combiners"

    def run(self, state: GpuState) -> None:
        scalar_combiners(state.kernel)
