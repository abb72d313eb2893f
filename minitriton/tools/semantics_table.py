"""Where each op means what: one row per registered op, gathered from the code.

The docs' *Op semantics table* page is generated from :func:`op_rows` at
build time, so it cannot drift from the tree. For each op a row says:

* **traits**: its :mod:`~minitriton.ir.traits`;
* **verified**: the ``verify_()`` that checks it and its declared signature
  (``minitriton/ir/ops.py``, or ``minitriton/backend/ops.py`` for the GPU
  backend's own ops);
* **folded**: the ``canonicalize`` rule that folds or simplifies it;
* **emulator**: the function registered with ``@semantics`` that runs it;
* **GPU**: the function registered with ``@lowering`` that lowers it to LLVM IR;
* **layout**: the ``@layout_rule`` functions that give its results a layout in
  the GPU backend's layout pass, or the pass's general rule for it;
* **axis**: the ``@axis_rule`` function of the GPU backend's axis analysis
  (contiguity, divisibility, constancy), or its general rule;
* **differs**: how the emulator's results differ from the GPU's.

A cell that has nothing to point at says ``n/a - <reason>``; no cell is empty
(a test checks it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from minitriton.ir.core import OP_REGISTRY, Operation
from minitriton.ir.ops import MATH_BINARY, MATH_UNARY
from minitriton.ir.traits import ALL_TRAITS, HasRegions, Pure, Terminator

COLUMNS = ("op", "traits", "verified", "folded", "emulator", "GPU", "layout", "axis", "differs")


@dataclass(frozen=True)
class OpRow:
    """One op's row of the table."""

    op: str
    traits: str
    verified: str
    folded: str
    emulator: str
    gpu: str
    layout: str
    axis: str
    differs: str

    def cells(self) -> tuple[str, ...]:
        """The cells, in :data:`COLUMNS` order."""
        return (self.op, self.traits, self.verified, self.folded, self.emulator, self.gpu,
                self.layout, self.axis, self.differs)  # fmt: skip


# How the emulator's results differ from the GPU's (the emulator package's
# docstring and the docs' differences page say more). Ops not listed compute
# the same values on both.
_SAME = "none: the same values"
_APPROX = "NumPy's correctly rounded result; the GPU uses fast approximations"
DIFFERS: dict[str, str] = {
    "arith.div": "fp32 is IEEE-exact (the GPU's div.full.f32 is within 2 ULP); "
    "an integer division by zero gives 0 (undefined)",
    "arith.rem": "an integer remainder by zero gives 0 (undefined)",
    "arith.add": "a mul followed by an add is never fused into an FMA",
    "arith.max": "NaN operands are ignored (IEEE maxNum)",
    "arith.min": "NaN operands are ignored (IEEE minNum)",
    "arith.shl": "shifts by the bit width or more give 0, as PTX does (poison in LLVM)",
    "arith.shr": "shifts by the bit width or more give 0 or the sign, as PTX does",
    "arith.cast": "float-to-int saturates (8 bits: the 16-bit result's low byte) and NaN gives the "
    "GPU's value (undefined); "
    "bf16 from f64 or ints rounds twice, through fp32",
    "math.fma": "f64 is not fused (the product is rounded first)",
    "tt.dot": "fp32 inputs round to TF32 and accumulate in steps of 8 along K; "
    "the last bit inside a step may differ",
    "tt.reduce": "a pairwise tree order; the GPU's order differs, so float sums agree to rounding",
    "tt.scan": "a sequential order; float results agree to rounding",
    "tt.load": "an out-of-bounds lane is an error (the GPU reads garbage or faults)",
    "tt.store": "an out-of-bounds lane is an error; in a batch the highest program id "
    "wins an address",
    "tt.atomic_rmw": "kernels with spin locks run one program at a time",
    "tt.atomic_cas": "kernels with spin locks run one program at a time",
    "tt.print": "prints once per program, the whole block (the GPU prints per thread)",
    "tt.assert": "checked only with debug=True, as on the GPU",
    "tt.barrier": "programs run whole, so a barrier has nothing to wait for",
}
DIFFERS.update({f"math.{fn}": _APPROX for fn in ("exp", "exp2", "log", "log2", "sin", "cos")})
DIFFERS.update({f"math.{fn}": _APPROX for fn in ("rsqrt", "tanh", "erf")})


def op_rows() -> list[OpRow]:
    """One row per registered op, IR ops first, then the GPU backend's own."""
    import minitriton.backend.lower  # noqa: F401 - registers the backend's ops and lowerings

    return [_row(name, cls) for name, cls in OP_REGISTRY.items()]


def _row(name: str, cls: type[Operation]) -> OpRow:
    backend_only = bool(getattr(cls, "backend_only", False)) or name.startswith("ttg.")
    only = "n/a - GPU backend only"
    return OpRow(
        op=name,
        traits=", ".join(t.__name__ for t in ALL_TRAITS if t in cls.traits),
        verified=_verified(cls),
        folded=only if backend_only else _folded(name, cls),
        emulator=only if backend_only else _emulated(name, cls),
        gpu=_lowered(name, cls),
        layout=_layout(name, cls),
        axis=_axis(name, cls),
        differs=only if backend_only else DIFFERS.get(name, _SAME),
    )


def _where(fn: object) -> str:
    module = getattr(fn, "__module__", "?").removeprefix("minitriton.")
    qualname = getattr(fn, "__qualname__", "?")
    if "<locals>" in qualname:  # made by a factory: name the factory
        return f"{module}.{qualname.split('.')[0]}(...)"
    return f"{module}.{qualname}"


def _verified(cls: type[Operation]) -> str:
    signature = cls.signature()
    declared = f"declared: {signature}" if signature else ""
    for base in cls.__mro__:
        if base is Operation:
            break
        if "verify_" in base.__dict__:
            return "; ".join(filter(None, [_where(base.__dict__["verify_"]), declared]))
    if declared:
        return declared
    if Terminator in cls.traits:
        return "by its parent op's verify_, and ir.verifier (last in its block)"
    return "n/a - takes any operands (ir.verifier checks dominance)"


def _found_or_named(
    found: Sequence[object | None], name: str, by_name: dict[str, str]
) -> str | None:
    """Where the functions registered for an op are, else what ``by_name`` says of it.

    None when neither says anything: the column's general rules decide.
    """
    fns = [fn for fn in found if fn is not None]
    if fns:
        return ", ".join(_where(fn) for fn in fns)
    return by_name.get(name)


def _implemented(
    fn: object | None, name: str, cls: type[Operation], by_name: dict[str, str], terminator: str
) -> str:
    """A column every op needs: its function, else ``by_name``'s reason, else ``terminator``."""
    cell = _found_or_named([fn], name, by_name)
    if cell is not None:
        return cell
    return terminator if Terminator in cls.traits else "n/a - missing"


def _folded(name: str, cls: type[Operation]) -> str:
    from minitriton.passes.canonicalize import RULES

    reasons = {
        "arith.constant": "n/a - already a constant",
        "tt.get_program_id": "n/a - known only at run time",
        "tt.get_num_programs": "n/a - known only at launch",
        "tt.hint": "n/a - kept for the GPU backend's analysis",
    }
    cell = _found_or_named([RULES.get(cls)], name, reasons)
    if cell is not None:
        return cell
    if Terminator in cls.traits:
        return "n/a - a terminator"
    if Pure not in cls.traits:
        return "n/a - has effects"
    if HasRegions in cls.traits:
        return "n/a - has regions"
    if DIFFERS.get(name) == _APPROX:
        return "n/a - approximate on the GPU: never folded"
    if name.removeprefix("math.") in MATH_UNARY + MATH_BINARY:
        return "n/a - no rule yet (a libdevice function)"
    return "n/a - no rule yet"


def _emulated(name: str, cls: type[Operation]) -> str:
    from minitriton.emulator import SEMANTICS

    fn = SEMANTICS.get(cls)
    by_name = {"tt.func": "emulator.interpreter (runs the kernel's body)"}
    return _implemented(fn, name, cls, by_name, "emulator.interpreter (ends its region)")


def _lowered(name: str, cls: type[Operation]) -> str:
    from minitriton.backend.registry import LOWERINGS

    by_name = {
        "tt.call": "n/a - inlined before lowering (backend.prepare.inline_calls)",
        "tt.func": "backend.lower.context.LoweringContext.generate (the kernel function)",
    }
    return _implemented(LOWERINGS.lookup(cls), name, cls, by_name, "by its parent op's lowering")


def _layout(name: str, cls: type[Operation]) -> str:
    from minitriton.backend import prepare
    from minitriton.backend.registry import BACKWARD_RULES, FORWARD_RULES

    rules = [table.lookup(cls) for table in (BACKWARD_RULES, FORWARD_RULES)]
    by_name = {
        "ttg.convert_layout": "its own: the layout pass inserts it "
        "(backend.prepare.LayoutPlan.ensure)",
        "tt.call": "n/a - inlined before layouts are chosen",
        "tt.func": "n/a - holds the kernel; its arguments are scalars",
    }
    cell = _found_or_named(rules, name, by_name)
    if cell is not None:
        return cell
    if prepare.free_class(cls):
        return "any: the layout its users want (backend.prepare.LayoutPlan.fwd)"
    if prepare.elementwise_class(cls):
        return "elementwise: operands take the result's layout (backend.prepare)"
    if Terminator in cls.traits:
        return "its parent's: yields carry the parent's result layouts"
    return "n/a - no block results, or scalar only"


def _axis(name: str, cls: type[Operation]) -> str:
    from minitriton.backend.registry import AXIS_RULES

    through_regions = "backend.axis.AxisAnalysis.visit (through its regions)"
    by_name = {
        "scf.for": through_regions,
        "scf.if": through_regions,
        "tt.func": "backend.axis.AxisAnalysis (its arguments' divisibility)",
    }
    cell = _found_or_named([AXIS_RULES.lookup(cls)], name, by_name)
    if cell is not None:
        return cell
    return "general: runs its operands share stay constant (backend.axis.AxisAnalysis.generic)"
