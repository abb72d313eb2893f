"""Software pipelining of K loops feeding tensor cores: ``cp.async`` into rings of buffers.

With ``num_stages = S`` (a launch option, 3 by default as in Triton), the
loads that feed tensor-core dots inside an ``scf.for`` are issued ``S - 1``
iterations ahead, straight from global into shared memory
(``cp.async.cg.shared.global``, 16 bytes per thread and access where the
data allows, else 8 or 4 with ``.ca``), into a ring of ``S`` swizzled tiles
per load; the dots read their operands from the rings through ``wgmma``
descriptors.

**When.** The pass runs on sm_80 and later for ``num_stages >= 2`` on a loop
(a loop's own ``tl.range(..., num_stages=N)`` replaces the launch option
for that loop, as in Triton: ``num_stages=1`` leaves it unpipelined) whose
body holds one or more ``tt.dot`` (none nested deeper), all on one
tensor-core path. Three forms:

* ``wgmma`` with fp16 or bf16 operands, or fp8 ones whose B is K-major in
  memory and whose A is loaded row-major in the loop (below): the dots read
  the rings through descriptors;
* ``mma.sync`` (sm_80..sm_89, sm_120, or ``arch="sm_80"`` on Hopper): the
  rings are swizzled row-major tiles (:class:`~minitriton.backend.shared_layout.MmaTile`,
  printed ``swizzled_shared``), or for a K-major B (attention's ``k``) or
  a 16-bit M-major A (``x.T @ dy``) a tile holding the block transposed
  (``contig = 0``, ``order=[0, 1]``), and each ring operand becomes a
  ``ttg.local_load(%slot)`` in the dot-operand layout, which the code
  generator turns into ``ldmatrix`` (``.trans`` for a row-major 16-bit B
  and an M-major A, none for a K-major B or a row-major A) straight from
  the slot being consumed, one k step at a time (see *mma.sync* below);
* ``wgmma`` with tf32, int8 or other fp8 operands, whose B must be K-major and
  whose fp32 inputs must be rounded to TF32: the same rings and
  ``ttg.local_load`` as ``mma.sync``, in a blocked layout (registers), then
  the dot stages them K-major (rounded) for ``wgmma``. The copies from
  global memory are still issued ``S - 1`` iterations ahead; the restaging
  is a shared-memory pass.

The rings must fit the arch's shared memory per block (99 KB on sm_86,
sm_89 and sm_120, 163 KB on sm_80, 227 KB on Hopper): where ``num_stages``
rings would not, fewer stages are used, and with fewer than two the loop is
left unpipelined.

The fp16/bf16 ``wgmma`` form needs:

* every dot's B, and A where it is loaded in the loop, is a ``tt.load`` used
  only by that dot, with no ``other`` or a zero one (``cp.async`` zero-fills
  masked-off bytes), row-major or transposed in memory: a K-major B, or an
  M-major A (a backward pass's ``x.T @ dy``), copied as it lies into a tile
  of that order (``nvmma_shared<..., transposed=true>``) that ``wgmma``
  reads with ``tnspB = 0`` or ``tnspA = 1``;
* the pointers and the mask are computed in the loop (hints such as
  ``tl.multiple_of(start_n, BLOCK_N)`` included) from the induction
  variable, loop-invariant values, and loop-carried values that advance by a
  loop-invariant step (``a_ptrs += BLOCK_K * stride_ak``, or a block
  pointer's offset ``off + BLOCK_N``): they are recomputed for the
  prefetched iteration (``offs_k < K - (k + S - 1) * BLOCK_K``);
* each thread's accesses can be 4, 8 or 16 bytes (contiguity, alignment
  and mask constancy from the axis analysis).

An A that is not loaded in the loop either is loop-invariant (attention's
``q``: stored once into a one-stage buffer before the loop,
``ttg.local_store``; a later loop of the same block that reads the same
value reads that buffer, which is then allocated with ``keep`` and stays
below every later loop's rings: causal attention's on-band loop reads the
off-band loop's ``q``, which need not stay in registers through the first
loop) or is computed in the loop (attention's ``P``: fed to
``wgmma`` from registers, see :mod:`~minitriton.backend.lower.wgmma`).
A loop that breaks a rule keeps step 1's path (operands loaded into
registers, then staged into shared memory). The other two forms need B
(and A, to be in a ring) loaded in the loop under the same rules, A
row-major (or M-major with 16-bit elements on ``mma.sync``); an A that is
not keeps its ordinary load and staging. B may be
K-major on ``mma.sync`` (attention's ``k`` loaded transposed: copied 16
bytes along K into its transposed tile); on the restaging ``wgmma`` form a
K-major B leaves the loop unpipelined.

**Two schedules.**

* *Accumulating* — one dot ``acc = tl.dot(a, b, acc)`` whose result only
  feeds the next iteration (tutorial 03's matmul): one ``wgmma`` group stays
  in flight across the loop back edge (``warp_group_dot_wait {pendings = 1}``)
  and two barriers per iteration order the rings.
* *Synchronous* — anything else (attention's two dots, whose first result is
  used at once): every dot is waited for at once (``pendings = 0``), so all
  reads of the previous iteration's slot are over at the top-of-loop
  barrier, and the refill is issued right after it: one barrier per iteration.
  Where the last of two or more dots only feeds the next iteration
  (attention's ``acc = tl.dot(p, v, acc)``, yielded and read nowhere else),
  its group is left in flight across the back edge, as Triton does: the next
  iteration waits for it (``warp_group_dot_wait(%acc) {pendings = 0}``) just
  before it first reads the carried value, by when its first dot's wait has
  ended the group anyway. The ``P @ V`` product then runs while the iteration
  ends and the next one waits for its tiles and issues ``Q @ K``. The refill
  moves to the end of the body, after a second barrier, since the group
  left in flight reads the slot that the top of the next iteration would
  refill. Its registers (``P``'s, read by the group in flight) can cost a
  program per multiprocessor: tutorial 06 with D=64, ``BLOCK_N = 128`` and
  8 warps needs 155 registers instead of 126 on an H200, so one program
  fits where two did. So a kernel with such a loop is compiled both ways
  (:attr:`~minitriton.backend.build.PTXModule.alt_ptx`), and the launcher
  keeps the deferred one unless the other fits more programs per
  multiprocessor (``cuOccupancyMaxActiveBlocksPerMultiprocessor``). Where
  shared memory alone allows one program per multiprocessor (D=128 with its
  rings of 64 or 128 rows), both fit one, and the second compile is skipped.
  ``MINITRITON_DEFER_LAST_DOT=1`` always defers, ``0`` never does.

**Before** (tutorial 03's loop)::

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

**After** (``S = 3``, accumulating; ``slot``, the ring slot this iteration
reads, is carried by the loop: 0, 1, 2, 0, ..., an add, a compare and a
select per iteration where ``k % S`` would be a division by 3; ``slot_n``,
the slot before it, is a compare and a select on ``slot``. A loop whose
rings are copied by TMA computes its slot as ``k % S`` instead, and
``phase``, the parity its barriers wait for, as ``k / S % 2``: carried there,
``ptxas`` scheduled attention's D=128 loop 5% slower on an H200)::

    tt.barrier()
    ttg.local_alloc() {buffer = 0, stages = 3, shape = [128, 64], ...}
    ttg.local_alloc() {buffer = 1, stages = 3, shape = [64, 128], ...}
    // prologue: iterations 0 and 1, predicated on being < ub
    ttg.async_copy_global_to_local(%ap, %in0, %slot0, %mask_a0) {buffer = 0}
    ttg.async_copy_global_to_local(%bp, %in0, %slot0, %mask_b0) {buffer = 1}
    ttg.async_commit_group()
    ... the same for iteration 1 (pointers advanced by %inc * 1) ...
    %acc_1, %ap_1, %bp_1, %slot_1 = scf.for(..., %c0) {
    ^(%k, %acc_2, %ap_2, %bp_2, %slot):
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
      %slot_2 = arith.select(%slot + 1 == 3, 0, %slot + 1)
      scf.yield(%acc_3, %ap_3, %bp_3, %slot_2)
    }
    %acc_4 = ttng.warp_group_dot_wait(%acc_1) {pendings = 0}
    ttg.async_wait() {num = 0}
    ttg.local_dealloc()

``async_wait`` also fences the async proxy (``fence.proxy.async``) so
``wgmma`` sees what ``cp.async`` wrote. The buffers sit at the start of the
dynamic shared memory; other shared-memory users inside the loop
(conversions, reductions) use the space after them, and after
``local_dealloc`` the whole buffer is theirs again. More than 48 KB of
dynamic shared memory is allowed by the driver at load time
(``cuFuncSetAttribute``, in :mod:`~minitriton.backend.driver`).

**mma.sync.** ``mma.sync`` is synchronous, so the loop has the
*synchronous* schedule, and the dot stays a ``tt.dot`` (the layout plan
gives it its ``nvidia_mma`` layouts as before)::

    %acc_1 = scf.for(...) {
      ttg.async_wait() {num = 1}          // this iteration's copies have landed
      tt.barrier()                        // ... in every thread; last iteration's reads are over
      ttg.async_copy_global_to_local(...) {buffer = 0}   // iteration k + 2, into the slot
      ttg.async_copy_global_to_local(...) {buffer = 1}   // the previous iteration read
      ttg.async_commit_group()
      %a = ttg.local_load(%slot) {buffer = 0, layout = "dot_op<opIdx=0, ...>"}
      %b = ttg.local_load(%slot) {buffer = 1, layout = "dot_op<opIdx=1, ...>"}
      %acc_3 = tt.dot(%a, %b, %acc_2)     // ldmatrix from the slot, then mma.sync
      ...
    }

Attention's loop gets a ring for ``k`` (K-major) and one for ``v``
(row-major), and its two dots read them; ``q`` stays staged once before the
loop and ``P`` feeds the second dot from registers.
No ``fence.proxy.async`` is needed (``ldmatrix`` reads through the generic
proxy) and none is emitted before sm_90. The rings sit at the start of
shared memory, 128-byte aligned slots; the scratch space after them keeps
serving conversions and staged operands. ``num_stages = 1`` leaves the loop
exactly as it was.

Preconditions: inlined kernel, before the layout plan. Postconditions: the
pipelined ``tt.load`` ops are gone (and, for fp16/bf16 ``wgmma``, their
``tt.dot``); every other op is unchanged (dead mask computations are left
for LLVM to drop).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from math import gcd
from typing import ClassVar

import minitriton.backend.ops  # noqa: F401  (registers the ttg. and ttng. ops emit() makes by name)
from minitriton.backend.accelerate_matmul import DotPath, dot_path
from minitriton.backend.accumulators import loads_k_major
from minitriton.backend.axis import AxisAnalysis, AxisInfo
from minitriton.backend.irutil import parent_block, producer, terminator
from minitriton.backend.mma_v3 import wgmma_shape
from minitriton.backend.passes.gpu_pipeline import GpuPass, GpuState
from minitriton.backend.shared_layout import SharedTile, align_tile, ring_tile
from minitriton.backend.tma import (
    BARRIER_BYTES,
    TmaLoad,
    TmaMap,
    forward_unchanged_loop_args,
    match_tma_load,
    tma_forms,
)
from minitriton.diagnostics import Location
from minitriton.ir.core import (
    OP_REGISTRY,
    Block,
    BlockArgument,
    Operation,
    OpResult,
    Value,
    replace_all_uses,
    use_counts,
)
from minitriton.ir.ops import (
    AddOp,
    AddPtrOp,
    BroadcastOp,
    ConstantOp,
    DotOp,
    ExpandDimsOp,
    ForOp,
    FuncOp,
    LoadOp,
    MakeRangeOp,
    SplatOp,
    TransOp,
)
from minitriton.ir.traits import Elementwise, Pure
from minitriton.ir.types import I1, I32, BlockType, ScalarType, element_type
from minitriton.passes.base import register_pass

#: Ops a mask may be recomputed with, besides the pure elementwise ones (which
#: include ``tt.addptr`` and ``tt.hint``: tl.multiple_of(start_n, BLOCK_N) is
#: true of every iteration's value).
_CLONABLE = (
    ConstantOp,
    SplatOp,
    BroadcastOp,
    ExpandDimsOp,
    MakeRangeOp,
    TransOp,  # a transposed B (see sink_transposes)
)


#: ``1`` always leaves the synchronous schedule's last dot in flight across the back
#: edge, ``0`` never; unset (``auto``), kernels are compiled both ways and the
#: launcher keeps the deferred one unless it fits fewer programs per multiprocessor
#: (see *Two schedules*).
DEFER_ENV = "MINITRITON_DEFER_LAST_DOT"


def defer_mode() -> str:
    """``"on"``, ``"off"`` or ``"auto"``: the :data:`DEFER_ENV` setting."""
    value = os.environ.get(DEFER_ENV, "auto").strip().lower()
    if value in ("1", "on", "true", "yes"):
        return "on"
    return "off" if value in ("0", "off", "false", "no") else "auto"


def schedule_tag() -> str:
    """The schedule setting, for cache keys: it changes the generated code."""
    return "defer-" + defer_mode()


def pipeline_loops(
    func: FuncOp, num_warps: int, arch: str, num_stages: int, tma: bool = False,
    defer: bool = False,
) -> int:  # fmt: skip
    """Pipeline every loop that qualifies (see the module docstring); returns how many.

    A loop's own ``num_stages`` (``tl.range(..., num_stages=N)``) replaces
    the launch option's for that loop. With ``tma`` (sm_90 only), ring loads
    that qualify are copied with TMA (:mod:`~minitriton.backend.tma`); their
    tensor maps are listed in ``func.tma_maps``. With ``defer``, the
    synchronous schedule leaves its last dot in flight where it can;
    ``func.deferred_dots`` says whether it did.
    """
    if int(arch[3:].rstrip("a")) < 80:
        return 0
    axis = AxisAnalysis(func)
    count = 0
    buffers = 0
    staged: dict[int, _Staged] = {}
    for op in list(func.walk()):
        wanted = loop_stages(op, num_stages) if isinstance(op, ForOp) else 0
        if wanted >= 2:
            assert isinstance(op, ForOp)
            path = _loop_path(op, arch, num_warps)
            plan = None
            if tma and path is DotPath.WGMMA and forward_unchanged_loop_args(op):
                axis = AxisAnalysis(func)  # the forwarded values' facts are known now
            kinds = _wgmma_kinds(op, num_warps) if path is DotPath.WGMMA else set()
            if kinds and (kinds <= {"f16", "bf16"} or kinds <= _K_MAJOR_KINDS):
                use_tma = tma and int(arch[3:].rstrip("a")) == 90
                plan = _match(op, func, axis, num_warps, use_tma)
                if plan is not None and use_tma and not _tma_form_enabled(plan):
                    plan = _match(op, func, axis, num_warps, False)
            restage = path is DotPath.MMA_V2 or (kinds and not kinds <= {"f16", "bf16"})
            if plan is None and restage:  # wgmma: tf32, int8, and fp8 not in the form above
                plan = _match_mma(op, func, axis, k_major_b=path is DotPath.MMA_V2)
            stages = _fitting_stages(plan, wanted, arch) if plan is not None else 0
            if plan is not None and stages >= 2:
                _commit_maps(plan, func)
                rewriter = _Rewriter(op, plan, stages, buffers, num_warps, staged, defer)
                buffers = rewriter.run()
                if rewriter.in_flight >= 0 and rewriter.plan.acc_index < 0:
                    func.__dict__["deferred_dots"] = True
                count += 1
    return count


def loop_stages(loop: ForOp, num_stages: int) -> int:
    """The pipelining depth ``loop`` asks for: its ``tl.range`` hint, else ``num_stages``."""
    return int(loop.attrs.get("num_stages", num_stages))


def stages_asked(func: FuncOp, num_stages: int) -> bool:
    """Whether the launch option, or some loop of ``func``, asks for two stages or more."""
    loops = (op for op in func.walk() if isinstance(op, ForOp))
    return num_stages >= 2 or any(loop_stages(op, num_stages) >= 2 for op in loops)


#: Shared memory one block may use (bytes), by arch number; others get the smallest.
_SHARED_LIMIT = {80: 163 << 10, 87: 163 << 10, 90: 227 << 10, 100: 227 << 10}


#: Operand kinds whose ``wgmma`` reads both tiles K-major only (no transpose bits): fp8.
#: Loops feeding them take the descriptor form when B is K-major in memory and A is
#: loaded row-major in the loop, else the restaging form.
_K_MAJOR_KINDS = frozenset({"e4m3", "e5m2"})


def _tma_form_enabled(plan: _Plan) -> bool:
    """Whether the plan's TMA loads may stay: see :data:`~minitriton.backend.tma.TMA_FORMS_ENV`."""
    tma = [ld.tma is not None for ld in plan.loads]
    return not any(tma) or tma_forms() == "all" or all(tma)


def _commit_maps(plan: _Plan, func: FuncOp) -> None:
    """Number the tensor maps of a loop being rewritten; they go to ``func.tma_maps``.

    Equal recipes share one map, so the launcher encodes each once.
    """
    maps: list[TmaMap] = func.__dict__.setdefault("tma_maps", [])
    for ld in plan.loads:
        if ld.tma is None:
            continue
        if ld.tma.map not in maps:  # causal attention's two loops read K and V alike
            maps.append(ld.tma.map)
        ld.tma.map_index = maps.index(ld.tma.map)


def _fitting_stages(plan: _Plan, num_stages: int, arch: str) -> int:
    """``num_stages``, or fewer where the rings would not fit the arch's shared memory.

    sm_86, sm_89 and sm_120 have 99 KB per block, sm_80 163 KB, Hopper 227 KB:
    a 128x256x64 fp16 tile at 3 stages (144 KB of rings) fits the first two
    only with 2 stages, or not at all (then the loop is left unpipelined).
    """
    limit = _SHARED_LIMIT.get(int(arch[3:].rstrip("a")), 99 << 10)
    per_stage = sum(align_tile(_bytes(ld.load.result)) for ld in plan.loads)
    once = sum(align_tile(_bytes(d.a_value())) for d in plan.dots if d.a_kind == "const")
    if any(ld.tma is not None for ld in plan.loads):
        once += align_tile(BARRIER_BYTES * num_stages)
    stages = num_stages
    while stages >= 2 and once + stages * per_stage > limit:
        stages -= 1
    return stages


def _elem_bytes(v: Value) -> int:
    """Bytes per element of a tile the pipeline stages (a dot operand: numbers, not pointers)."""
    st = element_type(v.type)
    assert isinstance(st, ScalarType), "a staged tile holds numbers"
    return st.bitwidth // 8


def _bits(v: Value) -> int:
    return 8 * _elem_bytes(v)


def _bytes(v: Value) -> int:
    n = _elem_bytes(v)
    for d in v.shape:
        n *= d
    return n


# ------------------------------------------------------------------ matching


class _Load:
    """One pipelined ``tt.load``: its ring buffer's layout and access width."""

    def __init__(self, load: Operation, contig: int) -> None:
        self.load = load
        self.contig = contig
        self.buffer = -1
        #: Set where TMA copies the tile (see :mod:`~minitriton.backend.tma`).
        self.tma: TmaLoad | None = None


class _Dot:
    """One dot of a pipelined loop and where its A operand comes from."""

    def __init__(self, op: Operation, a: _Load | Value, a_kind: str, b: _Load) -> None:
        self.op = op
        self.a = a
        #: "ring" (a pipelined load), "const" (loop-invariant: staged once) or "regs".
        self.a_kind = a_kind
        self.b = b
        self.buffer_a = -1

    def a_value(self) -> Value:
        """A's value, where it is not a ring load (``a_kind`` "const" or "regs")."""
        assert isinstance(self.a, Value), "A is a ring load"
        return self.a

    def a_load(self) -> _Load:
        """A's ring load (``a_kind`` "ring")."""
        assert isinstance(self.a, _Load), "A is not a ring load"
        return self.a


class _Plan:
    def __init__(
        self, dots: list[_Dot], loads: list[_Load], advancing: dict, acc_index: int,
        mma: bool = False,
    ) -> None:  # fmt: skip
        self.dots = dots
        self.loads = loads
        #: Carried index -> (the step's op class or None, loop-invariant increment).
        self.advancing = advancing
        #: The accumulator's carried index for a lone accumulating dot, else -1.
        self.acc_index = acc_index
        #: True for ``mma.sync`` dots (the ``tt.dot`` stays; its operands become local loads).
        self.mma = mma


def _loop_path(loop: Operation, arch: str, num_warps: int) -> DotPath | None:
    """The one dot path of every ``tt.dot`` directly in ``loop``'s body, else None."""
    paths = {dot_path(op, arch, num_warps) for op in loop.regions[0].block.ops
             if isinstance(op, DotOp)}  # fmt: skip
    return paths.pop() if len(paths) == 1 else None


def _wgmma_kinds(loop: Operation, num_warps: int) -> set[str]:
    return {_wgmma_kind(op, num_warps) for op in loop.regions[0].block.ops
            if isinstance(op, DotOp)}  # fmt: skip


def _wgmma_kind(dot: Operation, num_warps: int) -> str:
    """The ``wgmma`` kind of a dot on the :attr:`DotPath.WGMMA` path (so it has a shape)."""
    shape = wgmma_shape(dot, num_warps)
    assert shape is not None, "a dot on the wgmma path has a wgmma shape"
    return shape.kind


def _match_mma(
    loop: Operation, func: FuncOp, axis: AxisAnalysis, k_major_b: bool = False
) -> _Plan | None:
    """The plan of a loop whose dots run ``mma.sync`` (or restage for ``wgmma``): rings.

    Row-major operands go into rings; with ``k_major_b`` (``mma.sync``) so
    does a K-major B (attention's ``k`` loaded transposed) and a 16-bit
    M-major A (``x.T @ dy``), into tiles stored transposed. Any other A, or
    one not loaded in the loop, stays on the path of registers staged
    through shared memory.
    """
    body = loop.regions[0].block
    if any(isinstance(op, DotOp) for op in _nested(body)):
        return None
    uses = use_counts(func)
    advancing = _advancing(body)
    planned, loads = [], []
    for dot in (op for op in body.ops if isinstance(op, DotOp)):
        ring = []
        for i, v in enumerate(dot.operands[:2]):
            ld = _match_load(v, body, axis, uses, advancing)
            transposed = ld is not None and ld.contig == 0 and k_major_b
            # mma.sync reads a transposed tile with ldmatrix(.trans): any B, a 16-bit A.
            ok = ld is not None and (ld.contig == 1 or (transposed and (i == 1 or _bits(v) == 16)))
            ring.append(ld if ok else None)
        if ring[1] is None:
            return None
        a = ring[0] if ring[0] is not None else dot.operands[0]
        planned.append(_Dot(dot, a, "ring" if ring[0] is not None else "regs", ring[1]))
        loads += [ld for ld in ring if ld is not None]
    return _Plan(planned, loads, advancing, -1, mma=True) if planned else None


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


def _advancing(body: Block) -> dict[int, tuple[type[Operation] | None, Value]]:
    """Carried values that move by a loop-invariant step: ``p = p + inc``.

    Each maps to the op class of its step (``tt.addptr`` or ``arith.add``;
    None for a value carried unchanged) and the increment.
    """
    out: dict[int, tuple[type[Operation] | None, Value]] = {}
    for j, y in enumerate(terminator(body).operands):
        if y is body.args[1 + j]:  # carried unchanged (a block pointer's base, strides)
            out[j] = (None, y)
            continue
        op = producer(y)
        if not isinstance(op, (AddPtrOp, AddOp)) or op.parent is not body:
            continue
        if op.operands[0] is body.args[1 + j] and not _inside(op.operands[1], body):
            out[j] = (type(op), op.operands[1])
    return out


def _match(
    loop: Operation, func: FuncOp, axis: AxisAnalysis, num_warps: int, tma: bool = False
) -> _Plan | None:
    body = loop.regions[0].block
    dots = [op for op in body.ops if isinstance(op, DotOp)]
    if not dots or any(isinstance(op, DotOp) for op in _nested(body)):
        return None
    uses = use_counts(func)
    advancing = _advancing(body)
    planned, loads = [], []
    for dot in dots:
        shape = wgmma_shape(dot, num_warps)
        if shape is None or shape.kind not in ("f16", "bf16", *_K_MAJOR_KINDS):
            return None
        k_major_only = shape.kind in _K_MAJOR_KINDS
        tma_func = func if tma else None
        b = _match_load(dot.operands[1], body, axis, uses, advancing, tma_func)
        if b is None or (k_major_only and b.contig != 0):
            return None
        a_value = dot.operands[0]
        a = _match_load(a_value, body, axis, uses, advancing, tma_func)
        # An M-major A (``x.T @ dy``) is copied as it lies and read transposed
        # (``tnspA``), which wgmma allows for 16-bit elements only.
        m_major_ok = a is not None and a.tma is None and shape.kind in ("f16", "bf16")
        if a is not None and (a.contig == 1 or m_major_ok):
            planned.append(_Dot(dot, a, "ring", b))
            loads += [a, b]
            continue
        if k_major_only:  # wgmma reads 8-bit A only from a K-major tile or registers of 4
            return None
        kind = "regs" if _inside(a_value, body) else "const"
        planned.append(_Dot(dot, a_value, kind, b))
        loads.append(b)
    return _Plan(planned, loads, advancing, _accumulating(planned, body, uses))


def _accumulating(dots: list[_Dot], body: Block, uses: dict) -> int:
    """The carried index of a lone ``acc = tl.dot(a, b, acc)`` on two rings, else -1."""
    if len(dots) != 1 or dots[0].a_kind != "ring":
        return -1
    dot = dots[0].op
    yields = terminator(body).operands
    if uses.get(id(dot.result)) != 1 or dot.result not in yields:
        return -1
    index = yields.index(dot.result)
    return index if dot.operands[2] is body.args[1 + index] else -1


def _nested(block: Block) -> list[Operation]:
    return [inner for op in block.ops for r in op.regions for inner in r.block.ops]


def _match_load(
    v: Value, body: Block, axis: AxisAnalysis, uses: dict, advancing, tma_func: FuncOp | None = None
) -> _Load | None:
    """The ring load of ``v``, or None; with ``tma_func``, copied by TMA where it qualifies."""
    load = getattr(v, "owner", None)
    if not isinstance(load, LoadOp) or load.parent is not body:
        return None
    if uses.get(id(v)) != 1 or not isinstance(v.type, BlockType) or len(v.shape) != 2:
        return None
    if not isinstance(v.type.element, ScalarType):  # a tile of pointers feeds no dot
        return None
    if len(load.operands) == 3 and not _is_zero(load.operands[2]):
        return None
    ptr = load.operands[0]
    mask = load.operands[1] if len(load.operands) > 1 else None
    if not all(_recomputable(x, body, advancing) for x in (ptr, mask) if x is not None):
        return None
    contig = 0 if loads_k_major(axis, ptr) else 1
    tma = match_tma_load(load, contig, tma_func) if tma_func is not None else None
    if tma is not None:  # the copy engine has no per-thread width limits
        ld = _Load(load, contig)
        ld.tma = tma
        return ld
    if _copy_bytes(axis, ptr, mask, _elem_bytes(v), contig) < 4:
        return None
    return _Load(load, contig)


def _is_zero(v: Value) -> bool:
    owner = getattr(v, "owner", None)
    return isinstance(owner, ConstantOp) and owner.attrs["value"] == 0


def _recomputable(v: Value, body: Block, advancing: dict) -> bool:
    if not _inside(v, body):
        return True
    if isinstance(v, BlockArgument):
        return v is body.args[0] or body.args.index(v) - 1 in advancing
    assert isinstance(v, OpResult), "a value is a block argument or an op's result"
    op = v.owner
    if op.regions or not _clonable(op) or op.parent is not body:
        return False
    return all(_recomputable(x, body, advancing) for x in op.operands)


def _clonable(op: Operation) -> bool:
    """Whether a mask may be recomputed with ``op`` (see :data:`_CLONABLE`)."""
    return isinstance(op, _CLONABLE) or (op.has_trait(Pure) and op.has_trait(Elementwise))


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


@dataclass
class _Staged:
    """A loop-invariant A staged once before a loop: its buffer, that buffer's alloc, the loop."""

    buffer: int
    alloc: Operation
    loop: Operation


class _Rewriter:
    """Rewrites one matched loop (see the module docstring's *After*)."""

    def __init__(
        self, loop: Operation, plan: _Plan, stages: int, first_buffer: int, num_warps: int,
        staged: dict[int, _Staged], defer: bool = False,
    ) -> None:  # fmt: skip
        self.num_warps = num_warps
        #: Whether the synchronous schedule may leave its last dot in flight.
        self.defer = defer
        #: Loop-invariant A operands already staged, by value (shared with later loops).
        self.staged = staged
        self.loop = loop
        self.plan = plan
        self.stages = stages
        self.next_buffer = first_buffer
        self.loc = plan.dots[0].op.loc
        self.body = loop.regions[0].block
        #: The carried value still in flight when the loop ends (waited for after it), or -1.
        self.in_flight = plan.acc_index

    # -- helpers
    def emit(self, block: Block, before: Operation, name, operands, types=(), attrs=None):
        op = _make(name, list(operands), list(types), dict(attrs or {}), self.loc)
        block.insert(block.ops.index(before), op)
        return op.results[0] if op.results else None

    def const(self, block: Block, before: Operation, value: int, type_=I32) -> Value:
        return self.emit(block, before, "arith.constant", [], [type_], {"value": value})

    def scalar(self, block, before, name, a, b, type_=I32, attrs=None) -> Value:
        return self.emit(block, before, name, [a, b], [type_], attrs)

    def run(self) -> int:
        """Rewrite the loop; returns the next free buffer number."""
        parent = parent_block(self.loop)
        lb, ub, step = self.loop.operands[:3]
        self.emit(parent, self.loop, "tt.barrier", [])
        for dot in self.plan.dots:  # first: a buffer kept for later loops must precede rings
            if dot.a_kind == "const":
                dot.buffer_a = self._stage_once(dot.a_value())
        for ld in self.plan.loads:
            ld.buffer = self._alloc(ld.load.result, ld.contig, self.stages)
        if self._tma_loads():
            self.emit(parent, self.loop, "ttng.init_barrier", [], [], {"count": self.stages})
        for p in range(self.stages - 1):
            iv = lb
            if p:
                ahead = self._times(parent, self.loop, step, p)
                iv = self.scalar(parent, self.loop, "arith.add", lb, ahead, lb.type)
            slot = self.const(parent, self.loop, p, lb.type)
            self._issue(parent, self.loop, iv, ub, p, slot, in_loop=False)
        if self.plan.acc_index >= 0:
            self._rewrite_accumulating(ub, step)
        else:
            self._rewrite_sync(ub, step)
        self._after_loop()
        return self.next_buffer

    def _tma_loads(self) -> list[_Load]:
        return [ld for ld in self.plan.loads if ld.tma is not None]

    def _cp_loads(self) -> list[_Load]:
        return [ld for ld in self.plan.loads if ld.tma is None]

    def _stage_once(self, a: Value) -> int:
        """The one-stage buffer holding loop-invariant ``a``: staged here, or by an earlier loop.

        Causal attention's two loops both read ``q``: the second reads the
        buffer the first filled, which is then kept (``keep``) past the first
        loop's ``local_dealloc``, so ``q`` need not stay in registers through
        the first loop.
        """
        parent = parent_block(self.loop)
        earlier = self.staged.get(id(a))
        if earlier is not None and parent_block(earlier.loop) is parent:
            if earlier.loop is not self.loop:
                earlier.alloc.attrs["keep"] = True
            return earlier.buffer
        buffer = self._alloc(a, 1, 1)
        alloc = parent.ops[parent.ops.index(self.loop) - 1]
        self.staged[id(a)] = _Staged(buffer, alloc, self.loop)
        self.emit(parent, self.loop, "ttg.local_store", [a], [], {"buffer": buffer})
        return buffer

    def _alloc(self, v: Value, contig: int, stages: int) -> int:
        buffer = self.next_buffer
        self.next_buffer += 1
        eb = _elem_bytes(v)
        attrs = {
            "buffer": buffer,
            "stages": stages,
            "shape": list(v.shape),
            "dtype": str(element_type(v.type)),
            "contig": contig,
            "encoding": self._encoding(v, contig, eb),
        }
        if self.plan.mma:
            attrs["tile"] = "swizzled"
        self.emit(parent_block(self.loop), self.loop, "ttg.local_alloc", [], [], attrs)
        return buffer

    def _encoding(self, v: Value, contig: int, eb: int) -> str:
        if self.plan.mma:
            return ring_tile(v.shape, eb, contig).describe()
        rows, cols = v.shape  # a ring holds a 2-D tile
        return str(SharedTile.make((rows, cols), contig, eb))

    def _times(self, block: Block, before: Operation, v: Value, n: int) -> Value:
        if isinstance(v.type, BlockType):
            c = self.emit(block, before, "arith.constant", [], [v.type], {"value": n})
        else:
            c = self.const(block, before, n, v.type)
        return self.scalar(block, before, "arith.mul", v, c, v.type)

    def _issue(self, block, before, iv, ub, ahead, slot, in_loop: bool) -> None:
        """Copies for the iteration ``ahead`` iterations past the current (or the first) one."""
        pred = self.scalar(block, before, "arith.cmp", iv, ub, I1, {"pred": "lt"})
        memo: dict[int, Value] = {}
        where = (block, before, iv, ahead, in_loop)
        self._issue_tma(where, pred, slot, memo)
        if not self._cp_loads():
            return
        for ld in self._cp_loads():
            load = ld.load
            args = [self._recompute(load.operands[0], where, memo), pred, slot]
            if len(load.operands) > 1:
                args.append(self._recompute(load.operands[1], where, memo))
            attrs = {"buffer": ld.buffer, "contig": ld.contig}
            self.emit(block, before, "ttg.async_copy_global_to_local", args, [], attrs)
        self.emit(block, before, "ttg.async_commit_group", [])

    def _issue_tma(self, where: tuple, pred: Value, slot: Value, memo: dict) -> None:
        """The stage's expected bytes, then one TMA copy per TMA load."""
        loads = [(ld, ld.tma) for ld in self.plan.loads if ld.tma is not None]
        if not loads:
            return
        block, before = where[:2]
        nbytes = sum(tma.nbytes for _, tma in loads)
        self.emit(block, before, "ttng.barrier_expect", [pred, slot], [], {"bytes": nbytes})
        for ld, tma in loads:
            coords = [self._coordinate(pieces, where, memo) for pieces in tma.coords]
            attrs = {"buffer": ld.buffer, "map": tma.map_index}
            self.emit(block, before, "ttng.async_tma_copy_global_to_local",
                      [*coords, pred, slot], [], attrs)  # fmt: skip

    def _coordinate(self, pieces: list, where: tuple, memo: dict) -> Value:
        """The sum of a TMA coordinate's pieces, recomputed for the prefetched iteration."""
        block, before = where[:2]
        values = [p for p in pieces if not isinstance(p, int)]
        total = sum(p for p in pieces if isinstance(p, int))
        out = self.const(block, before, total) if total or not values else None
        for p in values:
            v = self._recompute(p, where, memo)
            out = v if out is None else self.scalar(block, before, "arith.add", out, v)
        assert out is not None
        return out

    def _wait_landed(self, before: Operation, phase: Value | None, slot: Value) -> None:
        """Wait for this iteration's tiles: ``cp.async`` groups and/or the stage's barrier."""
        body, s = self.body, self.stages
        if self._cp_loads():
            self.emit(body, before, "ttg.async_wait", [], [], {"num": s - 2})
        if phase is not None:
            self.emit(body, before, "ttng.wait_barrier", [slot, phase])

    def _recompute(self, v: Value, where: tuple, memo: dict) -> Value:
        """``v`` as it will be ``ahead`` iterations later (or at iteration ``ahead``)."""
        block, before, iv, ahead, in_loop = where
        if v is self.body.args[0]:
            return iv
        if not _inside(v, self.body):
            return v
        if id(v) in memo:
            return memo[id(v)]
        if isinstance(v, BlockArgument):
            j = self.body.args.index(v) - 1
            base = v if in_loop else self.loop.operands[3 + j]
            out = base
            step, inc = self.plan.advancing[j]
            if ahead and step is not None:
                out = self.scalar(
                    block, before, step.name, base, self._times(block, before, inc, ahead), v.type
                )
            memo[id(v)] = out
            return out
        assert isinstance(v, OpResult), "a value is a block argument or an op's result"
        op = v.owner
        operands = [self._recompute(x, where, memo) for x in op.operands]
        attrs = {k: a for k, a in op.attrs.items() if k != "layout"}
        clone = type(op)(operands, [v.type], attrs, (), op.loc)
        block.insert(block.ops.index(before), clone)
        memo[id(v)] = clone.result
        return clone.result

    def _slots(self, before: Operation) -> tuple[Value | None, Value]:
        """This iteration's barrier phase (TMA loops only) and slot, ready before ``before``.

        ``slot`` counts 0, 1, .., S - 1, 0, ..; ``phase``, the parity the stage's
        barrier waits for, flips each time it wraps (``k / S % 2``). A loop whose
        rings ``cp.async`` fills carries ``slot`` as an iter arg: an add, a
        compare and a select per iteration instead of a division and a
        remainder (by S, not a power of two). A loop whose rings TMA fills
        computes both from the iteration number ``k``, as before the loop's
        first op. Both forms were timed on an H200 (the driver's ``ptxas`` of
        CUDA 13): carried there too, attention's D=128 loop ran 5% slower (487
        against 511 TFLOP/s) while the causal kernel's gained 2.5% and the
        other rows did not move; computed, every attention row is at or above
        Triton's.
        """
        if self._tma_loads():
            return self._computed_slots(before)
        return None, self._carried_slot()

    def _computed_slots(self, before: Operation) -> tuple[Value, Value]:
        """``k % S`` and ``k / S % 2`` for ``k = (iv - lb) / step``, inserted before ``before``."""
        body, s, it = self.body, self.stages, self.body.args[0].type
        lb, step = self.loop.operands[0], self.loop.operands[2]
        diff = self.scalar(body, before, "arith.sub", body.args[0], lb, it)
        k = self.scalar(body, before, "arith.div", diff, step, it)
        stages = self.const(body, before, s, it)
        slot = self.scalar(body, before, "arith.rem", k, stages, it)
        rounds = self.scalar(body, before, "arith.div", k, stages, it)
        phase = self.scalar(body, before, "arith.rem", rounds, self.const(body, before, 2, it), it)
        return phase, slot

    def _carried_slot(self) -> Value:
        """``slot`` as an iter arg, starting at 0; the yield carries its next value."""
        body, s, it = self.body, self.stages, self.body.args[0].type
        slot = self._carry(self.const(parent_block(self.loop), self.loop, 0, it), "slot")
        end = terminator(body)
        nxt = self.scalar(body, end, "arith.add", slot, self.const(body, end, 1, it), it)
        last = self.const(body, end, s, it)
        wraps = self.scalar(body, end, "arith.cmp", nxt, last, I1, {"pred": "eq"})
        restart = self.const(body, end, 0, it)
        end.operands.append(self.emit(body, end, "arith.select", [wraps, restart, nxt], [it]))
        return slot

    def _carry(self, init: Value, name: str) -> BlockArgument:
        """Add a loop-carried value starting at ``init``; returns its block argument.

        The caller appends what it carries to the next iteration to the yield.
        """
        loop, body = self.loop, self.body
        loop.operands.append(init)
        loop.results.append(OpResult(init.type, loop, len(loop.results)))
        arg = BlockArgument(init.type, len(body.args), name)
        body.args.append(arg)
        return arg

    def _prefetch(self, before: Operation, slot: Value, ub: Value, step: Value) -> None:
        body, s = self.body, self.stages
        iv, it = body.args[0], body.args[0].type
        nxt = self.scalar(body, before, "arith.add", iv, self._times(body, before, step, s - 1), it)
        # (k + S - 1) % S is the slot before this one: a compare and a select, not a modulo.
        zero = self.const(body, before, 0, it)
        first = self.scalar(body, before, "arith.cmp", slot, zero, I1, {"pred": "eq"})
        back = self.scalar(body, before, "arith.sub", slot, self.const(body, before, 1, it), it)
        last = self.const(body, before, s - 1, it)
        nxt_slot = self.emit(body, before, "arith.select", [first, last, back], [it])
        self._issue(body, before, nxt, ub, s - 1, nxt_slot, in_loop=True)

    def _async_dot(self, dot: _Dot, slot: Value, pendings: int | None) -> Value:
        """Issue ``dot`` as a ``wgmma`` group; wait for it unless ``pendings`` is None."""
        op = dot.op
        operands = [op.operands[2], slot]
        a_buffer = dot.buffer_a if dot.a_kind == "const" else -1
        if dot.a_kind == "ring":
            a_buffer = dot.a_load().buffer
        if dot.a_kind == "regs":
            operands.append(dot.a_value())
        attrs = {
            "a": a_buffer,
            "b": dot.b.buffer,
            "shape": [op.operands[0].shape[0], op.operands[1].shape[1], op.operands[0].shape[1]],
            "kind": _wgmma_kind(op, self.num_warps),
            "input_precision": op.attrs.get("input_precision", "tf32"),
        }
        if "max_num_imprecise_acc" in op.attrs:
            attrs["max_num_imprecise_acc"] = op.attrs["max_num_imprecise_acc"]
        acc_t = op.result.type
        d = self.emit(self.body, op, "ttng.warp_group_dot", operands, [acc_t], attrs)
        if pendings is None:
            return d
        return self.emit(
            self.body, op, "ttng.warp_group_dot_wait", [d], [acc_t], {"pendings": pendings}
        )

    def _remove_originals(self) -> None:
        for dot in self.plan.dots:
            self.body.remove(dot.op)
        for ld in self.plan.loads:
            self.body.remove(ld.load)

    def _rewrite_accumulating(self, ub: Value, step: Value) -> None:
        """One dot accumulating over two rings: one ``wgmma`` group stays in flight."""
        dot = self.plan.dots[0]
        phase, slot = self._slots(self.body.ops[0])
        self._wait_landed(dot.op, phase, slot)
        if self._cp_loads():  # other threads' cp.async bytes (a barrier wait covers TMA's)
            self.emit(self.body, dot.op, "tt.barrier", [])
        acc = self._async_dot(dot, slot, 1)
        self.emit(self.body, dot.op, "tt.barrier", [])
        self._prefetch(dot.op, slot, ub, step)
        replace_all_uses(self.loop, dot.op.result, acc)
        self._remove_originals()

    def _rewrite_sync(self, ub: Value, step: Value) -> None:
        """Several dots (or results used in the loop): each ``wgmma`` is waited for at once.

        The slot the previous iteration read is refilled right after the
        barrier that ends it, so one barrier per iteration suffices.
        """
        first = self.body.ops[0]
        phase, slot = self._slots(first)
        self._wait_landed(first, phase, slot)
        self.emit(self.body, first, "tt.barrier", [])
        deferred = None if self.plan.mma else self._deferred()
        if deferred is None:
            self._prefetch(first, slot, ub, step)
        if self.plan.mma:
            self._local_loads(slot)
            return
        for dot in self.plan.dots:
            result = self._async_dot(dot, slot, None if dot is deferred else 0)
            replace_all_uses(self.loop, dot.op.result, result)
        self._remove_originals()
        if deferred is not None:
            self._wait_carried(self.in_flight)
            # The previous iteration's deferred group read the slot refilled now: the
            # first dot's wait ended it in this warpgroup, the barrier in all of them.
            end = terminator(self.body)
            self.emit(self.body, end, "tt.barrier", [])
            self._prefetch(end, slot, ub, step)

    def _deferred(self) -> _Dot | None:
        """The last dot, left in flight across the back edge when only the next iteration reads it.

        Attention's ``acc = tl.dot(p, v, acc)``: its result is yielded and
        used nowhere else, so its ``wgmma`` group runs on while this iteration
        ends and the next one refills its slot and issues its first dot.
        """
        if len(self.plan.dots) < 2 or not self.defer:  # the first dot's wait ends it
            return None
        dot = self.plan.dots[-1].op
        yields = terminator(self.body).operands
        uses = sum(op.operands.count(dot.result) for op in self.body.ops for op in op.walk())
        if uses != 1 or dot.result not in yields:
            return None
        index = yields.index(dot.result)
        if self._first_use(self.body.args[1 + index]) is None:
            return None
        self.in_flight = index
        return self.plan.dots[-1]

    def _first_use(self, v: Value) -> Operation | None:
        """The first op of the body that reads ``v``, itself or in its regions."""
        return next((op for op in self.body.ops if any(v in o.operands for o in op.walk())), None)

    def _wait_carried(self, index: int) -> None:
        """Wait for the carried in-flight value just before the body first reads it."""
        arg = self.body.args[1 + index]
        first = self._first_use(arg)
        assert first is not None, "_deferred checked that the body reads it"
        waited = self.emit(self.body, first, "ttng.warp_group_dot_wait", [arg], [arg.type],
                           {"pendings": 0})  # fmt: skip
        start = self.body.ops.index(first)
        for op in self.body.ops[start:]:
            for inner in op.walk():
                inner.operands = [waited if v is arg else v for v in inner.operands]

    def _local_loads(self, slot: Value) -> None:
        """``mma.sync``: each ring operand is read from this iteration's slot by its dot."""
        for dot in self.plan.dots:
            for i, ld in enumerate((dot.a, dot.b)):
                if not isinstance(ld, _Load):
                    continue
                attrs = {"buffer": ld.buffer}
                value = self.emit(self.body, dot.op, "ttg.local_load", [slot],
                                  [ld.load.result.type], attrs)  # fmt: skip
                value.name_hint = ld.load.result.name_hint
                dot.op.operands[i] = value
        for ld in self.plan.loads:
            self.body.remove(ld.load)

    def _after_loop(self) -> None:
        parent = parent_block(self.loop)
        after = parent.ops[parent.ops.index(self.loop) + 1]
        if self.in_flight >= 0:
            result = self.loop.results[self.in_flight]
            acc_t = result.type
            final = _make("ttng.warp_group_dot_wait", [result], [acc_t], {"pendings": 0}, self.loc)
            parent.insert(parent.ops.index(after), final)
            for op in parent.ops[parent.ops.index(final) + 1 :]:
                for inner in op.walk():
                    inner.operands = [final.result if x is result else x for x in inner.operands]
        self.emit(parent, after, "ttg.async_wait", [], [], {"num": 0})
        if self._tma_loads():
            self.emit(parent, after, "ttng.inval_barrier", [], [], {"count": self.stages})
        self.emit(parent, after, "ttg.local_dealloc", [])


# ------------------------------------------------------------------ the pass


@register_pass
@dataclass(frozen=True)
class SoftwarePipelinePass(GpuPass):
    """Pipeline the loops feeding tensor cores (see the module docstring)."""

    name: ClassVar[str] = "software-pipeline"
    condition: ClassVar[str] = (
        "sm_80 and newer, num_stages >= 2 (the launch option's, or a loop's own "
        "tl.range(..., num_stages=)); TMA copies on sm_90a (MINITRITON_TMA)"
    )

    def applies(self, state: GpuState) -> bool:
        return state.arch_number >= 80 and stages_asked(state.kernel, state.num_stages)

    def run(self, state: GpuState) -> None:
        pipeline_loops(state.kernel, state.num_warps, state.arch, state.num_stages,
                       tma=state.tma, defer=state.defer_last_dot)  # fmt: skip


__all__ = [
    "DEFER_ENV", "SoftwarePipelinePass", "defer_mode", "loop_stages",
    "pipeline_loops", "schedule_tag", "stages_asked",
]  # fmt: skip
