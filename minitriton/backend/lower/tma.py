"""TMA's lowering (the matrix family, with :mod:`~minitriton.backend.lower.wgmma`).

The ``ttng`` ops the pipeliner makes for bulk tensor copies
(:mod:`minitriton.backend.tma` says when and how): ``mbarrier`` setup and
teardown, the expected bytes of a stage, the ``cp.async.bulk.tensor`` copies
(one per 128-byte column block of the swizzled tile) and the waits; those
of warp specialization (:mod:`~minitriton.backend.passes.warp_specialize`):
the split into a producer warpgroup and the consumers, with ``setmaxnreg``,
and the consumers' release of a stage on its *empty* barrier; and those of
TMA stores (:mod:`~minitriton.backend.passes.tma_stores`): their tiles at
the start of shared memory, the store (registers into the tile, then one
thread's bulk copies out of it) and the wait for its reads. The
tensor maps arrive as kernel parameters after the arguments (and debug
mode's hidden ones), made ``byval`` grid constants by
:func:`~minitriton.backend.tma.mark_grid_constants`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir

from minitriton.backend import lltypes as T
from minitriton.backend.lltypes import I32, I64, VOID
from minitriton.backend.lower.wgmma import (
    _i32,
    _slot_base,
    asm,
    fence_proxy_async,
    scratch_after_rings,
    smem_addr,
    smem_global,
    stage_tile,
)
from minitriton.backend.ops import (
    ArriveBarrierOp,
    AsyncTmaCopyOp,
    AsyncTmaStoreOp,
    BarrierExpectOp,
    InitBarrierOp,
    InvalBarrierOp,
    TmaStoreBuffersOp,
    TmaStoreWaitOp,
    WaitBarrierOp,
    WarpSpecializeOp,
)
from minitriton.backend.registry import lowering
from minitriton.backend.shared_layout import SharedTile
from minitriton.backend.tma import _MAP_PARAM, BARRIER_BYTES
from minitriton.ir.core import Operation, Value
from minitriton.ir.types import element_type

if TYPE_CHECKING:
    from minitriton.backend.lower.context import LoweringContext


def tma_param_types(ctx: LoweringContext) -> list[ir.Type]:
    """One generic pointer per tensor map (made ``byval`` grid constants afterwards)."""
    return [ir.PointerType()] * len(getattr(ctx.kernel, "tma_maps", []))


def bind_tma(ctx: LoweringContext, params: list[ir.Argument]) -> None:
    """Name the map parameters (so the compiler can mark them) and remember them."""
    for j, p in enumerate(params):
        p.name = f"{_MAP_PARAM}{j}"
    ctx.tma_params = params


def _guarded(
    ctx: LoweringContext, text: str, cons: str, args: list[ir.Value], pred: ir.Value
) -> None:
    """Inline PTX ``text`` executed where ``pred`` (i1) holds; ``$P`` is the predicate."""
    n = len(args)
    body = text.replace("$P", "p")
    guarded = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + str(n) + ", 0;\n" + body + "\n}"
    asm(ctx, guarded, (cons + "," if cons else "") + "r", VOID, [*args, ctx.b.zext(pred, I32)])


def _barrier_addr(ctx: LoweringContext, slot: ir.Value, empty: bool = False) -> ir.Value:
    """The stage's full barrier, or its empty one (``tma_stages`` barriers further)."""
    if slot.type != I32:
        slot = ctx.b.trunc(slot, I32)
    first = ctx.tma_barriers + (BARRIER_BYTES * ctx.tma_stages if empty else 0)
    off = ctx.b.add(_i32(ctx, first), ctx.b.mul(slot, _i32(ctx, BARRIER_BYTES)))
    return ctx.b.add(smem_addr(ctx), off)


def _leader_warp(ctx: LoweringContext) -> ir.Value:
    """True in the warp one lane of which issues TMA copies (warp 0, or the producer's first)."""
    if ctx.tma_leader is not None:
        return ctx.tma_leader
    return ctx.cached("w0", lambda b: b.icmp_unsigned("<", ctx.tid, ir.Constant(I32, 32)))


def _issuer(ctx: LoweringContext, pred: Value) -> ir.Value:
    """True in the one thread that issues a stage's TMA work where ``pred`` holds.

    One lane of the leader warp, chosen by ``elect.sync``, once per stage (by
    its ``barrier_expect``, which its copies follow in the same block): then
    ``ptxas`` knows that a single thread issues the copies and gives them
    uniform operands directly. A thread-index test instead makes it loop
    over the lanes that might issue, around every copy.
    """
    block = ctx.b.block
    held = ctx.tma_issuer
    if held is not None and held[0] is block and held[1] is pred:
        return held[2]
    text = "{\n.reg .pred e;\nelect.sync _|e, -1;\nselp.u32 $0, 1, 0, e;\n}"
    elected = ctx.b.icmp_unsigned("!=", asm(ctx, text, "=r", I32, []), _i32(ctx, 0))
    issuer = ctx.b.and_(ctx.b.and_(ctx.get(pred), _leader_warp(ctx)), elected)
    ctx.tma_issuer = (block, pred, issuer)
    return issuer


@lowering(InitBarrierOp)
def lower_init_barrier(ctx: LoweringContext, op: Operation) -> None:
    stages = op.attrs["count"]
    empty = op.attrs.get("empty")
    ctx.tma_barriers = ctx.ring_end
    ctx.tma_stages = stages
    ctx.ring_end += BARRIER_BYTES * stages * (2 if empty else 1)
    scratch_after_rings(ctx)
    for s in range(stages):
        addr = _barrier_addr(ctx, _i32(ctx, s))
        _guarded(ctx, "@$P mbarrier.init.shared::cta.b64 [$0], 1;", "r", [addr],
                      ctx.is_thread0())  # fmt: skip
        if empty:  # completed by one arrival per consumer warp
            text = f"@$P mbarrier.init.shared::cta.b64 [$0], {int(empty)};"
            _guarded(ctx, text, "r", [_barrier_addr(ctx, _i32(ctx, s), True)], ctx.is_thread0())
    # The barriers' initialization must be visible to the copy engine and to every thread.
    asm(ctx, "fence.mbarrier_init.release.cluster;", "", VOID, [])
    ctx.barrier()


@lowering(InvalBarrierOp)
def lower_inval_barrier(ctx: LoweringContext, op: Operation) -> None:
    ctx.barrier()  # every thread is past its last wait
    for s in range(op.attrs["count"]):
        addr = _barrier_addr(ctx, _i32(ctx, s))
        _guarded(ctx, "@$P mbarrier.inval.shared::cta.b64 [$0];", "r", [addr],
                      ctx.is_thread0())  # fmt: skip


@lowering(BarrierExpectOp)
def lower_barrier_expect(ctx: LoweringContext, op: Operation) -> None:
    pred = _issuer(ctx, op.operands[0])
    addr = _barrier_addr(ctx, ctx.get(op.operands[1]))
    text = "@$P mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;"
    _guarded(ctx, text, "r,r", [addr, _i32(ctx, op.attrs["bytes"])], pred)


@lowering(AsyncTmaCopyOp)
def lower_async_tma_copy(ctx: LoweringContext, op: Operation) -> None:
    *coord_vs, pred_v, slot_v = op.operands
    coords, slot = [ctx.get(v) for v in coord_vs], ctx.get(slot_v)
    pred = _issuer(ctx, pred_v)
    tile, base = _slot_base(ctx, op.attrs["buffer"], slot)
    dst = ctx.b.add(smem_addr(ctx), base)
    bar = _barrier_addr(ctx, slot)
    tmap = ctx.tma_params[op.attrs["map"]]
    rank = len(coords)
    places = ", ".join(f"${2 + i}" for i in range(rank))
    text = (
        f"@$P cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes"
        f" [$0], [$1, {{{places}}}], [${2 + rank}];"
    )
    coords = [ctx.b.trunc(c, I32) if c.type == I64 else c for c in coords]
    block_bytes = tile.rows * tile.swizzle
    for j in range(tile.shape[tile.contig] // tile.row_elems):
        d = ctx.b.add(dst, _i32(ctx, j * block_bytes))
        xj = ctx.b.add(coords[0], _i32(ctx, j * tile.row_elems))
        args = [d, tmap, xj, *coords[1:], bar]
        _guarded(ctx, text, "r,l," + "r," * rank + "r", args, pred)


@lowering(WaitBarrierOp)
def lower_wait_barrier(ctx: LoweringContext, op: Operation) -> None:
    bar = _barrier_addr(ctx, ctx.get(op.operands[0]), bool(op.attrs.get("empty")))
    phase = ctx.get(op.operands[1])
    if phase.type != I32:
        phase = ctx.b.trunc(phase, I32)
    text = (
        "{\n.reg .pred done;\nwait_tma:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
        "@!done bra wait_tma;\n}"
    )
    asm(ctx, text, "r,r", VOID, [bar, phase])


# ------------------------------------------------------------------ TMA stores


@lowering(TmaStoreBuffersOp)
def lower_tma_store_buffers(ctx: LoweringContext, op: Operation) -> None:
    """Keep the stores' tiles: rings and scratch space start after them from now on."""
    ctx.floor = ctx.ring_end = op.attrs["bytes"]
    scratch_after_rings(ctx)


@lowering(AsyncTmaStoreOp)
def lower_async_tma_store(ctx: LoweringContext, op: Operation) -> None:
    """Registers into the swizzled tile, fence and barrier, then thread 0's bulk copies."""
    t = ctx.tensor(op.operands[2])
    st = element_type(op.operands[2].type)
    rows, cols = op.operands[2].shape
    tile = SharedTile.make((rows, cols), 1, T.byte_size(st))
    assert tile is not None, "tma-stores made a store of a tile too narrow to swizzle"
    offset = op.attrs["offset"]
    scratch, ctx.smem = ctx.smem, smem_global(ctx)
    stage_tile(ctx, t, st, tile, offset)
    ctx.smem = scratch
    fence_proxy_async(ctx)  # the copy engine reads through the async proxy
    ctx.barrier()  # every thread's part of the tile is written
    x, y = (ctx.get(v) for v in op.operands[:2])
    x, y = (ctx.b.trunc(c, I32) if c.type == I64 else c for c in (x, y))
    src = ctx.b.add(smem_addr(ctx), _i32(ctx, offset))
    tmap = ctx.tma_params[op.attrs["map"]]
    text = "@$P cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$1, $2}], [$3];"
    for j in range(cols // tile.row_elems):
        xj = ctx.b.add(x, _i32(ctx, j * tile.row_elems))
        sj = ctx.b.add(src, _i32(ctx, j * tile.rows * tile.swizzle))
        _guarded(ctx, text, "l,r,r,r", [tmap, xj, y, sj], ctx.is_thread0())
    _guarded(ctx, "@$P cp.async.bulk.commit_group;", "", [], ctx.is_thread0())


@lowering(TmaStoreWaitOp)
def lower_tma_store_wait(ctx: LoweringContext, op: Operation) -> None:
    """The issuing thread waits for the stores' reads of shared memory; then a barrier."""
    text = f"@$P cp.async.bulk.wait_group.read {op.attrs['pendings']};"
    _guarded(ctx, text, "", [], ctx.is_thread0())
    ctx.barrier()


@lowering(ArriveBarrierOp)
def lower_arrive_barrier(ctx: LoweringContext, op: Operation) -> None:
    """Lane 0 of each consumer warp arrives on the stage's empty barrier (release order)."""
    lane0 = ctx.b.icmp_unsigned("==", ctx.lane, _i32(ctx, 0))
    pred = ctx.b.and_(ctx.get(op.operands[0]), lane0)
    addr = _barrier_addr(ctx, ctx.get(op.operands[1]), True)
    _guarded(ctx, "@$P mbarrier.arrive.shared::cta.b64 _, [$0];", "r", [addr], pred)


@lowering(WarpSpecializeOp)
def lower_warp_specialize(ctx: LoweringContext, op: Operation) -> None:
    """Branch on the warp: the producer warpgroup runs the region and exits.

    The consumers keep thread ids ``0 .. 32 * consumer_warps``, so every layout
    of the rest of the kernel reads as it would without the split.
    """
    threads = 32 * op.attrs["consumer_warps"]
    ctx.launch_warps = op.attrs["consumer_warps"] + op.attrs["producer_warps"]
    # At entry every thread gets an equal share of the 64K registers (at most what the
    # consumers ask for, so that their setmaxnreg.inc raises it).
    share = 65536 // (32 * ctx.launch_warps) // 8 * 8
    ctx.max_regs = min(share, op.attrs["consumer_regs"], ctx.max_regs or share)
    b = ctx.b
    is_producer = b.icmp_unsigned(">=", ctx.tid, _i32(ctx, threads))
    producer = b.append_basic_block("ws.producer")
    consumer = b.append_basic_block("ws.consumer")
    b.cbranch(is_producer, producer, consumer)
    b.position_at_end(producer)
    asm(ctx, f"setmaxnreg.dec.sync.aligned.u32 {op.attrs['producer_regs']};", "", VOID, [])
    first_warp = b.icmp_unsigned("<", ctx.tid, _i32(ctx, threads + 32))
    ctx.tma_leader = b.and_(is_producer, first_warp)
    ctx.lower_region(op.regions[0], [])
    ctx.tma_leader = None
    ctx.b.ret_void()
    ctx.b.position_at_end(consumer)
    asm(ctx, f"setmaxnreg.inc.sync.aligned.u32 {op.attrs['consumer_regs']};", "", VOID, [])
    ctx.consumer_threads = threads
