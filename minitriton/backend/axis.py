"""Axis analysis: contiguity, divisibility and constancy of integer and pointer values.

The same facts Triton's AxisInfo tracks, per dimension ``d`` of a value:

* ``contig[d]``: values come in runs of this many consecutive integers along
  ``d`` (runs start at multiples of the run length);
* ``div[d]``: the first value of each run is a multiple of this power of two
  (in *bytes* for pointers, in units for integers);
* ``const[d]``: values come in runs of this many equal values along ``d``.

The code generator uses them to vectorize memory accesses: registers that
hold ``n`` consecutive elements become one ``n``-wide load when the pointers
are contiguous over ``n``, aligned to ``n`` elements, and the mask is
constant over ``n``. Facts come from ``divisibility = 16`` argument
attributes, ``tt.hint`` ops, ``make_range``, constants and splats, and flow
through ``add``, ``sub``, ``mul``, ``shl``, ``rem``, ``addptr``, broadcasts and
comparisons (``offs < n`` is constant over aligned runs when ``n`` is
divisible). Unknown values get the safe answer 1.

Each op's transfer function is registered against its class with
``@axis_rule`` (:mod:`~minitriton.backend.registry`); ops without one keep
the constancy their operands share (:meth:`AxisAnalysis.generic`), and
``scf.for`` and ``scf.if`` are visited with their regions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from math import gcd

from minitriton.backend.irutil import terminator
from minitriton.backend.ops import ConvertLayoutOp
from minitriton.backend.registry import AXIS_RULES, axis_rule
from minitriton.ir.core import Operation, Value
from minitriton.ir.ops import (
    AddOp,
    AddPtrOp,
    BroadcastOp,
    CastOp,
    CmpOp,
    ConstantOp,
    ExpandDimsOp,
    ForOp,
    FuncOp,
    HintOp,
    IfOp,
    MakeRangeOp,
    MulOp,
    RemOp,
    ShlOp,
    SplatOp,
    SubOp,
    TransOp,
)
from minitriton.ir.traits import Elementwise
from minitriton.ir.types import BlockType, PointerType, ScalarType, element_type, shape_of

MAX_DIV = 1 << 20


@dataclass(frozen=True)
class AxisInfo:
    """Per-dimension contiguity, divisibility and constancy (one entry for scalars)."""

    contig: tuple[int, ...]
    div: tuple[int, ...]
    const: tuple[int, ...]
    value: int | None = None  # known constant value, if any


def _pow2_divisor(n: int) -> int:
    if n == 0:
        return MAX_DIV
    return min(MAX_DIV, n & -n)


def _dims(v: Value) -> tuple[int, ...]:
    return v.type.shape if isinstance(v.type, BlockType) else (1,)


def unknown(v: Value) -> AxisInfo:
    """The safe answer for ``v``."""
    ones = tuple(1 for _ in _dims(v))
    return AxisInfo(ones, ones, ones)


def _splat_like(v: Value, div: int, value: int | None) -> AxisInfo:
    dims = _dims(v)
    return AxisInfo(tuple(1 for _ in dims), tuple(div for _ in dims), dims, value)


def _elem_bytes(v: Value) -> int:
    ptr = element_type(v.type)
    return max(1, ptr.pointee.bitwidth // 8) if isinstance(ptr, PointerType) else 1


class AxisAnalysis:
    """Computes :class:`AxisInfo` for every value of one function."""

    def __init__(self, func: FuncOp) -> None:
        self.info: dict[int, AxisInfo] = {}
        self._args(func)
        for op in func.body.ops:
            self.visit(op)

    def get(self, v: Value) -> AxisInfo:
        """The facts known about ``v``."""
        return self.info.get(id(v)) or unknown(v)

    def _args(self, func: FuncOp) -> None:
        attrs = func.attrs.get("arg_attrs") or [{} for _ in func.body.args]
        for arg, a in zip(func.body.args, attrs):
            div = int(a.get("divisibility", 1)) if isinstance(a, dict) else 1
            self.info[id(arg)] = _splat_like(arg, _pow2_divisor(div), None)

    def visit(self, op: Operation) -> None:
        """Compute the results of ``op`` (and of ops in its regions)."""
        if isinstance(op, (ForOp, IfOp)):
            self._loop(op) if isinstance(op, ForOp) else self._if(op)
            return
        rule = AXIS_RULES.lookup(type(op))
        result = rule(self, op) if rule is not None else self.generic(op)
        if result is not None and op.results:
            self.info[id(op.results[0])] = result
        for region in op.regions:
            for inner in region.ops:
                self.visit(inner)

    def _loop(self, op: Operation) -> None:
        # Loop-carried values: the facts that hold for the initial value and for
        # every yielded one (iterated to a fixpoint, a few rounds at most).
        lb, _, step = (self.get(v) for v in op.operands[:3])
        body = op.regions[0]
        self.info[id(body.args[0])] = AxisInfo((1,), (gcd(lb.div[0], step.div[0]),), (1,))
        carried = body.args[1:]
        for arg, init in zip(carried, op.operands[3:]):
            self.info[id(arg)] = self.get(init)
        for _ in range(4):
            for inner in body.ops:
                self.visit(inner)
            changed = False
            for arg, y in zip(carried, terminator(body.block).operands):
                new = meet(self.get(arg), self.get(y))
                changed |= new != self.get(arg)
                self.info[id(arg)] = new
            if not changed:
                break
        for arg, res in zip(carried, op.results):
            self.info[id(res)] = self.get(arg)

    def _if(self, op: Operation) -> None:
        for region in op.regions:
            for inner in region.ops:
                self.visit(inner)
        then_y, else_y = (terminator(r.block).operands for r in op.regions)
        for res, a, b in zip(op.results, then_y, else_y):
            self.info[id(res)] = meet(self.get(a), self.get(b))

    def generic(self, op: Operation) -> AxisInfo | None:
        # Pure elementwise ops of constant runs stay constant over the common runs.
        # Nothing else does: an atomic or a scan of equal inputs returns different
        # values, and so may inline asm (``%laneid``) or a load racing a store.
        if len(op.results) != 1 or not op.operands:
            return None
        if not (op.pure and op.has_trait(Elementwise)):
            return None
        res = op.result
        infos = [self.get(v) for v in op.operands if v.shape == res.shape]
        if len(infos) != len([v for v in op.operands if v.shape]) or not res.shape:
            return None
        const = tuple(_gcd_all(i.const[d] for i in infos) for d in range(len(res.shape)))
        ones = tuple(1 for _ in res.shape)
        return AxisInfo(ones, ones, const)


# -- sources --------------------------------------------------------
@axis_rule(ConstantOp)
def _arith_constant(analysis: AxisAnalysis, op: Operation) -> AxisInfo | None:
    value = op.attrs["value"]
    if not isinstance(value, int) or isinstance(value, bool):
        return _splat_like(op.result, 1, None)
    return _splat_like(op.result, _pow2_divisor(value), value)


@axis_rule(MakeRangeOp)
def _tt_make_range(analysis: AxisAnalysis, op: Operation) -> AxisInfo:
    n = shape_of(op.result.type)[0]
    return AxisInfo((n,), (_pow2_divisor(op.attrs["start"]),), (1,))


@axis_rule(SplatOp)
def _tt_splat(analysis: AxisAnalysis, op: Operation) -> AxisInfo:
    src = analysis.get(op.operands[0])
    return _splat_like(op.result, src.div[0], src.value)


@axis_rule(HintOp)
def _tt_hint(analysis: AxisAnalysis, op: Operation) -> AxisInfo:
    src = analysis.get(op.operands[0])
    rank = len(src.div)
    div = _hint(op.attrs.get("multiple_of"), rank) or src.div
    contig = _hint(op.attrs.get("max_contiguous"), rank) or src.contig
    div = tuple(_pow2_divisor(d) if d else 1 for d in div)
    return AxisInfo(contig, div, src.const, src.value)


@axis_rule(ConvertLayoutOp)
def _ttg_convert_layout(analysis: AxisAnalysis, op: Operation) -> AxisInfo:
    # Moving a block between threads changes none of its values.
    return analysis.get(op.operands[0])


# -- shape ops ------------------------------------------------------
@axis_rule(BroadcastOp)
def _tt_broadcast(analysis: AxisAnalysis, op: Operation) -> AxisInfo:
    src = analysis.get(op.operands[0])
    contig, div, const = [], [], []
    for d, (a, b) in enumerate(zip(op.operands[0].shape, op.result.shape)):
        stretched = a == 1 and b > 1
        contig.append(1 if stretched else src.contig[d])
        div.append(src.div[d])
        const.append(b if stretched else src.const[d])
    return AxisInfo(tuple(contig), tuple(div), tuple(const), src.value)


@axis_rule(TransOp)
def _tt_trans(analysis: AxisAnalysis, op: Operation) -> AxisInfo:
    src = analysis.get(op.operands[0])
    order = op.attrs["order"]

    def perm(t: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(t[i] for i in order)

    return AxisInfo(perm(src.contig), perm(src.div), perm(src.const), src.value)


@axis_rule(ExpandDimsOp)
def _tt_expand_dims(analysis: AxisAnalysis, op: Operation) -> AxisInfo:
    src = analysis.get(op.operands[0])
    axis = op.attrs["axis"]
    every = min(d if c == 1 else 1 for d, c in zip(src.div, src.contig))
    if not op.operands[0].shape:
        src = AxisInfo((), (), (), src.value)

    def ins(t: tuple[int, ...], v: int) -> tuple[int, ...]:
        return t[:axis] + (v,) + t[axis:]

    return AxisInfo(ins(src.contig, 1), ins(src.div, every), ins(src.const, 1), src.value)


# -- arithmetic -----------------------------------------------------
def _add_like(analysis: AxisAnalysis, op: Operation, sub: bool = False, scale: int = 1) -> AxisInfo:
    a, b = (analysis.get(v) for v in op.operands)
    rank = len(a.contig)
    contig = []
    for d in range(rank):
        c = gcd(a.contig[d], b.const[d])
        if not sub:
            c = max(c, gcd(a.const[d], b.contig[d]))
        contig.append(c)
    div = tuple(gcd(a.div[d], min(MAX_DIV, b.div[d] * scale)) for d in range(rank))
    const = tuple(gcd(a.const[d], b.const[d]) for d in range(rank))
    value = None
    if a.value is not None and b.value is not None:
        value = a.value - b.value if sub else a.value + b.value * scale
    return AxisInfo(tuple(contig), div, const, value)


@axis_rule(AddOp)
def _arith_add(analysis: AxisAnalysis, op: Operation) -> AxisInfo:
    return _add_like(analysis, op)


@axis_rule(SubOp)
def _arith_sub(analysis: AxisAnalysis, op: Operation) -> AxisInfo:
    return _add_like(analysis, op, sub=True)


@axis_rule(AddPtrOp)
def _tt_addptr(analysis: AxisAnalysis, op: Operation) -> AxisInfo:
    return _add_like(analysis, op, scale=_elem_bytes(op.result))


@axis_rule(MulOp)
def _arith_mul(analysis: AxisAnalysis, op: Operation) -> AxisInfo:
    a, b = (analysis.get(v) for v in op.operands)
    rank = len(a.contig)
    contig = tuple(
        a.contig[d] if b.value == 1 else b.contig[d] if a.value == 1 else 1 for d in range(rank)
    )
    div = tuple(min(MAX_DIV, a.div[d] * b.div[d]) for d in range(rank))
    const = tuple(gcd(a.const[d], b.const[d]) for d in range(rank))
    value = a.value * b.value if a.value is not None and b.value is not None else None
    return AxisInfo(contig, div, const, value)


@axis_rule(RemOp)
def _arith_rem(analysis: AxisAnalysis, op: Operation) -> AxisInfo:
    # (x % n) keeps x's runs where n is uniform: they are cut at multiples of n's divisor.
    a, b = (analysis.get(v) for v in op.operands)
    dims = _dims(op.result)
    if any(b.const[d] != dims[d] for d in range(len(dims))):
        return analysis.generic(op) or unknown(op.result)
    contig = tuple(gcd(c, bd) for c, bd in zip(a.contig, b.div))
    div = tuple(gcd(ad, bd) for ad, bd in zip(a.div, b.div))
    const = tuple(gcd(x, y) for x, y in zip(a.const, b.const))
    return AxisInfo(contig, div, const)


@axis_rule(ShlOp)
def _arith_shl(analysis: AxisAnalysis, op: Operation) -> AxisInfo:
    a, b = (analysis.get(v) for v in op.operands)
    if b.value is None or not 0 <= b.value < 20:
        return analysis.generic(op) or unknown(op.result)
    div = tuple(min(MAX_DIV, d << b.value) for d in a.div)
    contig = a.contig if b.value == 0 else tuple(1 for _ in a.contig)
    return AxisInfo(contig, div, tuple(gcd(x, y) for x, y in zip(a.const, b.const)))


@axis_rule(CastOp)
def _arith_cast(analysis: AxisAnalysis, op: Operation) -> AxisInfo | None:
    src, dst = element_type(op.operands[0].type), element_type(op.result.type)
    if src.is_int() and isinstance(dst, ScalarType) and dst.is_int() and not dst.is_bool():
        return analysis.get(op.operands[0])
    return analysis.generic(op)


@axis_rule(CmpOp)
def _arith_cmp(analysis: AxisAnalysis, op: Operation) -> AxisInfo | None:
    base = analysis.generic(op)
    if base is None:
        return None
    a, b = (analysis.get(v) for v in op.operands)
    pred = op.attrs["pred"]
    if pred in ("gt", "le"):
        a, b = b, a
        pred = "lt" if pred == "gt" else "ge"
    if pred not in ("lt", "ge"):
        return base
    shape = shape_of(op.result.type)
    const = list(base.const)
    for d in range(len(shape)):
        if b.const[d] == shape[d]:
            const[d] = max(const[d], gcd(a.contig[d], gcd(a.div[d], b.div[d])))
    return AxisInfo(base.contig, base.div, tuple(const))


def meet(a: AxisInfo, b: AxisInfo) -> AxisInfo:
    """The facts true of both ``a`` and ``b``."""

    def g(x: tuple[int, ...], y: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(gcd(p, q) for p, q in zip(x, y))

    value = a.value if a.value == b.value else None
    return AxisInfo(g(a.contig, b.contig), g(a.div, b.div), g(a.const, b.const), value)


def _hint(value: int | list[int] | None, rank: int) -> tuple[int, ...] | None:
    if value is None:
        return None
    values = value if isinstance(value, list) else [value]
    if len(values) == 1 and rank > 1:
        values = values * rank
    return tuple(int(v) for v in values[:rank]) if len(values) >= rank else None


def _gcd_all(values: Iterable[int]) -> int:
    out = 0
    for v in values:
        out = gcd(out, v)
    return out or 1
