"""The GPU backend's own ops: ``ttg.*`` and ``ttng.*``, as in Triton's GPU dialects.

The passes of :mod:`minitriton.backend` create them after the optimizer, so
the emulator never sees them: layout conversions
(:mod:`~minitriton.backend.prepare`), the rings of shared tiles, asynchronous
copies and ``wgmma`` of a pipelined loop (:mod:`~minitriton.backend.passes.software_pipeline`)
and the barriers and bulk copies of TMA (:mod:`~minitriton.backend.tma`).
Their lowerings are in ``minitriton/backend/lower/``; like the kernel IR's
ops (:mod:`minitriton.ir.ops`) they are registered by name at the end of this
module, so a dumped ``ttgir`` parses back.
"""

from __future__ import annotations

from typing import ClassVar

from minitriton.ir.core import Operation, register_ops
from minitriton.ir.ops import YieldOp
from minitriton.ir.traits import (
    HasRegions,
    Pure,
    RecursiveEffects,
    SideEffects,
    ViewLike,
    trait_set,
)


class ConvertLayoutOp(Operation):
    """``%y = ttg.convert_layout(%x) {layout = "..."} : T`` moves a block to another layout.

    Only the GPU backend creates it (through shared memory); the values are
    unchanged. It appears in the ``ttgir`` dump of a compiled kernel.
    """

    name = "ttg.convert_layout"
    traits = trait_set(Pure, ViewLike)
    operand_counts = (1,)
    result_count = 1

    def verify_(self) -> None:
        if self.operands[0].type != self.result.type:
            raise self.fail("needs one operand of the result type")


class _Effect(Operation):
    """A GPU-backend op with effects; the emulator never sees these."""

    traits = trait_set(SideEffects)
    backend_only = True
    # Annotated again: from ``(0,)`` alone mypy would take the type to be
    # ``tuple[int]`` and reject the subclasses' ``(3, 4)``.
    operand_counts: ClassVar[tuple[int, ...] | None] = (0,)
    #: No result, or one: the accumulator, of the first operand's type.
    result_count = 0

    def verify_(self) -> None:
        if self.results and self.results[0].type != self.operands[0].type:
            raise self.fail("the result has the accumulator's type")


class LocalAllocOp(_Effect):
    """``ttg.local_alloc() {buffer, stages, shape, ...}``: a ring of shared tiles."""

    name = "ttg.local_alloc"
    required_attrs = ("buffer", "stages", "shape", "dtype", "contig", "encoding")


class LocalDeallocOp(_Effect):
    """``ttg.local_dealloc()``: the ring buffers are free again."""

    name = "ttg.local_dealloc"


class AsyncCopyOp(_Effect):
    """``ttg.async_copy_global_to_local(%ptrs, %pred, %slot[, %mask]) {buffer, contig}``.

    Copies the block ``%ptrs`` points at into slot ``%slot`` of the ring
    ``buffer``; where ``%pred`` or ``%mask`` is false the bytes are zeros.
    """

    name = "ttg.async_copy_global_to_local"
    required_attrs = ("buffer", "contig")
    operand_counts = (3, 4)
    mask_index = 3


class AsyncCommitGroupOp(_Effect):
    """``ttg.async_commit_group()``: close the group of copies issued so far."""

    name = "ttg.async_commit_group"


class AsyncWaitOp(_Effect):
    """``ttg.async_wait() {num}``: at most ``num`` groups still in flight."""

    name = "ttg.async_wait"
    required_attrs = ("num",)


class WarpGroupDotOp(_Effect):
    """``%d = ttng.warp_group_dot(%acc, %slot[, %a]) {a, b, shape, kind}``: async ``wgmma``.

    A and B are read from slot ``%slot`` of the rings ``a`` and ``b``; with
    ``a = -1``, A is the block ``%a`` (registers). The result is in flight
    until a ``ttng.warp_group_dot_wait``.
    """

    name = "ttng.warp_group_dot"
    required_attrs = ("a", "b", "shape", "kind")
    operand_counts = (2, 3)
    result_count = 1


class WarpGroupDotWaitOp(_Effect):
    """``%acc = ttng.warp_group_dot_wait(%d) {pendings}``: wait for ``wgmma`` groups.

    At most ``pendings`` groups stay in flight; ``%acc`` is ``%d``, complete.
    """

    name = "ttng.warp_group_dot_wait"
    required_attrs = ("pendings",)
    operand_counts = (1,)
    result_count = 1


class LocalLoadOp(Operation):
    """``%x = ttg.local_load(%slot) {buffer}``: a ``mma.sync`` operand read from a ring slot.

    Its layout is the dot-operand layout of the dot that uses it: the code
    generator reads the fragments with ``ldmatrix`` straight from the slot.
    """

    name = "ttg.local_load"
    required_attrs = ("buffer",)
    traits = trait_set(SideEffects)  # reads a slot that cp.async writes: never moved or merged
    backend_only = True
    operand_counts = (1,)  # the slot
    result_count = 1


class LocalStoreOp(_Effect):
    """``ttg.local_store(%v) {buffer}``: registers into a one-stage shared tile."""

    name = "ttg.local_store"
    required_attrs = ("buffer",)
    operand_counts = (1,)


# ------------------------------------------------------------------ TMA


class InitBarrierOp(_Effect):
    """``ttng.init_barrier() {count[, empty]}``: one ``mbarrier`` per ring stage, after the rings.

    With ``empty = n`` (warp specialization) a second set of ``count`` barriers
    follows, the stages' *empty* barriers, each completed by ``n`` arrivals.
    """

    name = "ttng.init_barrier"
    required_attrs = ("count",)


class InvalBarrierOp(_Effect):
    """``ttng.inval_barrier() {count}``: the barriers' memory is free for other uses.

    ``count`` barriers from the first: ``2 * stages`` where there are empty barriers.
    """

    name = "ttng.inval_barrier"
    required_attrs = ("count",)


class BarrierExpectOp(_Effect):
    """``ttng.barrier_expect(%pred, %slot) {bytes}``: stage ``%slot`` will receive ``bytes``."""

    name = "ttng.barrier_expect"
    required_attrs = ("bytes",)
    operand_counts = (2,)


class AsyncTmaCopyOp(_Effect):
    """``ttng.async_tma_copy_global_to_local(%x, %y, ..., %pred, %slot) {buffer, map}``.

    Copies the box at coordinates (``%x`` innermost, ``%y``, then one per
    batch dimension of the map: two to five in all) of tensor map ``map``
    into slot ``%slot`` of ring ``buffer``; completes on the slot's barrier.
    """

    name = "ttng.async_tma_copy_global_to_local"
    required_attrs = ("buffer", "map")
    operand_counts = (4, 5, 6, 7)


class WaitBarrierOp(_Effect):
    """``ttng.wait_barrier(%slot, %phase)``: wait for stage ``%slot``'s phase ``%phase``.

    With ``{empty = true}`` it waits on the stage's *empty* barrier (the consumers
    have released the slot, see :mod:`~minitriton.backend.passes.warp_specialize`)
    instead of its *full* one (the copies have landed).
    """

    name = "ttng.wait_barrier"
    operand_counts = (2,)


class TmaStoreBuffersOp(_Effect):
    """``ttng.tma_store_buffers() {bytes}``: the TMA stores' tiles, at the start of shared memory.

    The kernel's first op: the ``bytes`` stay the stores' for the whole kernel
    (rings and scratch space start after them), so a store in flight keeps
    its tile while the next tile's loop runs.
    """

    name = "ttng.tma_store_buffers"
    required_attrs = ("bytes",)


class AsyncTmaStoreOp(_Effect):
    """``ttng.async_tma_copy_local_to_global(%x, %y, %v) {map, offset}``: a TMA store.

    Writes the block ``%v`` into its swizzled tile at byte ``offset`` of
    shared memory, then one thread copies the tile to the box at
    coordinates (``%x`` innermost, ``%y``) of tensor map ``map`` (one bulk
    group); the copy engine leaves out what lies outside the tensor.
    """

    name = "ttng.async_tma_copy_local_to_global"
    required_attrs = ("map", "offset")
    operand_counts = (3,)


class TmaStoreWaitOp(_Effect):
    """``ttng.async_tma_store_wait() {pendings}``: earlier TMA stores have read their tiles.

    At most ``pendings`` bulk groups may still be reading shared memory; a
    barrier follows, so no thread writes a tile before its store has read it.
    """

    name = "ttng.async_tma_store_wait"
    required_attrs = ("pendings",)


class ArriveBarrierOp(_Effect):
    """``ttng.arrive_barrier(%pred, %slot)``: each consumer warp releases stage ``%slot``.

    One arrive per warp (its lane 0), where ``%pred`` holds, on the stage's
    *empty* barrier, whose arrival count is the consumer warps.
    """

    name = "ttng.arrive_barrier"
    operand_counts = (2,)


class WarpSpecializeOp(Operation):
    """``ttng.warp_specialize() {consumer_warps, producer_warps, ...} { producer }``.

    Splits the CTA: warps ``consumer_warps ..`` (the producer warpgroup) run the
    region, with their register budget lowered to ``producer_regs``, and exit;
    the first ``consumer_warps`` warps skip it, raise theirs to ``consumer_regs``
    and run the rest of the kernel. The region holds scalar code and TMA issue
    ops only; it ends with ``scf.yield()``.
    """

    name = "ttng.warp_specialize"
    traits = trait_set(RecursiveEffects, HasRegions)
    backend_only = True
    required_attrs = ("consumer_warps", "producer_warps", "producer_regs", "consumer_regs")
    operand_counts = (0,)
    result_count = 0

    def verify_(self) -> None:
        if len(self.regions) != 1:
            raise self.fail("needs one region: the producer's code")
        term = self.regions[0].block.terminator
        if not isinstance(term, YieldOp) or term.operands:
            raise self.fail("the producer's region must end with scf.yield()")
        for key in ("producer_regs", "consumer_regs"):
            regs = self.attrs[key]
            if not (isinstance(regs, int) and 24 <= regs <= 256 and regs % 8 == 0):
                raise self.fail(f"{key} must be a multiple of 8 in 24..256 (setmaxnreg)")


# The GPU backend's ops, by name, for the IR parser (see minitriton.ir.ops).
register_ops(
    ConvertLayoutOp, LocalAllocOp, LocalDeallocOp, AsyncCopyOp, AsyncCommitGroupOp, AsyncWaitOp,
    WarpGroupDotOp, WarpGroupDotWaitOp, LocalLoadOp, LocalStoreOp, InitBarrierOp,
    InvalBarrierOp, BarrierExpectOp, AsyncTmaCopyOp, WaitBarrierOp, TmaStoreBuffersOp,
    AsyncTmaStoreOp, TmaStoreWaitOp, ArriveBarrierOp, WarpSpecializeOp,
)  # fmt: skip
