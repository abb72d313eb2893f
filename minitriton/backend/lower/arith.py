"""The ``arith`` family: constants, elementwise arithmetic, compares, selects and casts.

Each op is unrolled over the registers of its result
(:meth:`~minitriton.backend.lower.context.LoweringContext.elementwise`); the
per-element meaning is :func:`binary`, :func:`negate`, :func:`compare` and
:func:`cast`. A binary op's meaning is its row of :data:`BINARY_RULES`, keyed
by its op class: the LLVM instruction or function for integers and for floats
(those whose integer instruction depends on signedness go through
:func:`_int_binary`); a new elementwise binary op is that one row. bf16 lives
in an ``i16`` and is computed in f32, then rounded back to nearest even
(sm_75 has no ``cvt.rn.bf16.f32``: it rounds in software). Float compares are
ordered except ``!=``, as in Python. The ``math`` ops (``math.exp``,
``math.pow``, ``math.abs``, ``math.fma`` ...) are in
:mod:`~minitriton.backend.lower.math`; ``tt.addptr`` and ``tt.hint`` are
here, being elementwise pointer arithmetic and a no-op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from llvmlite import ir

from minitriton.backend.accelerate_matmul import arch_number
from minitriton.backend.lltypes import (
    F16_T,
    F32_T,
    GLOBAL_PTR,
    I8,
    I16,
    I32,
    I64,
    Lowered,
    RegTile,
    const,
    f32_to_fp8,
    float_suffix,
    fp8_to_f32,
    ll_type,
    pointee_of,
    scalar_of,
)
from minitriton.backend.registry import lowering
from minitriton.ir import ops
from minitriton.ir.core import Operation
from minitriton.ir.types import (
    BF16,
    F16,
    F32,
    F64,
    BlockType,
    PointerType,
    ScalarType,
    Type,
    element_type,
)

if TYPE_CHECKING:
    from minitriton.backend.lower.context import LoweringContext


ElemLike = ScalarType | PointerType

_ICMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


# ------------------------------------------------------------ constants, ids
@lowering(ops.ConstantOp)
def lower_constant(ctx: LoweringContext, op: Operation) -> Lowered:
    """A constant: the value itself, or one register per element of a block."""
    t = op.result.type
    c = const(element_type(t), op.attrs["value"])
    if isinstance(t, BlockType):
        layout = ctx.layout(op.result)
        return RegTile(layout, [c] * layout.num_regs)
    return c


# ------------------------------------------------------------ elementwise
@lowering(ops.NegOp)
def lower_neg(ctx: LoweringContext, op: Operation) -> Lowered:
    """``arith.neg``, element by element (bf16: flip the sign bit)."""
    st = scalar_of(op.result.type)
    return ctx.elementwise(op, lambda a: negate(ctx, st, a))


@lowering(ops.NotOp)
def lower_not(ctx: LoweringContext, op: Operation) -> Lowered:
    """``arith.not``: every bit flipped."""
    return ctx.elementwise(op, lambda a: ctx.b.not_(a))


@lowering(ops.CmpOp)
def lower_cmp(ctx: LoweringContext, op: Operation) -> Lowered:
    """A compare to ``i1`` (float compares are ordered except ``ne``)."""
    st = element_type(op.operands[0].type)
    pred = op.attrs["pred"]
    return ctx.elementwise(op, lambda a, b: compare(ctx, pred, st, a, b))


@lowering(ops.SelectOp)
def lower_select(ctx: LoweringContext, op: Operation) -> Lowered:
    """``tl.where``: an LLVM ``select`` per element."""
    return ctx.elementwise(op, lambda c, a, b: ctx.b.select(c, a, b))


@lowering(ops.CastOp)
def lower_cast(ctx: LoweringContext, op: Operation) -> Lowered:
    """A conversion between element types (:func:`cast`)."""
    src = element_type(op.operands[0].type)
    dst = element_type(op.result.type)
    if op.attrs.get("rounding") == "rtz":
        assert isinstance(src, ScalarType) and isinstance(dst, ScalarType)  # verified
        return ctx.elementwise(op, lambda v: cast_toward_zero(ctx, src, dst, v))
    return ctx.elementwise(op, lambda v: cast(ctx, src, dst, v))


@lowering(ops.BitcastOp)
def lower_bitcast(ctx: LoweringContext, op: Operation) -> Lowered:
    """The same bits as another type of the same width."""
    dst = ll_type(element_type(op.result.type))
    return ctx.elementwise(op, lambda v: v if v.type == dst else ctx.b.bitcast(v, dst))


@lowering(ops.AddPtrOp)
def lower_addptr(ctx: LoweringContext, op: Operation) -> Lowered:
    """Pointer plus offset: a ``getelementptr`` over the pointee type per element."""
    pointee = pointee_of(op.result.type)
    ty = ll_type(pointee) if not pointee.is_bool() else I8
    return ctx.elementwise(op, lambda p, o: ctx.b.gep(p, [o], source_etype=ty))


@lowering(ops.HintOp)
def lower_hint(ctx: LoweringContext, op: Operation) -> Lowered:
    """A hint for the axis analysis: the operand itself."""
    return ctx.get(op.operands[0])


# ------------------------------------------------------------ binary ops
#: One element of a binary op: ``fn(ctx, st, a, b)`` on operands of type ``st``.
ScalarFn = Callable[["LoweringContext", ScalarType, ir.Value, ir.Value], ir.Value]


class BinaryRule(NamedTuple):
    """What a binary op computes on one element of an integer type and of a float type.

    ``None`` where the op does not apply (its verifier rejects the type).
    """

    on_int: ScalarFn | None
    on_float: ScalarFn | None


def _instr(method: str) -> ScalarFn:
    """The LLVM instruction that ``IRBuilder.<method>`` emits."""
    return lambda ctx, st, a, b: getattr(ctx.b, method)(a, b)


def contract_flags(ctx: LoweringContext) -> tuple[str, ...]:
    """The flags of the kernel's float adds and multiplies: ``contract`` (they may fuse
    into FMAs, as in Triton) unless it says ``fp_fusion = false`` (``enable_fp_fusion=False``)."""
    return ("contract",) if ctx.kernel.attrs.get("fp_fusion", True) else ()


def _contract(method: str) -> ScalarFn:
    """A float instruction that may fuse (:func:`contract_flags`)."""

    def emit(ctx: LoweringContext, st: ScalarType, a: ir.Value, b: ir.Value) -> ir.Value:
        return getattr(ctx.b, method)(a, b, flags=contract_flags(ctx))

    return emit


def _signed_int(cls: type[Operation]) -> ScalarFn:
    """The integer meaning of ``cls`` that depends on signedness (:func:`_int_binary`)."""
    # _int_binary is looked up at each call: the course's grader swaps it for a proxy.
    return lambda ctx, st, a, b: _int_binary(ctx, cls.name, st, a, b)


def _float_div(ctx: LoweringContext, st: ScalarType, a: ir.Value, b: ir.Value) -> ir.Value:
    """``a / b``: fp32 with ``div.full`` (approximate, as Triton), others exactly."""
    if st == F32:
        fty = ir.FunctionType(F32_T, [F32_T, F32_T])
        return ctx.b.call(ir.InlineAsm(fty, "div.full.f32 $0, $1, $2;", "=f,f,f"), [a, b])
    return ctx.b.fdiv(a, b)


def _float_intrinsic(fn: str) -> ScalarFn:
    """The LLVM intrinsic ``llvm.<fn>.<f16|f32|f64>``."""
    return lambda ctx, st, a, b: ctx.call_intrinsic(f"llvm.{fn}.{float_suffix(st)}", a.type, [a, b])


def _umulhi(ctx: LoweringContext, st: ScalarType, a: ir.Value, b: ir.Value) -> ir.Value:
    """The high half of the double-width product."""
    bld = ctx.b
    wide = ir.IntType(2 * st.bitwidth)
    prod = bld.mul(bld.zext(a, wide), bld.zext(b, wide))
    return bld.trunc(bld.lshr(prod, ir.Constant(wide, st.bitwidth)), a.type)


#: Each binary op's meaning on one element. A new elementwise binary op is one
#: row here: :func:`lower_binary` is registered for every key.
BINARY_RULES: dict[type[Operation], BinaryRule] = {
    ops.AddOp: BinaryRule(_instr("add"), _contract("fadd")),
    ops.SubOp: BinaryRule(_instr("sub"), _contract("fsub")),
    ops.MulOp: BinaryRule(_instr("mul"), _contract("fmul")),
    ops.DivOp: BinaryRule(_signed_int(ops.DivOp), _float_div),
    ops.RemOp: BinaryRule(_signed_int(ops.RemOp), _instr("frem")),
    ops.MaxOp: BinaryRule(_signed_int(ops.MaxOp), _float_intrinsic("maxnum")),
    ops.MinOp: BinaryRule(_signed_int(ops.MinOp), _float_intrinsic("minnum")),
    ops.AndOp: BinaryRule(_instr("and_"), None),
    ops.OrOp: BinaryRule(_instr("or_"), None),
    ops.XorOp: BinaryRule(_instr("xor"), None),
    ops.ShlOp: BinaryRule(_instr("shl"), None),
    ops.ShrOp: BinaryRule(_signed_int(ops.ShrOp), None),
    ops.UmulhiOp: BinaryRule(_umulhi, None),
    ops.DivRnOp: BinaryRule(None, _instr("fdiv")),
}


@lowering(*BINARY_RULES)
def lower_binary(ctx: LoweringContext, op: Operation) -> Lowered:
    """The binary ops of :data:`BINARY_RULES`, element by element (:func:`binary`)."""
    st = scalar_of(op.result.type)
    return ctx.elementwise(op, lambda a, b: binary(ctx, type(op), st, a, b))


def binary(
    ctx: LoweringContext, cls: type[Operation], st: ScalarType, a: ir.Value, b: ir.Value
) -> ir.Value:
    """``a <cls> b`` on one element of type ``st`` (bf16: computed in f32)."""
    if st == BF16:
        r = binary(ctx, cls, F32, to_f32(ctx, a, st), to_f32(ctx, b, st))
        return from_f32(ctx, r, st)
    rule = BINARY_RULES[cls]
    fn = rule.on_float if st.is_float() else rule.on_int
    if fn is None:
        raise NotImplementedError(f"{cls.name} on {st}")
    return fn(ctx, st, a, b)


def _int_binary(
    ctx: LoweringContext, name: str, st: ScalarType, a: ir.Value, b: ir.Value
) -> ir.Value:
    """``a <name> b`` on integers of type ``st``, where signedness picks the instruction.

    The ops: ``arith.div``, ``arith.rem``, ``arith.shr``, ``arith.max`` and ``arith.min``.

    ``name`` is the op's name as the IR text spells it, a string rather than
    the op class because the course's exercise c6 is written, graded and
    proxied against this signature.
    """
    bld = ctx.b
    signed = st.is_signed()
    # BEGIN EXERCISE c6-lower
    # STUB: if name in ("arith.div", "arith.rem", "arith.shr", "arith.max", "arith.min"):
    # STUB:     raise NotImplementedError(f"c6-lower: lower {name} on {st!r} to LLVM IR")
    if name == "arith.div":  # why: exercise c6 is written against the name
        return bld.sdiv(a, b) if signed else bld.udiv(a, b)
    if name == "arith.rem":  # why: exercise c6 is written against the name
        return bld.srem(a, b) if signed else bld.urem(a, b)
    if name == "arith.shr":  # why: exercise c6 is written against the name
        return bld.ashr(a, b) if signed else bld.lshr(a, b)
    if name in ("arith.max", "arith.min"):  # why: as above
        op = ">" if name == "arith.max" else "<"  # why: as above
        cmp = bld.icmp_signed(op, a, b) if signed else bld.icmp_unsigned(op, a, b)
        return bld.select(cmp, a, b)
    # END EXERCISE
    raise NotImplementedError(name)


# ------------------------------------------------------------ other scalar semantics
def negate(ctx: LoweringContext, st: ScalarType, a: ir.Value) -> ir.Value:
    """``-a`` on one element of type ``st``."""
    bld = ctx.b
    if st == BF16:
        return bld.xor(a, ir.Constant(I16, 0x8000))
    return bld.fneg(a) if st.is_float() else bld.neg(a)


def compare(ctx: LoweringContext, pred: str, st: ElemLike, a: ir.Value, b: ir.Value) -> ir.Value:
    """``a <pred> b`` as an ``i1``."""
    bld = ctx.b
    if isinstance(st, PointerType):
        a, b, st = bld.ptrtoint(a, I64), bld.ptrtoint(b, I64), ScalarType("u64")
    if st == BF16:
        a, b, st = to_f32(ctx, a, st), to_f32(ctx, b, st), F32
    if st.is_float():
        # Python semantics: every compare is ordered except '!='.
        if pred == "ne":
            return bld.fcmp_unordered("!=", a, b)
        return bld.fcmp_ordered(_ICMP[pred], a, b)
    if st.is_signed():
        return bld.icmp_signed(_ICMP[pred], a, b)
    return bld.icmp_unsigned(_ICMP[pred], a, b)


def to_f32(ctx: LoweringContext, v: ir.Value, st: ScalarType) -> ir.Value:
    """Widen a float of type ``st`` to f32."""
    bld = ctx.b
    if st == BF16:
        return bld.bitcast(bld.shl(bld.zext(v, I32), ir.Constant(I32, 16)), F32_T)
    if st == F32:
        return v
    if st.bitwidth < 32:
        return bld.fpext(v, F32_T)
    return bld.fptrunc(v, F32_T)


def from_f32(ctx: LoweringContext, v: ir.Value, st: ScalarType) -> ir.Value:
    """Round an f32 to float type ``st`` (nearest even)."""
    bld = ctx.b
    if st == BF16:
        if arch_number(ctx.arch) < 80:
            return _bf16_in_software(ctx, v)
        fty = ir.FunctionType(I16, [F32_T])
        return bld.call(ir.InlineAsm(fty, "cvt.rn.bf16.f32 $0, $1;", "=h,f"), [v])
    if st == F32:
        return v
    if st.bitwidth < 32:
        return bld.fptrunc(v, ll_type(st))
    return bld.fpext(v, ll_type(st))


def _bf16_in_software(ctx: LoweringContext, v: ir.Value) -> ir.Value:
    """f32 -> bf16 bits, to nearest even (sm_75 has no ``cvt.rn.bf16.f32``); NaN stays NaN."""
    bld = ctx.b
    bits = bld.bitcast(v, I32)
    odd = bld.and_(bld.lshr(bits, ir.Constant(I32, 16)), ir.Constant(I32, 1))
    rounded = bld.add(bits, bld.add(ir.Constant(I32, 0x7FFF), odd))
    top = bld.trunc(bld.lshr(rounded, ir.Constant(I32, 16)), I16)
    is_nan = bld.fcmp_unordered("uno", v, v)
    return bld.select(is_nan, ir.Constant(I16, 0x7FC0), top)


def cast(ctx: LoweringContext, src: ElemLike, dst: ElemLike, v: ir.Value) -> ir.Value:
    """Convert ``v`` from type ``src`` to ``dst`` (see ``arith.cast``)."""
    bld = ctx.b
    if src == dst:
        return v
    if isinstance(src, PointerType) or isinstance(dst, PointerType):
        return _pointer_cast(ctx, src, dst, v)
    if src.is_fp8():
        wide = fp8_to_f32(bld, src, v)
        return wide if dst == F32 else cast(ctx, F32, dst, wide)
    if dst.is_fp8():
        wide = v if src == F32 else cast(ctx, src, F32, v)
        return f32_to_fp8(bld, dst, wide, native=arch_number(ctx.arch) >= 89)
    if dst.is_bool():
        zero = const(src, 0)
        return compare(ctx, "ne", src, v, zero)
    if src == BF16 or dst == BF16:
        mid = v if src == F32 else cast(ctx, src, F32, v) if src != BF16 else to_f32(ctx, v, src)
        return from_f32(ctx, mid, dst) if dst == BF16 else cast(ctx, F32, dst, mid)
    if src.is_float() and dst.is_float():
        wider = dst.bitwidth > src.bitwidth
        return bld.fpext(v, ll_type(dst)) if wider else bld.fptrunc(v, ll_type(dst))
    if src.is_float():
        return bld.fptosi(v, ll_type(dst)) if dst.is_signed() else bld.fptoui(v, ll_type(dst))
    if dst.is_float():
        return bld.sitofp(v, ll_type(dst)) if src.is_signed() else bld.uitofp(v, ll_type(dst))
    return _int_cast(ctx, src, dst, v)


def cast_toward_zero(
    ctx: LoweringContext, src: ScalarType, dst: ScalarType, v: ir.Value
) -> ir.Value:
    """A narrowing float cast rounding toward zero (``arith.cast {rounding = "rtz"}``).

    Rounding toward zero gives the float of largest magnitude not above ``|x|``,
    with ``x``'s sign. Done twice, to a format F and then to a format C whose
    values F all holds, it gives that of C: a value of C not above ``|x|`` is
    in F, so it is not above F's result either. Hence f64 goes to f32 first, and
    f16/bf16 widen to f32 (exactly) before going to fp8.
    """
    bld = ctx.b
    if src == F64:
        v = _asm(bld, "cvt.rz.f32.f64", F32_T, "=f,d", v)
    elif src != F32:
        v = to_f32(ctx, v, src)
    if dst == F32:
        return v
    if dst == F16:
        return bld.bitcast(_asm(bld, "cvt.rz.f16.f32", I16, "=h,f", v), F16_T)
    if dst == BF16:
        if arch_number(ctx.arch) >= 80:
            return _asm(bld, "cvt.rz.bf16.f32", I16, "=h,f", v)
        top = bld.trunc(bld.lshr(bld.bitcast(v, I32), ir.Constant(I32, 16)), I16)
        is_nan = bld.fcmp_unordered("uno", v, v)  # dropping bits could leave an infinity
        return bld.select(is_nan, ir.Constant(I16, 0x7FC0), top)
    return _f32_to_fp8_toward_zero(ctx, dst, v)


def _f32_to_fp8_toward_zero(ctx: LoweringContext, dst: ScalarType, v: ir.Value) -> ir.Value:
    """f32 to f8e5 or f8e4nv bits rounding toward zero (PTX has no ``cvt.rz`` to fp8).

    f8e5 has f16's exponents and the top 2 of its 10 mantissa bits, so f8e5's
    values are f16's whose low 8 bits are 0: ``cvt.rz.f16.f32``, then the top
    byte is the f8e5 code (see :func:`cast_toward_zero` for why twice is once);
    f16's rounding toward zero already gives 65504 (f8e5: 57344) for a value
    too large, and keeps infinities. f8e4nv's values times ``2**-8`` are f16's
    whose low 7 bits are 0 (exponents -6..8 become f16's -14..0, subnormals
    ``k * 2**-9`` become ``k * 2**-17``), with f8e4nv's exponent field equal to
    f16's: its code is the f16 code of ``x * 2**-8`` shifted right by 7, the
    magnitude capped at 0x7E (448: f8e4nv has no infinity; 0x7F is NaN). The
    product is exact unless it is an f32 subnormal, where ``|x| < 2**-118``
    rounds to 0 whatever the product's last bit.
    """
    bld = ctx.b
    e4 = dst.name == "f8e4nv"
    if e4:
        v = bld.fmul(v, ir.Constant(F32_T, 2.0**-8))
    h = bld.zext(_asm(bld, "cvt.rz.f16.f32", I16, "=h,f", v), I32)
    magnitude = bld.lshr(bld.and_(h, ir.Constant(I32, 0x7FFF)), ir.Constant(I32, 7 if e4 else 8))
    if e4:
        too_large = bld.icmp_unsigned(">", magnitude, ir.Constant(I32, 0x7E))
        magnitude = bld.select(too_large, ir.Constant(I32, 0x7E), magnitude)
    sign = bld.and_(bld.lshr(h, ir.Constant(I32, 8)), ir.Constant(I32, 0x80))
    code = bld.trunc(bld.or_(sign, magnitude), I8)
    is_nan = bld.fcmp_unordered("uno", v, v)  # the f16 NaN's payload may lie in the low bits
    return bld.select(is_nan, ir.Constant(I8, 0x7F), code)


def _asm(bld: ir.IRBuilder, instr: str, ret: ir.Type, constraints: str, v: ir.Value) -> ir.Value:
    """One PTX instruction ``instr $0, $1;`` of one operand through inline assembly."""
    asm = ir.InlineAsm(ir.FunctionType(ret, [v.type]), f"{instr} $0, $1;", constraints)
    return bld.call(asm, [v])


def _int_cast(ctx: LoweringContext, src: ScalarType, dst: ScalarType, v: ir.Value) -> ir.Value:
    bld = ctx.b
    if dst.bitwidth == src.bitwidth:
        return v
    if dst.bitwidth < src.bitwidth:
        return bld.trunc(v, ll_type(dst))
    return bld.sext(v, ll_type(dst)) if src.is_signed() else bld.zext(v, ll_type(dst))


def _pointer_cast(ctx: LoweringContext, src: ElemLike, dst: ElemLike, v: ir.Value) -> ir.Value:
    if isinstance(src, PointerType):
        if isinstance(dst, PointerType):
            return v
        return _int_cast(ctx, ScalarType("u64"), dst, ctx.b.ptrtoint(v, I64))
    wide = _int_cast(ctx, src, ScalarType("i64"), v)
    return ctx.b.inttoptr(wide, GLOBAL_PTR)


@lowering(ops.InlineAsmOp)
def lower_inline_asm(ctx: LoweringContext, op: Operation) -> Lowered | list[Lowered]:
    """``tl.inline_asm_elementwise``: the PTX once per ``pack`` elements of a thread.

    With ``pack = 1``, one element per operand; fp16 values travel in 16-bit
    integer registers (constraint ``h``), as PTX's ``.b16`` operands do.
    With ``pack = n``, each call takes the thread's next ``n`` elements, and,
    as in Triton, elements narrower than 32 bits share a register: two fp16
    in one ``.b32`` (``r``), four int8 in one; wider ones are ``n`` operands.
    A thread whose element count is not a multiple of ``n`` pads the last call
    with undefined values, whose results are dropped.
    """
    pack = int(op.attrs.get("pack", 1))
    in_types = [_asm_operand_type(v.type) for v in op.operands]
    out_types = [scalar_of(r.type) for r in op.results]
    ret_regs = [r for t in out_types for r in _packed_registers(t, pack)]
    ret = ret_regs[0] if len(ret_regs) == 1 else ir.LiteralStructType(ret_regs)
    fty = ir.FunctionType(ret, [r for t in in_types for r in _packed_registers(t, pack)])
    asm = ir.InlineAsm(fty, op.attrs["asm"], op.attrs["constraints"],
                       side_effect=not op.attrs["pure"])  # fmt: skip
    b = ctx.b
    out_counts = [len(_packed_registers(t, pack)) for t in out_types]

    def call(groups: list[list[ir.Value]]) -> list[list[ir.Value]]:
        """One asm call on ``groups[operand][k]``; the results as ``[result][k]``."""
        args = [a for vals, t in zip(groups, in_types) for a in _pack_asm(b, vals, t, pack)]
        out = b.call(asm, args)
        count = len(ret_regs)
        parts = [out] if count == 1 else [b.extract_value(out, i) for i in range(count)]
        results, at = [], 0
        for t, n in zip(out_types, out_counts):
            results.append(_unpack_asm(b, parts[at : at + n], t, pack))
            at += n
        return results

    args = [ctx.get(v) for v in op.operands]
    is_block = isinstance(op.results[0].type, BlockType)
    layout = ctx.layout(op.results[0]) if is_block else None
    count = layout.num_regs if layout is not None else 1
    cols = [a.vals if isinstance(a, RegTile) else [a] * count for a in args]
    padded = -count % pack
    cols = [c + [ir.Constant(c[0].type, ir.Undefined)] * padded for c in cols]
    per_result: list[list[ir.Value]] = [[] for _ in out_types]
    for start in range(0, count + padded, pack):
        for i, values in enumerate(call([c[start : start + pack] for c in cols])):
            per_result[i].extend(values)
    if layout is None:
        results: list[Lowered] = [values[0] for values in per_result]
    else:
        results = [RegTile(layout, values[:count]) for values in per_result]
    return results[0] if len(results) == 1 else results


def _asm_operand_type(t: Type) -> ScalarType:
    """The element type an operand travels as: a pointer as a 64-bit integer (``l``)."""
    return _ASM_POINTER if isinstance(element_type(t), PointerType) else scalar_of(t)


#: Pointers are passed to inline assembly as their 64-bit address, as in Triton.
_ASM_POINTER = ScalarType("u64")


def _per_register(t: ScalarType, pack: int) -> int:
    """How many elements of type ``t`` share one asm register (Triton's rule)."""
    return min(max(32 // t.bitwidth, 1), pack)


def _packed_registers(t: ScalarType, pack: int) -> list[ir.Type]:
    """The asm registers that ``pack`` elements of type ``t`` travel in."""
    per = _per_register(t, pack)
    reg = _asm_register(t) if per == 1 else ir.IntType(t.bitwidth * per)
    return [reg] * (pack // per)


def _pack_asm(b: ir.IRBuilder, values: list[ir.Value], t: ScalarType, pack: int) -> list[ir.Value]:
    per = _per_register(t, pack)
    if per == 1:
        return [_to_asm(b, v, t) for v in values]
    regs = []
    for start in range(0, pack, per):
        vec: ir.Value = ir.Constant(ir.VectorType(ll_type(t), per), ir.Undefined)
        for k, v in enumerate(values[start : start + per]):
            vec = b.insert_element(vec, v, ir.Constant(ir.IntType(32), k))
        regs.append(b.bitcast(vec, ir.IntType(t.bitwidth * per)))
    return regs


def _unpack_asm(b: ir.IRBuilder, regs: list[ir.Value], t: ScalarType, pack: int) -> list[ir.Value]:
    per = _per_register(t, pack)
    if per == 1:
        return [_from_asm(b, r, t) for r in regs]
    values: list[ir.Value] = []
    for reg in regs:
        vec = b.bitcast(reg, ir.VectorType(ll_type(t), per))
        values.extend(b.extract_element(vec, ir.Constant(ir.IntType(32), k)) for k in range(per))
    return values


def _asm_register(t: ScalarType) -> ir.Type:
    """The LLVM type an inline-assembly operand of type ``t`` is passed as."""
    return I16 if t == F16 else ll_type(t)


def _to_asm(b: ir.IRBuilder, v: ir.Value, t: ScalarType) -> ir.Value:
    if isinstance(v.type, ir.PointerType):
        return b.ptrtoint(v, I64)
    return b.bitcast(v, I16) if t == F16 else v


def _from_asm(b: ir.IRBuilder, v: ir.Value, t: ScalarType) -> ir.Value:
    return b.bitcast(v, F16_T) if t == F16 else v
