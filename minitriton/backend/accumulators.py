"""Layouts of tensor-core dots chosen before the layout plan runs.

A tensor-core dot produces its result in the accumulator layout of its
instructions (:func:`~minitriton.backend.accelerate_matmul.dot_result_layout`).
Converting it away inside a K loop would cost a trip through shared memory
every iteration, so the accumulator layout is *seeded* before the layout
plan's backward walk (whose first demand wins). :func:`accumulator_seeds`
gives the seeds of ``wgmma`` dots; the layout plan takes them, after those
of ``mma.sync`` dots, from :func:`~minitriton.backend.dot_seeds.seed_dot_layouts`:

* the dot's result;
* a loop-carried value whose ``scf.yield`` operand is seeded: the loop's
  result, its initial value and the region argument;
* elementwise ``arith``/``math`` ops of the same shape with a seeded operand
  (``acc * alpha[:, None]``, ``acc.to(tl.float16)``), so epilogues run in
  registers where the accumulator lives, and one conversion happens at the
  store (see :mod:`~minitriton.backend.lower.wgmma`'s epilogue);
* reductions of a seeded value get the sliced accumulator layout, and so do
  the row statistics computed from them (attention's ``m_i``, ``l_i``,
  ``alpha``): broadcasting them back (``m_ij[:, None]``) then costs nothing;
* a B operand loaded from memory that is contiguous along K (attention's
  ``K`` block, read through a transposed block pointer) gets a K-major
  blocked layout, so its loads are coalesced 16-byte vectors and it is
  staged K-major (``wgmma`` without ``tnspB``); a K-major ring copy of the
  software pipeliner gets it too, with the pointers its addresses are offset
  from, up to the loop's carried pointers (no conversion in the loop).
"""

from __future__ import annotations

from collections.abc import Callable

from minitriton.backend.accelerate_matmul import dot_result_layout
from minitriton.backend.axis import AxisAnalysis
from minitriton.backend.irutil import producer, terminator
from minitriton.backend.layouts import BlockedParams, Layout, blocked, default_params, slice_layout
from minitriton.backend.lltypes import pointee_of
from minitriton.backend.mma_v3 import accumulator_layout, shape_of_async_dot
from minitriton.backend.ops import AsyncCopyOp, WarpGroupDotOp, WarpGroupDotWaitOp
from minitriton.ir.core import Operation, Value
from minitriton.ir.ops import AddPtrOp, DotOp, ForOp, FuncOp, HintOp, LoadOp, ReduceOp
from minitriton.ir.traits import Elementwise, Pure
from minitriton.ir.types import BlockType


def _propagates(op: Operation) -> bool:
    """Whether ``op``'s one result takes the accumulator layout of a seeded operand.

    Pure elementwise ops compute lane by lane, so the accumulator's layout
    serves their result, but ``tt.addptr`` and ``tt.hint``: they make
    addresses and their facts, which keep the layouts the loads and stores
    pick. ``ttng.warp_group_dot_wait`` (not elementwise: it waits for the
    ``wgmma`` group) returns the accumulator it waited for.
    """
    if isinstance(op, (AddPtrOp, HintOp)):
        return False
    pure_lanes = op.has_trait(Elementwise) and op.has_trait(Pure)
    return pure_lanes or isinstance(op, WarpGroupDotWaitOp)


def accumulator_seeds(func: FuncOp, num_warps: int, arch: str) -> dict[int, Layout]:
    """``id(value) -> layout`` for every value that should live in an accumulator layout."""
    seeds: dict[int, Layout] = {}
    axis: AxisAnalysis | None = None
    for op in func.walk():
        if isinstance(op, DotOp):
            layout = dot_result_layout(op, arch, num_warps)
            if layout is not None:
                seeds[id(op.result)] = layout
                axis = axis or AxisAnalysis(func)
                _seed_k_major_operand(op.operands[1], axis, num_warps, seeds)
        if isinstance(op, AsyncCopyOp) and op.attrs.get("contig") == 0:
            layout = k_major_layout(op.operands[0].shape, num_warps, element_bytes(op.operands[0]))
            for v in address_chain(op.operands[0]) + op.operands[3:]:
                seeds[id(v)] = layout
        if isinstance(op, WarpGroupDotOp):
            seeds[id(op.result)] = accumulator_layout(shape_of_async_dot(op, num_warps))
    if not seeds:
        return seeds
    changed = True
    while changed:
        changed = False
        for op in func.walk():
            changed |= _seed_op(op, seeds)
    return seeds


def address_chain(ptr: Value) -> list[Value]:
    """``ptr`` and the pointer blocks it is offset from (``tt.addptr``'s first operand).

    A K-major ring copy's addresses are recomputed from the loop's carried
    pointers (``b_ptrs + (S - 1) * step``): seeding the whole chain, up to the
    loop's region argument, gives the carried pointers the copy's K-major
    layout too, where the default row-major one would be converted through
    shared memory in every iteration.
    """
    chain = [ptr]
    op = producer(ptr)
    while isinstance(op, AddPtrOp) and op.operands[0].shape == ptr.shape:
        chain.append(op.operands[0])
        op = producer(op.operands[0])
    return chain


def loads_k_major(axis: AxisAnalysis, ptr: Value) -> bool:
    """True when a 2-D block of pointers runs contiguously along dim 0 only (a K-major B)."""
    info = axis.get(ptr)
    return len(info.contig) == 2 and info.contig[0] > 1 and info.contig[1] == 1


def element_bytes(ptr: Value) -> int:
    """Bytes of the pointee of a block of pointers."""
    return max(1, pointee_of(ptr.type).bitwidth // 8)


def k_major_layout(shape: tuple[int, ...], num_warps: int, eb: int) -> Layout:
    """A blocked layout of a K x N block holding 16 bytes along K (dim 0) per thread."""
    t = default_params((shape[1], shape[0]), num_warps, max(1, 16 // eb))
    params = BlockedParams(t.spt[::-1], t.tpw[::-1], t.wpc[::-1], (0, 1))
    return blocked(params, tuple(shape))


def _seed_k_major_operand(b: Value, axis: AxisAnalysis, num_warps: int, seeds: dict) -> None:
    # B loaded from K-major memory: load it K-major (coalesced), stage it K-major.
    load = getattr(b, "owner", None)
    if not isinstance(load, LoadOp) or not loads_k_major(axis, load.operands[0]):
        return
    layout = k_major_layout(b.shape, num_warps, element_bytes(load.operands[0]))
    seeds[id(b)] = layout


def _seed(seeds: dict[int, Layout], v: Value, layout: Layout) -> bool:
    if id(v) in seeds or not isinstance(v.type, BlockType) or v.shape != layout.shape:
        return False
    seeds[id(v)] = layout
    return True


def _seed_op(op: Operation, seeds: dict[int, Layout]) -> bool:
    if isinstance(op, ForOp):
        return seed_loop(op, seeds)
    if isinstance(op, ReduceOp) and id(op.operands[0]) in seeds:
        layout = slice_layout(seeds[id(op.operands[0])], op.attrs["axis"])
        return any([_seed(seeds, r, layout) for r in op.results])
    if not _propagates(op) or len(op.results) != 1:
        return False
    for v in op.operands:
        seeded = seeds.get(id(v))
        if seeded is not None:
            return _seed(seeds, op.result, seeded)
    return False


def seed_loop(
    op: Operation,
    seeds: dict[int, Layout],
    seed: Callable[[dict[int, Layout], Value, Layout], bool] = _seed,
) -> bool:
    """Give each carried value of ``scf.for`` ``op`` whose ``scf.yield`` operand or region
    argument is seeded the same seed on all four of its values (with ``seed``, which may
    refuse one); True if any was new."""
    body = op.regions[0]
    changed = False
    for i, v in enumerate(terminator(body.block).operands):
        # A seeded yield operand (an accumulator) or region argument (carried pointers).
        layout = seeds.get(id(v)) or seeds.get(id(body.args[1 + i]))
        if layout is None:
            continue
        for related in (v, op.results[i], op.operands[3 + i], body.args[1 + i]):
            changed |= seed(seeds, related, layout)
    return changed
