"""Transposed loads: ``tt.trans(tt.load(p, m, o))`` becomes ``tt.load(tt.trans(p), ...)``.

Tutorial 09's descriptor matmul computes ``A @ B.T`` from a B stored N x K
(``b = b_desc.load([offs_bn, offs_k])``, then ``tl.dot(a, b.T, acc)``). The
dot's B operand is then a transpose of a load, which the software pipeliner
(:mod:`~minitriton.backend.pipeline`) does not recognise. Transposing the
pointers, the mask and the ``other`` value instead gives the same block
loaded straight in K x N order from K-major memory (contiguous along dim 0),
a shape the pipeliner copies with ``cp.async`` into its shared-memory ring
and the ``wgmma`` path reads as a transposed B.

**Before**::

    %b = tt.load(%ptrs, %mask, %zero) : tensor<128x64xf16>
    %bt = tt.trans(%b) {order = [1, 0]} : tensor<64x128xf16>
    %acc2 = tt.dot(%a, %bt, %acc)

**After**::

    %ptrs_t = tt.trans(%ptrs) {order = [1, 0]} : tensor<64x128x!tt.ptr<f16>>
    %mask_t = tt.trans(%mask) {order = [1, 0]} : tensor<64x128xi1>
    %zero_t = tt.trans(%zero) {order = [1, 0]} : tensor<64x128xf16>
    %bt = tt.load(%ptrs_t, %mask_t, %zero_t) : tensor<64x128xf16>
    %acc2 = tt.dot(%a, %bt, %acc)

The rewrite applies where the load's only user is the transpose and the
transpose feeds a ``tt.dot`` (elsewhere the plain layouts already handle a
transpose well). It runs on the GPU path before pipelining; the values are
unchanged, so the emulator never needs it.
"""

from __future__ import annotations

from minitriton.ir.core import Block, Operation, Value, replace_all_uses, use_counts
from minitriton.ir.ops import FuncOp, TransOp
from minitriton.ir.types import BlockType


def sink_transposes_into_loads(func: FuncOp) -> int:
    """Rewrite every eligible ``tt.trans(tt.load)`` in ``func``; returns how many."""
    uses = use_counts(func)
    users = _dot_operands(func)
    count = 0
    for block in _blocks(func):
        for op in list(block.ops):
            if op.name == "tt.trans" and id(op.result) in users and _sinkable(op, uses):
                _rewrite(block, op)
                count += 1
    return count


def _blocks(func: FuncOp) -> list[Block]:
    found: list[Block] = []

    def walk(block: Block) -> None:
        found.append(block)
        for op in block.ops:
            for region in op.regions:
                walk(region.block)

    for region in func.regions:
        walk(region.block)
    return found


def _dot_operands(func: FuncOp) -> set[int]:
    return {
        id(v) for block in _blocks(func) for op in block.ops if op.name == "tt.dot"
        for v in op.operands[:2]
    }  # fmt: skip


def _sinkable(trans: Operation, uses: dict) -> bool:
    load = getattr(trans.operands[0], "owner", None)
    if load is None or load.name != "tt.load" or uses.get(id(load.result), 0) != 1:
        return False
    if load.attrs.get("is_volatile") or load.parent is not trans.parent:
        return False
    shape = load.result.type.shape if isinstance(load.result.type, BlockType) else ()
    return len(shape) == 2 and all(
        isinstance(v.type, BlockType) and v.type.shape == shape for v in load.operands
    )


def _transposed(block: Block, before: Operation, v: Value, order: list[int]) -> Value:
    """``tt.trans(v)``, inserted before ``before`` (a splat constant is remade instead)."""
    shape = tuple(v.type.shape[i] for i in order)
    owner = getattr(v, "owner", None)
    if owner is not None and owner.name == "arith.constant" and not owner.operands:
        const = type(owner)([], [BlockType(shape, v.type.element)], dict(owner.attrs), [],
                            owner.loc)  # fmt: skip
        block.insert(block.ops.index(before), const)
        return const.result
    op = TransOp([v], [BlockType(shape, v.type.element)], {"order": list(order)}, [], before.loc)
    block.insert(block.ops.index(before), op)
    return op.result


def _rewrite(block: Block, trans: Operation) -> None:
    load = trans.operands[0].owner
    order = trans.attrs["order"]
    operands = [_transposed(block, load, v, order) for v in load.operands]
    new = type(load)(operands, [trans.result.type], dict(load.attrs), [], load.loc)
    block.insert(block.ops.index(load), new)
    replace_all_uses(func_of(block), trans.result, new.result)
    block.remove(trans)
    block.remove(load)


def func_of(block: Block) -> Operation:
    """The outermost op holding ``block`` (the kernel)."""
    op = block.parent
    while op is not None and op.parent is not None and op.parent.parent is not None:
        op = op.parent.parent
    assert op is not None
    return op
