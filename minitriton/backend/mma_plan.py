"""Tensor-core dots in the layout plan: mma_v2 layouts and where they flow.

A ``tt.dot`` on the mma_v2 path (:func:`mma_v2_kind` says it fits) gets its
result in the accumulator layout ``nvidia_mma<versionMajor=2, ...>`` and
its operands in ``dot_op<opIdx=0|1, parent=..., kWidth=...>`` layouts
(:mod:`minitriton.backend.layouts`). Before the layout plan's backward pass,
:func:`natural_layouts` walks the function forwards from every such dot and
gives the accumulator layout to everything computed from its result
elementwise (a reduction along a dim gets the slice of it, ``expand_dims``
undoes that slice), through loop-carried values. The plan seeds these as
the values' wanted layouts
(:func:`~minitriton.backend.dot_seeds.seed_dot_layouts`), so an attention
kernel's softmax runs on the accumulator in place, its row statistics in
the accumulator's slice, and its ``P`` reaches the second dot without a
conversion when the two layouts coincide (warps along M only, 16-bit
operands).

The A and B operands loaded from memory arrive in blocked layouts; the
plan inserts a ``ttg.convert_layout`` to the dot-operand layout, placed
right after the operand's definition when that lies outside the dot's loop
(``q`` of attention is converted once). The code generator lowers those
conversions through a swizzled shared-memory tile and ``ldmatrix``
(:mod:`minitriton.backend.lower.mma`).

The ``ttgir`` of a 64x64x32 fp16 dot in a K loop, 4 warps (``tests/kernels/dot_kernels.py``;
long lines cut)::

    %a = tt.load(...) {layout = "blocked<spt=[1, 8], tpw=[8, 4], wpc=[4, 1], order=[1, 0]>"}
    %b = tt.load(...) {layout = "blocked<spt=[1, 8], tpw=[4, 8], wpc=[4, 1], order=[1, 0]>"}
    %56 = ttg.convert_layout(%a) {layout = "dot_op<opIdx=0, parent=nvidia_mma<versionMajor=2,
          warpsPerCTA=[2, 2], instrShape=[16, 8]>, kWidth=2>"} : tensor<64x32xf16>
    %57 = ttg.convert_layout(%b) {layout = "dot_op<opIdx=1, parent=nvidia_mma<...>, kWidth=2>"}
    %acc_3 = tt.dot(%56, %57, %acc_2) {input_precision = "tf32",
          layout = "nvidia_mma<versionMajor=2, warpsPerCTA=[2, 2], instrShape=[16, 8]>"}

The loop-carried accumulator stays in the ``nvidia_mma`` layout across
iterations; the store after the loop writes from it directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from minitriton.backend.irutil import terminator
from minitriton.backend.layouts import (
    Layout,
    MmaParams,
    dot_operand_layout,
    expand_layout,
    mma_instr_k,
    mma_layout,
    mma_warps,
    slice_layout,
)
from minitriton.backend.lltypes import scalar_of
from minitriton.ir.core import Block, Operation, Value
from minitriton.ir.ops import ExpandDimsOp, ForOp, FuncOp, IfOp, ReduceOp
from minitriton.ir.traits import Elementwise, ReadsMemory, WritesMemory
from minitriton.ir.types import BF16, F8E4NV, F8E5, F16, F32, I8, I32, BlockType, shape_of

#: (A/B element type, accumulator type, input precision or None) -> instruction kind.
_KINDS = {
    (F16, F32): "f16",
    (F16, F16): "f16",  # fp16 accumulation: mma.sync ....f16.f16.f16.f16
    (BF16, F32): "bf16",
    (I8, I32): "s8",
    (F8E4NV, F32): "e4m3",  # sm_89 and later (see accelerate_matmul)
    (F8E5, F32): "e5m2",
}

#: Kinds whose ``mma.sync`` came with sm_89 (Ada).
FP8_KINDS = ("e4m3", "e5m2")


def mma_v2_kind(op: Operation) -> str | None:
    """``"f16"``, ``"bf16"``, ``"tf32"`` or ``"s8"`` when ``op`` fits ``mma.sync``; else None.

    fp32 operands take m16n8k8 TF32 only with ``input_precision="tf32"``
    (``"ieee"`` and ``"tf32x3"`` stay on the exact FMA path). M must be a
    multiple of 16, N of 8 and K of the instruction's K.
    """
    a, b, acc = (v.type for v in op.operands)
    ta, tb, tc = (scalar_of(t) for t in (a, b, acc))
    if ta != tb or len(shape_of(a)) != 2:
        return None
    kind = _KINDS.get((ta, tc))
    if ta == F32 and tc == F32 and op.attrs.get("input_precision") == "tf32":
        kind = "tf32"
    if kind is None:
        return None
    (m, k), n = shape_of(a), shape_of(b)[1]
    if m % 16 or n % 8 or k % mma_instr_k(ta.bitwidth):
        return None
    return kind


#: Bits of one operand element, by tensor-core operand kind (mma.sync and wgmma).
OPERAND_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "e4m3": 8, "e5m2": 8}


@dataclass(frozen=True)
class MmaDot:
    """How one ``tt.dot`` runs on ``mma.sync``: instruction kind and the three layouts."""

    kind: str
    params: MmaParams
    a: Layout
    b: Layout
    acc: Layout

    @property
    def bits(self) -> int:
        """Bits of one operand element."""
        return OPERAND_BITS[self.kind]


def _2d(shape: tuple[int, ...]) -> tuple[int, int]:
    assert len(shape) == 2, "mma_v2_kind took 2-D dots only"
    return shape[0], shape[1]


def make_mma_dot(op: Operation, kind: str, num_warps: int, chained: bool) -> MmaDot:
    """The layouts of an mma_v2 ``op`` with ``num_warps`` warps."""
    a, b = _2d(op.operands[0].shape), _2d(op.operands[1].shape)
    shape = _2d(op.result.shape)
    params = MmaParams(mma_warps(shape, num_warps, chained))
    bits = scalar_of(op.operands[0].type).bitwidth
    return MmaDot(
        kind,
        params,
        dot_operand_layout(params, 0, bits, a),
        dot_operand_layout(params, 1, bits, b),
        mma_layout(params, shape),
    )


# ------------------------------------------------------------------ forward flow


def _elementwise(op: Operation) -> bool:
    # Loads and atomics are elementwise too, but their results do not come from their operands.
    memory = op.has_trait(ReadsMemory) or op.has_trait(WritesMemory)
    return op.has_trait(Elementwise) and not memory


P = TypeVar("P")


class _Flow(Generic[P]):
    """A forward walk giving values a payload derived from their producers'."""

    def __init__(self, seed: Callable[[Operation], P | None]) -> None:
        self.seed = seed
        self.out: dict[int, P] = {}

    def get(self, v: Value) -> P | None:
        return self.out.get(id(v))

    def put(self, v: Value, payload: P | None) -> None:
        if payload is not None and isinstance(v.type, BlockType) and id(v) not in self.out:
            self.out[id(v)] = payload

    def block(self, block: Block) -> None:
        for op in block.ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        seeded = self.seed(op)
        if seeded is not None:
            self.put(op.result, seeded)
        elif isinstance(op, ForOp):
            self._loop(op, op.operands[3:], op.regions[0].args[1:])
        elif isinstance(op, IfOp):
            self._if(op)
        elif op.results and _elementwise(op):
            shape = op.results[0].shape if isinstance(op.results[0].type, BlockType) else None
            for v in op.operands:
                if isinstance(v.type, BlockType) and v.shape == shape and self.get(v) is not None:
                    self.put(op.results[0], self.get(v))
                    break
        else:
            self.derived(op)

    def derived(self, op: Operation) -> None:
        """Reductions and ``expand_dims``: overridden where the payload is a layout."""

    def _loop(self, op: Operation, inits: Sequence[Value], args: Sequence[Value]) -> None:
        body = op.regions[0].block
        for _ in range(2):  # the second round sees what the yields carried around
            for init, arg in zip(inits, args):
                self.put(arg, self.get(init))
            self.block(body)
            for y, arg in zip(terminator(body).operands, args):
                self.put(arg, self.get(y))
        for r, arg in zip(op.results, args):
            self.put(r, self.get(arg))

    def _if(self, op: Operation) -> None:
        for region in op.regions:
            self.block(region.block)
            for r, y in zip(op.results, terminator(region.block).operands):
                self.put(r, self.get(y))


class _LayoutFlow(_Flow[Layout]):
    def derived(self, op: Operation) -> None:
        src = self.get(op.operands[0]) if op.operands else None
        if src is None:
            return
        if isinstance(op, ReduceOp):
            for r in op.results:
                self.put(r, slice_layout(src, op.attrs["axis"]))
        elif isinstance(op, ExpandDimsOp):
            self.put(op.result, expand_layout(src, op.attrs["axis"]))


def plan_mma_dots(func: FuncOp, kinds: dict[int, str], num_warps: int) -> dict[int, MmaDot]:
    """Layouts of every mma_v2 dot (``kinds``: ``id(op)`` -> kind), chains detected first.

    A dot is *chained* when its result flows elementwise into another dot's A
    operand, or its own A operand comes from a dot: both then put every warp
    along M, as Triton does, so P stays in registers.
    """
    dots = [op for op in func.walk() if id(op) in kinds]
    origin: _Flow[int] = _Flow(lambda op: id(op) if id(op) in kinds else None)
    origin.block(func.body.block)
    chained: set[int] = set()
    for op in dots:
        src = origin.get(op.operands[0])
        if src is not None:
            chained |= {src, id(op)}
    return {id(op): make_mma_dot(op, kinds[id(op)], num_warps, id(op) in chained) for op in dots}


def natural_layouts(func: FuncOp, mma: dict[int, MmaDot]) -> dict[int, Layout]:
    """``id(value)`` -> the layout it has when computed where the dots' accumulators live."""
    flow = _LayoutFlow(lambda op: mma[id(op)].acc if id(op) in mma else None)
    flow.block(func.body.block)
    return flow.out


def hoisted_before(v: Value, user: Operation) -> Operation:
    """Where a conversion of ``v`` for ``user`` goes: after ``v``'s definition if outside."""
    owner = getattr(v, "owner", None)
    if owner is None or owner.parent is None or owner.parent is user.parent:
        return user
    ops = owner.parent.ops
    return ops[ops.index(owner) + 1]
