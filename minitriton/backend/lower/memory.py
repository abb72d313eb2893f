"""Global memory: loads, stores and atomics.

Vectorization: when a thread's registers ``r .. r+n-1`` hold ``n``
consecutive elements (its layout says so) and the axis analysis proves the
pointers contiguous, aligned to ``n`` elements and the mask constant over
them, the ``n`` elements move as one access of up to 16 bytes
(``ld.global.v4.b32``). Unmasked accesses are plain LLVM vector loads and
stores (``load <4 x float>, align 16``); masked ones use predicated PTX, as
Triton does (``@p ld.global.v4.b32 {...}, [addr];`` after zeroing the
destination), then ``other`` is selected in per element. Accesses narrower
than 32 bits that are masked use a branch.

Threads that hold copies of the same elements (a block smaller than the
CTA) do not store or run atomics twice: only one owner does. Scalar stores
and atomics are done by thread 0; an atomic's old value reaches the other
threads through shared memory.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from minitriton.backend.accelerate_matmul import arch_number
from minitriton.backend.layouts import Layout
from minitriton.backend.lltypes import I1, I8, I16, I32, RegTile, byte_size, mem_type
from minitriton.diagnostics import error
from minitriton.ir.core import Operation, Value
from minitriton.ir.types import BF16, F16, BlockType, ScalarType, element_type

_SEM = {"relaxed": "relaxed", "acquire": "acquire", "release": "release", "acq_rel": "acq_rel"}
_SCOPE = {"gpu": "gpu", "cta": "cta", "sys": "sys"}


class MemoryMixin:
    """Memory-op lowering for :class:`~minitriton.backend.codegen.Codegen`."""

    b: ir.IRBuilder

    # ------------------------------------------------------------ utilities
    def guarded(
        self, pred: ir.Value, fn: Callable[[], list[ir.Value]], defaults: list[ir.Value]
    ) -> list[ir.Value]:
        """Run ``fn`` only where ``pred`` holds; elsewhere the results are ``defaults``."""
        b = self.b
        start = b.block
        then_bb = b.append_basic_block("guard.then")
        merge = b.append_basic_block("guard.end")
        b.cbranch(pred, then_bb, merge)
        b.position_at_end(then_bb)
        vals = fn()
        then_end = b.block
        b.branch(merge)
        b.position_at_end(merge)
        out = []
        for v, d in zip(vals, defaults):
            phi = b.phi(v.type)
            phi.add_incoming(v, then_end)
            phi.add_incoming(d, start)
            out.append(phi)
        return out

    def vector_width(self, ptr: Value, mask: Value | None, layout: Layout) -> int:
        """Elements per access for block pointer ``ptr`` (see the module docstring)."""
        dim, run = layout.contiguous_run()
        pointee = element_type(ptr.type).pointee
        eb = byte_size(pointee)
        info = self.axis.get(ptr)
        vec = min(run, info.contig[dim], max(1, info.div[dim] // eb), max(1, 16 // eb))
        if mask is not None:
            vec = min(vec, self.axis.get(mask).const[dim])
        return 1 << (max(1, vec).bit_length() - 1)

    def _and(self, a: ir.Value | None, b: ir.Value | None) -> ir.Value | None:
        if a is None:
            return b
        if b is None:
            return a
        return self.b.and_(a, b)

    def _from_mem(self, st: ScalarType, v: ir.Value) -> ir.Value:
        if isinstance(st, ScalarType) and st.is_bool():
            return self.b.icmp_unsigned("!=", v, ir.Constant(I8, 0))
        return v

    def _to_mem(self, st: ScalarType, v: ir.Value) -> ir.Value:
        if isinstance(st, ScalarType) and st.is_bool():
            return self.b.zext(v, I8)
        return v

    # ------------------------------------------------------------ words
    @staticmethod
    def _words(total_bytes: int) -> tuple[ir.IntType, int, str, str]:
        if total_bytes >= 4:
            return I32, total_bytes // 4, "b32", "r"
        return I16, 1, "b16", "h"

    def _pack(self, vals: list[ir.Value], mt: ir.Type, total: int) -> list[ir.Value]:
        word, n, _, _ = self._words(total)
        b = self.b
        vec = ir.VectorType(mt, len(vals))
        packed = ir.Constant(vec, None)
        for i, v in enumerate(vals):
            packed = b.insert_element(packed, v, ir.Constant(I32, i))
        as_words = b.bitcast(packed, ir.VectorType(word, n))
        return [b.extract_element(as_words, ir.Constant(I32, i)) for i in range(n)]

    def _unpack(self, words: list[ir.Value], mt: ir.Type, count: int) -> list[ir.Value]:
        b = self.b
        wvec = ir.Constant(ir.VectorType(words[0].type, len(words)), None)
        for i, w in enumerate(words):
            wvec = b.insert_element(wvec, w, ir.Constant(I32, i))
        vals = b.bitcast(wvec, ir.VectorType(mt, count))
        return [b.extract_element(vals, ir.Constant(I32, i)) for i in range(count)]

    # ------------------------------------------------------------ loads
    def op_tt_load(self, op: Operation) -> object:
        ptr = op.operands[0]
        if not isinstance(ptr.type, BlockType):
            return self._scalar_load(op)
        layout = self.layout(ptr)
        mask = op.operands[1] if len(op.operands) > 1 else None
        st = element_type(op.result.type)
        ptrs = self.tensor(ptr).vals
        masks = self.tensor(mask).vals if mask is not None else None
        vec = self.vector_width(ptr, mask, layout)
        vals: list[ir.Value] = []
        for r in range(0, layout.num_regs, vec):
            pred = masks[r] if masks is not None else None
            pred = self.check_access(op, layout, ptrs, r, vec, pred)
            vals.extend(self._load_vector(ptrs[r], pred, st, vec))
        vals = [self._from_mem(st, v) for v in vals]
        if len(op.operands) == 3 and masks is not None:
            others = self.tensor(op.operands[2]).vals
            vals = [self.b.select(m, v, o) for m, v, o in zip(masks, vals, others)]
        return RegTile(layout, vals)

    def _load_vector(self, ptr: ir.Value, pred: ir.Value | None, st: ScalarType, vec: int) -> list:
        mt = mem_type(st)
        total = vec * byte_size(st)
        if pred is None:
            ty = ir.VectorType(mt, vec) if vec > 1 else mt
            v = self.b.load(ptr, typ=ty, align=total)
            if vec == 1:
                return [v]
            return [self.b.extract_element(v, ir.Constant(I32, i)) for i in range(vec)]
        if total < 2:
            zero = ir.Constant(mt, 0)
            return self.guarded(pred, lambda: [self.b.load(ptr, typ=mt, align=1)], [zero])
        return self._predicated_load(ptr, pred, mt, vec, total)

    def _predicated_load(
        self, ptr: ir.Value, pred: ir.Value, mt: ir.Type, vec: int, total: int
    ) -> list[ir.Value]:
        word, n, suffix, con = self._words(total)
        outs = ", ".join(f"${i}" for i in range(n))
        zero = "".join(f"mov.{suffix} ${i}, 0;\n\t" for i in range(n))
        v = f".v{n}" if n > 1 else ""
        text = f"{zero}@${n + 1} ld.global{v}.{suffix} {{{outs}}}, [${n}];"
        cons = ",".join([f"={con}"] * n + ["l", "b"])
        ret = word if n == 1 else ir.LiteralStructType([word] * n)
        asm = ir.InlineAsm(ir.FunctionType(ret, [ptr.type, I1]), text, cons, side_effect=True)
        res = self.b.call(asm, [ptr, pred])
        words = [res] if n == 1 else [self.b.extract_value(res, i) for i in range(n)]
        return self._unpack(words, mt, vec)

    def _scalar_load(self, op: Operation) -> ir.Value:
        st = element_type(op.result.type)
        ptr = self.get(op.operands[0])
        mt = mem_type(st)
        align = byte_size(st)
        mask = self.get(op.operands[1]) if len(op.operands) > 1 else None
        mask = self.check_access(op, None, [ptr], 0, 1, mask)
        if mask is None:
            return self._from_mem(st, self.b.load(ptr, typ=mt, align=align))
        other = self._to_mem(st, self.get(op.operands[2])) if len(op.operands) == 3 else None
        default = other if other is not None else ir.Constant(mt, 0)
        (v,) = self.guarded(mask, lambda: [self.b.load(ptr, typ=mt, align=align)], [default])
        return self._from_mem(st, v)

    # ------------------------------------------------------------ stores
    def op_tt_store(self, op: Operation) -> None:
        ptr, value = op.operands[:2]
        mask = op.operands[2] if len(op.operands) == 3 else None
        st = element_type(value.type)
        if not isinstance(ptr.type, BlockType):
            pred = self._and(self.is_thread0(), self.get(mask) if mask is not None else None)
            pred = self.check_access(op, None, [self.get(ptr)], 0, 1, pred)
            self._store_vector(self.get(ptr), pred, [self._to_mem(st, self.get(value))], st)
            return
        layout = self.layout(ptr)
        owner = self.owner_pred(layout)
        ptrs, vals = self.tensor(ptr).vals, self.tensor(value).vals
        masks = self.tensor(mask).vals if mask is not None else None
        vec = self.vector_width(ptr, mask, layout)
        for r in range(0, layout.num_regs, vec):
            pred = self._and(owner, masks[r] if masks is not None else None)
            pred = self.check_access(op, layout, ptrs, r, vec, pred)
            group = [self._to_mem(st, v) for v in vals[r : r + vec]]
            self._store_vector(ptrs[r], pred, group, st)

    def _store_vector(
        self, ptr: ir.Value, pred: ir.Value | None, vals: list[ir.Value], st: ScalarType
    ) -> None:
        mt = mem_type(st)
        vec = len(vals)
        total = vec * byte_size(st)
        if pred is None:
            self.b.store(self._vector(vals, mt) if vec > 1 else vals[0], ptr, align=total)
            return
        if total < 2:
            self._guarded_store(pred, vals[0], ptr)
            return
        word, n, suffix, con = self._words(total)
        words = self._pack(vals, mt, total) if (vec > 1 or vals[0].type != word) else vals
        ins = ", ".join(f"${i + 2}" for i in range(n))
        v = f".v{n}" if n > 1 else ""
        text = f"@$1 st.global{v}.{suffix} [$0], {{{ins}}};"
        cons = ",".join(["l", "b"] + [con] * n)
        fty = ir.FunctionType(ir.VoidType(), [ptr.type, I1] + [word] * n)
        self.b.call(ir.InlineAsm(fty, text, cons, side_effect=True), [ptr, pred, *words])

    def _guarded_store(self, pred: ir.Value, value: ir.Value, ptr: ir.Value) -> None:
        def store() -> list[ir.Value]:
            self.b.store(value, ptr, align=1)
            return []

        self.guarded(pred, store, [])

    def _vector(self, vals: list[ir.Value], mt: ir.Type) -> ir.Value:
        vec = ir.Constant(ir.VectorType(mt, len(vals)), None)
        for i, v in enumerate(vals):
            vec = self.b.insert_element(vec, v, ir.Constant(I32, i))
        return vec

    # ------------------------------------------------------------ atomics
    def op_tt_atomic_rmw(self, op: Operation) -> object:
        kind = op.attrs["kind"]
        return self._atomic(op, lambda p, pred, vals: self._rmw(op, kind, p, pred, vals[0]))

    def op_tt_atomic_cas(self, op: Operation) -> object:
        return self._atomic(op, lambda p, pred, vals: self._cas(op, p, pred, vals[0], vals[1]))

    def _atomic(self, op: Operation, emit: Callable) -> object:
        ptr = op.operands[0]
        n_vals = 2 if op.name == "tt.atomic_cas" else 1
        vals_ir = op.operands[1 : 1 + n_vals]
        mask = op.operands[1 + n_vals] if len(op.operands) > 1 + n_vals else None
        st = element_type(op.result.type)
        if not isinstance(ptr.type, BlockType):
            pred = self._and(self.is_thread0(), self.get(mask) if mask is not None else None)
            pred = self.check_access(op, None, [self.get(ptr)], 0, 1, pred)
            old = emit(self.get(ptr), pred, [self.get(v) for v in vals_ir])
            return self.broadcast_from_thread0(old, st)
        layout = self.layout(ptr)
        owner = self.owner_pred(layout)
        ptrs = self.tensor(ptr).vals
        cols = [self.tensor(v).vals for v in vals_ir]
        masks = self.tensor(mask).vals if mask is not None else [None] * len(ptrs)
        olds = []
        for i, p in enumerate(ptrs):
            pred = self._and(owner, masks[i])
            pred = self.check_access(op, layout, ptrs, i, 1, pred) or ir.Constant(I1, 1)
            olds.append(emit(p, pred, [c[i] for c in cols]))
        result = RegTile(layout, olds)
        if owner is not None:
            result = self.share_from_owners(result, st)
        return result

    def _sem_scope(self, op: Operation) -> str:
        sem = _SEM.get(op.attrs.get("sem", "acq_rel"))
        scope = _SCOPE.get(op.attrs.get("scope", "gpu"))
        if sem is None or scope is None:
            raise error(op.loc, "unknown atomic memory semantics or scope")
        return f".{sem}.{scope}"

    def _atom_asm(self, text: str, word: ir.IntType, args: list[ir.Value]) -> ir.Value:
        con = "l" if word.width == 64 else "h" if word.width == 16 else "r"
        cons = ",".join([f"={con}", "l", "b"] + [con] * (len(args) - 2))
        fty = ir.FunctionType(word, [a.type for a in args])
        full = f"mov.b{word.width} $0, 0;\n\t@$2 {text}"
        return self.b.call(ir.InlineAsm(fty, full, cons, side_effect=True), args)

    def _rmw(self, op: Operation, kind: str, ptr: ir.Value, pred: ir.Value, val: ir.Value):
        st = element_type(op.result.type)
        if st.is_float() and kind in ("max", "min"):
            return self._float_minmax(op, kind, ptr, pred, val)
        bits = st.bitwidth
        if bits < 16 or (bits == 16 and not (kind == "add" and st.is_float())):
            raise error(op.loc, f"atomic {kind} on {st} is not supported by the GPU backend")
        word = ir.IntType(bits)
        type_ = self._atom_type(op, kind, st)
        bits_val = self.b.bitcast(val, word) if val.type != word else val
        text = f"atom{self._sem_scope(op)}.global.{_atom_op(kind)}.{type_} $0, [$1], $3;"
        old = self._atom_asm(text, word, [ptr, pred, bits_val])
        return self.b.bitcast(old, val.type) if val.type != word else old

    def _atom_type(self, op: Operation, kind: str, st: ScalarType) -> str:
        bits = st.bitwidth
        if kind == "add" and st == F16:
            return "noftz.f16"
        if kind == "add" and st == BF16:
            if arch_number(self.arch) < 90:
                raise error(op.loc, "atomic add on bf16 needs sm_90")
            return "noftz.bf16"
        if kind == "add" and st.is_float():
            return f"f{bits}"
        if kind == "add":
            return f"u{bits}"
        if kind in ("max", "min"):
            return f"{'s' if st.is_signed() else 'u'}{bits}"
        return f"b{bits}"

    def _float_minmax(self, op: Operation, kind: str, ptr: ir.Value, pred: ir.Value, val):
        # Triton's trick: for x >= 0 the float order is the signed-int order of
        # the bits; for x < 0 it is the reversed unsigned order.
        b = self.b
        st = element_type(op.result.type)
        word = ir.IntType(st.bitwidth)
        bits = b.bitcast(val, word)
        pos = b.icmp_signed(">=", bits, ir.Constant(word, 0))
        neg = b.not_(pos)
        pos_kind, neg_kind = ("max", "min") if kind == "max" else ("min", "max")
        sem = self._sem_scope(op)
        n = st.bitwidth
        t_pos = f"atom{sem}.global.{pos_kind}.s{n} $0, [$1], $3;"
        t_neg = f"atom{sem}.global.{neg_kind}.u{n} $0, [$1], $3;"
        old_pos = self._atom_asm(t_pos, word, [ptr, b.and_(pred, pos), bits])
        old_neg = self._atom_asm(t_neg, word, [ptr, b.and_(pred, neg), bits])
        return b.bitcast(b.select(pos, old_pos, old_neg), val.type)

    def _cas(self, op: Operation, ptr: ir.Value, pred: ir.Value, cmp: ir.Value, val: ir.Value):
        st = element_type(op.result.type)
        if st.bitwidth not in (32, 64):
            raise error(op.loc, f"atomic_cas on {st} is not supported by the GPU backend")
        word = ir.IntType(st.bitwidth)
        args = [self.b.bitcast(v, word) if v.type != word else v for v in (cmp, val)]
        text = f"atom{self._sem_scope(op)}.global.cas.b{st.bitwidth} $0, [$1], $3, $4;"
        old = self._atom_asm(text, word, [ptr, pred, *args])
        return self.b.bitcast(old, val.type) if val.type != word else old


def _atom_op(kind: str) -> str:
    return "exch" if kind == "xchg" else kind
