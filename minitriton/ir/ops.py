"""Every op of the block-level IR, each a small class that verifies itself.

Conventions (they keep each ``verify_()`` short):

* Each op declares its signature, as xDSL's ops declare their operands and
  attributes: the operand counts it accepts (``operand_counts``), its result
  count (``result_count``) and the attributes it must carry
  (``required_attrs``). :meth:`Operation.verify
  <minitriton.ir.core.Operation.verify>` checks them before the op's own
  ``verify_()`` runs, so ``verify_()`` may unpack operands and read
  attributes directly.
* Ops that differ only in name, docstring and flags (the arithmetic, the
  math functions, the terminators) are made by one factory from their base
  class; the shape ops share ``_View``.
* The frontend makes types explicit: operands of a binary op already have
  the same type (it inserts ``tt.broadcast``, ``tt.splat`` and
  ``arith.cast``), so ops never broadcast or promote implicitly.
* Ops work on scalars and on blocks alike. ``arith.add(%a, %b) : i32`` adds
  two scalars, ``... : tensor<128xi32>`` adds two blocks elementwise.
* Integer signedness lives in the type (``i32`` vs ``u32``), so ``arith.div``,
  ``arith.rem``, ``arith.shr`` and ``arith.cmp`` need no signed/unsigned
  variants.

Op names follow Triton's TTIR where one exists (``tt.load``, ``tt.dot``,
``scf.for``); see the IR reference page in the docs for each op's semantics.
"""

from __future__ import annotations

from minitriton.ir.core import Operation, Region, Value, VerifyError, register_ops
from minitriton.ir.traits import (
    Commutative,
    Elementwise,
    HasRegions,
    LoopLike,
    MayNotTerminate,
    MayTrap,
    Pure,
    ReadsMemory,
    RecursiveEffects,
    SideEffects,
    Symbol,
    Terminator,
    Traits,
    UnknownEffects,
    ViewLike,
    WritesMemory,
    trait_set,
)
from minitriton.ir.types import (
    F32,
    F64,
    I1,
    I32,
    U64,
    BlockType,
    PointerType,
    ScalarType,
    Type,
    element_type,
    shape_of,
    with_element,
)

# ---------------------------------------------------------------- helpers


def _same_type(op: Operation, values: list[Value], t: Type, what: str) -> None:
    for v in values:
        if v.type != t:
            raise op.fail(f"{what} has type {v.type}, expected {t}")


def _same_shape(op: Operation, a: Type, b: Type, what: str) -> None:
    if shape_of(a) != shape_of(b):
        raise op.fail(f"{what}: shape {shape_of(a)} does not match {shape_of(b)}")


def _pointee(op: Operation, t: Type) -> ScalarType:
    """The type a pointer (or a block of pointers) ``t`` points to."""
    elem = element_type(t)
    if not isinstance(elem, PointerType):
        raise op.fail(f"pointer operand has type {t}")
    return elem.pointee


def _block_to_block(op: Operation) -> tuple[BlockType, BlockType]:
    """The types of ``op``'s one operand and its result, both blocks (a view's check)."""
    src, t = op.operands[0].type, op.result.type
    if not isinstance(src, BlockType) or not isinstance(t, BlockType):
        raise op.fail("operand and result must be blocks")
    return src, t


def _op_class(base: type[Operation], op_name: str, doc: str, **attrs: object) -> type[Operation]:
    """A subclass of ``base`` for the op ``op_name`` (``arith.add`` -> ``AddOp``).

    The factories of ops that differ only in name, docstring and flags use it,
    as xDSL builds families of ops from one definition.
    """
    class_name = op_name.split(".")[1].title().replace("_", "") + "Op"
    return type(class_name, (base,), {"name": op_name, "__doc__": doc, **attrs})


def _check_block_shape(op: Operation, t: Type) -> None:
    # Rule from Triton: every block dimension is a power of two, <= 2^20 elements.
    if not isinstance(t, BlockType):
        return
    for d in t.shape:
        if d <= 0 or d & (d - 1):
            raise op.fail(f"block dimension {d} is not a power of two")
    if t.numel > 2**20:
        raise op.fail(f"block of {t.numel} elements exceeds 2^20")


# ---------------------------------------------------------------- constants


class ConstantOp(Operation):
    """``%c = arith.constant() {value = 1.0} : f32`` (a block constant is a splat)."""

    traits = trait_set(Pure)

    name = "arith.constant"
    operand_counts = (0,)
    result_count = 1
    required_attrs = ("value",)

    def verify_(self) -> None:
        value = self.attrs["value"]
        elem = element_type(self.result.type)
        if isinstance(elem, PointerType) or not isinstance(value, (int, float)):
            raise self.fail(f"bad constant {value!r} of type {self.result.type}")
        if elem.is_int() and not isinstance(value, int):
            raise self.fail(f"integer constant has non-integer value {value!r}")
        _check_block_shape(self, self.result.type)


class ProgramIdOp(Operation):
    """``%pid = tt.get_program_id() {axis = 0} : i32``."""

    traits = trait_set(Pure)

    name = "tt.get_program_id"
    operand_counts = (0,)
    required_attrs = ("axis",)

    def verify_(self) -> None:
        if self.attrs["axis"] not in (0, 1, 2) or self.result.type != I32:
            raise self.fail("axis must be 0, 1 or 2 and the result i32")


class NumProgramsOp(ProgramIdOp):
    """``%n = tt.get_num_programs() {axis = 0} : i32``."""

    name = "tt.get_num_programs"


class MakeRangeOp(Operation):
    """``%r = tt.make_range() {start = 0, end = 128} : tensor<128xi32>``.

    The integers ``start`` to ``end - 1`` (``tl.arange``); their count is a
    power of two, as every block dimension is.
    """

    traits = trait_set(Pure)

    name = "tt.make_range"
    operand_counts = (0,)
    required_attrs = ("start", "end")

    def verify_(self) -> None:
        start, end = self.attrs["start"], self.attrs["end"]
        t = self.result.type
        if not isinstance(t, BlockType) or t.shape != (end - start,) or t.element != I32:
            raise self.fail(f"result must be tensor<{end - start}xi32>")
        _check_block_shape(self, t)


# ---------------------------------------------------------------- elementwise


class _Elementwise(Operation):
    """Operands and one result, all of one type."""

    traits = trait_set(Pure, Elementwise)
    operand_counts = (2,)
    result_count = 1

    allow_int = True
    allow_float = True

    def verify_(self) -> None:
        t = self.result.type
        _same_type(self, self.operands, t, "operand")
        elem = element_type(t)
        if not isinstance(elem, ScalarType):
            raise self.fail(f"does not apply to pointers ({t})")
        if elem.is_float() and not self.allow_float:
            raise self.fail(f"needs integer operands, got {t}")
        if elem.is_int() and not self.allow_int:
            raise self.fail(f"needs floating-point operands, got {t}")


class _Binary(_Elementwise):
    """Two operands and one result, all of one type."""


_COMMUTATIVE = _Binary.traits | {Commutative}
# Integer division and remainder by zero are undefined.
_TRAPS = _Binary.traits | {MayTrap}


def _binary(
    op_name: str, doc: str, ints: bool = True, floats: bool = True, op_traits: Traits | None = None
) -> type[Operation]:
    attrs: dict[str, object] = {"allow_int": ints, "allow_float": floats}
    if op_traits is not None:
        attrs["traits"] = op_traits
    return _op_class(_Binary, op_name, doc, **attrs)


AddOp = _binary("arith.add", "Addition; integers wrap around.", op_traits=_COMMUTATIVE)
SubOp = _binary("arith.sub", "Subtraction; integers wrap around.")
MulOp = _binary("arith.mul", "Multiplication; integers wrap around.", op_traits=_COMMUTATIVE)
DivOp = _binary(
    "arith.div",
    "Division: truncating for integers (C), approximate for floats.",
    op_traits=_TRAPS,
)
RemOp = _binary(
    "arith.rem",
    "Remainder with the sign of the dividend (C ``%`` / ``fmod``).",
    op_traits=_TRAPS,
)
MaxOp = _binary("arith.max", "Elementwise maximum (``tl.maximum``).", op_traits=_COMMUTATIVE)
MinOp = _binary("arith.min", "Elementwise minimum (``tl.minimum``).", op_traits=_COMMUTATIVE)
AndOp = _binary("arith.and", "Bitwise and.", floats=False, op_traits=_COMMUTATIVE)
OrOp = _binary("arith.or", "Bitwise or.", floats=False, op_traits=_COMMUTATIVE)
XorOp = _binary("arith.xor", "Bitwise xor.", floats=False, op_traits=_COMMUTATIVE)
ShlOp = _binary("arith.shl", "Shift left.", floats=False)
ShrOp = _binary(
    "arith.shr", "Shift right: arithmetic if signed, logical if unsigned.", floats=False
)
UmulhiOp = _binary("arith.umulhi", "High half of the full product (``tl.umulhi``).", floats=False)
DivRnOp = _binary("math.div_rn", "IEEE round-to-nearest division (``tl.div_rn``).", ints=False)
PowOp = _binary("math.pow", "Power ``x ** y`` on floats.", ints=False)
# libdevice's two-operand functions (floats only), one op each.
MATH_BINARY = ("atan2", "hypot", "copysign", "nextafter", "remainder")
#: Function name -> its op class, for the tables keyed by op class.
MATH_BINARY_OPS: dict[str, type[Operation]] = {
    fn: _binary(f"math.{fn}", f"Elementwise libdevice ``{fn}`` (floats only).", ints=False)
    for fn in MATH_BINARY
}


class _BesselN(Operation):
    """Shared checks of ``math.jn`` and ``math.yn``: an ``i32`` order, a float argument."""

    traits = trait_set(Pure, Elementwise)
    operand_counts = (2,)

    def verify_(self) -> None:
        order, x = (v.type for v in self.operands)
        if element_type(order) != I32:
            raise self.fail(f"the order must be i32, got {order}")
        if not (isinstance(element_type(x), ScalarType) and element_type(x).is_float()):
            raise self.fail(f"the argument must be a float, got {x}")
        _same_shape(self, order, x, "order and argument")
        _same_type(self, [self.operands[1]], self.result.type, "argument")


class JnOp(_BesselN):
    """``%r = math.jn(%n, %x) : T``: libdevice's Bessel function of the first kind, order n."""

    name = "math.jn"


class YnOp(_BesselN):
    """``%r = math.yn(%n, %x) : T``: libdevice's Bessel function of the second kind, order n."""

    name = "math.yn"


CMP_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")


class CmpOp(Operation):
    """``%m = arith.cmp(%a, %b) {pred = "lt"} : tensor<128xi1>``.

    Signedness comes from the operand type; float compares are ordered
    except ``ne``, as in Python.
    """

    traits = trait_set(Pure, Elementwise)

    name = "arith.cmp"
    operand_counts = (2,)
    required_attrs = ("pred",)

    def verify_(self) -> None:
        if self.attrs["pred"] not in CMP_PREDICATES:
            raise self.fail(f"unknown predicate {self.attrs['pred']!r}")
        a, b = self.operands
        _same_type(self, [b], a.type, "right operand")
        if self.result.type != with_element(a.type, I1):
            raise self.fail(f"result must be {with_element(a.type, I1)}")


class SelectOp(Operation):
    """``%r = arith.select(%cond, %a, %b) : T`` (``tl.where``)."""

    traits = trait_set(Pure, Elementwise)

    name = "arith.select"
    operand_counts = (3,)

    def verify_(self) -> None:
        cond, a, b = self.operands
        t = self.result.type
        _same_type(self, [a, b], t, "operand")
        if element_type(cond.type) != I1:
            raise self.fail(f"condition must be i1, got {cond.type}")
        if shape_of(cond.type) not in ((), shape_of(t)):
            raise self.fail("condition shape must match the result shape")


class _Unary(_Elementwise):
    """One operand and one result of the same type."""

    operand_counts = (1,)


def _unary(op_name: str, doc: str, ints: bool = False, floats: bool = True) -> type[Operation]:
    return _op_class(_Unary, op_name, doc, allow_int=ints, allow_float=floats)


NegOp = _unary("arith.neg", "Negation.", ints=True)
NotOp = _unary("arith.not", "Bitwise not (``~x``).", ints=True, floats=False)
AbsOp = _unary("math.abs", "Absolute value.", ints=True)
MATH_UNARY: tuple[str, ...] = ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos")
MATH_UNARY += ("floor", "ceil", "erf", "tanh")
# libdevice's one-operand functions (tl.extra.cuda.libdevice, tl.math).
MATH_UNARY += ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "cosh", "sinh", "tan")
MATH_UNARY += ("erfc", "exp10", "expm1", "log10", "log1p", "lgamma", "tgamma")
MATH_UNARY += ("rint", "round", "trunc")
MATH_UNARY += ("erfinv", "erfcinv", "normcdf", "normcdfinv", "rcbrt", "logb")
MATH_UNARY += ("j0", "j1", "y0", "y1", "cyl_bessel_i0", "cyl_bessel_i1", "erfcx")
MATH_UNARY += ("sinpi", "cospi")
#: Function name -> its op class, for the tables keyed by op class.
MATH_UNARY_OPS: dict[str, type[Operation]] = {
    fn: _unary(f"math.{fn}", f"Elementwise ``{fn}`` (floats only).") for fn in MATH_UNARY
}


class FmaOp(Operation):
    """``%r = math.fma(%a, %b, %c) : T`` computes ``a * b + c`` with one rounding."""

    traits = trait_set(Pure, Elementwise)

    name = "math.fma"
    operand_counts = (3,)

    def verify_(self) -> None:
        _same_type(self, self.operands, self.result.type, "operand")
        if not element_type(self.result.type).is_float():
            raise self.fail("needs floating-point operands")


#: ``math.rounded``'s arithmetic functions and their operand counts.
ROUNDED_FUNCTIONS = {"add": 2, "sub": 2, "mul": 2, "div": 2, "fma": 3, "sqrt": 1, "rcp": 1}
#: IEEE rounding modes: to nearest even, toward zero, down (to -inf), up (to +inf).
ROUNDINGS = ("rn", "rz", "rd", "ru")


class RoundedOp(Operation):
    """``%r = math.rounded(%a, %b) {fn = "add", rounding = "rd"} : f32``: one IEEE
    operation with an explicit rounding mode (libdevice's ``add_rd``, ``div_rz`` ...).

    ``fn`` is ``add``, ``sub``, ``mul``, ``div``, ``fma``, ``sqrt`` or ``rcp``
    (operands and result of one f32 or f64 type), or ``cvt``: a conversion of
    its one operand to the result type (``float2int_rd``, ``int2float_ru``,
    ``double2float_rz`` ...), float to integer rounding to an integral value
    first and saturating as PTX's ``cvt`` does.
    """

    traits = trait_set(Pure, Elementwise)

    name = "math.rounded"
    operand_counts = (1, 2, 3)

    def verify_(self) -> None:
        fn, rounding = self.attrs.get("fn"), self.attrs.get("rounding")
        if rounding not in ROUNDINGS:
            raise self.fail(f"rounding must be one of {', '.join(ROUNDINGS)}, got {rounding!r}")
        if fn == "cvt":
            if len(self.operands) != 1:
                raise self.fail("cvt takes one operand")
            _same_shape(self, self.operands[0].type, self.result.type, "cvt")
            return
        if fn not in ROUNDED_FUNCTIONS:
            raise self.fail(f"unknown function {fn!r}")
        if len(self.operands) != ROUNDED_FUNCTIONS[fn]:
            raise self.fail(f"{fn} takes {ROUNDED_FUNCTIONS[fn]} operands")
        _same_type(self, self.operands, self.result.type, "operand")
        if element_type(self.result.type) not in (F32, F64):
            raise self.fail(f"needs f32 or f64 operands, got {self.result.type}")


#: The float types ``arith.cast {rounding = "rtz"}`` narrows to.
RTZ_CAST_TARGETS = ("f32", "f16", "bf16", "f8e5", "f8e4nv")


class CastOp(Operation):
    """``%r = arith.cast(%x) : tensor<128xf16>`` converts values between types.

    Float to int truncates toward zero; int to float rounds to nearest;
    narrowing floats (incl. to bf16) rounds to nearest even; ints wrap.
    Casting between pointer types, or between a pointer and ``i64``,
    reinterprets the address.

    ``{rounding = "rtz"}`` (Triton's ``fp_downcast_rounding="rtz"``) makes a
    narrowing float cast round toward zero instead: a finite value beyond the
    largest finite one gives that one (with its sign), an infinity stays
    infinite (f8e4nv, which has none, gives its largest finite value), NaN
    stays NaN. Only narrowing float casts to :data:`RTZ_CAST_TARGETS` take it.
    """

    traits = trait_set(Pure, Elementwise)

    name = "arith.cast"
    operand_counts = (1,)

    def verify_(self) -> None:
        _same_shape(self, self.operands[0].type, self.result.type, "cast")
        rounding = self.attrs.get("rounding")
        if rounding is None:
            return
        if rounding != "rtz":
            raise self.fail(f'rounding must be "rtz" (or absent), got {rounding!r}')
        src, dst = element_type(self.operands[0].type), element_type(self.result.type)
        if not is_rtz_cast(src, dst):
            raise self.fail(f"rounding = \"rtz\" needs a narrowing float cast to one of "
                            f"{', '.join(RTZ_CAST_TARGETS)}, got {src} to {dst}")  # fmt: skip


def is_rtz_cast(src: Type, dst: Type) -> bool:
    """Whether ``arith.cast {rounding = "rtz"}`` converts ``src`` to ``dst``."""
    if not (isinstance(src, ScalarType) and isinstance(dst, ScalarType)):
        return False
    narrowing = src.is_float() and dst.is_float() and dst.bitwidth < src.bitwidth
    return narrowing and dst.name in RTZ_CAST_TARGETS


class BitcastOp(Operation):
    """``%r = arith.bitcast(%x) : tensor<128xi32>`` reinterprets the bits."""

    traits = trait_set(Pure, Elementwise, ViewLike)

    name = "arith.bitcast"
    operand_counts = (1,)

    def verify_(self) -> None:
        src, dst = element_type(self.operands[0].type), element_type(self.result.type)
        _same_shape(self, self.operands[0].type, self.result.type, "bitcast")
        if isinstance(src, PointerType) or isinstance(dst, PointerType):
            raise self.fail(f"cannot bitcast {src} to {dst}")
        if src.bitwidth != dst.bitwidth:
            raise self.fail(f"cannot bitcast {src} to {dst}")


class AddPtrOp(Operation):
    """``%p = tt.addptr(%ptr, %offset) : tensor<128xptr<f32>>`` offsets in elements."""

    traits = trait_set(Pure, Elementwise, ViewLike)

    name = "tt.addptr"
    operand_counts = (2,)

    def verify_(self) -> None:
        ptr, off = self.operands
        _same_type(self, [ptr], self.result.type, "pointer operand")
        if not self.result.type.is_ptr():
            raise self.fail("result must be a pointer")
        if not element_type(off.type).is_int():
            raise self.fail(f"offset must be an integer, got {off.type}")
        _same_shape(self, off.type, ptr.type, "offset")


# ---------------------------------------------------------------- shapes


class _View(Operation):
    """A shape op: one operand, its values seen in another shape (nothing is computed)."""

    traits = trait_set(Pure, ViewLike)
    operand_counts = (1,)


class SplatOp(_View):
    """``%b = tt.splat(%s) : tensor<128xf32>`` fills a block with a scalar."""

    name = "tt.splat"

    def verify_(self) -> None:
        src, t = self.operands[0].type, self.result.type
        if isinstance(src, BlockType) or not isinstance(t, BlockType) or t.element != src:
            raise self.fail(f"cannot splat {src} to {t}")
        _check_block_shape(self, t)


class BroadcastOp(_View):
    """``%b = tt.broadcast(%x) : tensor<64x128xf32>`` expands size-1 dimensions."""

    name = "tt.broadcast"

    def verify_(self) -> None:
        src, t = _block_to_block(self)
        if src.element != t.element or len(src.shape) != len(t.shape):
            raise self.fail(f"cannot broadcast {src} to {t}")
        for a, b in zip(src.shape, t.shape):
            if a not in (1, b):
                raise self.fail(f"cannot broadcast {src} to {t}")


class ExpandDimsOp(_View):
    """``%b = tt.expand_dims(%x) {axis = 1} : tensor<128x1xf32>``."""

    name = "tt.expand_dims"
    required_attrs = ("axis",)

    def verify_(self) -> None:
        src = list(shape_of(self.operands[0].type))
        if not 0 <= self.attrs["axis"] <= len(src):
            raise self.fail(f"axis {self.attrs['axis']} is out of range for rank {len(src)}")
        src.insert(self.attrs["axis"], 1)
        if tuple(src) != shape_of(self.result.type):
            raise self.fail(f"result shape must be {tuple(src)}")


class ReshapeOp(_View):
    """``%b = tt.reshape(%x) : tensor<32x4xf32>`` keeps the row-major order."""

    name = "tt.reshape"

    def verify_(self) -> None:
        src, t = _block_to_block(self)
        if src.numel != t.numel or src.element != t.element:
            raise self.fail(f"cannot reshape {src} to {t}")
        _check_block_shape(self, t)


class TransOp(_View):
    """``%b = tt.trans(%x) {order = [1, 0]} : tensor<64x32xf32>`` permutes dimensions."""

    name = "tt.trans"
    required_attrs = ("order",)

    def verify_(self) -> None:
        src = shape_of(self.operands[0].type)
        order = self.attrs["order"]
        if sorted(order) != list(range(len(src))):
            raise self.fail(f"order {order} is not a permutation")
        if shape_of(self.result.type) != tuple(src[i] for i in order):
            raise self.fail("result shape does not match the permutation")


# ---------------------------------------------------------------- memory


class LoadOp(Operation):
    """``%x = tt.load(%ptrs[, %mask[, %other]]) : tensor<128xf32>``.

    Lanes whose mask is false are not read and take ``other`` (0 without it).
    """

    traits = trait_set(ReadsMemory, Elementwise)

    name = "tt.load"
    operand_counts = (1, 2, 3)
    mask_index = 1

    def verify_(self) -> None:
        ptr = self.operands[0].type
        if not ptr.is_ptr():
            raise self.fail(f"pointer operand has type {ptr}")
        want = with_element(ptr, _pointee(self, ptr))
        if self.result.type != want:
            raise self.fail(f"result must be {want}")
        if len(self.operands) >= 2 and self.operands[1].type != with_element(ptr, I1):
            raise self.fail(f"mask must be {with_element(ptr, I1)}")
        if len(self.operands) == 3:
            _same_type(self, [self.operands[2]], want, "other")


class StoreOp(Operation):
    """``tt.store(%ptrs, %value[, %mask])`` writes the lanes whose mask is true."""

    traits = trait_set(WritesMemory, Elementwise)

    name = "tt.store"
    operand_counts = (2, 3)
    mask_index = 2
    result_count = 0

    def verify_(self) -> None:
        ptr, value = self.operands[:2]
        if not ptr.type.is_ptr():
            raise self.fail(f"pointer operand has type {ptr.type}")
        _same_type(self, [value], with_element(ptr.type, _pointee(self, ptr.type)), "value")
        if len(self.operands) == 3 and self.operands[2].type != with_element(ptr.type, I1):
            raise self.fail(f"mask must be {with_element(ptr.type, I1)}")


ATOMIC_KINDS = ("add", "max", "min", "and", "or", "xor", "xchg")
MEM_SEMANTICS = ("relaxed", "acquire", "release", "acq_rel")


class AtomicRMWOp(Operation):
    """``%old = tt.atomic_rmw(%ptr, %val[, %mask]) {kind = "add", sem = "acq_rel"} : T``."""

    traits = trait_set(ReadsMemory, WritesMemory, Elementwise)

    name = "tt.atomic_rmw"
    operand_counts = (2, 3)
    mask_index = 2
    required_attrs = ("kind", "sem")

    def verify_(self) -> None:
        if self.attrs["kind"] not in ATOMIC_KINDS or self.attrs["sem"] not in MEM_SEMANTICS:
            raise self.fail("unknown atomic kind or memory semantics")
        ptr, val = self.operands[:2]
        want = with_element(ptr.type, _pointee(self, ptr.type))
        _same_type(self, [val], want, "value")
        if self.result.type != want:
            raise self.fail(f"result must be {want}")


class AtomicCASOp(Operation):
    """``%old = tt.atomic_cas(%ptr, %cmp, %val) {sem = "acq_rel"} : T``."""

    traits = trait_set(ReadsMemory, WritesMemory, Elementwise)

    name = "tt.atomic_cas"
    operand_counts = (3,)
    required_attrs = ("sem",)

    def verify_(self) -> None:
        ptr = self.operands[0].type
        want = with_element(ptr, _pointee(self, ptr))
        _same_type(self, self.operands[1:], want, "operand")


class AtomicPollOp(Operation):
    """``%ok = tt.atomic_poll(%ptr, %expected[, %timeout_ns]) {sem = "acquire"} : i1``.

    Waits until the scalar at ``%ptr`` equals ``%expected``; with a timeout
    (``u64`` nanoseconds) it may give up, and the result says which happened.
    It synchronises the threads of the program, hence ``SideEffects``.
    """

    traits = trait_set(ReadsMemory, SideEffects)

    name = "tt.atomic_poll"
    operand_counts = (2, 3)
    required_attrs = ("sem",)

    def verify_(self) -> None:
        ptr = self.operands[0].type
        if isinstance(ptr, BlockType):
            raise self.fail("polls a pointer to a scalar, not a block")
        _same_type(self, self.operands[1:2], _pointee(self, ptr), "expected value")
        if len(self.operands) == 3:
            _same_type(self, self.operands[2:], U64, "timeout")
        if self.result.type != I1:
            raise self.fail(f"result must be i1, got {self.result.type}")


# ---------------------------------------------------------------- matrix


class DotOp(Operation):
    """``%c = tt.dot(%a, %b, %acc) {input_precision = "tf32"} : tensor<MxNxf32>``."""

    traits = trait_set(Pure)

    name = "tt.dot"
    operand_counts = (3,)

    def verify_(self) -> None:
        a, b, acc = (v.type for v in self.operands)
        if not all(isinstance(t, BlockType) and len(t.shape) in (2, 3) for t in (a, b, acc)):
            raise self.fail("operands must be 2-D blocks (or 3-D: a batch of products)")
        assert isinstance(a, BlockType) and isinstance(b, BlockType)  # checked just above
        assert isinstance(acc, BlockType)
        *batch, m, k = a.shape
        *batch2, k2, n = b.shape
        if k != k2 or batch != batch2 or acc.shape != (*batch, m, n):
            raise self.fail(f"shapes {a.shape} x {b.shape} -> {acc.shape} do not match")
        _same_type(self, [self.operands[2]], self.result.type, "accumulator")


# ---------------------------------------------------------------- regions


class _Terminator(Operation):
    """An op that ends a region and hands its operands to the op that holds it."""

    traits = trait_set(Pure, Terminator)


class _Combine(Operation):
    """Shared checks of ``tt.reduce`` and ``tt.scan``: a combiner region."""

    traits = trait_set(Pure, HasRegions)
    required_attrs = ("axis",)

    terminator_name = ""

    def verify_(self) -> None:
        if len(self.regions) != 1 or not self.operands:
            raise self.fail("needs operands and one combiner region")
        n = len(self.operands)
        elems = [element_type(v.type) for v in self.operands]
        args = [a.type for a in self.regions[0].args]
        if args != elems + elems:
            raise self.fail(f"combiner arguments must be {elems + elems}")
        term = self.regions[0].block.terminator
        if term is None or term.name != self.terminator_name or len(term.operands) != n:
            raise self.fail(f"combiner must end with {self.terminator_name} of {n} values")


class ReduceOp(_Combine):
    """``%r = tt.reduce(%x) {axis = 0} : f32`` with a combiner region.

    The region takes ``2n`` scalars (two partial results of ``n`` operands)
    and returns ``n`` with ``tt.reduce_return``.
    """

    name = "tt.reduce"
    terminator_name = "tt.reduce_return"


class ScanOp(_Combine):
    """``%r = tt.scan(%x) {axis = 0, reverse = false} : tensor<128xf32>``."""

    name = "tt.scan"
    terminator_name = "tt.scan_return"


ReduceReturnOp = _op_class(_Terminator, "tt.reduce_return", "Ends a ``tt.reduce`` combiner.")
ScanReturnOp = _op_class(_Terminator, "tt.scan_return", "Ends a ``tt.scan`` combiner.")


class MapElementwiseOp(Operation):
    """``%r, %s = tt.map_elementwise(%x, %y) : tensor<128xi32>, ...`` (``tl.map_elementwise``).

    The region runs once per element: it takes one scalar of each operand
    (all blocks of one shape) and returns one scalar of each result with
    ``tt.map_elementwise_return``. Its ops are scalar code, as a combiner's.
    """

    traits = trait_set(RecursiveEffects, HasRegions)

    name = "tt.map_elementwise"

    def verify_(self) -> None:
        if len(self.regions) != 1 or not self.operands or not self.results:
            raise self.fail("needs operands, results and one region")
        shape = shape_of(self.operands[0].type)
        for v in [*self.operands, *self.results]:
            if not isinstance(v.type, BlockType) or v.type.shape != shape:
                raise self.fail(f"operands and results must be blocks of shape {shape}")
        elems = [element_type(v.type) for v in self.operands]
        if [a.type for a in self.regions[0].args] != elems:
            raise self.fail(f"the region's arguments must be {elems}")
        term = self.regions[0].block.terminator
        wanted = [element_type(r.type) for r in self.results]
        if term is None or term.name != "tt.map_elementwise_return":
            raise self.fail("the region must end with tt.map_elementwise_return")
        if [v.type for v in term.operands] != wanted:
            raise self.fail(f"the region must return {wanted}")


MapElementwiseReturnOp = _op_class(
    _Terminator, "tt.map_elementwise_return", "Ends a ``tt.map_elementwise`` region."
)


class SortOp(Operation):
    """``%s = tt.sort(%x) {dim = 0, descending = false} : tensor<128xf32>``."""

    traits = trait_set(Pure)

    name = "tt.sort"
    operand_counts = (1,)
    required_attrs = ("dim", "descending")

    def verify_(self) -> None:
        _same_type(self, self.operands, self.result.type, "operand")
        rank = len(shape_of(self.result.type))
        if not 0 <= self.attrs["dim"] < rank:
            raise self.fail(f"dim {self.attrs['dim']} is out of range for rank {rank}")


class ForOp(Operation):
    """``%r = scf.for(%lb, %ub, %step, %init...) : T... { ^(%iv, %acc...): ... }``.

    Runs the body for ``iv = lb, lb+step, ... < ub``; iter args carry values
    from one iteration to the next and are the op's results.
    """

    traits = trait_set(RecursiveEffects, HasRegions, LoopLike)

    name = "scf.for"

    def verify_(self) -> None:
        if len(self.operands) < 3 or len(self.regions) != 1:
            raise self.fail("needs lb, ub, step and one region")
        lb, ub, step = (v.type for v in self.operands[:3])
        if lb != ub or lb != step or not isinstance(lb, ScalarType) or not lb.is_int():
            raise self.fail("bounds and step must be integer scalars of one type")
        inits = [v.type for v in self.operands[3:]]
        if [r.type for r in self.results] != inits:
            raise self.fail("results must match the iter args")
        if [a.type for a in self.regions[0].args] != [lb] + inits:
            raise self.fail("body arguments must be the induction var and iter args")
        _check_yield(self, self.regions[0], inits)


class IfOp(Operation):
    """``%r = scf.if(%cond) : T... { then } { else }``; both regions yield."""

    traits = trait_set(RecursiveEffects, HasRegions)

    name = "scf.if"
    operand_counts = (1,)

    def verify_(self) -> None:
        if self.operands[0].type != I1 or len(self.regions) != 2:
            raise self.fail("needs an i1 scalar condition and two regions")
        types = [r.type for r in self.results]
        for region in self.regions:
            _check_yield(self, region, types)


class WhileOp(Operation):
    """``%r = scf.while(%init...) : T... { before } { after }``.

    ``before`` ends with ``scf.condition(%c, %args...)``: if ``%c`` is true
    the args go to ``after``, which yields the next iteration's values;
    otherwise they become the results.
    """

    traits = trait_set(RecursiveEffects, HasRegions, LoopLike, MayNotTerminate)

    name = "scf.while"

    def verify_(self) -> None:
        if len(self.regions) != 2:
            raise self.fail("needs a before and an after region")
        types = [v.type for v in self.operands]
        if [r.type for r in self.results] != types:
            raise self.fail("results must match the loop-carried values")
        term = self.regions[0].block.terminator
        if term is None or term.name != "scf.condition":
            raise self.fail("before region must end with scf.condition")
        if term.operands[0].type != I1 or [v.type for v in term.operands[1:]] != types:
            raise self.fail("scf.condition must pass an i1 and the carried values")
        _check_yield(self, self.regions[1], types)


def _check_yield(op: Operation, region: Region, types: list[Type]) -> None:
    term = region.block.terminator
    if term is None or term.name != "scf.yield":
        raise op.fail("region must end with scf.yield")
    if [v.type for v in term.operands] != types:
        got = ", ".join(str(v.type) for v in term.operands)
        raise op.fail(f"yields ({got}), expected ({', '.join(map(str, types))})")


YieldOp = _op_class(_Terminator, "scf.yield", "Ends an ``scf`` region, passing values up.")
ConditionOp = _op_class(_Terminator, "scf.condition", "Ends the before region of ``scf.while``.")


class CallOp(Operation):
    """``%r = tt.call(%a, %b) {callee = "helper"} : T...`` calls a ``tt.func``."""

    traits = trait_set(UnknownEffects)

    name = "tt.call"
    required_attrs = ("callee",)


ReturnOp = _op_class(_Terminator, "tt.return", "``tt.return(%v...)`` ends a function.")


class FuncOp(Operation):
    """``tt.func @name(%arg: T, ...) -> (T...) { ... }``: a kernel or a helper.

    Attributes: ``sym_name``, ``result_types`` (list of type strings),
    ``private`` (helpers) and per-argument ``arg_attrs`` (e.g.
    ``divisibility = 16``).
    """

    traits = trait_set(Symbol, HasRegions)

    name = "tt.func"

    @property
    def sym_name(self) -> str:
        """The function's name."""
        return self.attrs["sym_name"]

    @property
    def body(self) -> Region:
        """The function body."""
        return self.regions[0]

    def verify_(self) -> None:
        term = self.body.block.terminator
        if term is None or term.name != "tt.return":
            raise self.fail(f"@{self.sym_name} must end with tt.return")


# ---------------------------------------------------------------- debug, hints


class PrintOp(Operation):
    """``tt.print(%x...) {prefix = "x: ", hex = false}`` prints once per program."""

    traits = trait_set(SideEffects)

    name = "tt.print"


class HistogramOp(Operation):
    """``%h = tt.histogram(%x[, %mask]) : tensor<8xi32>``: ``h[k]`` counts the values of
    ``x`` (where ``mask`` holds) equal to ``k``; values outside ``[0, 8)`` are left out.

    ``x`` is a 1-D block of 32-bit integers, ``mask`` an ``i1`` block of its shape.
    """

    traits = trait_set(Pure)

    name = "tt.histogram"
    operand_counts = (1, 2)

    def verify_(self) -> None:
        x, r = self.operands[0].type, self.result.type
        if not (isinstance(x, BlockType) and len(x.shape) == 1):
            raise self.fail(f"x must be a 1-D block, got {x}")
        st = element_type(x)
        if not (isinstance(st, ScalarType) and st.is_int() and st.bitwidth == 32):
            raise self.fail(f"x must hold 32-bit integers, got {x}")
        if not (isinstance(r, BlockType) and len(r.shape) == 1 and element_type(r) == I32):
            raise self.fail(f"the result must be a 1-D block of i32, got {r}")
        if len(self.operands) == 2 and self.operands[1].type != BlockType(x.shape, I1):
            raise self.fail(f"mask must be a block of i1 shaped as x, got {self.operands[1].type}")


class GatherOp(Operation):
    """``%r = tt.gather(%src, %idx) {axis = 0} : tensor<64x8xf32>``: ``src`` indexed by
    ``idx`` along ``axis`` (``r[i][j] = src[idx[i][j]][j]`` for axis 0).

    ``idx`` has ``src``'s rank and its sizes but along ``axis``; the result has
    ``idx``'s shape and ``src``'s element type. An index outside
    ``[0, src.shape[axis])`` gives 0.
    """

    traits = trait_set(Pure)

    name = "tt.gather"
    operand_counts = (2,)
    required_attrs = ("axis",)

    def verify_(self) -> None:
        src, idx = (v.type for v in self.operands)
        axis = self.attrs["axis"]
        if not (isinstance(src, BlockType) and isinstance(idx, BlockType)):
            raise self.fail("src and idx must be blocks")
        if len(src.shape) != len(idx.shape) or not 0 <= axis < len(src.shape):
            raise self.fail(f"axis {axis} and ranks of {src} and {idx} do not agree")
        if any(a != b for d, (a, b) in enumerate(zip(src.shape, idx.shape)) if d != axis):
            raise self.fail(f"{src} and {idx} differ beyond axis {axis}")
        if not element_type(idx).is_int():
            raise self.fail(f"idx must hold integers, got {idx}")
        if self.result.type != BlockType(idx.shape, src.element):
            raise self.fail(f"result must be {BlockType(idx.shape, src.element)}")


class InlineAsmOp(Operation):
    """``%r = tt.elementwise_inline_asm(%a, %b) {asm = "...", constraints = "=r,r,r",
    pure = true} : tensor<128xi32>``: PTX applied to each element (``tl.inline_asm_elementwise``).

    Operands and results share one shape; ``asm`` refers to them as ``$0``
    (the first result) onwards, as ``constraints`` lists them. An op that is
    not ``pure`` is never removed or merged, so the op always keeps its
    place (it declares side effects). An optional ``pack = n`` hands the PTX
    ``n`` consecutive elements of a thread at once, those narrower than 32
    bits packed into 32-bit registers, as in Triton.
    """

    traits = trait_set(SideEffects, Elementwise)

    name = "tt.elementwise_inline_asm"
    required_attrs = ("asm", "constraints", "pure")

    def verify_(self) -> None:
        shapes = {shape_of(v.type) for v in [*self.operands, *self.results]}
        if len(shapes) > 1:
            raise self.fail("operands and results must have one shape")
        if not self.results:
            raise self.fail("needs at least one result")
        pack = self.attrs.get("pack", 1)
        if not isinstance(pack, int) or pack < 1 or pack & (pack - 1):
            raise self.fail("pack must be a power of two")


#: The message of the ``tt.assert`` that ``tl.assume(cond)`` becomes (with ``assume = true``).
ASSUME_MESSAGE = "the condition of tl.assume() does not hold"


class AssertOp(Operation):
    """``tt.assert(%cond) {message = "..."}`` fails where ``cond`` is false (debug mode).

    ``tl.assume`` makes one with the attribute ``assume = true``: checked in
    debug mode like any assert, otherwise a hint (``llvm.assume`` on the GPU).

    When ``cond`` is an ``arith.cmp``, the frontend records the source names
    of its two operands in ``compared = ["b", ""]`` (``""``: no variable).
    A failure report names the sides with them, not with the operands'
    ``name_hint``: after CSE merges ``a = x + 1`` and ``b = x + 1``, the
    value compared in ``b > 5`` is ``%a``, but the user compared ``b``.
    """

    traits = trait_set(SideEffects)

    name = "tt.assert"
    operand_counts = (1,)
    required_attrs = ("message",)

    def compared_names(self) -> list[str]:
        """The names of the lhs and rhs its condition compares ([] if it is no comparison)."""
        cond = self.operands[0]
        owner = getattr(cond, "owner", None)
        if not isinstance(owner, CmpOp):
            return []
        recorded = self.attrs.get("compared")
        if isinstance(recorded, (list, tuple)) and len(recorded) == 2:
            return [str(n) for n in recorded]
        return [v.name_hint or "" for v in owner.operands]  # hand-written IR


class BarrierOp(Operation):
    """``tt.barrier()`` synchronizes the threads of one program."""

    traits = trait_set(SideEffects)

    name = "tt.barrier"


class GridDependencyOp(Operation):
    """``tt.griddepcontrol() {kind = "wait"}``: programmatic dependent launch (sm_90).

    ``wait`` waits for the grid this one depends on; ``launch_dependents``
    lets the dependent grid start. Both do nothing in a plain launch.
    """

    traits = trait_set(SideEffects)

    name = "tt.griddepcontrol"
    operand_counts = (0,)
    required_attrs = ("kind",)

    def verify_(self) -> None:
        if self.attrs["kind"] not in ("wait", "launch_dependents"):
            raise self.fail(f"kind must be wait or launch_dependents, got {self.attrs['kind']!r}")


class HintOp(Operation):
    """``%y = tt.hint(%x) {multiple_of = [16]}`` / ``{max_contiguous = [128]}``.

    The value is unchanged; the attribute tells the GPU backend about
    divisibility and contiguity so it can vectorize memory accesses.
    """

    traits = trait_set(Pure, Elementwise, ViewLike)

    name = "tt.hint"
    operand_counts = (1,)

    def verify_(self) -> None:
        _same_type(self, self.operands, self.result.type, "operand")


# ---------------------------------------------------------------- the registry

# The ops of the kernel IR, by name, for the IR parser: listed as an xDSL
# dialect lists its ops. tests/ir/test_op_registry.py fails on an op class left out.
register_ops(
    ConstantOp, ProgramIdOp, NumProgramsOp, MakeRangeOp, AddOp, SubOp, MulOp, DivOp, RemOp,
    MaxOp, MinOp, AndOp, OrOp, XorOp, ShlOp, ShrOp, UmulhiOp, DivRnOp, PowOp,
    *MATH_BINARY_OPS.values(), JnOp, YnOp, CmpOp, SelectOp, NegOp, NotOp, AbsOp,
    *MATH_UNARY_OPS.values(), FmaOp, RoundedOp, CastOp, BitcastOp, AddPtrOp, SplatOp, BroadcastOp,
    ExpandDimsOp, ReshapeOp, TransOp, LoadOp, StoreOp, AtomicRMWOp, AtomicCASOp, AtomicPollOp,
    DotOp, ReduceOp, ScanOp, ReduceReturnOp, ScanReturnOp, SortOp, ForOp, IfOp, WhileOp, YieldOp,
    ConditionOp, CallOp, ReturnOp, FuncOp, PrintOp, AssertOp, BarrierOp, HintOp, InlineAsmOp,
    GatherOp, HistogramOp, MapElementwiseOp, MapElementwiseReturnOp, GridDependencyOp,
)  # fmt: skip


class Module:
    """A list of ``tt.func`` ops; the first non-private one is the kernel."""

    def __init__(self, funcs: list[FuncOp] | None = None) -> None:
        self.funcs: list[FuncOp] = list(funcs or [])
        #: The arch the kernel was compiled for (the emulator models its TF32 dots);
        #: not part of the IR text.
        self.target: str | None = None

    def lookup(self, name: str) -> FuncOp:
        """The function called ``name``."""
        for f in self.funcs:
            if f.sym_name == name:
                return f
        raise KeyError(name)

    @property
    def kernel(self) -> FuncOp:
        """The public kernel function."""
        for f in self.funcs:
            if not f.attrs.get("private", False):
                return f
        raise VerifyError(None, "module has no public kernel")

    def walk(self):  # noqa: ANN201 - generator of ops
        """Every op of every function, in order."""
        for f in self.funcs:
            yield from f.walk()
