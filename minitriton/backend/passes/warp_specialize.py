"""Warp specialization on sm_90a: a TMA producer warpgroup feeds the ``wgmma`` consumers.

A loop written ``for k in tl.range(..., warp_specialize=True)`` carries the
attribute ``{warp_specialize = true}``. Once the software pipeliner
(:mod:`~minitriton.backend.passes.software_pipeline`) has turned it into a
ring of shared-memory stages filled by TMA, every warp of the CTA both issues
the copies of iteration ``k + S - 1`` and runs the ``wgmma`` of iteration
``k``, and a CTA-wide barrier per iteration keeps a slot from being refilled
while a warpgroup still reads it. This pass splits that work between warps,
as Triton's ``ttg.warp_specialize`` does:

* one extra warpgroup (4 warps), the **producer**, runs the loop's scalar
  index math and issues the copies: it waits until a stage is *empty*, announces
  its bytes on the stage's *full* barrier and starts the TMA copies, up to
  ``S`` iterations ahead of the consumers;
* the kernel's own ``num_warps`` warps, the **consumers**, wait until a stage
  is *full*, run ``wgmma`` on it, and once that ``wgmma`` is complete
  (``warp_group_dot_wait``) release the stage: lane 0 of each consumer warp
  arrives on the stage's *empty* barrier (its arrival count is the consumer
  warps).

The kernel is launched with ``num_warps + 4`` warps (``.maxntid`` and the
launcher's block size say so). The producer warps come last, so the
consumers keep thread ids ``0 .. 32 * num_warps`` and every layout of the
rest of the kernel is unchanged. At the split the producer gives up
registers (``setmaxnreg.dec`` to 40) and the consumers take them
(``setmaxnreg.inc`` to 232: with 4 or 8 consumer warps, ``128 * 40 + 256 *
232`` fits the 64K registers of an SM); the kernel starts with ``.maxnreg``
at an equal share, at most 232. After the split the producer has exited, so
every CTA barrier of the consumers' code (``tt.barrier``, layout
conversions through shared memory) becomes the named barrier ``bar.sync 1,
32 * num_warps``.

**Switch.** The pass is off by default: ``MINITRITON_WARP_SPECIALIZE=1``
turns it on (:data:`~minitriton.backend.tma.WARP_SPECIALIZE_ENV`; it is part
of the compile cache's key). The form compiles and ``ptxas`` assembles it,
but it is to stay off until its GPU tests (``tests/gpu/test_warp_specialize_gpu.py``)
have passed on an H200; without the switch the flag is accepted and ignored,
as before.

**When.** On sm_90 (``sm_90a``), for a loop that asks for it and that

* the pipeliner gave the TMA form with the *accumulating* schedule: one
  ``acc = tl.dot(a, b, acc)`` whose two rings are both copied by TMA (tutorial
  09's K loop over descriptor loads, ``a_desc.load([off_m, k * BK])``);
* sits at the top level of the kernel, after code free of side effects (the
  producer warps run that code too);
* computes the TMA coordinates of an iteration from the induction variable
  and loop-invariant scalars only (a backward slice of pure scalar ops), so
  that the producer can recompute them alone;
* runs with ``num_warps`` 4 or 8 (one or two consumer warpgroups).

Anywhere else the flag is a hint and the loop keeps the pipeliner's form, as
in Triton. That includes ``cp.async`` loops (no TMA), block-pointer loops
whose coordinates are loop-carried (``tl.advance``), loops whose flag is on
an outer loop (a persistent kernel's tile loop), other arches and debug mode:
``MINITRITON_DEBUG=1`` compiles the checked variant, which keeps every
pipelined load on ``cp.async`` so that its addresses are checked
(:mod:`~minitriton.backend.tma`), so the pass has nothing to split there
and the kernel runs unspecialized, with every check in place.

**Before** (tutorial 09's loop after ``software-pipeline``, ``S = 3``)::

    ttng.init_barrier() {count = 3}
    ttng.barrier_expect(%p0, %c0) {bytes = 32768}          // iterations 0 and 1
    ttng.async_tma_copy_global_to_local(%k0, %off_m, %p0, %c0) {buffer = 0, map = 0}
    ...
    %acc_1 = scf.for(%c0, %n, %c1, %acc) {warp_specialize = true} {
    ^(%k, %acc_2):
      ttng.wait_barrier(%slot, %phase)
      %d = ttng.warp_group_dot(%acc_2, %slot) {a = 0, b = 1, ...}
      %acc_3 = ttng.warp_group_dot_wait(%d) {pendings = 1}
      tt.barrier()                                        // every warpgroup is done with k - 1
      ttng.barrier_expect(%p_n, %slot_n) {bytes = 32768}  // iteration k + 2
      ttng.async_tma_copy_global_to_local(%x_n, %off_m, %p_n, %slot_n) {buffer = 0, map = 0}
      ...
      scf.yield(%acc_3)
    }
    ...
    ttng.inval_barrier() {count = 3}

**After**::

    ttng.init_barrier() {count = 3, empty = 4}
    ttng.warp_specialize() {consumer_regs = 232, consumer_warps = 4, producer_regs = 40,
                            producer_warps = 4} {
      scf.for(%c0, %n, %c1) {                             // the producer warpgroup
      ^(%k):
        ttng.wait_barrier(%slot, %free) {empty = true}     // the consumers released it
        ttng.barrier_expect(%true, %slot) {bytes = 32768}
        ttng.async_tma_copy_global_to_local(%x, %off_m, %true, %slot) {buffer = 0, map = 0}
        ...
        scf.yield()
      }
      scf.yield()
    }
    %acc_1 = scf.for(%c0, %n, %c1, %acc) {warp_specialize = true} {   // the consumers
    ^(%k, %acc_2):
      ttng.wait_barrier(%slot, %phase)
      %d = ttng.warp_group_dot(%acc_2, %slot) {a = 0, b = 1, ...}
      %acc_3 = ttng.warp_group_dot_wait(%d) {pendings = 1}
      ttng.arrive_barrier(%not_first, %slot_prev)          // k - 1's wgmma is complete
      scf.yield(%acc_3)
    }
    ...
    ttng.inval_barrier() {count = 6}

``%free`` is ``1 - (k_i / S) % 2``: a fresh barrier counts as having
completed the phase before its first, so the first round of stages is free;
later, round ``r`` of a stage waits for the consumers' release of round
``r - 1``. The consumers release iteration ``k - 1`` at iteration ``k``
(``%not_first`` is ``k > lb``); the release of the last iteration is not
needed. The producer waits only for stages it fills, so it has exited
before the consumers' last ``wgmma`` and the barriers can be invalidated.

Preconditions: the pipeliner has run; before the layout plan.
Postconditions: verified IR; at most one ``ttng.warp_specialize``, whose
region holds scalar ops, one ``scf.for`` and the TMA issue ops; the
consumers' loop has no ``tt.barrier`` and issues no copies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from minitriton.backend.irutil import parent_block, producer
from minitriton.backend.ops import (
    AsyncCopyOp,
    AsyncTmaCopyOp,
    BarrierExpectOp,
    InitBarrierOp,
    InvalBarrierOp,
    LocalAllocOp,
    WaitBarrierOp,
    WarpGroupDotOp,
    WarpGroupDotWaitOp,
)
from minitriton.backend.passes.gpu_pipeline import GpuPass, GpuState
from minitriton.backend.passes.software_pipeline import stages_asked
from minitriton.backend.tma import warp_specialize_enabled
from minitriton.diagnostics import Location
from minitriton.ir.core import (
    OP_REGISTRY,
    Block,
    BlockArgument,
    Operation,
    Region,
    Value,
    use_counts,
)
from minitriton.ir.ops import BarrierOp, CmpOp, ForOp, FuncOp
from minitriton.ir.traits import Pure
from minitriton.ir.types import I1, BlockType
from minitriton.passes.base import register_pass

#: The producer's warps: one warpgroup.
PRODUCER_WARPS = 4
#: ``setmaxnreg`` targets (multiples of 8 in 24..256): the producer only does index
#: math; 128 * 40 + 256 * 232 registers fit an SM's 64K with two consumer warpgroups.
PRODUCER_REGS = 40
CONSUMER_REGS = 232
#: Ops that may run before the split (the producer warps run them too).
_SETUP = (BarrierOp, LocalAllocOp, InitBarrierOp)


@dataclass
class _Loop:
    """A pipelined TMA loop the pass can split, and the pipeliner's ops in it."""

    loop: Operation
    init: Operation
    expect: Operation
    copies: list[Operation]
    barrier: Operation
    dot_wait: Operation
    #: The ops before the loop (after ``init``) that issue the first stages.
    prologue: list[Operation]


def specialize(func: FuncOp, num_warps: int) -> int:
    """Split every loop that qualifies (see the module docstring); returns how many."""
    if num_warps not in (4, 8):
        return 0
    for op in list(func.body.ops):
        if not (isinstance(op, ForOp) and op.attrs.get("warp_specialize")):
            continue
        match = _match(op, func)
        if match is not None:
            _Split(match, num_warps).run()
            return 1  # one producer warpgroup per kernel
    return 0


# ------------------------------------------------------------------ matching


def _match(loop: Operation, func: FuncOp) -> _Loop | None:
    """The pipeliner's TMA ops of ``loop``, or None where the pass must decline."""
    body = loop.regions[0].block
    kinds = _by_kind(body.ops)
    if kinds.get(AsyncCopyOp) or len(kinds.get(WarpGroupDotOp, [])) != 1:
        return None
    expects, copies = kinds.get(BarrierExpectOp, []), kinds.get(AsyncTmaCopyOp, [])
    waits, barriers = kinds.get(WaitBarrierOp, []), kinds.get(BarrierOp, [])
    dot_waits = kinds.get(WarpGroupDotWaitOp, [])
    if len(expects) != 1 or not copies or len(waits) != 1 or len(barriers) != 1:
        return None
    if len(dot_waits) != 1 or dot_waits[0].attrs["pendings"] != 1:
        return None  # the accumulating schedule only
    top = func.body.ops
    init = next((op for op in top[: top.index(loop)] if isinstance(op, InitBarrierOp)), None)
    if init is None or not _setup_only(top[: top.index(init)]):
        return None
    prologue = top[top.index(init) + 1 : top.index(loop)]
    if any(not _scalar_issue(op) for op in prologue):
        return None
    found = _Loop(loop, init, expects[0], copies, barriers[0], dot_waits[0], prologue)
    return found if _producer_slice(found) is not None else None


def _by_kind(ops: list[Operation]) -> dict[type, list[Operation]]:
    kinds: dict[type, list[Operation]] = {}
    for op in ops:
        kinds.setdefault(type(op), []).append(op)
    return kinds


def _setup_only(ops: list[Operation]) -> bool:
    """Whether the producer warps may run ``ops`` too: pure ops and the pipeline's setup."""
    return all(isinstance(op, _SETUP) or (op.has_trait(Pure) and not op.regions) for op in ops)


def _scalar_issue(op: Operation) -> bool:
    """A prologue op: a TMA issue op, or a pure scalar op computing its operands."""
    if isinstance(op, (BarrierExpectOp, AsyncTmaCopyOp)):
        return True
    pure = op.has_trait(Pure) and not op.regions
    return pure and not any(isinstance(r.type, BlockType) for r in op.results)


def _next_iv(found: _Loop) -> Value | None:
    """The prefetched iteration's induction variable: ``arith.cmp(%next, %ub) {lt}``."""
    pred = producer(found.expect.operands[0])
    if not isinstance(pred, CmpOp) or pred.attrs.get("pred") != "lt":
        return None
    return pred.operands[0]


def _producer_slice(found: _Loop) -> list[Operation] | None:
    """The loop-body ops the copies' coordinates need, given the prefetched iteration's iv.

    None where one is not a pure scalar op, or where the coordinates need
    the loop's iter args (only the induction variable may vary).
    """
    body = found.loop.regions[0].block
    next_iv = _next_iv(found)
    if next_iv is None:
        return None
    needed: dict[int, Operation] = {}
    stack = [v for c in found.copies for v in c.operands[:2]]
    while stack:
        v = stack.pop()
        if v is next_iv:
            continue
        if isinstance(v, BlockArgument):
            if any(v is a for a in body.args):
                return None  # the consumer's iv or an iter arg: not the prefetched iteration
            continue
        op = producer(v)
        if op is None or op.parent is not body or id(op) in needed:
            continue
        if not _scalar_issue(op) or isinstance(op, (BarrierExpectOp, AsyncTmaCopyOp)):
            return None
        needed[id(op)] = op
        stack.extend(op.operands)
    return [op for op in body.ops if id(op) in needed]


# ------------------------------------------------------------------ rewriting


class _Split:
    """Rewrites one matched loop (see the module docstring's *After*)."""

    def __init__(self, found: _Loop, num_warps: int) -> None:
        self.found = found
        self.num_warps = num_warps
        self.loop = found.loop
        self.body = found.loop.regions[0].block
        self.stages = found.init.attrs["count"]
        self.loc = found.loop.loc

    def run(self) -> None:
        slice_ = _producer_slice(self.found)
        assert slice_ is not None, "matched loops have a producer slice"
        parent = parent_block(self.loop)
        self.found.init.attrs["empty"] = self.num_warps
        ws = self._make(
            "ttng.warp_specialize", [], [],
            {"consumer_warps": self.num_warps, "producer_warps": PRODUCER_WARPS,
             "producer_regs": PRODUCER_REGS, "consumer_regs": CONSUMER_REGS},
            regions=[Region(self._producer(slice_))],
        )  # fmt: skip
        parent.insert(parent.ops.index(self.found.init) + 1, ws)
        for op in self.found.prologue:
            if isinstance(op, (BarrierExpectOp, AsyncTmaCopyOp)):
                parent.remove(op)
        self._consumer()
        after = parent.ops[parent.ops.index(self.loop) + 1 :]
        inval = next(op for op in after if isinstance(op, InvalBarrierOp))
        inval.attrs["count"] = 2 * self.stages  # the full barriers, then the empty ones
        _drop_dead(parent, self.found.prologue)
        _drop_dead(self.body, list(self.body.ops))

    # -- helpers
    def _make(
        self, name: str, operands: list[Value], types: list, attrs: dict,
        regions: list[Region] | None = None, loc: Location | None = None,
    ) -> Operation:  # fmt: skip
        cls = OP_REGISTRY[name]
        return cls(operands, types, attrs, regions or (), loc or self.loc)

    def _emit(self, block: Block, name: str, operands: list[Value], type_=None, attrs=None):
        op = self._make(name, operands, [type_] if type_ is not None else [], dict(attrs or {}))
        block.append(op)
        return op.results[0] if op.results else None

    def _const(self, block: Block, value: int, type_) -> Value:  # noqa: ANN001
        return self._emit(block, "arith.constant", [], type_, {"value": value})

    # -- the producer
    def _producer(self, slice_: list[Operation]) -> Block:
        """The producer's region: one ``scf.for`` over the loop's range issuing every stage."""
        region = Block()
        lb, ub, step = self.loop.operands[:3]
        it = lb.type
        body = Block([it], ["k"])
        loop = self._make("scf.for", [lb, ub, step], [], {}, regions=[Region(body)])
        region.append(loop)
        region.append(self._make("scf.yield", [], [], {}))
        k = body.args[0]
        s = self._const(body, self.stages, it)
        k_i = self._emit(body, "arith.div", [self._emit(body, "arith.sub", [k, lb], it), step], it)
        slot = self._emit(body, "arith.rem", [k_i, s], it)
        rounds = self._emit(body, "arith.div", [k_i, s], it)
        parity = self._emit(body, "arith.rem", [rounds, self._const(body, 2, it)], it)
        free = self._emit(body, "arith.sub", [self._const(body, 1, it), parity], it)
        self._emit(body, "ttng.wait_barrier", [slot, free], None, {"empty": True})
        true = self._const(body, 1, I1)
        next_iv = _next_iv(self.found)
        assert next_iv is not None
        mapping: dict[int, Value] = {id(next_iv): k}
        for op in slice_:
            operands = [mapping.get(id(v), v) for v in op.operands]
            types = [r.type for r in op.results]
            clone = self._make(op.name, operands, types, dict(op.attrs), loc=op.loc)
            body.append(clone)
            for old, new in zip(op.results, clone.results):
                mapping[id(old)] = new
        issue = [self.found.expect, *self.found.copies]
        for op in issue:
            operands = [mapping.get(id(v), v) for v in op.operands]
            operands[-2:] = [true, slot]  # every stage this loop issues is in range
            body.append(self._make(op.name, operands, [], dict(op.attrs), loc=op.loc))
        body.append(self._make("scf.yield", [], [], {}))
        return region

    # -- the consumers
    def _consumer(self) -> None:
        """Drop the copies and the CTA barrier; release the previous stage once its dot is done."""
        body = self.body
        # The pipeliner refills the slot the previous iteration read: (k_i + S - 1) % S.
        slot_prev = self.found.expect.operands[1]
        for op in [self.found.expect, *self.found.copies, self.found.barrier]:
            body.remove(op)
        lb = self.loop.operands[0]
        k = body.args[0]
        at = body.ops.index(self.found.dot_wait) + 1
        pred = self._make("arith.cmp", [k, lb], [I1], {"pred": "gt"})
        arrive = self._make("ttng.arrive_barrier", [pred.results[0], slot_prev], [], {})
        body.insert(at, pred)
        body.insert(at + 1, arrive)
        self._hoist_slot(slot_prev, at)

    def _hoist_slot(self, slot: Value, at: int) -> None:
        """Move the ops computing ``slot`` before the arrive that now uses it."""
        body = self.body
        need: list[Operation] = []
        stack = [slot]
        while stack:
            op = producer(stack.pop())
            if op is None or op.parent is not body or op in need:
                continue
            need.append(op)
            stack.extend(op.operands)
        for op in sorted(need, key=body.ops.index):
            if body.ops.index(op) > at:
                body.remove(op)
                body.insert(at, op)
                at += 1


def _drop_dead(block: Block, candidates: list[Operation]) -> None:
    """Remove the pure ops among ``candidates`` whose results are no longer used."""
    changed = True
    while changed:
        changed = False
        counts = _block_uses(block)
        for op in reversed(list(block.ops)):
            if op not in candidates or not op.has_trait(Pure) or op.regions or not op.results:
                continue
            if all(counts.get(id(r), 0) == 0 for r in op.results):
                block.remove(op)
                changed = True


def _block_uses(block: Block) -> dict[int, int]:
    counts: dict[int, int] = {}
    for op in block.ops:
        for k, n in use_counts(op).items():
            counts[k] = counts.get(k, 0) + n
    return counts


# ------------------------------------------------------------------ the pass


@register_pass
@dataclass(frozen=True)
class WarpSpecializePass(GpuPass):
    """Split TMA-pipelined loops into a producer warpgroup and consumers (module docstring)."""

    name: ClassVar[str] = "warp-specialize"
    condition: ClassVar[str] = (
        "where software-pipeline runs; splits only sm_90a TMA "
        "loops with tl.range(..., warp_specialize=True), with MINITRITON_WARP_SPECIALIZE=1"
    )

    def applies(self, state: GpuState) -> bool:
        # Wherever the pipeliner runs; it splits only sm_90's TMA loops, when switched on.
        return state.arch_number >= 80 and stages_asked(state.kernel, state.num_stages)

    def run(self, state: GpuState) -> None:
        if state.arch_number == 90 and warp_specialize_enabled():
            specialize(state.kernel, state.num_warps)


__all__ = ["WarpSpecializePass", "specialize"]
