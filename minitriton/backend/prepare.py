"""Turn the pipeline's IR into the GPU form the code generator reads.

:func:`prepare_kernel` makes a private copy of the module (the caller's is
never changed) with :func:`copy_module` — a deep copy
(:mod:`minitriton.ir.clone`), with the value names the printer gives — and
runs the GPU passes of :data:`~minitriton.backend.passes.GPU_PIPELINE` on it
(:mod:`minitriton.backend.passes`, one module and one docs page each):
``inline-calls``, ``scalar-combiners``, ``sink-transposes``,
``software-pipeline`` and ``assign-layouts``.

This module holds the functions the first and the last of them call:
:func:`inline_calls` (every ``tt.call`` replaced by the callee's body,
remembering each inlined op's call site for the ``.loc`` line info),
:func:`scalar_combiners`, and :func:`assign_layouts` (``layout_plan``):
every block value gets a distributed layout, and a ``ttg.convert_layout``
op is inserted wherever an op needs its operand in another layout. Each op
with block results gets a ``layout`` attribute, so ``print_module`` of the
result (the ``ttgir`` dump of a compiled kernel) shows the layout of every
value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from minitriton.backend.coalesce import seed_coalesced_layouts
from minitriton.backend.dot_seeds import seed_dot_layouts
from minitriton.backend.irutil import parent_block, producer, terminator
from minitriton.backend.layouts import (
    Layout,
    blocked,
    default_params,
    expand_layout,
    restrict,
    slice_layout,
    squeeze_layout,
)
from minitriton.backend.mma_plan import MmaDot, hoisted_before
from minitriton.backend.mma_v3 import is_mma_layout
from minitriton.backend.ops import (
    AsyncCopyOp,
    ConvertLayoutOp,
    LocalLoadOp,
    WarpGroupDotOp,
    WarpGroupDotWaitOp,
)
from minitriton.backend.registry import (
    BACKWARD_RULES,
    FORWARD_RULES,
    OpTable,
    layout_rule,
)
from minitriton.diagnostics import Location, error
from minitriton.ir.clone import clone_module
from minitriton.ir.core import Block, Operation, Region, Value, use_counts
from minitriton.ir.ops import (
    BroadcastOp,
    CallOp,
    ConstantOp,
    DotOp,
    ExpandDimsOp,
    ForOp,
    FuncOp,
    GatherOp,
    HistogramOp,
    IfOp,
    MakeRangeOp,
    MapElementwiseOp,
    Module,
    ReduceOp,
    ReshapeOp,
    ScanOp,
    SortOp,
    SplatOp,
    StoreOp,
    TransOp,
    WhileOp,
)
from minitriton.ir.printer import Printer
from minitriton.ir.traits import Elementwise, ReadsMemory, SideEffects, WritesMemory
from minitriton.ir.types import BlockType, PointerType, element_type
from minitriton.passes.dce import is_effect_free
from minitriton.passes.inline import inline_call
from minitriton.passes.rewriting import is_attached

# ------------------------------------------------------------------ copy, inline


def copy_module(module: Module) -> Module:
    """A deep copy of ``module`` (:func:`~minitriton.ir.clone.clone_module`), names frozen.

    Each value's name hint becomes the name the printer gives it, so values
    that shared a hint (``%acc`` in a loop and after it) keep the names the
    ``ttgir`` dump has always shown (``%acc``, ``%acc_1``), however the
    inliner and the pipeliner rename around them later.
    """
    copy = clone_module(module)
    for func in copy.funcs:
        printer = Printer()  # names restart per function
        printer.print_func(func)
        for op in func.walk():
            values = [*op.results, *(a for r in op.regions for a in r.args)]
            for v in values:
                name = printer.ref(v)[1:]
                v.name_hint = None if name.isdigit() else name
    return copy


def _first_call(func: FuncOp) -> CallOp | None:
    return next((op for op in func.walk() if isinstance(op, CallOp)), None)


def inline_calls(module: Module) -> tuple[FuncOp, dict[int, tuple[str, Location]]]:
    """Inline every call into the kernel; returns it and each inlined op's call site.

    Each call is inlined by :func:`minitriton.passes.inline.inline_call`. The
    map goes from ``id(op)`` to ``(callee name, call location)``, the call
    location being the one in the kernel itself for nested helpers.
    """
    kernel = module.kernel
    inlined_at: dict[int, tuple[str, Location]] = {}
    for _ in range(10_000):
        call = _first_call(kernel)
        if call is None:
            return kernel, inlined_at
        _inline_one(module, kernel, call, inlined_at)
    raise error(kernel.loc, "too many nested calls (is a helper recursive?)")


def _inline_one(
    module: Module, kernel: FuncOp, call: CallOp, inlined_at: dict[int, tuple[str, Location]]
) -> None:
    name = call.attrs["callee"]
    try:
        callee = module.lookup(name)
    except KeyError:
        raise error(call.loc, f"call of unknown function @{name}") from None
    site = inlined_at.get(id(call), (name, call.loc))[1]
    # The ttgir keeps each helper's own value names, as it always has.
    for new in inline_call(call, callee, kernel, name_results=False):
        for op in new.walk():
            inlined_at[id(op)] = (name, site)


def scalar_combiners(kernel: FuncOp) -> None:
    """Leave only scalar code in the combiners of reductions and scans (in place).

    Each thread runs a combiner on its own pair of elements, so a block made
    inside one has no layout to live in. Inlined helpers leave dead ones
    behind (Inductor's ``is_floating(x)`` builds ``x + tl.zeros((1,), tl.int1)``
    only to read its dtype); they go, as Triton's canonicalizer drops them
    after inlining. A block still used there gets a located error.
    """
    for op in kernel.walk():
        if not isinstance(op, (ReduceOp, ScanOp, MapElementwiseOp)):
            continue
        _remove_dead_ops(op)
        for inner in op.walk():
            if inner is not op and any(_is_block(r) for r in inner.results):
                raise _block_in_combiner(op, inner)


def _remove_dead_ops(root: Operation) -> None:
    """Delete the ops nested in ``root`` that have no effect and unused results."""
    changed = True
    while changed:
        changed = False
        counts = use_counts(root)
        for op in reversed(list(root.walk())):
            if op is root or op.is_terminator or not is_attached(op, root):
                continue
            if is_effect_free(op) and not any(counts.get(id(r), 0) for r in op.results):
                for inner in op.walk():
                    for v in inner.operands:
                        counts[id(v)] -= 1
                parent_block(op).remove(op)
                changed = True


def _block_in_combiner(op: Operation, inner: Operation) -> Exception:
    names: dict[type[Operation], str] = {ReduceOp: "tl.reduce", ScanOp: "tl.associative_scan"}
    what = names.get(type(op), "tl.map_elementwise")
    return error(
        inner.loc,
        f"the combine function of this {what} builds a block ({inner.results[0].type}): "
        "on the GPU a combine function works on single elements",
        help="compute on the scalar arguments directly (tl.where, tl.maximum, "
        "arithmetic), or run with backend='emulator'",
    )


# ------------------------------------------------------------------ layouts

#: Ops that produce any layout at no cost: the one their users want.
_FREE = (MakeRangeOp, SplatOp, ConstantOp)


def _is_block(v: Value) -> bool:
    return isinstance(v.type, BlockType)


def _elementwise(op: Operation) -> bool:
    return elementwise_class(type(op))


def _elementwise_block(op: Operation) -> bool:
    """An elementwise op with a block result: its operands share the result's layout."""
    return _elementwise(op) and bool(op.results) and _is_block(op.results[0])


def elementwise_class(cls: type[Operation]) -> bool:
    """True for ops whose operands take their result's layout (the ``Elementwise`` trait)."""
    # The wait of an asynchronous dot keeps the accumulator's layout.
    return cls.has_trait(Elementwise) or issubclass(cls, WarpGroupDotWaitOp)


def free_class(cls: type[Operation]) -> bool:
    """True for ops that produce any layout at no cost (constants, ranges, splats)."""
    return issubclass(cls, _FREE)


def _accesses_memory(op: Operation) -> bool:
    return op.has_trait(ReadsMemory) or op.has_trait(WritesMemory)


def memory_vector_width(func: FuncOp) -> int:
    """Elements per thread along the fastest dim: 16 bytes of the narrowest accessed type."""
    widths = []
    for op in func.walk():
        if _accesses_memory(op) or isinstance(op, AsyncCopyOp):
            pointee = element_type(op.operands[0].type)
            if isinstance(pointee, PointerType):
                widths.append(vector_elements(pointee))
    return max(widths) if widths else 4


def vector_elements(pointer: PointerType) -> int:
    """How many of ``pointer``'s elements one 16-byte access moves."""
    return max(1, 16 // max(1, pointer.pointee.bitwidth // 8))


class LayoutPlan:
    """Chooses a layout for every block value of one function (see module doc).

    Pass 1 walks backwards and records the layout each value's users *want*
    (the first demand wins). Pass 2 walks forwards: ops that may produce any
    layout produce the wanted one; reductions, ``expand_dims``, scans and
    sorts derive theirs from their operand; a ``ttg.convert_layout`` is
    inserted where an operand's layout differs from what its op needs.
    """

    def __init__(self, func: FuncOp, num_warps: int, arch: str = "sm_90") -> None:
        self.func = func
        self.num_warps = num_warps
        self.arch = arch
        self.vec = memory_vector_width(func)
        self.want: dict[int, Layout] = {}
        self.carried: dict[int, list[Layout | None]] = {}
        self.layout_of: dict[int, Layout] = {}
        self._defaults: dict[tuple[tuple[int, ...], int, tuple[int, ...] | None], Layout] = {}
        self._converts: dict[tuple[int, Layout, int], Value] = {}
        #: mma_v2 dots by ``id(op)``, and the conversions feeding them their operands
        #: (filled by :func:`~minitriton.backend.dot_seeds.seed_dot_layouts`).
        #: Stores whose pointers keep the layout of their memory (``id`` of the pointers;
        #: filled by :func:`~minitriton.backend.coalesce.seed_coalesced_layouts`).
        self.coalesced: set[int] = set()
        self.mma: dict[int, MmaDot] = {}
        self.dot_operands: dict[int, tuple[MmaDot, int]] = {}

    # -- helpers --------------------------------------------------------
    def default(
        self, shape: tuple[int, ...], vec: int | None = None, order: tuple[int, ...] | None = None
    ) -> Layout:
        """The default blocked layout of ``shape``, ``vec`` (or the plan's) elements a thread
        along the fastest dim of ``order`` (default: the last)."""
        key = (shape, vec or self.vec, order)
        if key not in self._defaults:
            params = default_params(shape, self.num_warps, key[1], order)
            self._defaults[key] = blocked(params, shape)
        return self._defaults[key]

    def wanted(self, v: Value) -> Layout:
        """The layout users want for ``v`` (the default if none asked)."""
        return self.want.get(id(v)) or self.default(v.shape)

    def demand(self, v: Value, layout: Layout) -> None:
        """Record that a user wants ``v`` in ``layout`` (first demand wins)."""
        if _is_block(v) and id(v) not in self.want:
            self.want[id(v)] = layout

    def of(self, v: Value) -> Layout:
        """The layout chosen for block value ``v``."""
        return self.layout_of[id(v)]

    def run_rule(self, rules: OpTable, op: Operation) -> bool:
        """Run ``op``'s rule from ``rules`` if it has one; True if it had."""
        rule = rules.lookup(type(op))
        if rule is None:
            return False
        rule(self, op)
        return True

    def run_rules(
        self, ops: Iterable[Operation], rules: OpTable, default: Callable[[Operation], None]
    ) -> None:
        """Run each op's rule from ``rules``, and ``default`` on the ops that have none."""
        for op in ops:
            if not self.run_rule(rules, op):
                default(op)

    # -- pass 1: backwards ---------------------------------------------
    def back_block(self, block: Block) -> None:
        self.run_rules(reversed(block.ops), BACKWARD_RULES, self.back)

    def back(self, op: Operation) -> None:
        """Pass 1 of an op without a rule: an elementwise op wants its operands in its layout."""
        if _elementwise_block(op):
            want = self.wanted(op.results[0])
            for v in op.operands:
                self.demand(v, want)

    def carry(self, op: Operation) -> list[Layout | None]:
        layouts = [self.wanted(r) if _is_block(r) else None for r in op.results]
        self.carried[id(op)] = layouts
        return layouts

    def back_yield(self, region: Region, layouts: list[Layout | None], skip: int = 0) -> None:
        term = terminator(region.block)
        for v, layout in zip(term.operands[skip:], layouts):
            if layout is not None:
                self.demand(v, layout)
        self.back_block(region.block)

    # -- pass 2: forwards ----------------------------------------------
    def fwd_block(self, block: Block) -> None:
        # Over a copy: conversions are inserted into the block as it goes.
        self.run_rules(list(block.ops), FORWARD_RULES, self.fwd)

    def fwd(self, op: Operation) -> None:
        """Pass 2 of an op without a rule: elementwise and free ops take the wanted layout."""
        if _elementwise_block(op):
            layout = self.wanted(op.results[0])
            for i in range(len(op.operands)):
                self.ensure(op, i, layout)
            self.set(op.results, [layout])
        elif isinstance(op, _FREE) and op.results and _is_block(op.result):
            self.set(op.results, [self.wanted(op.result)])

    def set(self, values: Iterable[Value], layouts: list[Layout | None]) -> None:
        """Record the layouts of ``values`` (``None`` entries for scalars)."""
        values = list(values)
        if len(layouts) == 1 and len(values) > 1:
            layouts = layouts * len(values)
        for v, layout in zip(values, layouts):
            if layout is not None and _is_block(v):
                self.layout_of[id(v)] = layout

    def ensure(self, op: Operation, index: int, layout: Layout) -> None:
        """Make operand ``index`` of ``op`` arrive in ``layout``.

        Cheap producers (constants, ranges, splats, and elementwise or shape
        ops of those) are recomputed in the wanted layout; anything else is
        moved by a ``ttg.convert_layout``, which goes through shared memory.
        """
        v = op.operands[index]
        if not _is_block(v) or self.of(v) == layout:
            return
        new = self.remat(v, layout, op, 0)
        if new is None:
            new = self.convert(v, layout, op)
        op.operands[index] = new

    def convert(self, v: Value, layout: Layout, before: Operation) -> Value:
        key = (id(v), layout, id(before.parent))
        if key not in self._converts:
            conv_op = ConvertLayoutOp([v], [v.type], {}, (), before.loc)
            block = parent_block(before)
            block.insert(block.ops.index(before), conv_op)
            self.layout_of[id(conv_op.result)] = layout
            self._converts[key] = conv_op.result
        return self._converts[key]

    def _remat_operand(self, v: Value, layout: Layout, before: Operation, depth: int):
        if not _is_block(v) or self.of(v) == layout:
            return v
        return self.remat(v, layout, before, depth + 1)

    def _remat_layouts(self, op: Operation, layout: Layout) -> list[Layout] | None:
        """The operand layouts that make ``op`` produce ``layout``, if it is cheap to redo."""
        if isinstance(op, _FREE):
            return []
        if isinstance(op, ExpandDimsOp):
            return [squeeze_layout(layout, op.attrs["axis"])]
        if isinstance(op, BroadcastOp):
            return [restrict(layout, op.operands[0].shape)]
        if _elementwise(op) and not (op.has_trait(ReadsMemory) or op.has_trait(SideEffects)):
            return [layout] * len(op.operands)
        return None

    def can_remat(self, v: Value, layout: Layout, depth: int = 0) -> bool:
        """True when ``v`` can be recomputed in ``layout`` without shared memory."""
        if not _is_block(v) or self.of(v) == layout:
            return True
        op = producer(v)
        if op is None or depth > 4 or len(op.results) != 1 or op.regions:
            return False
        wanted = self._remat_layouts(op, layout)
        if wanted is None:
            return False
        pairs = zip(op.operands, wanted + [layout] * len(op.operands))
        return all(self.can_remat(o, w, depth + 1) for o, w in pairs)

    def remat(self, v: Value, layout: Layout, before: Operation, depth: int) -> Value | None:
        key = (id(v), layout, id(before.parent))
        if key in self._converts:
            return self._converts[key]
        op = producer(v)
        if op is None or not self.can_remat(v, layout, depth):
            return None
        wanted = self._remat_layouts(op, layout)
        assert wanted is not None  # can_remat checked it
        operands = []
        for o, want in zip(op.operands, wanted + [layout] * len(op.operands)):
            new = self._remat_operand(o, want, before, depth)
            if new is None:
                return None
            operands.append(new)
        attrs = {k: a for k, a in op.attrs.items() if k != "layout"}
        clone = type(op)(operands, [v.type], attrs, (), op.loc)
        clone.result.name_hint = v.name_hint
        block = parent_block(before)
        block.insert(block.ops.index(before), clone)
        self.layout_of[id(clone.result)] = layout
        self._converts[key] = clone.result
        return clone.result

    def same_operands(self, op: Operation) -> Layout:
        layout = self.of(op.operands[0])
        for i in range(1, len(op.operands)):
            self.ensure(op, i, layout)
        return layout

    def fwd_yield(self, region: Region, layouts: list[Layout | None], skip: int = 0) -> None:
        self.fwd_block(region.block)
        term = terminator(region.block)
        for i, layout in enumerate(layouts):
            if layout is not None:
                self.ensure(term, skip + i, layout)

    # -- annotation -----------------------------------------------------
    def annotate(self) -> None:
        """Write each op's result layouts into its ``layout`` attribute."""
        for op in self.func.walk():
            names = [str(self.layout_of[id(r)]) if _is_block(r) else "-" for r in op.results]
            if not any(n != "-" for n in names):
                continue
            op.attrs["layout"] = names[0] if len(names) == 1 else names


# -- the layout rules, by op class ------------------------------------------


@layout_rule("back", StoreOp)
def _back_tt_store(plan: LayoutPlan, op: Operation) -> None:
    ptr, value = op.operands[:2]
    if not _is_block(ptr):
        return
    value_want = plan.want.get(id(value))
    vec = None
    if is_mma_layout(value_want):  # accumulators are stored through the epilogue
        value_want, vec = None, _store_vec(ptr)
    layout = plan.want.get(id(ptr)) or value_want or plan.default(ptr.shape, vec)
    for v in op.operands:
        plan.demand(v, layout)


def _store_vec(ptr: Value) -> int:
    """Elements in 16 bytes of the stored type: an accumulator's store, one vector a row.

    The plan's width is 16 bytes of the kernel's *narrowest* accessed type. An
    accumulator goes through shared memory to the stored layout anyway, so that
    layout may as well suit the store: an fp16 result of an fp8 matmul stored
    16 elements a thread would write each 32-byte sector in two halves, from
    two instructions (twice the L2 write requests).
    """
    pointee = element_type(ptr.type)
    assert isinstance(pointee, PointerType)
    return vector_elements(pointee)


@layout_rule("back", BroadcastOp)
def _back_tt_broadcast(plan: LayoutPlan, op: Operation) -> None:
    src = op.operands[0]
    plan.demand(src, restrict(plan.wanted(op.result), src.shape))


@layout_rule("back", ExpandDimsOp)
def _back_tt_expand_dims(plan: LayoutPlan, op: Operation) -> None:
    plan.demand(op.operands[0], squeeze_layout(plan.wanted(op.result), op.attrs["axis"]))


@layout_rule("back", ReduceOp)
def _back_tt_reduce(plan: LayoutPlan, op: Operation) -> None:
    for v in op.operands:
        plan.demand(v, plan.default(v.shape))


@layout_rule("back", MapElementwiseOp)
def _back_tt_map_elementwise(plan: LayoutPlan, op: Operation) -> None:
    layout = plan.wanted(op.results[0])
    for v in op.operands:
        plan.demand(v, layout)


@layout_rule("back", GatherOp)
def _back_tt_gather(plan: LayoutPlan, op: Operation) -> None:
    src, idx = op.operands
    plan.demand(src, plan.default(src.shape))  # any layout: it goes through shared memory
    plan.demand(idx, plan.wanted(op.result))


@layout_rule("back", HistogramOp)
def _back_tt_histogram(plan: LayoutPlan, op: Operation) -> None:
    for v in op.operands:  # any layout: the counts go through shared memory
        plan.demand(v, plan.default(v.shape))


@layout_rule("back", ScanOp, SortOp)
def _back_tt_scan(plan: LayoutPlan, op: Operation) -> None:
    for v, r in zip(op.operands, op.results):
        plan.demand(v, plan.wanted(r))


@layout_rule("back", DotOp)
def _back_tt_dot(plan: LayoutPlan, op: Operation) -> None:
    a, b, acc = op.operands
    plan.demand(a, plan.default(a.shape))
    plan.demand(b, plan.default(b.shape))
    mma = plan.mma.get(id(op))
    plan.demand(acc, mma.acc if mma else plan.wanted(op.result))


@layout_rule("back", WarpGroupDotOp)
def _back_ttng_warp_group_dot(plan: LayoutPlan, op: Operation) -> None:
    plan.demand(op.operands[0], plan.wanted(op.result))


@layout_rule("back", ForOp)
def _back_scf_for(plan: LayoutPlan, op: Operation) -> None:
    layouts = plan.carry(op)
    plan.back_yield(op.regions[0], layouts)
    for v, layout in zip(op.operands[3:], layouts):
        if layout is not None:
            plan.demand(v, layout)


@layout_rule("back", IfOp)
def _back_scf_if(plan: LayoutPlan, op: Operation) -> None:
    layouts = plan.carry(op)
    for region in op.regions:
        plan.back_yield(region, layouts)


@layout_rule("back", WhileOp)
def _back_scf_while(plan: LayoutPlan, op: Operation) -> None:
    layouts = plan.carry(op)
    plan.back_yield(op.regions[1], layouts)
    plan.back_yield(op.regions[0], layouts, skip=1)
    for v, layout in zip(op.operands, layouts):
        if layout is not None:
            plan.demand(v, layout)


@layout_rule("fwd", StoreOp)
def _fwd_tt_store(plan: LayoutPlan, op: Operation) -> None:
    ptr, value = op.operands[:2]
    if not _is_block(ptr):
        return
    layout = plan.of(ptr)
    # Store a computed value where it lives when the pointers are cheap to redo,
    # unless the pointers have the layout of their memory (coalesced).
    in_place = not is_mma_layout(plan.of(value)) and id(ptr) not in plan.coalesced
    if in_place and all(plan.can_remat(v, plan.of(value)) for v in op.operands):
        layout = plan.of(value)
        plan.ensure(op, 0, layout)
    for i in range(1, len(op.operands)):
        plan.ensure(op, i, layout)


@layout_rule("fwd", BroadcastOp)
def _fwd_tt_broadcast(plan: LayoutPlan, op: Operation) -> None:
    layout = plan.wanted(op.result)
    plan.ensure(op, 0, restrict(layout, op.operands[0].shape))
    plan.set(op.results, [layout])


@layout_rule("fwd", ExpandDimsOp)
def _fwd_tt_expand_dims(plan: LayoutPlan, op: Operation) -> None:
    plan.set(op.results, [expand_layout(plan.of(op.operands[0]), op.attrs["axis"])])


@layout_rule("fwd", ReduceOp)
def _fwd_tt_reduce(plan: LayoutPlan, op: Operation) -> None:
    layout = plan.same_operands(op)
    plan.set(op.results, [slice_layout(layout, op.attrs["axis"])])


@layout_rule("fwd", MapElementwiseOp)
def _fwd_tt_map_elementwise(plan: LayoutPlan, op: Operation) -> None:
    plan.set(op.results, [plan.same_operands(op)])


@layout_rule("fwd", GatherOp)
def _fwd_tt_gather(plan: LayoutPlan, op: Operation) -> None:
    layout = plan.wanted(op.result)
    plan.ensure(op, 1, layout)
    plan.set(op.results, [layout])


@layout_rule("fwd", HistogramOp)
def _fwd_tt_histogram(plan: LayoutPlan, op: Operation) -> None:
    plan.same_operands(op)  # the mask in the values' layout
    plan.set(op.results, [plan.wanted(op.result)])


@layout_rule("fwd", ScanOp, SortOp)
def _fwd_tt_scan(plan: LayoutPlan, op: Operation) -> None:
    plan.set(op.results, [plan.same_operands(op)])


@layout_rule("fwd", ReshapeOp, TransOp)
def _fwd_tt_reshape(plan: LayoutPlan, op: Operation) -> None:
    plan.set(op.results, [plan.wanted(op.result)])


@layout_rule("fwd", DotOp)
def _fwd_tt_dot(plan: LayoutPlan, op: Operation) -> None:
    mma = plan.mma.get(id(op))
    if mma is not None:
        _fwd_mma_dot(plan, op, mma)
        return
    layout = plan.wanted(op.result)
    plan.ensure(op, 2, layout)
    plan.set(op.results, [layout])


def _fwd_mma_dot(plan: LayoutPlan, op: Operation, mma: MmaDot) -> None:
    for i, layout in enumerate((mma.a, mma.b)):
        v = op.operands[i]
        if plan.of(v) == layout:
            continue
        before = op if plan.can_remat(v, layout) else hoisted_before(v, op)
        new = plan.remat(v, layout, before, 0) or plan.convert(v, layout, before)
        op.operands[i] = new
        if isinstance(getattr(new, "owner", None), ConvertLayoutOp):
            plan.dot_operands[id(new)] = (mma, i)
    plan.ensure(op, 2, mma.acc)
    plan.set(op.results, [mma.acc])


@layout_rule("fwd", LocalLoadOp)
def _fwd_ttg_local_load(plan: LayoutPlan, op: Operation) -> None:
    plan.set(op.results, [plan.wanted(op.result)])


@layout_rule("fwd", WarpGroupDotOp)
def _fwd_ttng_warp_group_dot(plan: LayoutPlan, op: Operation) -> None:
    # The accumulator in; an A operand in registers keeps its own layout.
    layout = plan.wanted(op.result)
    plan.ensure(op, 0, layout)
    plan.set(op.results, [layout])


@layout_rule("fwd", ForOp)
def _fwd_scf_for(plan: LayoutPlan, op: Operation) -> None:
    layouts = plan.carried[id(op)]
    for i, layout in enumerate(layouts):
        if layout is not None:
            plan.ensure(op, 3 + i, layout)
    plan.set(op.regions[0].args[1:], layouts)
    plan.fwd_yield(op.regions[0], layouts)
    plan.set(op.results, layouts)


@layout_rule("fwd", IfOp)
def _fwd_scf_if(plan: LayoutPlan, op: Operation) -> None:
    layouts = plan.carried[id(op)]
    for region in op.regions:
        plan.fwd_yield(region, layouts)
    plan.set(op.results, layouts)


@layout_rule("fwd", WhileOp)
def _fwd_scf_while(plan: LayoutPlan, op: Operation) -> None:
    layouts = plan.carried[id(op)]
    for i, layout in enumerate(layouts):
        if layout is not None:
            plan.ensure(op, i, layout)
    before, after = op.regions
    plan.set(before.args, layouts)
    plan.fwd_yield(before, layouts, skip=1)
    plan.set(after.args, layouts)
    plan.fwd_yield(after, layouts)
    plan.set(op.results, layouts)


def assign_layouts(func: FuncOp, num_warps: int, arch: str = "sm_90") -> LayoutPlan:
    """Choose layouts for ``func`` (in place: conversions and ``layout`` attributes)."""
    plan = LayoutPlan(func, num_warps, arch)
    seed_dot_layouts(plan)  # tensor-core dots of both kinds
    seed_coalesced_layouts(plan)  # accesses whose memory runs along another dim than the last
    plan.back_block(func.body.block)
    plan.set(func.body.args, [None] * len(func.body.args))
    plan.fwd_block(func.body.block)
    plan.annotate()
    return plan


def prepare_kernel(
    module: Module,
    num_warps: int,
    arch: str = "sm_90",
    num_stages: int = 3,
    tma: bool = False,
    tma_stores: bool = False,
    defer_last_dot: bool = False,
) -> tuple[Module, FuncOp, LayoutPlan, dict]:
    """Copy ``module`` and run the GPU passes on the copy; see the module docstring.

    ``tma`` lets the pipeliner copy descriptor tiles with TMA on sm_90;
    ``tma_stores`` lets ``tma-stores`` make tile stores TMA stores there;
    ``defer_last_dot`` lets it leave a loop's last dot in flight across the back edge.
    Returns the copy, its kernel, the layout plan and the inlined ops' call sites.
    """
    from minitriton.backend.passes import GpuState, run_gpu_passes

    state = GpuState(copy_module(module), num_warps, arch, num_stages, tma, tma_stores,
                     defer_last_dot=defer_last_dot)  # fmt: skip
    run_gpu_passes(state)
    assert state.plan is not None, "assign-layouts ran last"
    return state.module, state.kernel, state.plan, state.live_inlined_at()
