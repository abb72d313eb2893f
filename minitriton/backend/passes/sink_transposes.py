"""Transposed loads: ``tt.trans(tt.load(p, m, o))`` becomes ``tt.load(tt.trans(p), ...)``.

Tutorial 09's descriptor matmul computes ``A @ B.T`` from a B stored N x K
(``b = b_desc.load([offs_bn, offs_k])``, then ``tl.dot(a, b.T, acc)``). The
dot's B operand is then a transpose of a load, which the software pipeliner
(:mod:`~minitriton.backend.passes.software_pipeline`) does not recognise. Loading the
transposed pointers under the transposed mask instead gives the same block
loaded straight in K x N order from K-major memory (contiguous along dim 0),
a shape the pipeliner copies with ``cp.async`` into its shared-memory ring
and the ``wgmma`` path reads as a K-major B. The pointers and the mask are
transposed by rebuilding them from the 1-D offsets they are made of
(``expand_dims`` on the other axis), so no ``tt.trans`` is left to move data.

**Before**::

    %b = tt.load(%ptrs, %mask, %zero) : tensor<128x64xf16>
    %bt = tt.trans(%b) {order = [1, 0]} : tensor<64x128xf16>
    %acc2 = tt.dot(%a, %bt, %acc)

where ``%ptrs = tt.addptr(tt.broadcast(tt.expand_dims(%rows) {axis = 1}), ...)``
and so on. **After**::

    %rows_t = tt.expand_dims(%rows) {axis = 0} : tensor<1x128xi32>
    ...                                  // the same ops, over transposed shapes
    %ptrs_t = tt.addptr(%base_t, %offs_t) : tensor<64x128xptr<f16>>
    %mask_t = arith.andi(%in0_t, %in1_t) : tensor<64x128xi1>
    %zero_t = arith.constant() {value = 0.0} : tensor<64x128xf16>
    %bt = tt.load(%ptrs_t, %mask_t, %zero_t) : tensor<64x128xf16>
    %acc2 = tt.dot(%a, %bt, %acc)

The rewrite applies where the load's only user is the transpose and the
transpose feeds a ``tt.dot`` (elsewhere the plain layouts already handle a
transpose well). It runs on the GPU path before pipelining; the values are
unchanged, so the emulator never needs it.

Precondition: verified IR without calls. Postcondition: verified IR that
computes the same values; no ``tt.trans`` of a load feeds a ``tt.dot``
where the load could be transposed instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from minitriton.backend.irutil import producer
from minitriton.backend.passes.gpu_pipeline import GpuPass, GpuState
from minitriton.ir.core import Block, Operation, Value, replace_all_uses, use_counts
from minitriton.ir.ops import (
    BroadcastOp,
    ConstantOp,
    DotOp,
    ExpandDimsOp,
    FuncOp,
    HintOp,
    LoadOp,
    SplatOp,
    TransOp,
)
from minitriton.ir.traits import Elementwise, Pure
from minitriton.ir.types import BlockType, shape_of
from minitriton.passes.base import register_pass


def sink_transposes_into_loads(func: FuncOp) -> int:
    """Rewrite every eligible ``tt.trans(tt.load)`` in ``func``; returns how many."""
    uses = use_counts(func)
    users = _dot_operands(func)
    count = 0
    for block in _blocks(func):
        for op in list(block.ops):
            if isinstance(op, TransOp) and id(op.result) in users and _sinkable(op, uses):
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
        id(v) for block in _blocks(func) for op in block.ops if isinstance(op, DotOp)
        for v in op.operands[:2]
    }  # fmt: skip


def _sinkable(trans: Operation, uses: dict) -> bool:
    load = getattr(trans.operands[0], "owner", None)
    if not isinstance(load, LoadOp) or uses.get(id(load.result), 0) != 1:
        return False
    if load.attrs.get("is_volatile") or load.parent is not trans.parent:
        return False
    shape = load.result.type.shape if isinstance(load.result.type, BlockType) else ()
    if list(trans.attrs["order"]) != [1, 0]:
        return False
    return len(shape) == 2 and all(
        isinstance(v.type, BlockType) and v.type.shape == shape for v in load.operands
    )


def _lane_by_lane(op: Operation) -> bool:
    """Whether ``op``'s transpose is the op of the transposed operands.

    Pure elementwise ops, but ``tt.hint``: its facts are per axis
    (``multiple_of``, ``max_contiguous``), so a transposed hint would have to
    swap them; it gets a ``tt.trans`` instead. Loads, stores and atomics are
    elementwise but not pure: remaking them would repeat their memory access.
    """
    if isinstance(op, HintOp):
        return False
    return op.has_trait(Elementwise) and op.has_trait(Pure)


def _transposed(block: Block, before: Operation, v: Value, memo: dict[int, Value]) -> Value:
    """``v`` transposed (2-D), rebuilt from the 1-D values and scalars it is made of.

    The transpose is pushed down to the leaves: a splat or constant is remade
    in the new shape, ``expand_dims`` of a 1-D value inserts the other axis,
    ``broadcast`` and elementwise ops take transposed operands. No data moves,
    so the layout planner lays the new values out freely (a ``tt.trans``
    between two blocked layouts would go through shared memory). Anything
    else gets a ``tt.trans``.
    """
    if id(v) in memo:
        return memo[id(v)]
    t = v.type
    assert isinstance(t, BlockType), "only 2-D blocks are transposed"
    new_type = BlockType((t.shape[1], t.shape[0]), t.element)
    op = producer(v)
    attrs = dict(op.attrs) if op is not None else {}
    attrs.pop("layout", None)
    cls: type[Operation] = TransOp
    operands: list[Value] = [v]
    if op is None:
        attrs = {"order": [1, 0]}
    elif isinstance(op, SplatOp) or (isinstance(op, ConstantOp) and not op.operands):
        cls, operands = type(op), list(op.operands)
    elif isinstance(op, ExpandDimsOp) and len(shape_of(op.operands[0].type)) == 1:
        cls, operands, attrs["axis"] = type(op), list(op.operands), 1 - attrs["axis"]
    elif isinstance(op, BroadcastOp) or _lane_by_lane(op):
        cls = type(op)
        operands = [_transposed(block, before, x, memo) if _is_2d(x) else x for x in op.operands]
    else:
        attrs = {"order": [1, 0]}
    clone = cls(operands, [new_type], attrs, [], before.loc)
    block.insert(block.ops.index(before), clone)
    memo[id(v)] = clone.result
    return clone.result


def _is_2d(v: Value) -> bool:
    return isinstance(v.type, BlockType) and len(v.type.shape) == 2


def _rewrite(block: Block, trans: Operation) -> None:
    load = producer(trans.operands[0])
    assert load is not None, "find_transposed_loads matched a load"
    memo: dict[int, Value] = {}
    operands = [_transposed(block, load, v, memo) for v in load.operands]
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


# ------------------------------------------------------------------ the pass


@register_pass
@dataclass(frozen=True)
class SinkTransposesPass(GpuPass):
    """Load transposed dot operands in transposed order (see the module docstring)."""

    name: ClassVar[str] = "sink-transposes"
    condition: ClassVar[str] = "sm_80 and newer (where loops are software-pipelined)"

    def applies(self, state: GpuState) -> bool:
        return state.arch_number >= 80

    def run(self, state: GpuState) -> None:
        sink_transposes_into_loads(state.kernel)
