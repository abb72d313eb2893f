"""Software pipelining of a K loop feeding ``wgmma``: ``cp.async`` into a ring of buffers.

With ``num_stages = S`` (a launch option, 3 by default as in Triton), the
loads that feed a tensor-core dot inside an ``scf.for`` are issued ``S - 1``
iterations ahead, straight from global into shared memory
(``cp.async.cg.shared.global``, 16 bytes per thread and access), into a
ring of ``S`` buffers per operand; the dot reads its operands from the ring
through ``wgmma`` descriptors, and one ``wgmma`` group stays in flight while
the next iteration's copies are issued.

**When.** The pass runs on sm_90 (``wgmma``) for ``num_stages >= 2`` on a loop
whose body holds exactly one ``tt.dot`` on the ``wgmma`` path, where:

* both operands are ``tt.load`` results used only by the dot, with no
  ``other`` or a zero ``other`` (``cp.async`` zero-fills masked-off bytes);
* each load's pointer is a loop-carried value advanced by a loop-invariant
  ``tt.addptr`` (``a_ptrs += BLOCK_K * stride_ak``);
* the mask, if any, is computed in the loop from the induction variable and
  loop-invariant values only (it is recomputed for the prefetched
  iteration: ``offs_k < K - (k + S - 1) * BLOCK_K``);
* each thread's accesses can be 4, 8 or 16 bytes (contiguity, alignment
  and mask constancy from the axis analysis);
* the dot accumulates into a loop-carried value (``acc = tl.dot(a, b, acc)``)
  and its result is used only by the ``scf.yield``;
* fp16 or bf16 operands (tf32 and int8 ``wgmma`` need B K-major, which a
  straight copy of a row-major B cannot give).

Anything else keeps step 1's path (:mod:`~minitriton.backend.lower_wgmma`:
operands loaded into registers, then staged into shared memory).

**Before** (the tutorial's loop)::

    %acc_1, %ap_1, %bp_1 = scf.for(%c0, %n, %c1, %acc, %ap, %bp) {
    ^(%k, %acc_2, %ap_2, %bp_2):
      %mask_a = ... %k ...
      %a = tt.load(%ap_2, %mask_a, %zero_a)
      %b = tt.load(%bp_2, %mask_b, %zero_b)
      %acc_3 = tt.dot(%a, %b, %acc_2)
      %ap_3 = tt.addptr(%ap_2, %inc_a)
      %bp_3 = tt.addptr(%bp_2, %inc_b)
      scf.yield(%acc_3, %ap_3, %bp_3)
    }

**After** (``S = 3``; ``k_i`` is the iteration number, ``slot`` = ``k_i % S``)::

    tt.barrier()
    ttg.local_alloc() {buffer = 0, stages = 3, shape = [128, 64], ...}
    ttg.local_alloc() {buffer = 1, stages = 3, shape = [64, 128], ...}
    // prologue: iterations 0 and 1, predicated on being < ub
    ttg.async_copy_global_to_local(%ap, %in0, %slot0, %mask_a0) {buffer = 0}
    ttg.async_copy_global_to_local(%bp, %in0, %slot0, %mask_b0) {buffer = 1}
    ttg.async_commit_group()
    ... the same for iteration 1 (pointers advanced by %inc * 1) ...
    %acc_1, %ap_1, %bp_1 = scf.for(...) {
    ^(%k, %acc_2, %ap_2, %bp_2):
      ttg.async_wait() {num = 1}         // this iteration's copies have landed
      tt.barrier()                       // ... in every thread
      %d = ttng.warp_group_dot(%acc_2, %slot) {a = 0, b = 1}
      %acc_3 = ttng.warp_group_dot_wait(%d) {pendings = 1}
      tt.barrier()                       // the previous dot is done in every warpgroup
      // prefetch iteration k + 2 into the slot the previous dot read
      ttg.async_copy_global_to_local(%ap_n, %in_n, %slot_n, %mask_a_n) {buffer = 0}
      ttg.async_copy_global_to_local(%bp_n, %in_n, %slot_n, %mask_b_n) {buffer = 1}
      ttg.async_commit_group()
      %ap_3 = tt.addptr(%ap_2, %inc_a)
      %bp_3 = tt.addptr(%bp_2, %inc_b)
      scf.yield(%acc_3, %ap_3, %bp_3)
    }
    %acc_4 = ttng.warp_group_dot_wait(%acc_1) {pendings = 0}
    ttg.async_wait() {num = 0}
    ttg.local_dealloc()

``async_wait`` also fences the async proxy (``fence.proxy.async``) so
``wgmma`` sees what ``cp.async`` wrote. The buffers sit at the start of the
dynamic shared memory; other shared-memory users inside the loop
(conversions, reductions) use the space after them, and after
``local_dealloc`` the whole buffer is theirs again. More than 48 KB of
dynamic shared memory is allowed by the driver at load time.

Preconditions: inlined kernel, before the layout plan. Postconditions: the
``tt.load``/``tt.dot`` of a pipelined loop are gone; every other op is
unchanged.
"""

from __future__ import annotations

from math import gcd

from minitriton.backend.accumulators import loads_k_major
from minitriton.backend.axis import AxisAnalysis, AxisInfo
from minitriton.backend.mma_v3 import wgmma_shape
from minitriton.backend.shared_layout import SharedTile
from minitriton.diagnostics import Location
from minitriton.ir.core import (
    OP_REGISTRY,
    Block,
    BlockArgument,
    Operation,
    OpResult,
    Value,
    register_op,
    replace_all_uses,
    use_counts,
)
from minitriton.ir.ops import FuncOp
from minitriton.ir.types import I1, I32, BlockType, element_type

#: Ops a mask may be recomputed with.
_CLONABLE = ("arith.", "math.", "tt.splat", "tt.broadcast", "tt.expand_dims", "tt.make_range")


class _Effect(Operation):
    pure = False


@register_op
class LocalAllocOp(_Effect):
    """``ttg.local_alloc() {buffer, stages, shape, ...}``: a ring of shared tiles."""

    name = "ttg.local_alloc"


@register_op
class LocalDeallocOp(_Effect):
    """``ttg.local_dealloc()``: the ring buffers are free again."""

    name = "ttg.local_dealloc"


@register_op
class AsyncCopyOp(_Effect):
    """``ttg.async_copy_global_to_local(%ptrs, %pred, %slot[, %mask]) {buffer}``."""

    name = "ttg.async_copy_global_to_local"


@register_op
class AsyncCommitGroupOp(_Effect):
    """``ttg.async_commit_group()``: close the group of copies issued so far."""

    name = "ttg.async_commit_group"


@register_op
class AsyncWaitOp(_Effect):
    """``ttg.async_wait() {num}``: at most ``num`` groups still in flight."""

    name = "ttg.async_wait"


@register_op
class WarpGroupDotOp(_Effect):
    """``%d = ttng.warp_group_dot(%acc, %slot) {a, b, shape, kind}``: async ``wgmma``."""

    name = "ttng.warp_group_dot"


@register_op
class WarpGroupDotWaitOp(_Effect):
    """``%acc = ttng.warp_group_dot_wait(%d) {pendings}``: wait for ``wgmma`` groups."""

    name = "ttng.warp_group_dot_wait"


def pipeline_loops(func: FuncOp, num_warps: int, arch: str, num_stages: int) -> int:
    """Pipeline every loop that qualifies (see the module docstring); returns how many."""
    if num_stages < 2 or not arch.startswith("sm_90"):
        return 0
    axis = AxisAnalysis(func)
    count = 0
    for op in list(func.walk()):
        if op.name == "scf.for":
            plan = _match(op, func, axis, num_warps)
            if plan is not None:
                _Rewriter(op, plan, num_stages, count, num_warps).run()
                count += 1
    return count


# ------------------------------------------------------------------ matching


class _Operand:
    """One pipelined load: its op, loop-carried pointer index and increment."""

    def __init__(
        self, load: Operation, index: int, inc: Value, copy_bytes: int, contig: int
    ) -> None:
        self.contig = contig
        self.load = load
        self.index = index
        self.inc = inc
        self.copy_bytes = copy_bytes


class _Plan:
    def __init__(self, dot: Operation, acc_index: int, operands: list[_Operand]) -> None:
        self.dot = dot
        self.acc_index = acc_index
        self.operands = operands


def _inside(v: Value, block: Block) -> bool:
    owner = getattr(v, "owner", None)
    if isinstance(v, BlockArgument):
        return v in block.args
    node = owner.parent if owner is not None else None
    while node is not None:
        if node is block:
            return True
        parent_op = node.parent
        node = parent_op.parent if parent_op is not None else None
    return False


def _match(loop: Operation, func: FuncOp, axis: AxisAnalysis, num_warps: int) -> _Plan | None:
    body = loop.regions[0].block
    dots = [op for op in body.ops if op.name == "tt.dot"]
    if len(dots) != 1 or any(op.name == "tt.dot" for op in _nested(body)):
        return None
    dot = dots[0]
    shape = wgmma_shape(dot, num_warps)
    if shape is None or shape.kind not in ("f16", "bf16"):
        return None
    uses = use_counts(func)
    yield_ops = body.terminator.operands
    if uses.get(id(dot.result)) != 1 or dot.result not in yield_ops:
        return None
    acc_index = yield_ops.index(dot.result)
    if dot.operands[2] is not body.args[1 + acc_index]:
        return None
    operands = []
    for v in dot.operands[:2]:
        operand = _match_load(v, dot, body, axis, uses)
        if operand is None:
            return None
        operands.append(operand)
    return _Plan(dot, acc_index, operands)


def _nested(block: Block) -> list[Operation]:
    return [inner for op in block.ops for r in op.regions for inner in r.block.ops]


def _match_load(
    v: Value, dot: Operation, body: Block, axis: AxisAnalysis, uses: dict
) -> _Operand | None:
    load = getattr(v, "owner", None)
    if load is None or load.name != "tt.load" or load.parent is not body:
        return None
    if uses.get(id(v)) != 1 or not isinstance(v.type, BlockType):
        return None
    ptr = load.operands[0]
    if not isinstance(ptr, BlockArgument) or ptr not in body.args[1:]:
        return None
    index = body.args.index(ptr) - 1
    step = body.terminator.operands[index]
    owner = getattr(step, "owner", None)
    if owner is None or owner.name != "tt.addptr" or owner.operands[0] is not ptr:
        return None
    if _inside(owner.operands[1], body):
        return None
    if len(load.operands) == 3 and not _is_zero(load.operands[2]):
        return None
    mask = load.operands[1] if len(load.operands) > 1 else None
    if mask is not None and not _recomputable(mask, body):
        return None
    contig = 0 if loads_k_major(axis, ptr) else 1
    nbytes = _copy_bytes(axis, ptr, mask, element_type(v.type).bitwidth // 8, contig)
    if nbytes < 4 or (contig == 0 and v is dot.operands[0]):  # no M-major A
        return None
    return _Operand(load, index, owner.operands[1], nbytes, contig)


def _is_zero(v: Value) -> bool:
    owner = getattr(v, "owner", None)
    return owner is not None and owner.name == "arith.constant" and owner.attrs["value"] == 0


def _recomputable(v: Value, body: Block) -> bool:
    if not _inside(v, body):
        return True
    if isinstance(v, BlockArgument):
        return v is body.args[0]
    op = v.owner
    if op.regions or not op.name.startswith(_CLONABLE) or op.parent is not body:
        return False
    return all(_recomputable(x, body) for x in op.operands)


def _copy_bytes(axis: AxisAnalysis, ptr: Value, mask: Value | None, eb: int, dim: int) -> int:
    """Bytes per ``cp.async`` along ``dim`` (contiguous, aligned, one mask bit)."""
    p: AxisInfo = axis.get(ptr)
    n = min(16, p.contig[dim] * eb, p.div[dim])
    if mask is not None:
        n = min(n, axis.get(mask).const[dim] * eb)
    n = gcd(n, 16)
    return n if n in (4, 8, 16) else 0


# ------------------------------------------------------------------ rewriting


def _make(name: str, operands: list[Value], types: list, attrs: dict, loc: Location) -> Operation:
    return OP_REGISTRY[name](operands, types, attrs, (), loc)


class _Rewriter:
    """Rewrites one matched loop (see the module docstring's *After*)."""

    def __init__(
        self, loop: Operation, plan: _Plan, stages: int, first_buffer: int, num_warps: int
    ) -> None:
        self.num_warps = num_warps
        self.loop = loop
        self.plan = plan
        self.stages = stages
        self.buf0 = 2 * first_buffer
        self.loc = plan.dot.loc
        self.body = loop.regions[0].block

    # -- helpers
    def emit(self, block: Block, before: Operation, name, operands, types=(), attrs=None):
        op = _make(name, list(operands), list(types), dict(attrs or {}), self.loc)
        block.insert(block.ops.index(before), op)
        return op.results[0] if op.results else None

    def const(self, block: Block, before: Operation, value: int, type_=I32) -> Value:
        return self.emit(block, before, "arith.constant", [], [type_], {"value": value})

    def scalar(self, block, before, name, a, b, type_=I32, attrs=None) -> Value:
        return self.emit(block, before, name, [a, b], [type_], attrs)

    def run(self) -> None:
        parent = self.loop.parent
        lb, ub, step = self.loop.operands[:3]
        self.emit(parent, self.loop, "tt.barrier", [])
        for i, operand in enumerate(self.plan.operands):
            self.emit(parent, self.loop, "ttg.local_alloc", [], [], self._alloc_attrs(i, operand))
        for p in range(self.stages - 1):
            iv = lb
            if p:
                ahead = self._times(parent, self.loop, step, p)
                iv = self.scalar(parent, self.loop, "arith.add", lb, ahead, lb.type)
            pointers = [self.loop.operands[3 + o.index] for o in self.plan.operands]
            slot = self.const(parent, self.loop, p, lb.type)
            self._issue(parent, self.loop, iv, ub, pointers, p, slot)
        self._rewrite_body(lb, ub, step)
        self._after_loop()

    def _alloc_attrs(self, i: int, operand: _Operand) -> dict:
        v = operand.load.result
        return {
            "buffer": self.buf0 + i,
            "stages": self.stages,
            "shape": list(v.shape),
            "dtype": str(element_type(v.type)),
            "contig": operand.contig,
            "encoding": str(
                SharedTile.make(v.shape, operand.contig, element_type(v.type).bitwidth // 8)
            ),
        }

    def _times(self, block: Block, before: Operation, v: Value, n: int) -> Value:
        if isinstance(v.type, BlockType):
            c = self.emit(block, before, "arith.constant", [], [v.type], {"value": n})
        else:
            c = self.const(block, before, n, v.type)
        return self.scalar(block, before, "arith.mul", v, c, v.type)

    def _issue(self, block, before, iv, ub, pointers, ahead, slot) -> None:
        """Copies for the iteration at ``iv``, pointers ``ahead`` increments past ``pointers``."""
        pred = self.scalar(block, before, "arith.cmp", iv, ub, I1, {"pred": "lt"})
        for i, (operand, ptr) in enumerate(zip(self.plan.operands, pointers)):
            if ahead:
                inc = self._times(block, before, operand.inc, ahead)
                ptr = self.scalar(block, before, "tt.addptr", ptr, inc, ptr.type)
            args = [ptr, pred, slot]
            load = operand.load
            if len(load.operands) > 1:
                args.append(self._recompute(load.operands[1], iv, block, before, {}))
            attrs = {"buffer": self.buf0 + i, "contig": operand.contig}
            self.emit(block, before, "ttg.async_copy_global_to_local", args, [], attrs)
        self.emit(block, before, "ttg.async_commit_group", [])

    def _recompute(self, v: Value, iv: Value, block: Block, before, memo: dict) -> Value:
        if v is self.body.args[0]:
            return iv
        if not _inside(v, self.body):
            return v
        if id(v) in memo:
            return memo[id(v)]
        op = v.owner
        operands = [self._recompute(x, iv, block, before, memo) for x in op.operands]
        attrs = {k: a for k, a in op.attrs.items() if k != "layout"}
        clone = _make(op.name, operands, [v.type], attrs, op.loc)
        block.insert(block.ops.index(before), clone)
        memo[id(v)] = clone.result
        return clone.result

    def _rewrite_body(self, lb: Value, ub: Value, step: Value) -> None:
        body, plan, s = self.body, self.plan, self.stages
        dot = plan.dot
        first = body.ops[0]
        iv = body.args[0]
        it = iv.type
        diff = self.scalar(body, first, "arith.sub", iv, lb, it)
        k_i = self.scalar(body, first, "arith.div", diff, step, it)
        slot = self.scalar(body, first, "arith.rem", k_i, self.const(body, first, s, it), it)
        self.emit(body, dot, "ttg.async_wait", [], [], {"num": s - 2})
        self.emit(body, dot, "tt.barrier", [])
        acc_t = dot.result.type
        attrs = {
            "a": self.buf0,
            "b": self.buf0 + 1,
            "shape": [dot.operands[0].shape[0], dot.operands[1].shape[1], dot.operands[0].shape[1]],
            "kind": wgmma_shape(dot, self.num_warps).kind,
            "input_precision": dot.attrs.get("input_precision", "tf32"),
        }
        d = self.emit(body, dot, "ttng.warp_group_dot", [dot.operands[2], slot], [acc_t], attrs)
        acc = self.emit(body, dot, "ttng.warp_group_dot_wait", [d], [acc_t], {"pendings": 1})
        self.emit(body, dot, "tt.barrier", [])
        nxt = self.scalar(body, dot, "arith.add", iv, self._times(body, dot, step, s - 1), it)
        nxt_i = self.scalar(body, dot, "arith.add", k_i, self.const(body, dot, s - 1, it), it)
        nxt_slot = self.scalar(body, dot, "arith.rem", nxt_i, self.const(body, dot, s, it), it)
        pointers = [body.args[1 + o.index] for o in plan.operands]
        self._issue(body, dot, nxt, ub, pointers, s - 1, nxt_slot)
        replace_all_uses(self.loop, dot.result, acc)
        body.remove(dot)
        for operand in plan.operands:
            body.remove(operand.load)

    def _after_loop(self) -> None:
        parent = self.loop.parent
        after = parent.ops[parent.ops.index(self.loop) + 1]
        result = self.loop.results[self.plan.acc_index]
        acc_t = result.type
        final = _make("ttng.warp_group_dot_wait", [result], [acc_t], {"pendings": 0}, self.loc)
        parent.insert(parent.ops.index(after), final)
        for op in parent.ops[parent.ops.index(final) + 1 :]:
            for inner in op.walk():
                inner.operands = [final.result if x is result else x for x in inner.operands]
        self.emit(parent, after, "ttg.async_wait", [], [], {"num": 0})
        self.emit(parent, after, "ttg.local_dealloc", [])


__all__ = ["OpResult", "pipeline_loops"]
