"""Coalesced layouts for loads and stores whose memory runs along another dim than the last.

The layout plan's default blocked layout puts each thread's elements, then
the lanes of a warp, along the *last* dimension of a block: right for a
row-major tile, where that is the dimension whose addresses are
consecutive. A tile read from column-major memory (``a.T`` passed to a
kernel, a stride-1 row index ``offs_m[:, None] * 1 + offs_k[None, :] *
stride``, or a reduction over the rows of a row-major tensor, as
torch.compile writes them) has its consecutive addresses along dim 0
instead. In the default layout each thread then loads single elements, and
the 32 lanes of a warp touch 32 different rows: no 16-byte vectors, and up
to 32 memory transactions per instruction where one would do.

Triton's ``Coalesce`` pass gives each memory access the layout of its
memory: the order of the blocked layout follows the pointers' contiguity.
:func:`seed_coalesced_layouts` does the same in the layout plan, before its
backward walk (whose first demand wins), after the tensor-core dot seeds
(which keep their operands' and accumulators' layouts). In a function with
at least one access of rank 2 or more whose memory runs along another dim
than the last (a *column-major* access):

* every ``tt.load`` of a block of pointers of rank 2 or more is seeded with
  the blocked layout of its memory order
  (:func:`memory_order`, from the pointers' contiguity in
  :class:`~minitriton.backend.axis.AxisAnalysis`): ``order = [0, 1]`` for a
  column-major tile, the default for a row-major one, 16 bytes of the
  kernel's narrowest type a thread along the fastest dim;
* every ``tt.store`` gets the same for its pointers, except the store of an
  accumulator, which keeps the store layout of its own rule; the pointers
  keep it (``plan.coalesced``), where the store's forward rule would
  otherwise recompute them in the stored value's layout.

Seeding the row-major accesses too matters in a transposing copy
(``tl.store(z_t, tl.load(x))``): the load and the store each keep their own
order, and one conversion (through shared memory) moves the block between
them, where otherwise one side would take the other's layout and lose its
vectors. The backward walk then asks the address computation (ranges,
broadcasts, ``tt.addptr``), masks and ``other`` for the access's layout, so
they are computed in it directly. Where a user of a loaded value wants
another layout, the forward walk converts the value once, as Triton does:
one conversion costs less than a load that is neither vectorized nor
coalesced.

A function whose accesses are all row-major (or 1-D) is left to the
default, so the plan is unchanged for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from minitriton.backend.accumulators import address_chain, seed_loop
from minitriton.backend.axis import AxisAnalysis
from minitriton.backend.mma_v3 import is_mma_layout
from minitriton.ir.ops import ForOp, LoadOp, StoreOp
from minitriton.ir.types import BlockType, PointerType, element_type

if TYPE_CHECKING:
    from minitriton.backend.layouts import Layout
    from minitriton.backend.prepare import LayoutPlan
    from minitriton.ir.core import Operation, Value


def memory_order(contig: Sequence[int], shape: Sequence[int]) -> tuple[int, ...] | None:
    """The blocked ``order`` (fastest dim first) for pointers with contiguity ``contig``.

    The most contiguous dim of more than one element comes first (the higher
    dim on a tie), then the others, last dim first. None when no such dim is
    contiguous (a gather), or for a 1-D block: the default layout serves those.
    """
    # BEGIN EXERCISE c8-coalesce
    # STUB: raise NotImplementedError("c8-coalesce: memory_order, the blocked order of an access")
    dims = [d for d in range(len(shape)) if shape[d] > 1]
    if len(shape) < 2 or not dims:
        return None
    best = max(dims, key=lambda d: (contig[d], d))
    if contig[best] <= 1:
        return None
    return (best, *(d for d in reversed(range(len(shape))) if d != best))
    # END EXERCISE


def column_major(order: Sequence[int], shape: Sequence[int]) -> bool:
    """Whether ``order`` runs fastest along another dim than the last of more than one
    element (a ``[64, 1]`` block is not column-major: its one long dim is the last)."""
    return order[0] != max(d for d in range(len(shape)) if shape[d] > 1)


def _pointer_block(v: Value) -> bool:
    return isinstance(v.type, BlockType) and isinstance(element_type(v.type), PointerType)


def _accesses(plan: LayoutPlan) -> list[tuple[Operation, tuple[int, ...]]]:
    """Each load and store of a block of pointers of rank 2 or more, with its memory order."""
    axis: AxisAnalysis | None = None
    found: list[tuple[Operation, tuple[int, ...]]] = []
    for op in plan.func.walk():
        if not isinstance(op, (LoadOp, StoreOp)):
            continue
        ptr = op.operands[0]
        if not _pointer_block(ptr) or len(ptr.shape) < 2:
            continue
        axis = axis or AxisAnalysis(plan.func)
        order = memory_order(axis.get(ptr).contig, ptr.shape)
        if order is not None:
            found.append((op, order))
    return found


def seed_coalesced_layouts(plan: LayoutPlan) -> None:
    """Seed ``plan.want`` with each access's memory order, if any access is column-major."""
    accesses = _accesses(plan)
    if not any(column_major(order, op.operands[0].shape) for op, order in accesses):
        return  # the default layouts are already coalesced
    seeds: dict[int, Layout] = {}
    for op, order in accesses:
        ptr = op.operands[0]
        shape = tuple(ptr.shape)
        cols = column_major(order, shape)
        layout = plan.default(shape, order=order if cols else None)
        if isinstance(op, LoadOp):
            _seed(plan, seeds, op.result, layout)
        elif is_mma_layout(plan.want.get(id(op.operands[1]))):
            continue  # an accumulator's store has its own rule (16 bytes of its type)
        else:
            _seed(plan, seeds, ptr, layout)
            plan.coalesced.add(id(ptr))  # not redone in the value's layout
        if cols:  # the addresses too, up to a loop's carried pointers
            for v in address_chain(ptr):
                _seed(plan, seeds, v, layout)
    _through_loops(plan, seeds)
    plan.want.update(seeds)


def _seed(plan: LayoutPlan, seeds: dict[int, Layout], v: Value, layout: Layout) -> bool:
    """Seed ``v`` unless something (a dot, an earlier access) already did; True if seeded."""
    if id(v) in plan.want or id(v) in seeds or tuple(v.shape) != layout.shape:
        return False
    seeds[id(v)] = layout
    return True


def _through_loops(plan: LayoutPlan, seeds: dict[int, Layout]) -> None:
    """A carried value with a seeded region argument or ``scf.yield`` operand: seed its
    initial value and result alike, so that a loop's carried pointers keep the access's
    layout (no conversion of the pointers in every iteration)."""
    seed = partial(_seed, plan)
    changed = True
    while changed:
        changed = False
        for op in plan.func.walk():
            if isinstance(op, ForOp):
                changed |= seed_loop(op, seeds, seed)
