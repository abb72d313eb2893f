"""The ``matrix`` family: ``tt.dot`` on its three paths.

:func:`lower_dot` picks the path the plan and the arch chose
(:mod:`~minitriton.backend.accelerate_matmul`): ``mma.sync`` on sm_80 and
later (:mod:`~minitriton.backend.lower.mma`), ``wgmma`` on sm_90a
(:mod:`~minitriton.backend.lower.wgmma`, which also lowers the pipelined
loop's ``ttg``/``ttng`` ops), else the FMA dot here (sm_75,
``input_precision="ieee"`` or ``"tf32x3"``, fp16 accumulators, shapes that
fit no tensor-core instruction): operands staged in shared memory, each
thread accumulating its own results with FMAs in a loop over K (exact fp32
products). fp16 and bf16 accumulators are widened to fp32 for the loop and
rounded once after it, as the tensor cores and the emulator round.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir

from minitriton.backend.accelerate_matmul import arch_number
from minitriton.backend.lltypes import I32, RegTile, byte_size, truncate_tf32
from minitriton.backend.lower.arith import cast
from minitriton.backend.lower.control import open_loop
from minitriton.backend.lower.math import fma
from minitriton.backend.lower.mma import alloc_mma_ring, mma_dot
from minitriton.backend.lower.smem import align16, byte_offset, smem_load, write_tensor
from minitriton.backend.lower.wgmma import alloc_ring, wgmma_dot
from minitriton.backend.ops import LocalAllocOp
from minitriton.backend.registry import lowering
from minitriton.ir.core import Operation
from minitriton.ir.ops import DotOp
from minitriton.ir.types import F32, ScalarType, element_type

if TYPE_CHECKING:
    from minitriton.backend.lower.context import LoweringContext


@lowering(DotOp)
def lower_dot(ctx: LoweringContext, op: Operation) -> RegTile:
    """``mma.sync`` if the plan made this dot an mma_v2 one, ``wgmma`` on its path, else FMAs."""
    mma = ctx.plan.mma.get(id(op))
    if mma is not None:
        return mma_dot(ctx, op, mma)
    out = wgmma_dot(ctx, op)
    return out if out is not None else fma_dot(ctx, op)


@lowering(LocalAllocOp)
def lower_local_alloc(ctx: LoweringContext, op: Operation) -> None:
    """A pipelined loop's ring: swizzled for ``mma.sync``, else ``wgmma``'s tiles."""
    if op.attrs.get("tile") == "swizzled":
        alloc_mma_ring(ctx, op)
    else:
        alloc_ring(ctx, op)


# ------------------------------------------------------------ dot
def fma_dot(ctx: LoweringContext, op: Operation) -> RegTile:
    """The FMA dot: A and B through shared memory, one FMA per k and output element.

    A batched (3-D) dot ``[B, M, K] @ [B, K, N]`` is the same loop, each
    output element reading the A row and B column of its own batch. Its
    fp32 inputs are read as TF32 for ``input_precision="tf32"`` on sm_80 and
    later, as the tensor cores read the fp32 bits Triton gives them
    (:func:`~minitriton.backend.lltypes.truncate_tf32`).
    """
    a_v, b_v, _ = op.operands
    a, bm, c = (ctx.tensor(v) for v in op.operands)
    sta, stb, stc = (element_type(v.type) for v in op.operands)
    *batch, m, k = a_v.shape
    n = b_v.shape[-1]
    nb = batch[0] if batch else 1
    rank = len(a_v.shape)
    off_b = align16(nb * m * k * byte_size(sta))
    ctx.reserve(off_b + nb * k * n * byte_size(stb))
    ctx.barrier()
    write_tensor(ctx, a, sta, (m * k, k, 1)[-rank:])
    write_tensor(ctx, bm, stb, (k * n, n, 1)[-rank:], base=off_b)
    ctx.barrier()
    tf32 = (rank == 3 and sta == stb == F32 and arch_number(ctx.arch) >= 80
            and op.attrs.get("input_precision", "tf32") == "tf32")  # fmt: skip
    # fp16 and bf16 accumulators add in fp32 and round once at the end, as the tensor
    # cores and the emulator do: rounding each of K partial sums to fp16 drifts by ~1e-2.
    narrow = isinstance(stc, ScalarType) and stc.is_float() and stc.bitwidth < 32
    wide = F32 if narrow else stc
    acc = RegTile(c.layout, [cast(ctx, stc, wide, v) for v in c.vals])
    vals = _dot_loop(ctx, acc, (sta, stb, wide), (m, k, n), off_b, tf32)
    return RegTile(c.layout, [cast(ctx, wide, stc, v) for v in vals])


def _dot_loop(
    ctx: LoweringContext, c: RegTile, types, mkn, off_b: int, tf32: bool
) -> list[ir.Value]:
    sta, stb, stc = types
    m, k, n = mkn
    bld = ctx.b
    coords = c.layout.reg_coords()
    toff = ctx.thread_offsets(c.layout)

    def at(dim: int, v: int) -> ir.Value:
        return bld.add(toff[dim], ir.Constant(I32, v))

    def batch(x: tuple[int, ...]) -> ir.Value:
        return at(0, x[0]) if len(x) == 3 else ir.Constant(I32, 0)

    # Element offsets in the tiles, less the k term: (b M + i) K for A, b K N + j for B.
    rows, cols = {}, {}
    for x in coords:
        if (x[:-2], x[-2]) not in rows:
            row = bld.add(bld.mul(batch(x), ir.Constant(I32, m)), at(-2, x[-2]))
            rows[(x[:-2], x[-2])] = bld.mul(row, ir.Constant(I32, k))
        if (x[:-2], x[-1]) not in cols:
            first = bld.mul(batch(x), ir.Constant(I32, k * n))
            cols[(x[:-2], x[-1])] = bld.add(first, at(-1, x[-1]))
    loop = open_loop(bld, "dot", [ir.Constant(I32, 0), *c.vals])
    kk, accs = loop.phis[0], loop.phis[1:]
    loop.enter_body(bld, bld.icmp_signed("<", kk, ir.Constant(I32, k)))
    a_vals = {r: _dot_operand(ctx, bld.add(i, kk), sta, stc, 0, tf32) for r, i in rows.items()}
    k_n = bld.mul(kk, ir.Constant(I32, n))
    b_vals = {q: _dot_operand(ctx, bld.add(k_n, j), stb, stc, off_b, tf32) for q, j in cols.items()}
    new = [
        _mac(ctx, stc, a_vals[(x[:-2], x[-2])], b_vals[(x[:-2], x[-1])], acc)
        for x, acc in zip(coords, accs)
    ]
    loop.close(bld, [bld.add(kk, ir.Constant(I32, 1)), *new])
    return list(accs)


def _dot_operand(ctx: LoweringContext, lin: ir.Value, st, stc, base: int, tf32: bool) -> ir.Value:
    v = smem_load(ctx, byte_offset(ctx, lin, byte_size(st), base), st)
    if tf32:
        v = truncate_tf32(ctx.b, v)
    return cast(ctx, st, stc, v)


def _mac(ctx: LoweringContext, st: ScalarType, a: ir.Value, b: ir.Value, acc: ir.Value) -> ir.Value:
    if st.is_float():
        return fma(ctx, st, a, b, acc)
    return ctx.b.add(ctx.b.mul(a, b), acc)
