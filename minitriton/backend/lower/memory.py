"""Global memory: loads, stores and atomics.

Vectorization: when a thread's registers ``r .. r+n-1`` hold ``n``
consecutive elements (its layout says so) and the axis analysis proves the
pointers contiguous, aligned to ``n`` elements and the mask constant over
them, the ``n`` elements move as one access of up to 16 bytes
(``ld.global.v4.b32``). Unmasked accesses are plain LLVM vector loads and
stores (``load <4 x float>, align 16``); masked ones use predicated PTX, as
Triton does (``@p ld.global.v4.b32 {...}, [addr];``) whose destination words first
get ``other`` (or zero), so a masked-off vector needs no select afterwards
and only the vector's first mask element is computed. Accesses narrower
than 32 bits that are masked use a branch.

Threads that hold copies of the same elements (a block smaller than the
CTA) do not store or run atomics twice: only one owner does. Scalar stores
and atomics are done by thread 0; an atomic's old value reaches the other
threads through shared memory. Atomics are spelled as Triton spells them
(``atom.global.gpu.acq_rel.add.f32``, but ``atom.global.acq_rel.gpu.cas.b32``).

``tl.atomic_poll`` is Triton's loop: thread 0 reads the flag with
``ld.relaxed.<scope>`` until it matches (or ``%globaltimer`` says the
timeout passed), then fences for ``acquire``; the other threads wait at a
barrier, and with a timeout learn the outcome through shared memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from llvmlite import ir

from minitriton.backend.accelerate_matmul import arch_number
from minitriton.backend.layouts import Layout
from minitriton.backend.lltypes import (
    I1,
    I8,
    I16,
    I32,
    ElemType,
    RegTile,
    byte_size,
    mem_type,
    pointee_of,
    scalar_of,
)
from minitriton.backend.lower.control import guarded
from minitriton.backend.lower.debug import check_access
from minitriton.backend.lower.smem import broadcast_from_thread0, share_from_owners
from minitriton.backend.registry import lowering
from minitriton.diagnostics import error
from minitriton.ir.core import Operation, Value
from minitriton.ir.ops import AtomicCASOp, AtomicPollOp, AtomicRMWOp, LoadOp, StoreOp
from minitriton.ir.types import BF16, F16, BlockType, ScalarType, element_type

if TYPE_CHECKING:
    from minitriton.backend.lower.context import LoweringContext


_SEM = {"relaxed": "relaxed", "acquire": "acquire", "release": "release", "acq_rel": "acq_rel"}
_SCOPE = {"gpu": "gpu", "cta": "cta", "sys": "sys"}


def vector_width(ctx: LoweringContext, ptr: Value, mask: Value | None, layout: Layout) -> int:
    """Elements per access for block pointer ``ptr`` (see the module docstring)."""
    dim, run = layout.contiguous_run()
    pointee = pointee_of(ptr.type)
    eb = byte_size(pointee)
    info = ctx.axis.get(ptr)
    vec = min(run, info.contig[dim], max(1, info.div[dim] // eb), max(1, 16 // eb))
    if mask is not None:
        vec = min(vec, ctx.axis.get(mask).const[dim])
    return 1 << (max(1, vec).bit_length() - 1)


def _and(ctx: LoweringContext, a: ir.Value | None, b: ir.Value | None) -> ir.Value | None:
    if a is None:
        return b
    if b is None:
        return a
    return ctx.b.and_(a, b)


def _from_mem(ctx: LoweringContext, st: ElemType, v: ir.Value) -> ir.Value:
    if isinstance(st, ScalarType) and st.is_bool():
        return ctx.b.icmp_unsigned("!=", v, ir.Constant(I8, 0))
    return v


def _to_mem(ctx: LoweringContext, st: ElemType, v: ir.Value) -> ir.Value:
    if isinstance(st, ScalarType) and st.is_bool():
        return ctx.b.zext(v, I8)
    return v


# ------------------------------------------------------------ words
def _words(total_bytes: int) -> tuple[ir.IntType, int, str, str]:
    if total_bytes >= 4:
        return I32, total_bytes // 4, "b32", "r"
    return I16, 1, "b16", "h"


def _pack(ctx: LoweringContext, vals: list[ir.Value], mt: ir.Type, total: int) -> list[ir.Value]:
    word, n, _, _ = _words(total)
    b = ctx.b
    vec = ir.VectorType(mt, len(vals))
    packed = ir.Constant(vec, None)
    for i, v in enumerate(vals):
        packed = b.insert_element(packed, v, ir.Constant(I32, i))
    as_words = b.bitcast(packed, ir.VectorType(word, n))
    return [b.extract_element(as_words, ir.Constant(I32, i)) for i in range(n)]


def _unpack(ctx: LoweringContext, words: list[ir.Value], mt: ir.Type, count: int) -> list[ir.Value]:
    b = ctx.b
    wvec = ir.Constant(ir.VectorType(words[0].type, len(words)), None)
    for i, w in enumerate(words):
        wvec = b.insert_element(wvec, w, ir.Constant(I32, i))
    vals = b.bitcast(wvec, ir.VectorType(mt, count))
    return [b.extract_element(vals, ir.Constant(I32, i)) for i in range(count)]


# ------------------------------------------------------------ loads
@lowering(LoadOp)
def lower_load(ctx: LoweringContext, op: Operation) -> object:
    """``tt.load``: vectorized and predicated accesses (see the module docstring)."""
    ptr = op.operands[0]
    if not isinstance(ptr.type, BlockType):
        return _scalar_load(ctx, op)
    layout = ctx.layout(ptr)
    mask = op.operands[1] if len(op.operands) > 1 else None
    st = element_type(op.result.type)
    ptrs = ctx.tensor(ptr).vals
    masks = ctx.tensor(mask).vals if mask is not None else None
    vec = vector_width(ctx, ptr, mask, layout)
    others = None
    if len(op.operands) == 3 and masks is not None:
        others = [_to_mem(ctx, st, o) for o in ctx.tensor(op.operands[2]).vals]
    access = _access(op, "ld")
    vals: list[ir.Value] = []
    for r in range(0, layout.num_regs, vec):
        pred = masks[r] if masks is not None else None
        pred = check_access(ctx, op, layout, ptrs, r, vec, pred)
        other = others[r : r + vec] if others is not None else None
        vals.extend(_load_vector(ctx, ptrs[r], pred, st, vec, other, access))
    return RegTile(layout, [_from_mem(ctx, st, v) for v in vals])


def _load_vector(
    ctx: LoweringContext,
    ptr: ir.Value,
    pred: ir.Value | None,
    st: ElemType,
    vec: int,
    other: list[ir.Value] | None,
    access: str = "ld.global",
) -> list[ir.Value]:
    """``vec`` elements at ``ptr``; where ``pred`` is false, ``other`` (or zeros)."""
    mt = mem_type(st)
    total = vec * byte_size(st)
    if pred is None and access != "ld.global" and total >= 2:
        pred = ir.Constant(I1, 1)  # a hinted access is written in PTX, as the masked ones
    if pred is None:
        ty = ir.VectorType(mt, vec) if vec > 1 else mt
        v = ctx.b.load(ptr, typ=ty, align=total)
        if vec == 1:
            return [v]
        return [ctx.b.extract_element(v, ir.Constant(I32, i)) for i in range(vec)]
    default = other if other is not None else [ir.Constant(mt, 0)] * vec
    if total < 2:
        return guarded(ctx, pred, lambda: [ctx.b.load(ptr, typ=mt, align=1)], default)
    return _predicated_load(ctx, ptr, pred, mt, total, default, access)


def _access(op: Operation, kind: str) -> str:
    """The PTX access of a load or store (``kind``: ``ld``/``st``) with its hints.

    ``volatile=True`` gives ``ld.volatile.global`` (no cache hint goes with it in PTX);
    ``cache_modifier=".cg"`` gives ``ld.global.cg``; ``eviction_policy="evict_last"``
    ``ld.global.L1::evict_last``, where no cache modifier is given (PTX takes one of
    the two). Accesses narrower than 16 bits are plain LLVM ones, without hints.
    """
    if op.attrs.get("volatile"):
        return f"{kind}.volatile.global"
    cache = op.attrs.get("cache")
    evict = op.attrs.get("evict")
    hint = f".{str(cache).lstrip('.')}" if cache else f".L1::{evict}" if evict else ""
    return f"{kind}.global{hint}"


def _predicated_load(
    ctx: LoweringContext,
    ptr: ir.Value,
    pred: ir.Value,
    mt: ir.Type,
    total: int,
    default: list[ir.Value],
    access: str = "ld.global",
) -> list[ir.Value]:
    """Triton's predicated load: each destination word starts as ``default``'s.

    A default that is the zero constant is an immediate; any other is an input
    operand, so a masked-off vector keeps it without a select after the load.
    """
    word, n, suffix, con = _words(total)
    init = _default_words(ctx, default, mt, total)
    outs = ", ".join(f"${i}" for i in range(n))
    moves, args, in_cons = [], [ptr, pred], ["l", "b"]
    for i, w in enumerate(init):
        if isinstance(w, ir.Constant) and w.constant == 0:
            moves.append(f"mov.{suffix} ${i}, 0;")
        else:
            moves.append(f"mov.{suffix} ${i}, ${n + len(args)};")
            args.append(w)
            in_cons.append(con)
    v = f".v{n}" if n > 1 else ""
    text = "\n\t".join([*moves, f"@${n + 1} {access}{v}.{suffix} {{{outs}}}, [${n}];"])
    cons = ",".join([f"={con}"] * n + in_cons)
    ret = word if n == 1 else ir.LiteralStructType([word] * n)
    fty = ir.FunctionType(ret, [a.type for a in args])
    res = ctx.b.call(ir.InlineAsm(fty, text, cons, side_effect=True), args)
    words = [res] if n == 1 else [ctx.b.extract_value(res, i) for i in range(n)]
    return _unpack(ctx, words, mt, len(default))


def _default_words(
    ctx: LoweringContext, default: list[ir.Value], mt: ir.Type, total: int
) -> list[ir.Value]:
    """``default`` packed into load words; all-zero constants stay one zero constant."""
    word, n, _, _ = _words(total)
    if all(_is_zero(d) for d in default):
        return [ir.Constant(word, 0)] * n
    return _pack(ctx, default, mt, total)


def _is_zero(v: ir.Value) -> bool:
    """A constant whose bits are all zero (``0``, ``0.0``, not ``-0.0``)."""
    if not isinstance(v, ir.Constant):
        return False
    c = v.constant
    return isinstance(c, (int, float)) and c == 0 and str(c)[0] != "-"


def _scalar_load(ctx: LoweringContext, op: Operation) -> ir.Value:
    st = element_type(op.result.type)
    ptr = ctx.get(op.operands[0])
    mt = mem_type(st)
    align = byte_size(st)
    mask = ctx.get(op.operands[1]) if len(op.operands) > 1 else None
    mask = check_access(ctx, op, None, [ptr], 0, 1, mask)
    access = _access(op, "ld")
    if mask is None and (access == "ld.global" or align < 2):
        return _from_mem(ctx, st, ctx.b.load(ptr, typ=mt, align=align))
    other = _to_mem(ctx, st, ctx.get(op.operands[2])) if len(op.operands) == 3 else None
    default = other if other is not None else ir.Constant(mt, 0)
    if align >= 2 and access != "ld.global":  # a spin loop's volatile load, a hinted one
        pred = mask if mask is not None else ir.Constant(I1, 1)
        (v,) = _predicated_load(ctx, ptr, pred, mt, align, [default], access)
        return _from_mem(ctx, st, v)
    assert mask is not None
    (v,) = guarded(ctx, mask, lambda: [ctx.b.load(ptr, typ=mt, align=align)], [default])
    return _from_mem(ctx, st, v)


# ------------------------------------------------------------ stores
@lowering(StoreOp)
def lower_store(ctx: LoweringContext, op: Operation) -> None:
    """``tt.store``: only one owner of each element stores it."""
    ptr, value = op.operands[:2]
    mask = op.operands[2] if len(op.operands) == 3 else None
    st = element_type(value.type)
    if not isinstance(ptr.type, BlockType):
        pred = _and(ctx, ctx.is_thread0(), ctx.get(mask) if mask is not None else None)
        pred = check_access(ctx, op, None, [ctx.get(ptr)], 0, 1, pred)
        value_mem = [_to_mem(ctx, st, ctx.get(value))]
        _store_vector(ctx, ctx.get(ptr), pred, value_mem, st, _access(op, "st"))
        return
    layout = ctx.layout(ptr)
    owner = ctx.owner_pred(layout)
    ptrs, vals = ctx.tensor(ptr).vals, ctx.tensor(value).vals
    masks = ctx.tensor(mask).vals if mask is not None else None
    vec = vector_width(ctx, ptr, mask, layout)
    access = _access(op, "st")
    for r in range(0, layout.num_regs, vec):
        pred = _and(ctx, owner, masks[r] if masks is not None else None)
        pred = check_access(ctx, op, layout, ptrs, r, vec, pred)
        group = [_to_mem(ctx, st, v) for v in vals[r : r + vec]]
        _store_vector(ctx, ptrs[r], pred, group, st, access)


def _store_vector(
    ctx: LoweringContext,
    ptr: ir.Value,
    pred: ir.Value | None,
    vals: list[ir.Value],
    st: ElemType,
    access: str = "st.global",
) -> None:
    mt = mem_type(st)
    vec = len(vals)
    total = vec * byte_size(st)
    if pred is None and access != "st.global" and total >= 2:
        pred = ir.Constant(I1, 1)  # a hinted store is written in PTX, as the masked ones
    if pred is None:
        ctx.b.store(_vector(ctx, vals, mt) if vec > 1 else vals[0], ptr, align=total)
        return
    if total < 2:
        _guarded_store(ctx, pred, vals[0], ptr)
        return
    word, n, suffix, con = _words(total)
    words = _pack(ctx, vals, mt, total) if (vec > 1 or vals[0].type != word) else vals
    ins = ", ".join(f"${i + 2}" for i in range(n))
    v = f".v{n}" if n > 1 else ""
    text = f"@$1 {access}{v}.{suffix} [$0], {{{ins}}};"
    cons = ",".join(["l", "b"] + [con] * n)
    fty = ir.FunctionType(ir.VoidType(), [ptr.type, I1] + [word] * n)
    ctx.b.call(ir.InlineAsm(fty, text, cons, side_effect=True), [ptr, pred, *words])


def _guarded_store(ctx: LoweringContext, pred: ir.Value, value: ir.Value, ptr: ir.Value) -> None:
    def store() -> list[ir.Value]:
        ctx.b.store(value, ptr, align=1)
        return []

    guarded(ctx, pred, store, [])


def _vector(ctx: LoweringContext, vals: list[ir.Value], mt: ir.Type) -> ir.Value:
    vec = ir.Constant(ir.VectorType(mt, len(vals)), None)
    for i, v in enumerate(vals):
        vec = ctx.b.insert_element(vec, v, ir.Constant(I32, i))
    return vec


# ------------------------------------------------------------ atomics
@lowering(AtomicRMWOp)
def lower_atomic_rmw(ctx: LoweringContext, op: Operation) -> object:
    """``tt.atomic_rmw``: ``atom`` per owned element; scalar atomics by thread 0."""
    kind = op.attrs["kind"]
    return _atomic(ctx, op, lambda p, pred, vals: _rmw(ctx, op, kind, p, pred, vals[0]))


@lowering(AtomicCASOp)
def lower_atomic_cas(ctx: LoweringContext, op: Operation) -> object:
    """``tt.atomic_cas``: ``atom.cas`` per owned element; scalars by thread 0."""
    return _atomic(ctx, op, lambda p, pred, vals: _cas(ctx, op, p, pred, vals[0], vals[1]))


@lowering(AtomicPollOp)
def lower_atomic_poll(ctx: LoweringContext, op: Operation) -> object:
    """``tt.atomic_poll``: thread 0 spins on ``ld.relaxed``; a barrier ends everyone's wait."""
    b = ctx.b
    ptr, expected = ctx.get(op.operands[0]), ctx.get(op.operands[1])
    timeout = ctx.get(op.operands[2]) if len(op.operands) == 3 else None
    pred = check_access(ctx, op, None, [ptr], 0, 1, ctx.is_thread0()) or ctx.is_thread0()
    entry = b.block
    start_bb, loop_bb, success_bb = (b.append_basic_block(f"poll.{n}") for n in
                                     ("start", "loop", "success"))  # fmt: skip
    check_bb = b.append_basic_block("poll.timeout") if timeout is not None else None
    done_bb = b.append_basic_block("poll.done")
    b.cbranch(pred, start_bb, done_bb)
    b.position_at_end(start_bb)
    start = _global_timer(ctx) if timeout is not None else None
    b.branch(loop_bb)
    b.position_at_end(loop_bb)
    matched = b.icmp_unsigned("==", _relaxed_load(ctx, op, ptr, expected.type), expected)
    b.cbranch(matched, success_bb, check_bb or loop_bb)
    if check_bb is not None:
        b.position_at_end(check_bb)
        elapsed = b.sub(_global_timer(ctx), start)
        b.cbranch(b.icmp_unsigned(">=", elapsed, timeout), done_bb, loop_bb)
    b.position_at_end(success_bb)
    if op.attrs["sem"] == "acquire":
        _fence_acquire(ctx, op)
    b.branch(done_bb)
    b.position_at_end(done_bb)
    outcome = b.phi(I1)
    outcome.add_incoming(ir.Constant(I1, 0), entry)
    outcome.add_incoming(ir.Constant(I1, 1), success_bb)
    if check_bb is None:  # only success ends the wait: a barrier, and the answer is True
        ctx.barrier()
        return ir.Constant(I1, 1)
    outcome.add_incoming(ir.Constant(I1, 0), check_bb)
    return broadcast_from_thread0(ctx, outcome, scalar_of(op.result.type))


def _relaxed_load(ctx: LoweringContext, op: Operation, ptr: ir.Value, word: ir.Type) -> ir.Value:
    """One ``ld.relaxed.<scope>.global`` (inline asm with effects: never hoisted from the loop)."""
    assert isinstance(word, ir.IntType)
    scope = _SCOPE[op.attrs.get("scope", "gpu")]
    con = "l" if word.width == 64 else "h" if word.width == 16 else "r"
    text = f"ld.relaxed.{scope}.global.b{word.width} $0, [$1];"
    fty = ir.FunctionType(word, [ptr.type])
    return ctx.b.call(ir.InlineAsm(fty, text, f"={con},l,~{{memory}}", side_effect=True), [ptr])


def _global_timer(ctx: LoweringContext) -> ir.Value:
    """The GPU's nanosecond clock."""
    fty = ir.FunctionType(ir.IntType(64), [])
    asm = ir.InlineAsm(fty, "mov.u64 $0, %globaltimer;", "=l", side_effect=True)
    return ctx.b.call(asm, [])


def _fence_acquire(ctx: LoweringContext, op: Operation) -> None:
    """``fence.acquire`` (sm_90; ``fence.acq_rel`` before), as Triton emits after a poll."""
    sem = "acquire" if arch_number(ctx.arch) >= 90 else "acq_rel"
    text = f"fence.{sem}.{_SCOPE[op.attrs.get('scope', 'gpu')]};"
    fty = ir.FunctionType(ir.VoidType(), [])
    ctx.b.call(ir.InlineAsm(fty, text, "~{memory}", side_effect=True), [])


def _atomic(ctx: LoweringContext, op: Operation, emit: Callable) -> object:
    ptr = op.operands[0]
    n_vals = 2 if isinstance(op, AtomicCASOp) else 1
    vals_ir = op.operands[1 : 1 + n_vals]
    mask = op.operands[1 + n_vals] if len(op.operands) > 1 + n_vals else None
    st = element_type(op.result.type)
    if not isinstance(ptr.type, BlockType):
        pred = _and(ctx, ctx.is_thread0(), ctx.get(mask) if mask is not None else None)
        pred = check_access(ctx, op, None, [ctx.get(ptr)], 0, 1, pred)
        old = emit(ctx.get(ptr), pred, [ctx.get(v) for v in vals_ir])
        return broadcast_from_thread0(ctx, old, st)
    layout = ctx.layout(ptr)
    owner = ctx.owner_pred(layout)
    ptrs = ctx.tensor(ptr).vals
    cols = [ctx.tensor(v).vals for v in vals_ir]
    masks = ctx.tensor(mask).vals if mask is not None else [None] * len(ptrs)
    olds = []
    for i, p in enumerate(ptrs):
        pred = _and(ctx, owner, masks[i])
        pred = check_access(ctx, op, layout, ptrs, i, 1, pred) or ir.Constant(I1, 1)
        olds.append(emit(p, pred, [c[i] for c in cols]))
    result = RegTile(layout, olds)
    if owner is not None:
        result = share_from_owners(ctx, result, st)
    return result


def _sem_scope(ctx: LoweringContext, op: Operation) -> tuple[str, str]:
    sem = _SEM.get(op.attrs.get("sem", "acq_rel"))
    scope = _SCOPE.get(op.attrs.get("scope", "gpu"))
    if sem is None or scope is None:
        raise error(op.loc, "unknown atomic memory semantics or scope")
    return sem, scope


def _rmw_prefix(ctx: LoweringContext, op: Operation) -> str:
    """Triton's spelling of a read-modify-write: ``atom.global.gpu.acq_rel``."""
    sem, scope = _sem_scope(ctx, op)
    return f"atom.global.{scope}.{sem}"


def _atom_asm(ctx: LoweringContext, text: str, word: ir.IntType, args: list[ir.Value]) -> ir.Value:
    con = "l" if word.width == 64 else "h" if word.width == 16 else "r"
    cons = ",".join([f"={con}", "l", "b"] + [con] * (len(args) - 2))
    fty = ir.FunctionType(word, [a.type for a in args])
    full = f"mov.b{word.width} $0, 0;\n\t@$2 {text}"
    return ctx.b.call(ir.InlineAsm(fty, full, cons, side_effect=True), args)


def _rmw(
    ctx: LoweringContext, op: Operation, kind: str, ptr: ir.Value, pred: ir.Value, val: ir.Value
):
    st = scalar_of(op.result.type)
    if st.is_float() and kind in ("max", "min") and st.bitwidth == 16:
        return _half_minmax(ctx, op, kind, ptr, pred, val)
    if st.is_float() and kind in ("max", "min"):
        return _float_minmax(ctx, op, kind, ptr, pred, val)
    bits = st.bitwidth
    if bits < 16 or (bits == 16 and not (kind == "add" and st.is_float())):
        raise error(op.loc, f"atomic {kind} on {st} is not supported by the GPU backend")
    word = ir.IntType(bits)
    type_ = _atom_type(ctx, op, kind, st)
    bits_val = ctx.b.bitcast(val, word) if val.type != word else val
    text = f"{_rmw_prefix(ctx, op)}.{_atom_op(kind)}.{type_} $0, [$1], $3;"
    old = _atom_asm(ctx, text, word, [ptr, pred, bits_val])
    return ctx.b.bitcast(old, val.type) if val.type != word else old


def _atom_type(ctx: LoweringContext, op: Operation, kind: str, st: ScalarType) -> str:
    bits = st.bitwidth
    if kind == "add" and st == F16:
        return "noftz.f16"
    if kind == "add" and st == BF16:
        if arch_number(ctx.arch) < 90:
            raise error(op.loc, "atomic add on bf16 needs sm_90", needs_arch=90)
        return "noftz.bf16"
    if kind == "add" and st.is_float():
        return f"f{bits}"
    if kind == "add":
        return f"u{bits}"
    if kind in ("max", "min"):
        return f"{'s' if st.is_signed() else 'u'}{bits}"
    return f"b{bits}"


def _float_minmax(
    ctx: LoweringContext, op: Operation, kind: str, ptr: ir.Value, pred: ir.Value, val
):
    # Triton's trick: for x >= 0 the float order is the signed-int order of
    # the bits; for x < 0 it is the reversed unsigned order.
    b = ctx.b
    st = scalar_of(op.result.type)
    word = ir.IntType(st.bitwidth)
    bits = b.bitcast(val, word)
    pos = b.icmp_signed(">=", bits, ir.Constant(word, 0))
    neg = b.not_(pos)
    pos_kind, neg_kind = ("max", "min") if kind == "max" else ("min", "max")
    prefix = _rmw_prefix(ctx, op)
    n = st.bitwidth
    t_pos = f"{prefix}.{pos_kind}.s{n} $0, [$1], $3;"
    t_neg = f"{prefix}.{neg_kind}.u{n} $0, [$1], $3;"
    old_pos = _atom_asm(ctx, t_pos, word, [ptr, b.and_(pred, pos), bits])
    old_neg = _atom_asm(ctx, t_neg, word, [ptr, b.and_(pred, neg), bits])
    return b.bitcast(b.select(pos, old_pos, old_neg), val.type)


def _half_minmax(
    ctx: LoweringContext, op: Operation, kind: str, ptr: ir.Value, pred: ir.Value, val
):
    """fp16/bf16 min/max (descriptor reductions): a ``cas.b16`` loop around ``min.f32``.

    PTX has no scalar 16-bit float ``atom.min``. Both halves are widened to fp32
    (exactly: ``cvt`` for fp16, the bits in the high half for bf16), compared there,
    and the winner, one of the two, narrowed back exactly; this runs on every arch
    (``min.f16`` needs sm_80, ``.bf16`` too). ``min``/``max`` keep the number when
    one side is NaN, as the emulator's ``np.fmin`` does.
    """
    st = scalar_of(op.result.type)
    sem, scope = _sem_scope(ctx, op)
    if st == F16:
        widen = "cvt.f32.f16 x, seen;\ncvt.f32.f16 y, $3;\n"
        narrow = "cvt.rn.f16.f32 want, z;\n"
    else:  # bf16: the fp32 with these bits on top
        widen = "mov.b32 x, {zero, seen};\nmov.b32 y, {zero, $3};\n"
        narrow = "mov.b32 {low, want}, z;\n"
    text = (  # labels are local to the braces, so each element's loop may reuse them
        "{\n.reg .pred again;\n.reg .b16 seen, want, zero, low;\n.reg .b32 x, y, z;\n"
        "mov.b16 zero, 0;\nmov.b16 $0, 0;\n@!$2 bra done_minmax;\n"
        f"ld.relaxed.{scope}.global.b16 seen, [$1];\n"
        "retry_minmax:\n"
        f"{widen}{kind}.f32 z, x, y;\n{narrow}"
        f"atom.global.{sem}.{scope}.cas.b16 $0, [$1], seen, want;\n"
        "setp.ne.b16 again, $0, seen;\n"
        "mov.b16 seen, $0;\n"
        "@again bra retry_minmax;\n"
        "done_minmax:\n}"
    )
    word = ir.IntType(16)
    args = [ptr, pred, ctx.b.bitcast(val, word)]
    fty = ir.FunctionType(word, [a.type for a in args])
    old = ctx.b.call(ir.InlineAsm(fty, text, "=h,l,b,h,~{memory}", side_effect=True), args)
    return ctx.b.bitcast(old, val.type)


def _cas(
    ctx: LoweringContext, op: Operation, ptr: ir.Value, pred: ir.Value, cmp: ir.Value, val: ir.Value
):
    st = scalar_of(op.result.type)
    if st.bitwidth not in (16, 32, 64):  # PTX's atom.cas has b16 (sm_70), b32 and b64
        raise error(op.loc, f"atomic_cas on {st} is not supported by the GPU backend")
    word = ir.IntType(st.bitwidth)
    args = [ctx.b.bitcast(v, word) if v.type != word else v for v in (cmp, val)]
    sem, scope = _sem_scope(ctx, op)  # Triton's order for cas: semantics, then scope
    text = f"atom.global.{sem}.{scope}.cas.b{st.bitwidth} $0, [$1], $3, $4;"
    old = _atom_asm(ctx, text, word, [ptr, pred, *args])
    return ctx.b.bitcast(old, val.type) if val.type != word else old


def _atom_op(kind: str) -> str:
    return "exch" if kind == "xchg" else kind
