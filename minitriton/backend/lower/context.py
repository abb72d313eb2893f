"""The typed lowering context: the state one kernel's lowering functions share.

:class:`LoweringContext` builds the LLVM module of one prepared kernel. Each
program instance is one CTA. A block value is held by the CTA's threads as
its layout says (:mod:`minitriton.backend.layouts`): a thread keeps one LLVM
value per register (:class:`~minitriton.backend.lltypes.RegTile`) and
elementwise ops are unrolled over them. Where the axis analysis knows a
result is constant over aligned chunks (``cols < N`` with ``N % 16 == 0``),
the op is computed once per chunk of a thread's registers and the value
reused, as Triton's elementwise lowering deduplicates: one mask compare per
16-byte vector rather than per element. Scalars are computed by every
thread (they are uniform).

:meth:`LoweringContext.lower` finds each op's lowering in
:data:`~minitriton.backend.registry.LOWERINGS` by the op's class; the
lowering functions live in one module per op family (``arith``, ``math``,
``memory``, ``shape``, ``reduce``, ``matrix`` with ``mma`` and ``wgmma``,
``control``, ``debug``; see :mod:`minitriton.backend.lower`) and take the
context as their first argument. Every attribute they use is declared here.

Every instruction carries a ``!dbg`` location pointing at the kernel source
line of the op it came from (helpers inlined from other functions get an
``inlinedAt`` chain), so the PTX has ``.file``/``.loc`` line info.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from llvmlite import ir

from minitriton.backend.axis import AxisAnalysis
from minitriton.backend.bitpack import pack_bits
from minitriton.backend.layouts import Layout
from minitriton.backend.lltypes import (
    GLOBAL_PTR,
    I8,
    I32,
    SHARED_PTR,
    VOID,
    Lowered,
    RegTile,
    ll_type,
)
from minitriton.backend.lower.debug import CheckState, bind_hidden, hidden_param_types
from minitriton.backend.lower.math import LibdeviceMissing
from minitriton.backend.lower.tma import bind_tma, tma_param_types
from minitriton.backend.prepare import LayoutPlan
from minitriton.backend.registry import LOWERINGS
from minitriton.diagnostics import Location, error
from minitriton.ir.core import Operation, Region, Value
from minitriton.ir.ops import FuncOp
from minitriton.ir.types import BlockType, ScalarType, Type, element_type

LANE_BITS = 5  # log2 of the warp size
#: The largest column LLVM debug info holds (DWARF keeps columns in 16 bits).
MAX_DEBUG_COLUMN = 65535
#: A pipelined loop's shared-memory ring: (byte offset, tile, bytes per stage).
Ring = tuple[int, Any, int]


class LoweringContext:
    """Builds the LLVM module of one prepared kernel (see the module docstring)."""

    # -- the kernel and its plan
    kernel: FuncOp
    plan: LayoutPlan
    axis: AxisAnalysis
    inlined_at: dict[int, tuple[str, Location]]
    arch: str
    num_warps: int
    #: Debug mode's bounds checks and recording asserts (None: off).
    checks: CheckState | None
    # -- the LLVM module being built
    module: ir.Module
    fn: ir.Function
    #: The builder of the kernel's body, where ops are lowered.
    b: ir.IRBuilder
    #: The prologue's builder: values made once, dominating the whole kernel.
    pb: ir.IRBuilder
    #: Lowered IR values by ``id(value)``.
    values: dict[int, Lowered]
    # -- shared memory
    #: The dynamic shared buffer's scratch area (it may start after ring buffers).
    smem: ir.Value
    #: The dynamic shared buffer itself, once a tensor-core lowering asked for it.
    smem_base: ir.Value | None
    smem_bytes: int
    #: Bytes of ring buffers before the scratch area (while a pipelined loop runs).
    scratch_base: int
    ring_end: int
    #: Bytes at the start of shared memory kept from then on: TMA stores' tiles, and
    #: loop-invariant operands that several pipelined loops read (``keep``).
    floor: int
    rings: dict[int, Ring]
    # -- what the kernel turned out to need
    uses_libdevice: bool
    #: True once a kernel uses ``wgmma`` (it then needs the ``sm_90a`` target).
    uses_wgmma: bool
    # -- TMA: the tensor-map parameters, and where the ring's mbarriers start
    tma_params: list[ir.Argument]
    tma_barriers: int
    #: Ring stages of the barriers (the empty barriers follow the full ones).
    tma_stages: int
    #: The warp one lane of which issues TMA copies: None is warp 0 (the producer's
    #: first warp inside a warp-specialized region).
    tma_leader: ir.Value | None
    #: The issuing thread of the stage being lowered: (LLVM block, predicate operand, i1).
    tma_issuer: tuple | None
    # -- warp specialization (:mod:`~minitriton.backend.passes.warp_specialize`)
    #: The warps the kernel is launched with: ``num_warps`` plus any producer warps.
    launch_warps: int
    #: Past the split, the consumer threads: their barriers are named (``bar.sync 1, N``).
    consumer_threads: int | None
    #: Registers per thread at entry (``.maxnreg``): the ``maxnreg`` option, or,
    #: where ``setmaxnreg`` moves them, each thread's share (no more than the option).
    max_regs: int | None
    # -- mma.sync bookkeeping
    mma_uses: dict[int, int] | None
    mma_pending: bool
    #: ``id`` of the fp16 accumulators lowered as packed ``.f16x2`` registers
    #: (:mod:`~minitriton.backend.lower.f16acc`).
    packed_values: set[int]

    def __init__(
        self,
        kernel: FuncOp,
        plan: LayoutPlan,
        inlined_at: dict[int, tuple[str, Location]],
        *,
        arch: str,
        num_warps: int,
        debug: bool = False,
        max_regs: int | None = None,
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
        self.smem_base = None
        self.scratch_base = 0
        self.ring_end = 0
        self.floor = 0
        self.rings = {}
        self.uses_wgmma = False
        self.mma_uses = None
        self.mma_pending = False
        self.packed_values = set()
        self.tma_params = []
        self.tma_barriers = 0
        self.tma_stages = 0
        self.tma_leader = None
        self.tma_issuer = None
        self.launch_warps = num_warps
        self.consumer_threads = None
        self.max_regs = max_regs

    # ------------------------------------------------------------ driver
    def generate(self) -> ir.Module:
        """Lower the kernel and return the LLVM module."""
        args = self.kernel.body.args
        params = [self.param_type(a.type) for a in args]
        hidden, maps = hidden_param_types(self), tma_param_types(self)
        fnty = ir.FunctionType(VOID, params + hidden + maps)
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
        extra = list(self.fn.args[len(args) :])
        bind_hidden(self, extra[: len(hidden)])
        bind_tma(self, extra[len(hidden) :])
        self.lower_ops(self.kernel.body.ops)
        self.b.ret_void()
        self._annotate_max_threads()
        return self.module

    def param_type(self, t: Type) -> ir.Type:
        """The kernel parameter type of an argument (``i1`` travels as a byte)."""
        elem = element_type(t)  # kernel arguments are scalars and pointers
        if isinstance(elem, ScalarType) and elem.is_bool():
            return I8
        return ll_type(elem)

    def _param_value(self, t: Type, param: ir.Argument) -> ir.Value:
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
        notes = [("maxntidx", 32 * self.launch_warps)]
        if self.max_regs is not None:  # the maxnreg option; setmaxnreg needs the count at entry
            notes.append(("maxnreg", self.max_regs))
        for key, value in notes:
            name = ir.MetaDataString(self.module, key)
            md.add(self.module.add_metadata([self.fn, name, ir.Constant(I32, value)]))

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

    def barrier(self) -> None:
        """``bar.sync 0``: all threads of the CTA; past a warp-specialized split, the consumers'.

        The producer warps have exited there, so the consumers meet at named
        barrier 1 with their own thread count.
        """
        if self.consumer_threads is None:
            self.b.call(self.declare("llvm.nvvm.barrier0", VOID, []), [])
            return
        count = self.declare("llvm.nvvm.barrier.sync.cnt", VOID, [I32, I32])
        self.b.call(count, [ir.Constant(I32, 1), ir.Constant(I32, self.consumer_threads)])

    def reserve(self, nbytes: int) -> None:
        """Make the dynamic shared memory hold ``nbytes`` of scratch after any ring buffers."""
        self.smem_bytes = max(self.smem_bytes, nbytes + self.scratch_base)

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

    @property
    def uniform_warp(self) -> ir.Value:
        """The warp index read from lane 0 (``shfl.sync``): ``ptxas`` then knows it is
        the same in every lane and keeps what is computed from it (``wgmma``
        descriptors) in uniform registers, as Triton's warp id does."""

        def make(b: ir.IRBuilder) -> ir.Value:
            fnty = ir.FunctionType(I32, [I32])
            shfl = ir.InlineAsm(fnty, "shfl.sync.idx.b32 $0, $1, 0, 31, -1;", "=r,r")
            return b.call(shfl, [self.warp])

        return self.cached("uniform_warp", make)

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
        """Lower one op with its class's registered lowering."""
        handler = LOWERINGS.lookup(type(op))
        if handler is None:
            raise error(op.loc, f"the GPU backend cannot lower '{op.name}'")
        try:
            result = handler(self, op)
        except LibdeviceMissing as e:
            raise error(op.loc, str(e)) from None
        if result is None:
            return
        results = result if isinstance(result, list) else [result]
        for r, v in zip(op.results, results):
            self.bind(r, v)

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
        vals: list[ir.Value] = []
        for r, first in enumerate(self._constant_runs(op.results[0], layout)):
            # A register in a run of equal elements reuses its run's first value.
            vals.append(fn(*(col[r] for col in cols)) if first == r else vals[first])
        return RegTile(layout, vals)

    def _constant_runs(self, v: Value, layout: Layout) -> list[int]:
        """For each register of ``v``, the first register certain to hold the same element value.

        The axis analysis's constancy ``C`` along a dim says the elements are
        equal over aligned chunks of ``C`` (``cols < N`` with ``N % 16 == 0``
        is one boolean per 16 columns). A coordinate is the XOR of a thread
        part and a register part, so for ``C = 2**k`` two registers fall in
        the same chunk in every thread exactly when their register parts agree
        above bit ``k``: the op is then computed once per chunk, as Triton's
        elementwise lowering deduplicates, which keeps a mask's ``setp`` per
        vector instead of per element (and the registers behind them).
        """
        shifts = [(c & -c).bit_length() - 1 for c in self.axis.get(v).const]
        if not any(shifts) or len(shifts) != layout.rank:
            return list(range(layout.num_regs))
        firsts: dict[tuple[int, ...], int] = {}
        out = []
        for r, coord in enumerate(layout.reg_coords()):
            key = tuple(x >> s for x, s in zip(coord, shifts))
            out.append(firsts.setdefault(key, r))
        return out

    # ------------------------------------------------------------ control flow
    def flatten(self, values: list[Lowered]) -> list[ir.Value]:
        """All registers of ``values``, in order."""
        out: list[ir.Value] = []
        for v in values:
            out.extend(v.vals if isinstance(v, RegTile) else [v])
        return out

    def unflatten(self, like: Sequence[Value], flat: list[ir.Value]) -> list[Lowered]:
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


__all__ = ["LoweringContext"]
