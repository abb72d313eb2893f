"""fp16 tensor-core accumulators kept as packed ``.f16x2`` registers.

An fp16-accumulating ``mma.sync`` or ``wgmma`` reads and writes its
accumulator two fp16 values per 32-bit register (columns ``2c`` and
``2c + 1`` of one row, the lower column in the lower half). In both
accumulator layouts register bit 0 is the column step ``(0, 1)``, so the
pair is registers ``2i`` and ``2i + 1`` of the block value.

A block value whose registers are *packed* keeps the same layout and
register count, with the pair's one 32-bit register in both of its slots
(``[p0, p0, p1, p1, ...]``): loops and yields carry it unchanged (LLVM folds
the duplicate ``phi`` nodes), and nothing converts it back to fp16 halves
until a consumer needs single elements. Which values are packed:

* the results of ``ttng.warp_group_dot`` and of a ``ttng.warp_group_dot_wait``
  that leaves groups in flight (``pendings > 0``): their registers are still
  being written by the tensor cores, so they must not be read (unpacked)
  before the wait that ends the group, which unpacks them;
* a loop-carried accumulator (:func:`packed_slots`) whose yielded value is
  one of those, or the result of an fp16-accumulating ``mma.sync`` dot whose
  accumulator is that carried value and nothing else reads either: the
  ``mma.sync`` loop's result is unpacked right after the loop.

Everything else holds one fp16 value per register.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from llvmlite import ir

from minitriton.backend.irutil import terminator
from minitriton.backend.lltypes import F16_T, I32, RegTile
from minitriton.backend.ops import WarpGroupDotOp, WarpGroupDotWaitOp
from minitriton.ir.core import Operation, Value, use_counts
from minitriton.ir.ops import DotOp
from minitriton.ir.types import F16, BlockType, element_type

if TYPE_CHECKING:
    from minitriton.backend.lower.context import LoweringContext


def _c(v: int) -> ir.Constant:
    return ir.Constant(I32, v)


def pack_f16x2(ctx: LoweringContext, pair: list[ir.Value]) -> ir.Value:
    """Two fp16 values as one ``.f16x2`` register (i32), the first in the lower half.

    Two constants pack into a constant (so a zero accumulator stays visibly zero).
    """
    if all(isinstance(v, ir.Constant) and isinstance(v.constant, (int, float)) for v in pair):
        lo, hi = (int(np.float16(v.constant).view(np.uint16)) for v in pair)
        return ir.Constant(I32, lo | hi << 16)
    b = ctx.b
    vec = ir.Constant(ir.VectorType(F16_T, 2), None)
    for i, v in enumerate(pair):
        vec = b.insert_element(vec, v, _c(i))
    return b.bitcast(vec, I32)


def unpack_f16x2(ctx: LoweringContext, reg: ir.Value) -> list[ir.Value]:
    """The two fp16 halves of a ``.f16x2`` register, the lower one first."""
    pair = ctx.b.bitcast(reg, ir.VectorType(F16_T, 2))
    return [ctx.b.extract_element(pair, _c(i)) for i in range(2)]


def is_packed(vals: list[ir.Value]) -> bool:
    """Whether an fp16 block value's registers are in the packed form."""
    return bool(vals) and vals[0].type == I32


def packed_registers(ctx: LoweringContext, vals: list[ir.Value]) -> list[ir.Value]:
    """The ``.f16x2`` registers of an fp16 block value (one per pair), packing halves."""
    if is_packed(vals):
        return vals[::2]
    return [pack_f16x2(ctx, vals[i : i + 2]) for i in range(0, len(vals), 2)]


def as_packed(ctx: LoweringContext, vals: list[ir.Value]) -> list[ir.Value]:
    """An fp16 block value's registers in the packed form (each register twice)."""
    return from_registers(packed_registers(ctx, vals))


def from_registers(regs: list[ir.Value]) -> list[ir.Value]:
    """The packed form of ``.f16x2`` registers."""
    return [r for r in regs for _ in range(2)]


def as_halves(ctx: LoweringContext, vals: list[ir.Value]) -> list[ir.Value]:
    """An fp16 block value's registers as one fp16 value each."""
    if not is_packed(vals):
        return vals
    return [h for r in vals[::2] for h in unpack_f16x2(ctx, r)]


def is_f16(v: Value) -> bool:
    return isinstance(v.type, BlockType) and element_type(v.type) == F16


def _stays_packed(v: Value) -> bool:
    """Results whose registers the tensor cores may still be writing."""
    owner = getattr(v, "owner", None)
    if isinstance(owner, WarpGroupDotOp):
        return True
    return isinstance(owner, WarpGroupDotWaitOp) and owner.attrs["pendings"] > 0


def packed_slots(ctx: LoweringContext, loop: Operation) -> dict[int, bool]:
    """Carried indices of ``loop`` held packed -> whether its result is unpacked after it.

    ``wgmma`` accumulators in flight stay packed past the loop (a wait
    follows it); an ``mma.sync`` accumulator is unpacked after the loop.
    """
    body = loop.regions[0].block
    args = loop.regions[0].args[1:]
    yields = terminator(body).operands
    out: dict[int, bool] = {}
    for i, (arg, y) in enumerate(zip(args, yields)):
        if not is_f16(y):
            continue
        if _stays_packed(y):
            out[i] = False
        elif _mma_accumulating(ctx, y, arg):
            out[i] = True
    return out


def _mma_accumulating(ctx: LoweringContext, y: Value, arg: Value) -> bool:
    """``y = tt.dot(a, b, arg)`` on ``mma.sync``, ``arg`` and ``y`` used by nothing else."""
    dot = getattr(y, "owner", None)
    if not isinstance(dot, DotOp) or id(dot) not in ctx.plan.mma or dot.operands[2] is not arg:
        return False
    if ctx.mma_uses is None:
        ctx.mma_uses = use_counts(ctx.kernel)
    return ctx.mma_uses.get(id(arg), 0) == 1 and ctx.mma_uses.get(id(y), 0) == 1


def pack_inits(ctx: LoweringContext, loop: Operation, inits: list) -> list:
    """``inits`` with the packed slots' values packed; records the values kept packed."""
    slots = packed_slots(ctx, loop)
    if not slots:
        return inits
    yields = terminator(loop.regions[0].block).operands
    out = list(inits)
    for i in slots:
        t = inits[i]
        out[i] = RegTile(t.layout, as_packed(ctx, t.vals))
        ctx.packed_values.add(id(yields[i]))
    return out


def unpack_results(ctx: LoweringContext, loop: Operation, results: list) -> list:
    """The loop's results, ``mma.sync`` accumulators unpacked (``wgmma`` ones wait first)."""
    out = list(results)
    for i, unpack in packed_slots(ctx, loop).items():
        if unpack:
            t = results[i]
            out[i] = RegTile(t.layout, as_halves(ctx, t.vals))
    return out
