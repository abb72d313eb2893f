"""The ``debug`` family: ``tt.print``, ``tt.assert``, and debug mode's device side.

``tt.print``: the block is gathered in shared memory and thread 0 prints
every element with ``vprintf``, once per program (Triton prints once per
thread holding a value). ``tt.assert`` without debug mode: any thread with a
false element calls ``__assertfail``, which stops the kernel (the CUDA
context is unusable afterwards).

Debug mode: bounds checks on every access, and a recording ``device_assert``.

With ``debug=True`` the kernel is compiled with hidden parameters after its
own: for each pointer argument, the lowest address of its buffer and the
buffer's size in bytes (two ``u64``; an unknown extent is the whole address
space), and last a pointer to the *error record* (its layout is in
:mod:`minitriton.backend.debug_mode`, which also reads it after the launch).

**Checks.** Every ``tt.load``, ``tt.store`` and atomic, and every
``cp.async`` copy the software pipeliner makes of a load, checks each access
on the lanes its mask enables: ``addr - lo < size - bytes + 1`` in unsigned
64-bit arithmetic (a negative offset wraps around and fails too), where
``lo`` and ``size`` are those of the argument the pointer was derived from
(:mod:`~minitriton.backend.provenance`) and ``bytes`` the width of the
access (a vectorized access of 4 fp32 checks its 16 bytes at once).
Violating accesses are masked off, so the kernel never faults; a cold branch
records the access: one slot per (thread, register) group, indexed
``tid * registers + register``, holding the group's first address. The
host turns the slot back into lanes through the layout and works out which
of the group's elements are outside. Accesses
through a pointer of unknown provenance are not checked.

**The record.** ``record()`` (an always-inlined function: a real call would
make ptxas spill every live register around it, and serialize ``wgmma``)
claims the record for its (site, program) with a compare-and-swap on its
first word; the lanes of the claiming site and program then write their
slot (its index, the address, or an assert's two compared values). Later
violations of other sites or programs leave it alone: the first one of the
launch is kept.

**Asserts.** ``tl.device_assert`` records the failing lanes and the values
of the comparison it tests instead of calling ``__assertfail``, so the
kernel runs to its end and the CUDA context stays usable.

Without ``debug=True`` none of this code exists: the PTX is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import TYPE_CHECKING, Any

from llvmlite import ir

from minitriton.backend.layouts import Layout
from minitriton.backend.lltypes import (
    F64_T,
    GENERIC_PTR,
    GLOBAL_PTR,
    I1,
    I32,
    I64,
    VOID,
    ElemType,
    RegTile,
    byte_size,
    pointee_of,
)
from minitriton.backend.lower.arith import to_f32
from minitriton.backend.lower.control import guarded
from minitriton.backend.lower.smem import counted_loop, row_major, smem_load, write_tensor
from minitriton.backend.provenance import UNKNOWN, Provenance
from minitriton.backend.registry import lowering
from minitriton.diagnostics import Location
from minitriton.ir.core import Operation, OpResult
from minitriton.ir.ops import AssertOp, CmpOp, FuncOp, PrintOp
from minitriton.ir.types import BlockType, PointerType, ScalarType, element_type

if TYPE_CHECKING:
    from minitriton.backend.lower.context import LoweringContext


#: Words (i64) before the first lane slot, and words per slot.
HEADER_WORDS = 4
SLOT_WORDS = 4
#: The record key is ``(program << SITE_BITS) | (site + 1)``.
SITE_BITS = 24
RECORD_FN = "minitriton.debug.record"


@dataclass
class Site:
    """One checked op: what the host needs to describe a violation there."""

    kind: str  # "access" or "assert"
    op: str  # tt.load, tt.store, tt.atomic_rmw ...
    loc: Location
    shape: tuple[int, ...]
    arg: int = UNKNOWN  # the buffer's argument index (accesses)
    elem_bytes: int = 0  # the access pointer's element size (accesses)
    #: A vectorized access records its group once: registers ``r .. r+vec-1``, ``elem_bytes``
    #: apart in memory, from the recorded register and address.
    vec: int = 1
    #: The op's layout (None: a scalar): the host turns (thread, register) into a lane.
    layout: Layout | None = None
    threads: int = 1
    message: str = ""  # the assert's message
    #: An assert's compared values: (side, name, element type such as "f32") of lhs and rhs.
    sides: list[tuple[str, str, str]] = field(default_factory=list)
    #: The kernel's name for an access's offset (None: unnamed), and whether it is the
    #: whole offset, added to a parameter's pointer itself (``x_ptr + offs``): then its
    #: values are the offsets the record holds, and the report can suggest the mask
    #: (:func:`~minitriton.emulator.mask_hint.help_line`).
    offset_name: str | None = None
    offset_whole: bool = False
    masked: bool = False  # the access had a mask

    @property
    def regs(self) -> int:
        """Registers per thread of the op's layout (1 for a scalar)."""
        return self.layout.num_regs if self.layout is not None else 1

    @property
    def slots(self) -> int:
        """Record slots the site may write: one per (thread, register)."""
        return self.threads * self.regs if self.layout is not None else 1

    def lane(self, slot: int, offset: int = 0) -> int:
        """The flat (row-major) element index of register ``reg + offset`` of ``slot``."""
        if self.layout is None or not self.shape:
            return 0
        tid, reg = divmod(slot, self.regs)
        coord = list(self.layout.reg_coords()[reg + offset])
        lane, warp = tid % 32, tid // 32
        for bits, bases in ((lane, self.layout.lane_bases), (warp, self.layout.warp_bases)):
            for i, basis in enumerate(bases):
                if bits >> i & 1:
                    coord = [c ^ b for c, b in zip(coord, basis)]
        flat = 0
        for c, n in zip(coord, self.shape):
            flat = flat * n + c
        return flat


@dataclass
class CheckTable:
    """What the host reads a record with: the sites and the arguments' names and types."""

    sites: list[Site]
    arg_names: list[str]
    #: Per kernel argument: the pointee type name of a pointer ("fp32"), else "".
    arg_types: list[str]
    #: The named integer arguments, by index: a report reads their values at the launch
    #: for the bound of a suggested mask.
    int_args: list[tuple[int, str]] = field(default_factory=list)

    @property
    def record_words(self) -> int:
        """The record's size in i64 words."""
        return HEADER_WORDS + SLOT_WORDS * max([1, *(s.slots for s in self.sites)])


class CheckState:
    """The per-kernel state of the checks while the code generator runs."""

    def __init__(self, kernel: FuncOp) -> None:
        self.prov = Provenance(kernel)
        args = kernel.body.args
        self.pointer_args = [i for i, a in enumerate(args) if isinstance(a.type, PointerType)]
        types = [repr(a.type.pointee) if isinstance(a.type, PointerType) else "" for a in args]
        names = [a.name_hint or f"arg{i}" for i, a in enumerate(args)]
        ints = [(i, a.name_hint) for i, a in enumerate(args)
                if a.name_hint and isinstance(a.type, ScalarType) and a.type.is_int()]  # fmt: skip
        self.table = CheckTable([], names, types, ints)
        self.site_ids: dict[int, int] = {}
        self.bounds: dict[int, tuple[ir.Value, ir.Value]] = {}
        self.record: ir.Value | None = None
        self.limits: dict[tuple[int, int], ir.Value] = {}

    def site(self, op: Operation, make: Any) -> int:
        """The id of ``op``'s site (made once by ``make()``)."""
        if id(op) not in self.site_ids:
            self.site_ids[id(op)] = len(self.table.sites)
            self.table.sites.append(make())
        return self.site_ids[id(op)]


# ------------------------------------------------------------ print, assert
@lowering(PrintOp)
def lower_print(ctx: LoweringContext, op: Operation) -> None:
    """``tl.device_print``: thread 0 prints each value, or each element of a block."""
    prefix = str(op.attrs.get("prefix", ""))
    hex_ = bool(op.attrs.get("hex", False))
    if not op.operands:
        _printf_thread0(ctx, f"pid (%d, %d, %d) {prefix}\n", _pids(ctx))
    for i, v in enumerate(op.operands):
        label = prefix if len(op.operands) == 1 else f"{prefix}(operand {i}) "
        if isinstance(v.type, BlockType):
            _print_block(ctx, v, label, hex_)
        else:
            fmt, val = _format(ctx, element_type(v.type), ctx.get(v), hex_)
            _printf_thread0(ctx, f"pid (%d, %d, %d) {label}{fmt}\n", [*_pids(ctx), val])


def _pids(ctx: LoweringContext) -> list[ir.Value]:
    return [ctx.sreg(f"ctaid.{a}") for a in "xyz"]


def _printf_thread0(ctx: LoweringContext, fmt: str, args: list[ir.Value]) -> None:
    def emit() -> list[ir.Value]:
        vprintf(ctx, fmt, args)
        return []

    guarded(ctx, ctx.is_thread0(), emit, [])


def vprintf(ctx: LoweringContext, fmt: str, args: list[ir.Value]) -> None:
    """Call CUDA's ``vprintf`` with a packed argument buffer."""
    struct = ir.LiteralStructType([a.type for a in args])
    buf = ctx.cached(("printf_buf", str(struct)), lambda b: _opaque(b.alloca(struct)))
    for i, a in enumerate(args):
        field = ctx.b.gep(buf, [ir.Constant(I32, 0), ir.Constant(I32, i)], source_etype=struct)
        ctx.b.store(a, field)
    fn = ctx.declare("vprintf", I32, [GENERIC_PTR, GENERIC_PTR])
    ctx.b.call(fn, [ctx.string(fmt), buf])


def _format(ctx: LoweringContext, st: ElemType, v: ir.Value, hex_: bool) -> tuple[str, ir.Value]:
    b = ctx.b
    if isinstance(st, PointerType):
        return "0x%llx", b.ptrtoint(v, I64)
    if hex_ and st.is_float():  # C's %a, as Triton 3.8 prints floats in hex
        wide = to_f32(ctx, v, st) if st.bitwidth <= 32 else v
        return "%a", b.fpext(wide, F64_T) if wide.type != F64_T else wide
    if hex_:
        bits = st.bitwidth
        as_int = v if isinstance(v.type, ir.IntType) else b.bitcast(v, ir.IntType(bits))
        if bits == 64:
            return "0x%llx", as_int
        return "0x%x", b.zext(as_int, I32) if bits < 32 else as_int
    if st.is_float():
        wide = to_f32(ctx, v, st) if st.bitwidth <= 32 else v
        return "%f", b.fpext(wide, F64_T) if wide.type != F64_T else wide
    if st.bitwidth == 64:
        return ("%lld" if st.is_signed() else "%llu"), v
    if st.bitwidth < 32:
        v = b.sext(v, I32) if st.is_signed() else b.zext(v, I32)
    return ("%d" if st.is_signed() or st.is_bool() else "%u"), v


def _print_block(ctx: LoweringContext, v, label: str, hex_: bool) -> None:
    t = ctx.tensor(v)
    st = element_type(v.type)
    shape = t.layout.shape
    ctx.reserve(prod(shape) * byte_size(st))
    ctx.barrier()
    write_tensor(ctx, t, st, row_major(shape))
    ctx.barrier()
    idx_fmt = ", ".join(["%d"] * len(shape))

    def body(i: ir.Value) -> None:
        val = smem_load(ctx, ctx.b.mul(i, ir.Constant(I32, byte_size(st))), st)
        fmt, pval = _format(ctx, st, val, hex_)
        idx = _unravel(ctx, i, shape)
        vprintf(ctx, f"pid (%d, %d, %d) idx ({idx_fmt}) {label}{fmt}\n", [*_pids(ctx), *idx, pval])

    def loop() -> list[ir.Value]:
        counted_loop(ctx, prod(shape), body)
        return []

    guarded(ctx, ctx.is_thread0(), loop, [])


def _unravel(ctx: LoweringContext, i: ir.Value, shape: tuple[int, ...]) -> list[ir.Value]:
    out = []
    for stride, size in zip(row_major(shape), shape):
        q = ctx.b.udiv(i, ir.Constant(I32, stride))
        out.append(ctx.b.urem(q, ir.Constant(I32, size)))
    return out


def assume(ctx: LoweringContext, op: Operation) -> None:
    """``tl.assume`` outside debug mode: ``llvm.assume`` of each of the thread's values.

    LLVM may then fold what the condition implies (``pid >= 0`` makes a
    signed division by a positive constant a shift). A false condition is
    undefined behaviour, as in Triton.
    """
    cond = ctx.get(op.operands[0])
    for v in cond.vals if isinstance(cond, RegTile) else [cond]:
        ctx.call_intrinsic("llvm.assume", VOID, [v])


def trap_assert(ctx: LoweringContext, op: Operation) -> None:
    cond = ctx.get(op.operands[0])
    vals = cond.vals if isinstance(cond, RegTile) else [cond]
    bad = ctx.b.not_(vals[0])
    for v in vals[1:]:
        bad = ctx.b.or_(bad, ctx.b.not_(v))
    loc = op.loc
    msg = ctx.string(str(op.attrs.get("message", "assertion failed")))
    file = ctx.string(loc.file)
    func = ctx.string(ctx.kernel.sym_name)
    fail = ctx.declare("__assertfail", VOID, [GENERIC_PTR, GENERIC_PTR, I32, GENERIC_PTR, I64])

    def emit() -> list[ir.Value]:
        ctx.b.call(fail, [msg, file, ir.Constant(I32, loc.line), func, ir.Constant(I64, 1)])
        return []

    guarded(ctx, bad, emit, [])


# ------------------------------------------------------------ parameters
def hidden_param_types(ctx: LoweringContext) -> list[ir.Type]:
    """The hidden parameters' types: (lo, size) per pointer argument, then the record."""
    if ctx.checks is None:
        return []
    return [I64, I64] * len(ctx.checks.pointer_args) + [GLOBAL_PTR]


def bind_hidden(ctx: LoweringContext, params: list[ir.Argument]) -> None:
    """Remember the hidden parameters (see :meth:`hidden_param_types`)."""
    if ctx.checks is None:
        return
    for n, arg in enumerate(ctx.checks.pointer_args):
        ctx.checks.bounds[arg] = (params[2 * n], params[2 * n + 1])
    ctx.checks.record = params[-1]


def _state(ctx: LoweringContext) -> CheckState:
    """The checks' state (only debug mode's lowerings ask for it)."""
    assert ctx.checks is not None, "debug mode is off"
    return ctx.checks


def _limit(ctx: LoweringContext, arg: int, nbytes: int) -> ir.Value:
    """``size - nbytes + 1`` (0 when the buffer is smaller), computed once."""
    chk = _state(ctx)
    key = (arg, nbytes)
    if key not in chk.limits:
        _, size = chk.bounds[arg]
        b = ctx.pb
        fits = b.icmp_unsigned(">=", size, ir.Constant(I64, nbytes))
        room = b.add(b.sub(size, ir.Constant(I64, nbytes)), ir.Constant(I64, 1))
        chk.limits[key] = b.select(fits, room, ir.Constant(I64, 0))
    return chk.limits[key]


def _access_site(
    op: Operation, arg: int, eb: int, vec: int, layout: Layout | None, threads: int
) -> Site:
    from minitriton.emulator.mask_hint import named_offset  # the emulator's reading of names

    ptr_v = op.operands[0]
    named = named_offset(ptr_v)
    site = Site("access", op.name, op.loc, ptr_v.shape, arg, eb, vec, layout, threads)
    if named is not None:
        site.offset_name, site.offset_whole = named[0], named[2]
    site.masked = op.mask_operand() is not None  # not ``pred``: a store's owner predicate too
    return site


def _in_bounds(ctx: LoweringContext, arg: int, ptr: ir.Value, nbytes: int) -> ir.Value:
    lo, _ = _state(ctx).bounds[arg]
    off = ctx.b.sub(ctx.b.ptrtoint(ptr, I64), lo)
    return ctx.b.icmp_unsigned("<", off, _limit(ctx, arg, nbytes))


# ------------------------------------------------------------ accesses
def check_access(
    ctx: LoweringContext,
    op: Operation,
    layout: Layout | None,
    ptrs: list[ir.Value],
    r: int,
    vec: int,
    pred: ir.Value | None,
) -> ir.Value | None:
    """``pred`` and "registers ``r .. r+vec-1`` of ``ptrs`` are in bounds" (debug mode).

    Outside debug mode, and for a pointer of unknown provenance, ``pred``
    is returned unchanged.
    """
    chk = ctx.checks
    if chk is None:
        return pred
    ptr_v = op.operands[0]
    arg = chk.prov.of(ptr_v)
    if arg == UNKNOWN or arg not in chk.bounds:
        return pred
    eb = byte_size(pointee_of(ptr_v.type))
    threads = 32 * ctx.num_warps
    site = chk.site(op, lambda: _access_site(op, arg, eb, vec, layout, threads))
    ok = _in_bounds(ctx, arg, ptrs[r], vec * eb)
    bad = ctx.b.not_(ok) if pred is None else ctx.b.and_(pred, ctx.b.not_(ok))

    def record() -> None:
        # One slot for the group: the host finds which of its elements are outside.
        addr = ctx.b.ptrtoint(ptrs[r], I64)
        _record(ctx, ir.Constant(I1, 1), site, layout, r, addr, ir.Constant(I64, 0))

    _cold(ctx, bad, record)
    return ok if pred is None else ctx.b.and_(pred, ok)


def _cold(ctx: LoweringContext, cond: ir.Value, body: Any) -> None:
    """Run ``body()``'s code only where ``cond`` holds, on a branch marked unlikely."""
    b = ctx.b
    then_bb = b.append_basic_block("check.fail")
    merge = b.append_basic_block("check.end")
    br = b.cbranch(cond, then_bb, merge)
    br.set_weights([1, 1000])
    b.position_at_end(then_bb)
    body()
    b.branch(merge)
    b.position_at_end(merge)


def _record(
    ctx: LoweringContext,
    cond: ir.Value,
    site: int,
    layout: Layout | None,
    reg: int,
    a: ir.Value,
    b: ir.Value,
) -> None:
    """Record register ``reg`` of this thread at ``site`` (slot ``tid * regs + reg``).

    The host maps the slot back to a lane through the layout, so the
    device computes no coordinates.
    """
    regs = layout.num_regs if layout is not None else 0  # a scalar: slot 0
    args = [cond, _state(ctx).record, ir.Constant(I64, site), ir.Constant(I32, regs),
            ir.Constant(I32, reg), a, b]  # fmt: skip
    ctx.b.call(_record_fn(ctx), args)


# ------------------------------------------------------------ asserts
@lowering(AssertOp)
def lower_assert(ctx: LoweringContext, op: Operation) -> None:
    """In debug mode, record failing lanes and their values (see the module docstring)."""
    if ctx.checks is None:
        if op.attrs.get("assume"):
            assume(ctx, op)
        else:
            trap_assert(ctx, op)
        return
    cond_v = op.operands[0]
    cond = ctx.get(cond_v)
    vals = cond.vals if isinstance(cond, RegTile) else [cond]
    layout = cond.layout if isinstance(cond, RegTile) else None
    cmp, sides = _compared(ctx, op, layout)
    site = ctx.checks.site(
        op,
        lambda: Site("assert", op.name, op.loc, cond_v.shape,
                     message=str(op.attrs.get("message", "")), sides=sides,
                     layout=layout, threads=32 * ctx.num_warps),
    )  # fmt: skip
    bad = ctx.b.not_(vals[0])
    for v in vals[1:]:
        bad = ctx.b.or_(bad, ctx.b.not_(v))

    def record() -> None:
        for i, v in enumerate(vals):
            a, b = (_as_word(ctx, c, i) for c in cmp) if cmp else (None, None)
            zero = ir.Constant(I64, 0)
            _record(ctx, ctx.b.not_(v), site, layout, i, a or zero, b or zero)

    _cold(ctx, bad, record)


def _compared(
    ctx: LoweringContext, op: Operation, layout: Layout | None
) -> tuple[list[Any], list[tuple[str, str, str]]]:
    """The lowered lhs and rhs of the ``arith.cmp`` an assert tests, when they line up.

    The sides are named as the emulator names them (``AssertOp.compared_names``).
    """
    cond_v = op.operands[0]
    owner = cond_v.owner if isinstance(cond_v, OpResult) else None
    if not isinstance(owner, CmpOp):
        return [], []
    lowered = [ctx.get(v) for v in owner.operands]
    for v in lowered:
        if isinstance(v, RegTile) and (layout is None or v.layout != layout):
            return [], []
    names = op.compared_names() if isinstance(op, AssertOp) else ["", ""]
    sides = [
        (side, name, _type_name(element_type(v.type)))
        for side, name, v in zip(("lhs", "rhs"), names, owner.operands)
    ]
    return lowered, sides


def _as_word(ctx: LoweringContext, v: Any, i: int) -> ir.Value:
    """Register ``i`` of ``v`` as the raw bits in an i64."""
    x = v.vals[i] if isinstance(v, RegTile) else v
    t = x.type
    if not isinstance(t, ir.IntType):
        width = {"half": 16, "float": 32, "double": 64}[str(t)]
        x = ctx.b.bitcast(x, ir.IntType(width))
        t = x.type
    return x if t.width == 64 else ctx.b.zext(x, I64)


# ------------------------------------------------------------ record()
def _record_fn(ctx: LoweringContext) -> ir.Function:
    """``record(cond, rec, site, regs, reg, a, b)``: claim the record, fill a slot.

    Everything it computes from the thread and program ids reads them
    through volatile ``mov``s, so LLVM cannot hoist those values out of
    the cold branches: hoisted, each site's key and slot would hold
    registers for the whole kernel (a layer norm went from 42 to 95).
    """
    name = RECORD_FN
    if name in ctx._decls:
        return ctx._decls[name]
    fnty = ir.FunctionType(VOID, [I1, GLOBAL_PTR, I64, I32, I32, I64, I64])
    fn = ir.Function(ctx.module, fnty, name)
    fn.linkage = "internal"
    # Inlined: a call would make ptxas spill the live registers around it (and
    # serialize wgmma); the code sits on cold branches anyway.
    fn.attributes.add("alwaysinline")
    ctx._decls[name] = fn
    cond, rec, site, regs, reg, a, b_val = fn.args
    entry, claim, write, done = (fn.append_basic_block(n) for n in
                                 ("entry", "claim", "write", "done"))  # fmt: skip
    b = ir.IRBuilder(entry)
    b.cbranch(cond, claim, done)
    b.position_at_end(claim)
    key = b.or_(b.shl(_linear_pid(ctx, b), ir.Constant(I64, SITE_BITS)),
                b.add(site, ir.Constant(I64, 1)))  # fmt: skip
    old = b.extract_value(b.cmpxchg(rec, ir.Constant(I64, 0), key, "monotonic", "monotonic"), 0)
    mine = b.or_(b.icmp_unsigned("==", old, ir.Constant(I64, 0)),
                 b.icmp_unsigned("==", old, key))  # fmt: skip
    b.cbranch(mine, write, done)
    b.position_at_end(write)
    slot_i = b.add(b.mul(_volatile_sreg(b, "tid.x"), regs), reg)
    first = b.add(b.mul(b.zext(slot_i, I64), ir.Constant(I64, SLOT_WORDS)),
                  ir.Constant(I64, HEADER_WORDS))  # fmt: skip
    for k, value in enumerate((b.zext(slot_i, I64), a, b_val)):
        slot = b.gep(rec, [b.add(first, ir.Constant(I64, k + 1))], source_etype=I64)
        b.store(value, slot)
    b.store(ir.Constant(I64, 1), b.gep(rec, [first], source_etype=I64))
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()
    return fn


def _linear_pid(ctx: LoweringContext, b: ir.IRBuilder) -> ir.Value:
    x, y, z = (b.zext(_volatile_sreg(b, f"ctaid.{d}"), I64) for d in "xyz")
    nx, ny = (b.zext(_volatile_sreg(b, f"nctaid.{d}"), I64) for d in "xy")
    return b.add(x, b.mul(nx, b.add(y, b.mul(ny, z))))


def _volatile_sreg(b: ir.IRBuilder, name: str) -> ir.Value:
    """Read the special register ``name`` where it is used: LLVM may not move the read."""
    asm = ir.InlineAsm(ir.FunctionType(I32, []), f"mov.u32 $0, %{name};", "=r", side_effect=True)
    return b.call(asm, [])


def _opaque(v: ir.Instruction) -> ir.Instruction:
    # llvmlite types allocas as typed pointers; GEPs with an explicit element type need opaque ones.
    v.type = GENERIC_PTR
    return v


def _type_name(t: ElemType) -> str:
    """The name the host's report gives a compared value's type (``f32``; a pointer's text)."""
    return t.name if isinstance(t, ScalarType) else str(t)
