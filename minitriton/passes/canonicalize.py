"""Canonicalize: fold constants and simplify ops into their simplest form.

The pass applies local rewrite rules, one op at a time, until none applies
(a fixpoint). Each rule either leaves an op alone or gives the values that
replace its results; the new ops it makes (constants, mostly) take the
location of the op they replace. Rules, by kind:

* **Constant folding** (arithmetic in :mod:`minitriton.passes.folding`):
  ``add sub mul div rem and or xor shl shr max min``, ``neg not abs floor
  ceil``, ``cmp`` and ``cast`` of constants become a constant. Integers wrap
  at the type's width and divide as C does; floats are computed in their own
  precision (``bf16`` through ``f32``). Nothing undefined is folded: integer
  division by zero, shifts by the width or more, float-to-int casts out of
  range, ``max``/``min`` of NaN, transcendental functions (approximate on
  the GPU).
* **Shapes of constants**: ``splat``, ``broadcast``, ``expand_dims``,
  ``reshape`` and ``trans`` of a constant give a block constant.
* **Algebraic identities**: ``x+0``, ``x-0``, ``x*1``, ``x//1``, ``x|0``,
  ``x^0``, ``x<<0``, ``x&~0`` give ``x``; ``x*0``, ``x%1``, ``x-x``, ``x^x``
  and ``x&0`` give ``0`` (integers only: with floats ``inf*0`` is NaN); for
  floats only the exact ones (``x*1.0``, ``x/1.0``, ``x-0.0``, ``x+(-0.0)``).
  ``select`` of a constant condition or of two equal values;
  ``addptr(p, 0)``; a cast to the same type; ``cast(cast(x: A): B): A`` when
  ``A -> B`` loses nothing (``i8 -> i32 -> i8``, but not ``i32 -> i8 -> i32``).
* **Dot accumulation** (Triton's combine rule): ``add(dot(a, b, 0), d)``
  and ``add(d, dot(a, b, 0))`` give ``dot(a, b, d)``, at the dot's location,
  when the dot has no other use and sits in the add's block. ``acc +=
  tl.dot(a, b)`` in a loop then accumulates in the tensor cores, as ``acc =
  tl.dot(a, b, acc)`` does, with Triton's numbers. Not for fp8 inputs
  (Triton keeps their imprecise accumulator apart) nor a dot with
  ``max_num_imprecise_acc``. This is the one rule that changes results: a
  float sum rounded once where it was rounded twice (the pass checker,
  ``minitriton check-passes``, accepts that within rounding).
* **Control flow**: ``scf.if`` with a constant condition is replaced by the
  ops of the taken region; ``scf.for`` whose constant bounds give zero trips
  (``lb >= ub``) is replaced by its initial values.

Ops left without users (the ``%c4`` below) are for ``dce`` to remove.

Example
-------

Before::

    tt.func @kernel(%x: tensor<128xf32>, %p: ptr<f32>) -> (tensor<128xf32>) {
      %c4 = arith.constant() {value = 4} : i32
      %c8 = arith.constant() {value = 8} : i32
      %n = arith.mul(%c4, %c8) : i32
      %zero = arith.constant() {value = 0} : i32
      %q = tt.addptr(%p, %zero) : ptr<f32>
      %one = arith.constant() {value = 1.0} : f32
      %ones = tt.splat(%one) : tensor<128xf32>
      %y = arith.mul(%x, %ones) : tensor<128xf32>
      %debug = arith.constant() {value = false} : i1
      scf.if(%debug) {
      ^():
        tt.print(%y) {hex = false, prefix = "y: "}
        scf.yield()
      } {
      ^():
        scf.yield()
      }
      tt.store(%q, %one)
      tt.return(%y)
    }

After::

    tt.func @kernel(%x: tensor<128xf32>, %p: ptr<f32>) -> (tensor<128xf32>) {
      %c4 = arith.constant() {value = 4} : i32
      %c8 = arith.constant() {value = 8} : i32
      %n = arith.constant() {value = 32} : i32
      %zero = arith.constant() {value = 0} : i32
      %one = arith.constant() {value = 1.0} : f32
      %ones = arith.constant() {value = 1.0} : tensor<128xf32>
      %debug = arith.constant() {value = false} : i1
      tt.store(%p, %one)
      tt.return(%x)
    }

Conditions
----------

Precondition: verified IR. Postcondition: verified IR with the same
observable behaviour (but for the rounding of a float dot's accumulation,
see *Dot accumulation*); no rule applies any more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from minitriton.ir.core import Operation, Value
from minitriton.ir.ops import (
    MATH_UNARY_OPS,
    AbsOp,
    AddOp,
    AddPtrOp,
    AndOp,
    BroadcastOp,
    CastOp,
    CmpOp,
    DivOp,
    DivRnOp,
    DotOp,
    ExpandDimsOp,
    ForOp,
    FuncOp,
    IfOp,
    MaxOp,
    MinOp,
    MulOp,
    NegOp,
    NotOp,
    OrOp,
    RemOp,
    ReshapeOp,
    SelectOp,
    ShlOp,
    ShrOp,
    SplatOp,
    SubOp,
    TransOp,
    XorOp,
)
from minitriton.ir.traits import Commutative
from minitriton.ir.types import ScalarType, element_type
from minitriton.passes import folding
from minitriton.passes.base import FunctionPass, register_pass
from minitriton.passes.rewriting import (
    constant_of,
    insert_before,
    is_attached,
    make_constant,
    replace_op,
    use_index,
    users_of,
)

# A rule looks at one op and returns the values that replace its results,
# or None to leave it alone. It may insert new ops (constants, an inlined
# region) just before the op; the driver then rewires the uses and erases it.
Rule = Callable[[Operation], "list[Value] | None"]


@register_pass
@dataclass(frozen=True)
class Canonicalize(FunctionPass):
    """Fold constants and simplify ops until nothing changes."""

    name: ClassVar[str] = "canonicalize"
    rounding: ClassVar[str] = "it moves additions into tl.dot's accumulator, as Triton does"

    def apply_to_function(self, func: FuncOp) -> None:
        while True:
            with use_index(func):  # linear, however many ops are rewritten
                if not _sweep(func):
                    break


def _sweep(func: FuncOp) -> bool:
    """Try every rule on every op once; True if anything was rewritten."""
    changed = False
    for op in list(func.walk()):
        # An earlier rewrite in this sweep may have erased op (or its parent).
        if op is func or not is_attached(op, func):
            continue
        rule = RULES.get(type(op))
        replacement = rule(op) if rule else None
        if replacement is None:
            continue
        replace_op(op, replacement, func)
        changed = True
    return changed


# ---------------------------------------------------------------- helpers


def _elem(value: Value) -> ScalarType:
    elem = element_type(value.type)
    assert isinstance(elem, ScalarType)
    return elem


def _const(value: Value) -> int | float | bool | None:
    """The constant value of ``value`` read in its type, or None."""
    raw = constant_of(value)
    if raw is None:
        return None
    return folding.normalize(raw, _elem(value))


def _is(value: Value, want: float) -> bool:
    """True if ``value`` is the constant ``want`` (``-0.0`` differs from ``0.0``)."""
    got = _const(value)
    if got is None or got != want:
        return False
    return isinstance(got, (bool, int)) or str(got) == str(float(want))


def _all_ones(value: Value) -> bool:
    elem = _elem(value)
    return elem.is_int() and _const(value) == folding.wrap_int(-1, elem)


def _is_int(value: Value) -> bool:
    elem = element_type(value.type)
    return isinstance(elem, ScalarType) and elem.is_int()


def _fold_to(op: Operation, value: int | float | bool | None) -> list[Value] | None:
    """Replace ``op``'s result by a constant ``value`` (None: do not fold)."""
    if value is None:
        return None
    value = folding.normalize(value, _elem(op.result))
    return [make_constant(value, op.result.type, op)]


# ---------------------------------------------------------------- arithmetic


def _swappable(op: Operation) -> bool:
    """True if an identity of the right operand also holds on the left (``0 + x``)."""
    return op.has_trait(Commutative)


def _fold_binary(op: Operation) -> list[Value] | None:
    """``c1 <op> c2 -> c3``: both operands are constants."""
    a, b = (_const(v) for v in op.operands)
    if a is None or b is None:
        return None
    return _fold_to(op, folding.fold_binary(type(op), a, b, _elem(op.result)))


def _identity(op: Operation, e: float) -> list[Value] | None:
    """``x <op> e -> x``, and ``e <op> x -> x`` when the op commutes."""
    x, y = op.operands
    if _is(y, e):
        return [x]
    if _is(x, e) and _swappable(op):
        return [y]
    return None


def _add(op: Operation) -> list[Value] | None:
    # x + 0 -> x, 0 + x -> x (ints); x + -0.0 -> x (floats: x + 0.0 turns -0.0 into 0.0)
    zero = 0 if _is_int(op.operands[0]) else -0.0
    return _identity(op, zero) or _fold_binary(op) or _dot_add(op)


def _dot_add(op: Operation) -> list[Value] | None:
    """``dot(a, b, 0) + d -> dot(a, b, d)`` (and ``d + dot(a, b, 0)``), as Triton combines."""
    for dot_value, d in (op.operands, op.operands[::-1]):
        dot = getattr(dot_value, "owner", None)
        if not isinstance(dot, DotOp) or not _accumulates_into(dot, op):
            continue
        a, b, _ = dot.operands
        fused = DotOp([a, b, d], [dot.result.type], dict(dot.attrs), loc=dot.loc)
        insert_before(op, fused)
        return [fused.result]
    return None


def _accumulates_into(dot: DotOp, add: Operation) -> bool:
    """Whether ``add`` may take ``dot``'s place as its accumulator (Triton's conditions)."""
    a, _, acc = dot.operands
    if not (_is(acc, 0) or _is(acc, -0.0)) or users_of(dot.result) != [add]:
        return False
    if dot.parent is not add.parent:
        return False  # a dot hoisted out of a loop would run at each trip of it
    if _is_int(acc):
        return True
    return not _elem(a).is_fp8() and not dot.attrs.get("max_num_imprecise_acc")


def _sub(op: Operation) -> list[Value] | None:
    x, y = op.operands
    # x - 0 -> x
    if identity := _identity(op, 0 if _is_int(x) else 0.0):
        return identity
    # x - x -> 0 (ints only: inf - inf is nan)
    if x is y and _is_int(x):
        return _fold_to(op, 0)
    return _fold_binary(op)


def _mul(op: Operation) -> list[Value] | None:
    x, y = op.operands
    # x * 1 -> x, 1 * x -> x
    if identity := _identity(op, 1):
        return identity
    # x * 0 -> 0, 0 * x -> 0 (ints only: inf * 0 is nan, -1.0 * 0 is -0.0)
    if _is_int(x) and (_is(x, 0) or _is(y, 0)):
        return _fold_to(op, 0)
    return _fold_binary(op)


def _div(op: Operation) -> list[Value] | None:
    # x // 1 -> x, x / 1.0 -> x
    return _identity(op, 1) or _fold_binary(op)


def _rem(op: Operation) -> list[Value] | None:
    x, y = op.operands
    # x % 1 -> 0 (ints)
    if _is_int(x) and _is(y, 1):
        return _fold_to(op, 0)
    return _fold_binary(op)


def _and(op: Operation) -> list[Value] | None:
    x, y = op.operands
    # x & x -> x
    if x is y:
        return [x]
    # x & 0 -> 0, 0 & x -> 0
    if _is(x, 0) or _is(y, 0):
        return _fold_to(op, folding.wrap_int(0, _elem(x)))
    # x & ~0 -> x, ~0 & x -> x
    if _all_ones(y):
        return [x]
    if _all_ones(x) and _swappable(op):
        return [y]
    return _fold_binary(op)


def _or_xor(op: Operation) -> list[Value] | None:
    x, y = op.operands
    # x | 0 -> x, x ^ 0 -> x (and 0 | x, 0 ^ x)
    if identity := _identity(op, 0):
        return identity
    # x | x -> x
    if x is y and isinstance(op, OrOp):
        return [x]
    # x ^ x -> 0
    if x is y:
        return _fold_to(op, folding.wrap_int(0, _elem(x)))
    return _fold_binary(op)


def _shift(op: Operation) -> list[Value] | None:
    # x << 0 -> x, x >> 0 -> x
    return _identity(op, 0) or _fold_binary(op)


def _min_max(op: Operation) -> list[Value] | None:
    x, y = op.operands
    # max(x, x) -> x, min(x, x) -> x
    if x is y:
        return [x]
    return _fold_binary(op)


def _unary(op: Operation) -> list[Value] | None:
    """``op(c1) -> c2`` for neg, not, abs, floor, ceil."""
    a = _const(op.operands[0])
    if a is None:
        return None
    return _fold_to(op, folding.fold_unary(type(op), a, _elem(op.result)))


def _cmp(op: Operation) -> list[Value] | None:
    """``cmp(c1, c2) -> true/false``."""
    a, b = (_const(v) for v in op.operands)
    if a is None or b is None:
        return None
    return _fold_to(op, folding.fold_cmp(op.attrs["pred"], a, b))


def _select(op: Operation) -> list[Value] | None:
    cond, x, y = op.operands
    # select(c, x, x) -> x
    if x is y:
        return [x]
    # select(true, x, y) -> x, select(false, x, y) -> y
    c = _const(cond)
    if c is None:
        return None
    return [x] if c else [y]


def _cast(op: Operation) -> list[Value] | None:
    x = op.operands[0]
    # cast(x : T) : T -> x
    if x.type == op.result.type:
        return [x]
    # cast(cast(x : A) : B) : A -> x, when A -> B loses nothing
    inner = getattr(x, "owner", None)
    if isinstance(inner, CastOp):
        src = inner.operands[0]
        exact = folding.is_exact_cast(element_type(src.type), element_type(x.type))
        if src.type == op.result.type and exact:
            return [src]
    if "rounding" in op.attrs:
        return None  # folding rounds to nearest even only
    # cast(c1) -> c2
    raw = constant_of(x)
    if raw is None:
        return None
    value = folding.normalize(raw, _elem(x))
    src_t, dst_t = element_type(x.type), element_type(op.result.type)
    return _fold_to(op, folding.fold_cast(value, src_t, dst_t))


def _addptr(op: Operation) -> list[Value] | None:
    ptr, offset = op.operands
    # addptr(p, 0) -> p
    return [ptr] if _is(offset, 0) else None


# ---------------------------------------------------------------- shapes


def _reshape_constant(op: Operation) -> list[Value] | None:
    x = op.operands[0]
    # broadcast(x) : T -> x, reshape(x) : T -> x, when x already has type T
    if x.type == op.result.type and isinstance(op, (BroadcastOp, ReshapeOp)):
        return [x]
    # splat(c), broadcast(c), expand_dims(c), reshape(c), trans(c) -> block constant
    # (a block constant is a splat, so any reshuffle of it is the same splat)
    raw = constant_of(x)
    return None if raw is None else _fold_to(op, raw)


# ---------------------------------------------------------------- control flow


def _if(op: Operation) -> list[Value] | None:
    """``scf.if(true) {A} {B}`` -> A inline (``false`` -> B)."""
    cond = _const(op.operands[0])
    if cond is None:
        return None
    taken = op.regions[0 if cond else 1].block
    terminator = taken.ops[-1]
    for inner in list(taken.ops[:-1]):
        taken.remove(inner)
        insert_before(op, inner)
    return list(terminator.operands)


def _for(op: Operation) -> list[Value] | None:
    """``scf.for`` with ``lb >= ub`` (zero trips) -> its results are the inits."""
    lb, ub = (_const(v) for v in op.operands[:2])
    if lb is None or ub is None or lb < ub:
        return None
    return list(op.operands[3:])


RULES: dict[type[Operation], Rule] = {
    AddOp: _add,
    SubOp: _sub,
    MulOp: _mul,
    DivOp: _div,
    DivRnOp: _div,
    RemOp: _rem,
    AndOp: _and,
    OrOp: _or_xor,
    XorOp: _or_xor,
    ShlOp: _shift,
    ShrOp: _shift,
    MaxOp: _min_max,
    MinOp: _min_max,
    NegOp: _unary,
    NotOp: _unary,
    AbsOp: _unary,
    MATH_UNARY_OPS["floor"]: _unary,
    MATH_UNARY_OPS["ceil"]: _unary,
    CmpOp: _cmp,
    SelectOp: _select,
    CastOp: _cast,
    AddPtrOp: _addptr,
    SplatOp: _reshape_constant,
    BroadcastOp: _reshape_constant,
    ExpandDimsOp: _reshape_constant,
    ReshapeOp: _reshape_constant,
    TransOp: _reshape_constant,
    IfOp: _if,
    ForOp: _for,
}
