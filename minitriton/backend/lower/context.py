"""LLVM IR for one kernel: block IR -> per-thread code.

Each program instance is one CTA. A block value is held by the CTA's
threads as its layout says (:mod:`minitriton.backend.layouts`): a thread
keeps one LLVM value per register (:class:`~minitriton.backend.lltypes.RegTile`)
and elementwise ops are unrolled over them. Scalars are computed by every
thread (they are uniform). Memory ops live in
:mod:`~minitriton.backend.lower_memory`; ops that move data between threads
(layout conversions, reductions, scans, sorts, the FMA dot, print) in
:mod:`~minitriton.backend.lower_collective`; tensor-core dots in
:mod:`~minitriton.backend.lower_mma`; math functions in
:mod:`~minitriton.backend.mathlib`.

Every instruction carries a ``!dbg`` location pointing at the kernel source
line of the op it came from (helpers inlined from other functions get an
``inlinedAt`` chain), so the PTX has ``.file``/``.loc`` line info.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from llvmlite import ir

from minitriton.backend.accelerate_matmul import arch_number
from minitriton.backend.axis import AxisAnalysis
from minitriton.backend.bitpack import pack_bits
from minitriton.backend.layouts import Layout
from minitriton.backend.lltypes import (
    F32_T,
    GLOBAL_PTR,
    I1,
    I8,
    I16,
    I32,
    I64,
    SHARED_PTR,
    VOID,
    RegTile,
    const,
    f32_to_fp8,
    fp8_to_f32,
    ll_type,
)
from minitriton.backend.lower_checks import ChecksMixin, CheckState
from minitriton.backend.lower_collective import CollectiveMixin
from minitriton.backend.lower_memory import MemoryMixin
from minitriton.backend.lower_mma import MmaMixin
from minitriton.backend.lower_wgmma import WgmmaMixin
from minitriton.backend.mathlib import LibdeviceMissing, MathMixin
from minitriton.backend.prepare import LayoutPlan
from minitriton.diagnostics import Location, error
from minitriton.ir.core import Operation, Region, Value
from minitriton.ir.ops import MATH_BINARY, MATH_UNARY, FuncOp
from minitriton.ir.types import (
    BF16,
    F32,
    BlockType,
    PointerType,
    ScalarType,
    element_type,
)

Lowered = ir.Value | RegTile

_INT_BINARY = {
    "arith.add": "add",
    "arith.sub": "sub",
    "arith.mul": "mul",
    "arith.and": "and_",
    "arith.or": "or_",
    "arith.xor": "xor",
    "arith.shl": "shl",
}
_FLOAT_BINARY = {"arith.add": "fadd", "arith.sub": "fsub", "arith.mul": "fmul"}
_ICMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_SREG = ("x", "y", "z")
LANE_BITS = 5  # log2 of the warp size
#: The largest column LLVM debug info holds (DWARF keeps columns in 16 bits).
MAX_DEBUG_COLUMN = 65535


class Codegen(ChecksMixin, MmaMixin, MathMixin, MemoryMixin, WgmmaMixin, CollectiveMixin):
    """Builds the LLVM module of one prepared kernel (see the module docstring)."""

    def __init__(
        self,
        kernel: FuncOp,
        plan: LayoutPlan,
        inlined_at: dict[int, tuple[str, Location]],
        *,
        arch: str,
        num_warps: int,
        debug: bool = False,
    ) -> None:
        self.kernel = kernel
        #: Debug mode's bounds checks and recording asserts (None: off).
        self.checks = CheckState(kernel) if debug else None
        self.plan = plan
        self.inlined_at = inlined_at
        self.arch = arch
        self.num_warps = num_warps
        self.axis = AxisAnalysis(kernel)
        self.values: dict[int, Lowered] = {}
        self.smem_bytes = 0
        self.uses_libdevice = False
        self.module = ir.Module(name=kernel.sym_name)
        self.module.triple = "nvptx64-nvidia-cuda"
        self._decls: dict[str, ir.Function] = {}
        self._cache: dict[object, ir.Value] = {}
        self._strings: dict[str, ir.Value] = {}
        self._debug = _DebugInfo(self.module, kernel)

    # ------------------------------------------------------------ driver
    def generate(self) -> ir.Module:
        """Lower the kernel and return the LLVM module."""
        args = self.kernel.body.args
        params = [self.param_type(a.type) for a in args]
        fnty = ir.FunctionType(VOID, params + self.hidden_param_types())
        self.fn = ir.Function(self.module, fnty, self.kernel.sym_name)
        self.fn.calling_convention = "ptx_kernel"
        self.fn.set_metadata("dbg", self._debug.subprogram)
        prologue = self.fn.append_basic_block("prologue")
        body = self.fn.append_basic_block("body")
        self.pb = ir.IRBuilder(prologue)
        self.pb.debug_metadata = self._debug.location(self.kernel.loc, None)
        self.pb.position_before(self.pb.branch(body))
        self.b = ir.IRBuilder(body)
        self.b.debug_metadata = self.pb.debug_metadata
        self.smem = self._declare_smem()
        for arg, param in zip(args, self.fn.args):
            self.bind(arg, self._param_value(arg.type, param))
        self.bind_hidden(list(self.fn.args[len(args) :]))
        self.lower_ops(self.kernel.body.ops)
        self.b.ret_void()
        self._annotate_max_threads()
        return self.module

    def param_type(self, t: object) -> ir.Type:
        """The kernel parameter type of an argument (``i1`` travels as a byte)."""
        if isinstance(t, ScalarType) and t.is_bool():
            return I8
        return ll_type(t)

    def _param_value(self, t: object, param: ir.Argument) -> ir.Value:
        if isinstance(t, ScalarType) and t.is_bool():
            return self.pb.icmp_unsigned("!=", param, ir.Constant(I8, 0))
        return param

    def _declare_smem(self) -> ir.GlobalVariable:
        smem = ir.GlobalVariable(self.module, ir.ArrayType(I8, 0), "global_smem", addrspace=3)
        smem.linkage = "external"
        smem.align = 16
        smem.type = SHARED_PTR  # opaque pointer, so GEPs name their element type
        return smem

    def _annotate_max_threads(self) -> None:
        # .maxntid lets ptxas budget registers for the real CTA size.
        md = self.module.add_named_metadata("nvvm.annotations")
        threads = ir.Constant(I32, 32 * self.num_warps)
        md.add(
            self.module.add_metadata([self.fn, ir.MetaDataString(self.module, "maxntidx"), threads])
        )

    # ------------------------------------------------------------ values
    def bind(self, v: Value, lowered: Lowered) -> None:
        """Record the lowered form of IR value ``v``."""
        self.values[id(v)] = lowered

    def get(self, v: Value) -> Lowered:
        """The lowered form of IR value ``v``."""
        return self.values[id(v)]

    def tensor(self, v: Value) -> RegTile:
        """The per-thread registers of block value ``v``."""
        t = self.values[id(v)]
        assert isinstance(t, RegTile), "expected a block value"
        return t

    def layout(self, v: Value) -> Layout:
        """The layout the plan chose for block value ``v``."""
        return self.plan.of(v)

    # ------------------------------------------------------------ helpers
    def declare(self, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        """Declare (once) an external or intrinsic function."""
        fn = self._decls.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, args), name)
            self._decls[name] = fn
        return fn

    def call_intrinsic(self, name: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
        """Call an LLVM intrinsic."""
        return self.b.call(self.declare(name, ret, [a.type for a in args]), args)

    call_function = call_intrinsic

    def sreg(self, name: str, builder: ir.IRBuilder | None = None) -> ir.Value:
        """Read a PTX special register (``tid.x``, ``ctaid.y`` ...)."""
        b = builder or self.b
        return b.call(self.declare(f"llvm.nvvm.read.ptx.sreg.{name}", I32, []), [])

    def cached(self, key: object, make: Callable[[ir.IRBuilder], ir.Value]) -> ir.Value:
        """A value computed once in the prologue (dominates the whole kernel)."""
        if key not in self._cache:
            self._cache[key] = make(self.pb)
        return self._cache[key]

    @property
    def tid(self) -> ir.Value:
        """Thread index in the CTA."""
        return self.cached("tid", lambda b: self.sreg("tid.x", b))

    @property
    def lane(self) -> ir.Value:
        """Lane index in the warp."""
        return self.cached("lane", lambda b: b.and_(self.tid, ir.Constant(I32, 31)))

    @property
    def warp(self) -> ir.Value:
        """Warp index in the CTA."""
        return self.cached("warp", lambda b: b.lshr(self.tid, ir.Constant(I32, 5)))

    def thread_offsets(self, layout: Layout) -> list[ir.Value]:
        """Per dimension, this thread's coordinate offset in ``layout`` (i32)."""
        return [self._thread_offset(layout, d) for d in range(layout.rank)]

    def _thread_offset(self, layout: Layout, dim: int) -> ir.Value:
        # Lane bit i is thread-id bit i and warp bit j is thread-id bit 5 + j,
        # so the offset is packed straight from tid (see bitpack for why).
        lanes = [(i, basis[dim]) for i, basis in enumerate(layout.lane_bases)]
        warps = [(LANE_BITS + j, basis[dim]) for j, basis in enumerate(layout.warp_bases)]
        return self.cached(("toff", layout, dim), lambda b: pack_bits(b, self.tid, lanes + warps))

    def owner_pred(self, layout: Layout) -> ir.Value | None:
        """True in the one thread of each group holding copies of the same elements."""
        lanes, warps = layout.replicated_lane_mask(), layout.replicated_warp_mask()
        if not lanes and not warps:
            return None

        def make(b: ir.IRBuilder) -> ir.Value:
            bits = b.or_(
                b.and_(self.lane, ir.Constant(I32, lanes)),
                b.and_(self.warp, ir.Constant(I32, warps)),
            )
            return b.icmp_unsigned("==", bits, ir.Constant(I32, 0))

        return self.cached(("owner", layout), make)

    def is_thread0(self) -> ir.Value:
        """True in thread 0 of the CTA."""
        return self.cached("t0", lambda b: b.icmp_unsigned("==", self.tid, ir.Constant(I32, 0)))

    def string(self, text: str) -> ir.Value:
        """A generic pointer to a NUL-terminated constant string."""
        if text not in self._strings:
            data = bytearray(text.encode() + b"\0")
            ty = ir.ArrayType(I8, len(data))
            g = ir.GlobalVariable(self.module, ty, f"str{len(self._strings)}", addrspace=1)
            g.initializer = ir.Constant(ty, data)
            g.global_constant = True
            g.linkage = "internal"
            g.type = GLOBAL_PTR
            self._strings[text] = self.pb.addrspacecast(g, ir.PointerType())
        return self._strings[text]

    # ------------------------------------------------------------ lowering
    def lower_ops(self, ops: list[Operation]) -> None:
        """Lower a list of ops (a block's body, without its terminator's meaning)."""
        for op in ops:
            self.b.debug_metadata = self._debug.location(op.loc, self.inlined_at.get(id(op)))
            self.lower(op)

    def lower(self, op: Operation) -> None:
        """Lower one op."""
        handler = getattr(self, "op_" + op.name.replace(".", "_"), None)
        if handler is None:
            handler = self._generic_handler(op)
        try:
            result = handler(op)
        except LibdeviceMissing as e:
            raise error(op.loc, str(e)) from None
        if result is None:
            return
        results = result if isinstance(result, list) else [result]
        for r, v in zip(op.results, results):
            self.bind(r, v)

    def _generic_handler(self, op: Operation) -> Callable[[Operation], object]:
        name = op.name
        if name in ("arith.neg", "arith.not", "math.abs") or name[5:] in MATH_UNARY:
            return self.op_unary
        if name.startswith(("arith.", "math.div_rn", "math.pow")) or name[5:] in MATH_BINARY:
            return self.op_binary
        raise error(op.loc, f"the GPU backend cannot lower '{name}'")

    def elementwise(self, op: Operation, fn: Callable[..., ir.Value]) -> Lowered:
        """Apply ``fn`` to each register of the operands (scalars are repeated)."""
        args = [self.get(v) for v in op.operands]
        if not isinstance(op.results[0].type, BlockType):
            return fn(*args)
        layout = self.layout(op.results[0])
        n = layout.num_regs
        for a in args:
            if isinstance(a, RegTile) and a.layout != layout:
                raise error(op.loc, "internal error: operand layout differs from the result's")
        cols = [a.vals if isinstance(a, RegTile) else [a] * n for a in args]
        return RegTile(layout, [fn(*xs) for xs in zip(*cols)])

    # ------------------------------------------------------------ constants, ids
    def op_arith_constant(self, op: Operation) -> Lowered:
        t = op.result.type
        c = const(element_type(t), op.attrs["value"])
        if isinstance(t, BlockType):
            layout = self.layout(op.result)
            return RegTile(layout, [c] * layout.num_regs)
        return c

    def op_tt_get_program_id(self, op: Operation) -> ir.Value:
        return self.sreg(f"ctaid.{_SREG[op.attrs['axis']]}")

    def op_tt_get_num_programs(self, op: Operation) -> ir.Value:
        return self.sreg(f"nctaid.{_SREG[op.attrs['axis']]}")

    def op_tt_make_range(self, op: Operation) -> RegTile:
        layout = self.layout(op.result)
        (off,) = self.thread_offsets(layout)
        base = self.b.add(off, ir.Constant(I32, op.attrs["start"]))
        vals = [self.b.add(base, ir.Constant(I32, c[0])) for c in layout.reg_coords()]
        return RegTile(layout, vals)

    # ------------------------------------------------------------ elementwise
    def op_binary(self, op: Operation) -> Lowered:
        st = element_type(op.result.type)
        return self.elementwise(op, lambda a, b: self.binary(op.name, st, a, b))

    def op_unary(self, op: Operation) -> Lowered:
        st = element_type(op.result.type)
        return self.elementwise(op, lambda a: self.unary(op.name, st, a))

    def op_arith_cmp(self, op: Operation) -> Lowered:
        st = element_type(op.operands[0].type)
        pred = op.attrs["pred"]
        return self.elementwise(op, lambda a, b: self.compare(pred, st, a, b))

    def op_arith_select(self, op: Operation) -> Lowered:
        return self.elementwise(op, lambda c, a, b: self.b.select(c, a, b))

    def op_math_fma(self, op: Operation) -> Lowered:
        st = element_type(op.result.type)
        return self.elementwise(op, lambda a, b, c: self.fma(st, a, b, c))

    def op_arith_cast(self, op: Operation) -> Lowered:
        src = element_type(op.operands[0].type)
        dst = element_type(op.result.type)
        return self.elementwise(op, lambda v: self.cast(src, dst, v))

    def op_arith_bitcast(self, op: Operation) -> Lowered:
        dst = ll_type(element_type(op.result.type))
        return self.elementwise(op, lambda v: v if v.type == dst else self.b.bitcast(v, dst))

    def op_tt_addptr(self, op: Operation) -> Lowered:
        pointee = element_type(op.result.type).pointee
        ty = ll_type(pointee) if not pointee.is_bool() else I8
        return self.elementwise(op, lambda p, o: self.b.gep(p, [o], source_etype=ty))

    def op_tt_hint(self, op: Operation) -> Lowered:
        return self.get(op.operands[0])

    # ------------------------------------------------------------ scalar semantics
    def binary(self, name: str, st: ScalarType, a: ir.Value, b: ir.Value) -> ir.Value:
        """``a <name> b`` on one element of type ``st``."""
        if st == BF16:
            r = self.binary(name, F32, self.to_f32(a, st), self.to_f32(b, st))
            return self.from_f32(r, st)
        if st.is_float():
            return self._float_binary(name, st, a, b)
        return self._int_binary(name, st, a, b)

    def _float_binary(self, name: str, st: ScalarType, a: ir.Value, b: ir.Value) -> ir.Value:
        bld = self.b
        if name in _FLOAT_BINARY:
            # 'contract' lets a mul followed by an add fuse into an FMA, as in Triton.
            return getattr(bld, _FLOAT_BINARY[name])(a, b, flags=("contract",))
        suffix = _fsuffix(st)
        if name == "arith.div" and st == F32:
            fty = ir.FunctionType(F32_T, [F32_T, F32_T])
            return bld.call(ir.InlineAsm(fty, "div.full.f32 $0, $1, $2;", "=f,f,f"), [a, b])
        if name in ("arith.div", "math.div_rn"):
            return bld.fdiv(a, b)
        if name == "arith.rem":
            return bld.frem(a, b)
        if name in ("arith.max", "arith.min"):
            fn = "maxnum" if name == "arith.max" else "minnum"
            return self.call_intrinsic(f"llvm.{fn}.{suffix}", a.type, [a, b])
        if name == "math.pow" or name[5:] in MATH_BINARY:
            return self.math(name[5:], st, a, b)
        raise NotImplementedError(name)

    def _int_binary(self, name: str, st: ScalarType, a: ir.Value, b: ir.Value) -> ir.Value:
        bld = self.b
        signed = st.is_signed()
        if name in _INT_BINARY:
            return getattr(bld, _INT_BINARY[name])(a, b)
        # BEGIN EXERCISE c6-lower
        # STUB: if name in ("arith.div", "arith.rem", "arith.shr", "arith.max", "arith.min"):
        # STUB:     raise NotImplementedError(f"c6-lower: lower {name} on {st!r} to LLVM IR")
        if name == "arith.div":
            return bld.sdiv(a, b) if signed else bld.udiv(a, b)
        if name == "arith.rem":
            return bld.srem(a, b) if signed else bld.urem(a, b)
        if name == "arith.shr":
            return bld.ashr(a, b) if signed else bld.lshr(a, b)
        if name in ("arith.max", "arith.min"):
            op = ">" if name == "arith.max" else "<"
            cmp = bld.icmp_signed(op, a, b) if signed else bld.icmp_unsigned(op, a, b)
            return bld.select(cmp, a, b)
        # END EXERCISE
        if name == "arith.umulhi":
            wide = ir.IntType(2 * st.bitwidth)
            prod = bld.mul(bld.zext(a, wide), bld.zext(b, wide))
            return bld.trunc(bld.lshr(prod, ir.Constant(wide, st.bitwidth)), a.type)
        raise NotImplementedError(name)

    def unary(self, name: str, st: ScalarType, a: ir.Value) -> ir.Value:
        """``name(a)`` on one element of type ``st``."""
        bld = self.b
        if name == "arith.not":
            return bld.not_(a)
        if name == "arith.neg":
            if st == BF16:
                return bld.xor(a, ir.Constant(I16, 0x8000))
            return bld.fneg(a) if st.is_float() else bld.neg(a)
        if name == "math.abs":
            return self._abs(st, a)
        return self.math(name[5:], st, a)

    def _abs(self, st: ScalarType, a: ir.Value) -> ir.Value:
        bld = self.b
        if st == BF16:
            return bld.and_(a, ir.Constant(I16, 0x7FFF))
        if st.is_float():
            return self.call_intrinsic(f"llvm.fabs.{_fsuffix(st)}", a.type, [a])
        if not st.is_signed():
            return a
        neg = bld.icmp_signed("<", a, ir.Constant(a.type, 0))
        return bld.select(neg, bld.neg(a), a)

    def fma(self, st: ScalarType, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
        """``a * b + c`` with one rounding."""
        if st == BF16:
            args = [self.to_f32(v, st) for v in (a, b, c)]
            return self.from_f32(self.fma(F32, *args), st)
        return self.call_intrinsic(f"llvm.fma.{_fsuffix(st)}", a.type, [a, b, c])

    def compare(self, pred: str, st: ElemLike, a: ir.Value, b: ir.Value) -> ir.Value:
        """``a <pred> b`` as an ``i1``."""
        bld = self.b
        if isinstance(st, PointerType):
            a, b, st = bld.ptrtoint(a, I64), bld.ptrtoint(b, I64), ScalarType("u64")
        if st == BF16:
            a, b, st = self.to_f32(a, st), self.to_f32(b, st), F32
        if st.is_float():
            # Python semantics: every compare is ordered except '!='.
            if pred == "ne":
                return bld.fcmp_unordered("!=", a, b)
            return bld.fcmp_ordered(_ICMP[pred], a, b)
        if st.is_signed():
            return bld.icmp_signed(_ICMP[pred], a, b)
        return bld.icmp_unsigned(_ICMP[pred], a, b)

    def to_f32(self, v: ir.Value, st: ScalarType) -> ir.Value:
        """Widen a float of type ``st`` to f32."""
        bld = self.b
        if st == BF16:
            return bld.bitcast(bld.shl(bld.zext(v, I32), ir.Constant(I32, 16)), F32_T)
        if st == F32:
            return v
        if st.bitwidth < 32:
            return bld.fpext(v, F32_T)
        return bld.fptrunc(v, F32_T)

    def from_f32(self, v: ir.Value, st: ScalarType) -> ir.Value:
        """Round an f32 to float type ``st`` (nearest even)."""
        bld = self.b
        if st == BF16:
            if arch_number(self.arch) < 80:
                return self._bf16_in_software(v)
            fty = ir.FunctionType(I16, [F32_T])
            return bld.call(ir.InlineAsm(fty, "cvt.rn.bf16.f32 $0, $1;", "=h,f"), [v])
        if st == F32:
            return v
        if st.bitwidth < 32:
            return bld.fptrunc(v, ll_type(st))
        return bld.fpext(v, ll_type(st))

    def _bf16_in_software(self, v: ir.Value) -> ir.Value:
        """f32 -> bf16 bits, to nearest even (sm_75 has no ``cvt.rn.bf16.f32``); NaN stays NaN."""
        bld = self.b
        bits = bld.bitcast(v, I32)
        odd = bld.and_(bld.lshr(bits, ir.Constant(I32, 16)), ir.Constant(I32, 1))
        rounded = bld.add(bits, bld.add(ir.Constant(I32, 0x7FFF), odd))
        top = bld.trunc(bld.lshr(rounded, ir.Constant(I32, 16)), I16)
        is_nan = bld.fcmp_unordered("uno", v, v)
        return bld.select(is_nan, ir.Constant(I16, 0x7FC0), top)

    def cast(self, src: ElemLike, dst: ElemLike, v: ir.Value) -> ir.Value:
        """Convert ``v`` from type ``src`` to ``dst`` (see ``arith.cast``)."""
        bld = self.b
        if src == dst:
            return v
        if isinstance(src, PointerType) or isinstance(dst, PointerType):
            return self._pointer_cast(src, dst, v)
        if src.is_fp8():
            wide = fp8_to_f32(bld, src, v)
            return wide if dst == F32 else self.cast(F32, dst, wide)
        if dst.is_fp8():
            return f32_to_fp8(bld, dst, v if src == F32 else self.cast(src, F32, v))
        if dst.is_bool():
            zero = const(src, 0)
            return self.compare("ne", src, v, zero)
        if src == BF16 or dst == BF16:
            mid = (
                v if src == F32 else self.cast(src, F32, v) if src != BF16 else self.to_f32(v, src)
            )
            return self.from_f32(mid, dst) if dst == BF16 else self.cast(F32, dst, mid)
        if src.is_float() and dst.is_float():
            wider = dst.bitwidth > src.bitwidth
            return bld.fpext(v, ll_type(dst)) if wider else bld.fptrunc(v, ll_type(dst))
        if src.is_float():
            return bld.fptosi(v, ll_type(dst)) if dst.is_signed() else bld.fptoui(v, ll_type(dst))
        if dst.is_float():
            return bld.sitofp(v, ll_type(dst)) if src.is_signed() else bld.uitofp(v, ll_type(dst))
        return self._int_cast(src, dst, v)

    def _int_cast(self, src: ScalarType, dst: ScalarType, v: ir.Value) -> ir.Value:
        bld = self.b
        if dst.bitwidth == src.bitwidth:
            return v
        if dst.bitwidth < src.bitwidth:
            return bld.trunc(v, ll_type(dst))
        return bld.sext(v, ll_type(dst)) if src.is_signed() else bld.zext(v, ll_type(dst))

    def _pointer_cast(self, src: ElemLike, dst: ElemLike, v: ir.Value) -> ir.Value:
        if isinstance(src, PointerType) and isinstance(dst, PointerType):
            return v
        if isinstance(src, PointerType):
            return self._int_cast(ScalarType("u64"), dst, self.b.ptrtoint(v, I64))
        wide = self._int_cast(src, ScalarType("i64"), v)
        return self.b.inttoptr(wide, GLOBAL_PTR)

    # ------------------------------------------------------------ shapes
    def op_tt_splat(self, op: Operation) -> RegTile:
        layout = self.layout(op.result)
        return RegTile(layout, [self.get(op.operands[0])] * layout.num_regs)

    def op_tt_broadcast(self, op: Operation) -> RegTile:
        src = self.tensor(op.operands[0])
        in_shape = op.operands[0].shape
        index = {c: i for i, c in enumerate(src.layout.reg_coords())}
        layout = self.layout(op.result)
        vals = []
        for coord in layout.reg_coords():
            key = tuple(c if s > 1 else 0 for c, s in zip(coord, in_shape))
            vals.append(src.vals[index[key]])
        return RegTile(layout, vals)

    def op_tt_expand_dims(self, op: Operation) -> RegTile:
        return RegTile(self.layout(op.result), self.tensor(op.operands[0]).vals)

    # ------------------------------------------------------------ control flow
    def flatten(self, values: list[Lowered]) -> list[ir.Value]:
        """All registers of ``values``, in order."""
        out: list[ir.Value] = []
        for v in values:
            out.extend(v.vals if isinstance(v, RegTile) else [v])
        return out

    def unflatten(self, like: list[Value], flat: list[ir.Value]) -> list[Lowered]:
        """Inverse of :meth:`flatten` for IR values ``like``."""
        out: list[Lowered] = []
        pos = 0
        for v in like:
            if isinstance(v.type, BlockType):
                layout = self.layout(v)
                out.append(RegTile(layout, flat[pos : pos + layout.num_regs]))
                pos += layout.num_regs
            else:
                out.append(flat[pos])
                pos += 1
        return out

    def lower_region(self, region: Region, args: list[Lowered]) -> list[Lowered]:
        """Lower a region's body with ``args``; returns its terminator's operands."""
        for a, v in zip(region.args, args):
            self.bind(a, v)
        ops = region.ops
        self.lower_ops(ops[:-1])
        return [self.get(v) for v in ops[-1].operands]

    def _phis(self, like: list[Lowered]) -> list[ir.PhiInstr]:
        return [self.b.phi(v.type) for v in self.flatten(like)]

    def op_scf_for(self, op: Operation) -> list[Lowered]:
        bld = self.b
        lb, ub, step = (self.get(v) for v in op.operands[:3])
        st = element_type(op.operands[0].type)
        inits = [self.get(v) for v in op.operands[3:]]
        entry = bld.block
        header = bld.append_basic_block("for.header")
        body = bld.append_basic_block("for.body")
        exit_ = bld.append_basic_block("for.exit")
        bld.branch(header)
        bld.position_at_end(header)
        iv = bld.phi(lb.type)
        phis = self._phis(inits)
        iv.add_incoming(lb, entry)
        for phi, v in zip(phis, self.flatten(inits)):
            phi.add_incoming(v, entry)
        cond = bld.icmp_signed("<", iv, ub) if st.is_signed() else bld.icmp_unsigned("<", iv, ub)
        bld.cbranch(cond, body, exit_)
        bld.position_at_end(body)
        carried = self.unflatten(op.regions[0].args[1:], list(phis))
        yielded = self.lower_region(op.regions[0], [iv, *carried])
        nxt = self.b.add(iv, step)
        latch = self.b.block
        self.b.branch(header)
        iv.add_incoming(nxt, latch)
        for phi, v in zip(phis, self.flatten(yielded)):
            phi.add_incoming(v, latch)
        self.b.position_at_end(exit_)
        return self.unflatten(op.results, list(phis))

    def op_scf_if(self, op: Operation) -> list[Lowered]:
        bld = self.b
        cond = self.get(op.operands[0])
        then_bb = bld.append_basic_block("if.then")
        else_bb = bld.append_basic_block("if.else")
        merge = bld.append_basic_block("if.end")
        bld.cbranch(cond, then_bb, else_bb)
        ends = []
        for region, bb in zip(op.regions, (then_bb, else_bb)):
            self.b.position_at_end(bb)
            flat = self.flatten(self.lower_region(region, []))
            ends.append((self.b.block, flat))
            self.b.branch(merge)
        self.b.position_at_end(merge)
        if not op.results:
            return []
        phis = [self.b.phi(v.type) for v in ends[0][1]]
        for block, flat in ends:
            for phi, v in zip(phis, flat):
                phi.add_incoming(v, block)
        return self.unflatten(op.results, list(phis))

    def op_scf_while(self, op: Operation) -> list[Lowered]:
        bld = self.b
        inits = [self.get(v) for v in op.operands]
        entry = bld.block
        before = bld.append_basic_block("while.before")
        after = bld.append_basic_block("while.after")
        exit_ = bld.append_basic_block("while.exit")
        bld.branch(before)
        bld.position_at_end(before)
        phis = self._phis(inits)
        for phi, v in zip(phis, self.flatten(inits)):
            phi.add_incoming(v, entry)
        carried = self.unflatten(op.regions[0].args, list(phis))
        cond_vals = self.lower_region(op.regions[0], carried)
        self.b.cbranch(cond_vals[0], after, exit_)
        self.b.position_at_end(after)
        yielded = self.lower_region(op.regions[1], cond_vals[1:])
        latch = self.b.block
        self.b.branch(before)
        for phi, v in zip(phis, self.flatten(yielded)):
            phi.add_incoming(v, latch)
        self.b.position_at_end(exit_)
        return cond_vals[1:]

    def op_tt_return(self, op: Operation) -> None:
        return None

    def op_tt_barrier(self, op: Operation) -> None:
        self.barrier()


ElemLike = ScalarType | PointerType


def _fsuffix(st: ScalarType) -> str:
    return {16: "f16", 32: "f32", 64: "f64"}[st.bitwidth]


# ------------------------------------------------------------------ debug info


class _DebugInfo:
    """DIFile / DISubprogram / DILocation metadata for ``.loc`` line info."""

    def __init__(self, module: ir.Module, kernel: FuncOp) -> None:
        self.module = module
        self.files: dict[str, ir.DIValue] = {}
        self.subprograms: dict[str, ir.DIValue] = {}
        self.locations: dict[tuple, ir.DIValue] = {}
        loc = kernel.loc
        file = self.file(loc.file)
        self.unit = module.add_debug_info(
            "DICompileUnit",
            {
                "language": ir.DIToken("DW_LANG_Python"),
                "file": file,
                "producer": "minitriton",
                "runtimeVersion": 0,
                "isOptimized": True,
                # Only .file/.loc directives: no DWARF sections, no 'debug' target.
                "emissionKind": ir.DIToken("DebugDirectivesOnly"),
            },
            is_distinct=True,
        )
        module.add_named_metadata("llvm.dbg.cu", self.unit)
        for key, value in (("Debug Info Version", 3), ("Dwarf Version", 4)):
            flag = [ir.Constant(I32, 2), key, ir.Constant(I32, value)]
            module.add_named_metadata("llvm.module.flags", module.add_metadata(flag))
        self.subprogram = self.function(kernel.sym_name, loc)

    def file(self, path: str) -> ir.DIValue:
        """The DIFile of ``path``."""
        if path not in self.files:
            directory, name = os.path.split(os.path.abspath(path)) if path else ("", "")
            self.files[path] = self.module.add_debug_info(
                "DIFile", {"filename": name or "<unknown>", "directory": directory}
            )
        return self.files[path]

    def function(self, name: str, loc: Location) -> ir.DIValue:
        """A DISubprogram for the kernel or an inlined helper."""
        if name not in self.subprograms:
            file = self.file(loc.file)
            sub_type = self.module.add_debug_info(
                "DISubroutineType", {"types": self.module.add_metadata([])}
            )
            self.subprograms[name] = self.module.add_debug_info(
                "DISubprogram",
                {
                    "name": name,
                    "file": file,
                    "line": max(loc.line, 0),
                    "type": sub_type,
                    "scopeLine": max(loc.line, 0),
                    "unit": self.unit,
                    "spFlags": ir.DIToken("DISPFlagDefinition | DISPFlagOptimized"),
                },
                is_distinct=True,
            )
        return self.subprograms[name]

    def location(self, loc: Location, inlined: tuple[str, Location] | None) -> ir.DIValue:
        """The DILocation of an op (with ``inlinedAt`` for inlined helpers)."""
        key = (loc, inlined)
        if key in self.locations:
            return self.locations[key]
        if inlined is None:
            scope, fields = self.subprogram, {}
        else:
            callee, site = inlined
            scope = self.function(callee, loc)
            fields = {"inlinedAt": self.location(site, None)}
        # DWARF columns are 16 bits: a longer line keeps its line number only.
        column = loc.col if 0 < loc.col <= MAX_DEBUG_COLUMN else 0
        fields.update({"line": max(loc.line, 0), "column": column, "scope": scope})
        self.locations[key] = self.module.add_debug_info("DILocation", fields)
        return self.locations[key]


__all__ = ["Codegen", "I1"]
