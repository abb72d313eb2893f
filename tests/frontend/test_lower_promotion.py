"""Per-rule tests of the type promotion rules (minitriton/frontend/promotion.py).

Expected results follow Triton's ``computation_type_impl`` and the table in
Triton's ``triton-semantics.rst``; the rule number of each case is in its id.
"""

from __future__ import annotations

import pytest

from minitriton.frontend import promotion as P
from minitriton.ir.types import BF16, F16, F32, F64, I1, I8, I16, I32, I64, U8, U16, U32, U64

CASES = [
    # rule, a, b, op, expected
    ("r2 int literal does not promote int8", I8, 100, P.ARITH, I8),
    ("r2 int literal at the edge of int8", I8, -128, P.ARITH, I8),
    ("r2 int literal at the edge of uint8", U8, 255, P.ARITH, U8),
    ("r2 float literal keeps fp16", F16, 2.0, P.ARITH, F16),
    ("r2 bool literal keeps uint8", U8, True, P.ARITH, U8),
    ("r2 int literal keeps bf16", BF16, 2, P.ARITH, BF16),
    ("r2 big int literal is fp32 with bf16", BF16, 2**40, P.ARITH, BF16),
    ("r2 float literal promotes int32", I32, 1.5, P.ARITH, F32),
    ("r2 float literal promotes int64 to fp32", I64, 1.5, P.ARITH, F32),
    ("r2 int literal promotes bool", I1, 3, P.ARITH, I32),
    ("r2 literal on the left", 1.5, I16, P.ARITH, F32),
    ("r2 fp16 / literal computes in fp32", F16, 2.0, P.TRUEDIV, F32),
    ("r4 fp64 wins", F32, F64, P.ARITH, F64),
    ("r4 fp64 with int", I64, F64, P.ARITH, F64),
    ("r5 fp32 wins over fp16", F16, F32, P.ARITH, F32),
    ("r5 fp32 with bf16", BF16, F32, P.ARITH, F32),
    ("r6 fp16 wins over bf16", F16, BF16, P.ARITH, F16),
    ("r6 fp16 with int64", F16, I64, P.ARITH, F16),
    ("r6 fp16 % fp16 is fp32", F16, F16, P.MOD, F32),
    ("r7 bf16 with bf16", BF16, BF16, P.ARITH, BF16),
    ("r7 bf16 with int", BF16, I32, P.ARITH, F32),
    ("r7 bf16 with int8", I8, BF16, P.ARITH, F32),
    ("r8 wider signed wins", I32, I64, P.ARITH, I64),
    ("r8 unsigned wins at equal width", I32, U32, P.ARITH, U32),
    ("r8 wider signed beats narrower unsigned", I64, U32, P.ARITH, I64),
    ("r8 uint8 beats int8", U8, I8, P.ARITH, U8),
    ("r8 int32 beats uint16", U16, I32, P.ARITH, I32),
    ("r8 bool with int32", I1, I32, P.ARITH, I32),
    ("r8 uint64 beats int64", I64, U64, P.ARITH, U64),
    ("r10 int / int is fp32", I32, I32, P.TRUEDIV, F32),
    ("r10 int64 / int64 is fp32", I64, I64, P.TRUEDIV, F32),
    ("r10 fp16 / fp16 is fp32", F16, F16, P.TRUEDIV, F32),
    ("r10 bf16 / bf16 is fp32", BF16, BF16, P.TRUEDIV, F32),
    ("r10 fp64 / int stays fp64", F64, I32, P.TRUEDIV, F64),
    ("r10 int / float literal", I32, 2.0, P.TRUEDIV, F32),
    ("r11 int // int64", I32, I64, P.FLOORDIV, I64),
    ("r11 uint // uint", U8, U16, P.FLOORDIV, U16),
    ("r12 bitwise int8 | int16", I8, I16, P.BITWISE, I16),
    ("r12 bitwise bool & bool", I1, I1, P.BITWISE, I1),
    ("r13 compare int with float", I32, F16, P.COMPARE, F16),
]


@pytest.mark.parametrize("rule,a,b,op,expected", CASES, ids=[c[0] for c in CASES])
def test_computation_type(rule: str, a: object, b: object, op: str, expected: object) -> None:
    assert P.computation_type(a, b, op) == expected


@pytest.mark.parametrize(
    "value,expected",
    [
        (0, I32),
        (-1, I32),
        (2**31 - 1, I32),
        (2**31, U32),
        (2**32, I64),
        (-(2**31) - 1, I64),
        (2**63, U64),
        (True, I1),
        (1.5, F32),
        (float("inf"), F32),
        (1e39, F64),
    ],
)
def test_rule3_literal_types(value: object, expected: object) -> None:
    assert P.literal_type(value) == expected


def test_rule3_literal_too_big() -> None:
    with pytest.raises(P.PromotionError, match="does not fit in 64 bits"):
        P.literal_type(2**64)


@pytest.mark.parametrize(
    "a,b,op,message",
    [
        (F32, I32, P.FLOORDIV, "floor division '//' is not supported"),  # rule 11
        (F16, 2.0, P.FLOORDIV, "floor division '//' is not supported"),  # rule 11
        (I32, U32, P.MOD, "different signedness"),  # rule 9
        (I32, U32, P.TRUEDIV, "different signedness"),  # rule 9
        (F32, I32, P.BITWISE, "need integer operands"),  # rule 12
        (I32, 1.5, P.BITWISE, "need integer operands"),  # rule 12
        (I8, 1000, P.ARITH, "Scalar 1000 is out of range for type int8"),  # rule 2
        (I16, 2**40, P.ARITH, "Scalar 1099511627776 is out of range for type int16"),  # rule 2
        (1000, I8, P.COMPARE, "Scalar 1000 is out of range for type int8"),  # rule 2
        (U32, -1, P.ARITH, "unsigned tensor and a negative scalar"),  # rule 2
        (U8, 256, P.BITWISE, "Scalar 256 is out of range for type uint8"),  # rule 2
    ],
)
def test_rejected_combinations(a: object, b: object, op: str, message: str) -> None:
    with pytest.raises(P.PromotionError, match=message):
        P.computation_type(a, b, op)
