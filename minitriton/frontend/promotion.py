"""Type promotion: which type a binary operation computes in.

Every rule MiniTriton follows is listed here, numbered; the code and the docs
cite the numbers. The rules reproduce Triton's ``computation_type_impl``
(``triton/language/semantic.py``) and its documented results
(``docs/python-api/triton-semantics.rst``, triton#4697).

Operands are *typed* (a block or a run-time scalar, whose element type is
known) or *Python scalars* (literals and constexprs: ``int``, ``float``,
``bool``).

Rule 1 (kinds).
    Types are ordered by kind: bool < int < float. Signed and unsigned
    integers are the same kind.
Rule 2 (Python scalars are weak).
    A Python scalar combined with a typed operand takes part in promotion
    only when its kind is strictly higher; otherwise the result has the
    typed operand's type (``x_i8 + 100`` is ``int8``, ``x_f16 * 2.0`` is
    ``fp16``). For ``/`` and ``%`` an fp16/bf16 operand still computes in
    fp32 (rules 6 and 7). A Python int must then fit the integer type it
    computes in (``x_i8 + 1000`` is an error, as is a negative int with an
    unsigned type), as in Triton since 3.3.
Rule 3 (literal types).
    A Python scalar that takes part gets the smallest type that fits:
    ``bool`` -> int1; ``int`` -> int32, else uint32, else int64, else
    uint64 (larger is an error); ``float`` -> fp32 (fp64 when out of fp32's
    range). Two Python scalars never reach these rules: they fold in Python.
Rule 4 (fp64).
    If either operand is fp64, the result is fp64.
Rule 5 (fp32).
    Otherwise, if either operand is fp32, the result is fp32.
Rule 6 (fp16).
    Otherwise, if either operand is fp16, the result is fp16 (fp16 wins over
    bf16), except for ``/`` and ``%``, which compute in fp32.
Rule 7 (bf16).
    Otherwise, bf16 with bf16 is bf16 (fp32 for ``/`` and ``%``); bf16 with
    an integer is fp32. An fp8 type with itself stays that type, two different
    fp8 types give fp16, and ``/`` and ``%`` on fp8 compute in fp32.
Rule 8 (integers).
    Two integers of the same signedness give the wider one. With different
    signedness the unsigned one wins if it is at least as wide, otherwise
    the signed one wins (C's usual arithmetic conversions). int1 counts as
    a 1-bit signed integer here, as in Triton.
Rule 9 (signedness of ``/``, ``//``, ``%``).
    Dividing integers of different signedness is an error.
Rule 10 (true division).
    ``/`` computes in fp64 if an operand is fp64 and in fp32 otherwise, for
    integers too (``int32 / int32`` is fp32).
Rule 11 (floor division).
    ``//`` needs two integers and computes in their rule-8 type; ``//`` on
    floats is an error. (Block ``//`` and ``%`` truncate toward zero, as in
    C; see triton-semantics item 1.)
Rule 12 (bitwise and shifts).
    ``& | ^ << >>`` need integer operands after rules 2-8.
Rule 13 (comparisons).
    Comparisons compute in the rules 2-8 type and give int1.
Rule 14 (pointers).
    ``pointer + int`` and ``pointer - int`` give the pointer type (the
    offset keeps its own integer type); any other arithmetic on pointers,
    or a float offset, is an error.
Rule 15 (``where``, ``maximum``, ``minimum``).
    The two value operands promote as an arithmetic binary operation.
"""

from __future__ import annotations

from minitriton.ir.types import (
    BF16,
    F16,
    F32,
    F64,
    I1,
    I32,
    I64,
    U32,
    U64,
    ScalarType,
)

PyScalar = bool | int | float
Operand = ScalarType | PyScalar

#: Operator categories the rules distinguish.
ARITH = "arith"  # + - * and elementwise max/min/where
TRUEDIV = "/"
FLOORDIV = "//"
MOD = "%"
BITWISE = "bitwise"
COMPARE = "compare"

_KIND_RANK = {"bool": 0, "int": 1, "uint": 1, "float": 2}
_FP32_MAX = 3.4028234663852886e38


class PromotionError(Exception):
    """Two operand types that no rule combines; the caller adds a location."""


def is_py_scalar(x: object) -> bool:
    """True for the Python scalars that take part in arithmetic."""
    return isinstance(x, (bool, int, float))


def kind_rank(t: ScalarType) -> int:
    """Rule 1: bool < int < float."""
    return _KIND_RANK[t.kind]


def _py_kind_rank(x: PyScalar) -> int:
    if isinstance(x, bool):
        return 0
    return 1 if isinstance(x, int) else 2


def literal_type(x: PyScalar) -> ScalarType:
    """Rule 3: the smallest type that holds the Python scalar ``x``."""
    if isinstance(x, bool):
        return I1
    if isinstance(x, int):
        return _int_literal_type(x)
    if x != x or x in (float("inf"), float("-inf")) or abs(x) <= _FP32_MAX:
        return F32
    return F64


def _int_literal_type(x: int) -> ScalarType:
    if -(2**31) <= x < 2**31:
        return I32
    if 2**31 <= x < 2**32:
        return U32
    if -(2**63) <= x < 2**63:
        return I64
    if 2**63 <= x < 2**64:
        return U64
    raise PromotionError(f"integer literal {x} does not fit in 64 bits")


def integer_promote(a: ScalarType, b: ScalarType) -> ScalarType:
    """Rule 8: C's usual arithmetic conversions between two integer types."""
    # BEGIN EXERCISE c4-promotion
    # STUB: raise NotImplementedError("c4-promotion: rule 8, integer_promote")
    a_unsigned, b_unsigned = a.kind == "uint", b.kind == "uint"
    if a_unsigned == b_unsigned:
        return a if a.bitwidth > b.bitwidth else b
    if a_unsigned:
        return a if a.bitwidth >= b.bitwidth else b
    return b if b.bitwidth >= a.bitwidth else a
    # END EXERCISE


def _weak_scalar(a: Operand, b: Operand, op: str) -> ScalarType | None:
    """Rule 2: the result when a Python scalar does not take part, else None."""
    if is_py_scalar(a) == is_py_scalar(b):
        return None
    scalar, typed = (a, b) if is_py_scalar(a) else (b, a)
    assert isinstance(typed, ScalarType)
    if _py_kind_rank(scalar) > kind_rank(typed):  # type: ignore[arg-type]
        return None
    if op in (TRUEDIV, MOD) and (typed in (F16, BF16) or typed.is_fp8()):
        return F32  # rules 6 and 7: no fp16, bf16 or fp8 division in hardware
    return typed


def _float_rules(a: ScalarType, b: ScalarType, div_or_mod: bool) -> ScalarType | None:
    """Rules 4-7, or None when neither operand is a float."""
    if F64 in (a, b):
        return F64  # rule 4
    if F32 in (a, b):
        return F32  # rule 5
    if F16 in (a, b):
        return F32 if div_or_mod else F16  # rule 6
    if a == BF16 and b == BF16:
        return F32 if div_or_mod else BF16  # rule 7
    if BF16 in (a, b):
        return F32  # rule 7: bf16 with an integer
    if a.is_fp8() and b.is_fp8():
        if div_or_mod:
            return F32  # rule 7 (fp8): `/` and `%` compute in fp32, as for fp16
        return a if a == b else F16  # rule 7 (fp8): two different fp8 types give fp16
    if a.is_fp8() or b.is_fp8():
        raise PromotionError(f"cannot combine {a!r} with {b!r}: convert the fp8 value first")
    return None


def computation_type(a: Operand, b: Operand, op: str = ARITH) -> ScalarType:
    """The type in which ``a op b`` computes (its result type, except for compares).

    ``op`` is one of :data:`ARITH`, :data:`TRUEDIV`, :data:`FLOORDIV`,
    :data:`MOD`, :data:`BITWISE`, :data:`COMPARE`. Raises
    :class:`PromotionError` for combinations the rules reject.
    """
    weak = _weak_scalar(a, b, op)
    ta = a if isinstance(a, ScalarType) else literal_type(a)
    tb = b if isinstance(b, ScalarType) else literal_type(b)
    result = weak if weak is not None else _typed_rules(ta, tb, op)
    for scalar in (a, b):
        _check_scalar_fits(scalar, result)
    return _check_op(result, ta, tb, op)


def _check_scalar_fits(scalar: Operand, result: ScalarType) -> None:
    """Rule 2: a Python int must fit the integer type it computes in (Triton's words)."""
    if not isinstance(scalar, int) or not result.is_int() or result == I1:
        return
    if scalar < 0 and result.is_unsigned():
        raise PromotionError(
            "Cannot perform a binary operation between an unsigned tensor and a negative "
            "scalar. Perform a explicit cast on one of them."
        )
    if not result.get_int_min_value() <= scalar <= result.get_int_max_value():
        raise PromotionError(f"Scalar {scalar} is out of range for type {result.triton_name}")


def _typed_rules(a: ScalarType, b: ScalarType, op: str) -> ScalarType:
    div_or_mod = op in (TRUEDIV, FLOORDIV, MOD)
    floats = _float_rules(a, b, div_or_mod)
    if floats is not None:
        return floats
    if div_or_mod and a.is_unsigned() != b.is_unsigned() and I1 not in (a, b):
        raise PromotionError(  # rule 9
            # Triton's words, which tests written for Triton match.
            f"Cannot use {op} with {a!r} and {b!r} because they have different signedness; "
            "cast them to the same signedness"
        )
    return integer_promote(a, b)  # rule 8


def _check_op(result: ScalarType, a: ScalarType, b: ScalarType, op: str) -> ScalarType:
    if op == TRUEDIV:
        return F64 if result == F64 else F32  # rule 10
    if op == FLOORDIV and result.is_float():
        raise PromotionError(  # rule 11
            f"floor division '//' is not supported on floating-point values ({a!r} // {b!r})"
        )
    if op == BITWISE and result.is_float():
        raise PromotionError(  # rule 12
            f"invalid operands of type {a!r} and {b!r}: bitwise operators and shifts need "
            "integer operands"
        )
    return result
