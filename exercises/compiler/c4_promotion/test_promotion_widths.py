"""Tests for exercise c4: rule 8 at every pair of integer widths, in both orders.

Run by ``minitriton exercises check c4`` against the student's copy of the
package, and by ``verify`` against the real one. Rule 8 (Triton's
``integer_promote_impl``, C's usual arithmetic conversions without C's
promotion to ``int``): with the same signedness the wider type wins; with
mixed signedness the unsigned type wins when it is at least as wide as the
signed one, else the signed one. ``i1`` counts as signed.
"""

from __future__ import annotations

import itertools

import pytest

from minitriton.frontend import promotion as P
from minitriton.ir.types import I1, I8, I16, I32, I64, U8, U16, U32, U64, ScalarType

pytestmark = pytest.mark.exercise("c4-promotion")

SIGNED = {8: I8, 16: I16, 32: I32, 64: I64}
UNSIGNED = {8: U8, 16: U16, 32: U32, 64: U64}
WIDTHS = (8, 16, 32, 64)


def _mixed_cases() -> list[tuple[str, ScalarType, ScalarType, ScalarType]]:
    """(id, a, b, expected) for a signed and an unsigned type at every pair of widths."""
    cases = []
    for s, u in itertools.product(WIDTHS, WIDTHS):
        signed, unsigned = SIGNED[s], UNSIGNED[u]
        expected = unsigned if u >= s else signed
        cases.append((f"r8 mixed {signed} with {unsigned}", signed, unsigned, expected))
        cases.append((f"r8 mixed {unsigned} with {signed}", unsigned, signed, expected))
    for u in WIDTHS:  # bool is signed here, and the narrowest type there is
        cases.append((f"r8 mixed i1 with {UNSIGNED[u]}", I1, UNSIGNED[u], UNSIGNED[u]))
        cases.append((f"r8 mixed {UNSIGNED[u]} with i1", UNSIGNED[u], I1, UNSIGNED[u]))
    return cases


def _same_cases() -> list[tuple[str, ScalarType, ScalarType, ScalarType]]:
    """(id, a, b, expected) for two types of the same signedness: the wider one."""
    cases = []
    for table in (SIGNED, UNSIGNED):
        for wa, wb in itertools.product(WIDTHS, WIDTHS):
            a, b = table[wa], table[wb]
            cases.append((f"r8 same signedness {a} with {b}", a, b, table[max(wa, wb)]))
    return cases


MIXED = _mixed_cases()
SAME = _same_cases()


@pytest.mark.parametrize("a,b,expected", [c[1:] for c in MIXED], ids=[c[0] for c in MIXED])
def test_r8_mixed_signedness_at_every_pair_of_widths(
    a: ScalarType, b: ScalarType, expected: ScalarType
) -> None:
    got = P.integer_promote(a, b)
    assert got == expected, f"{a} with {b} gives {got}, expected {expected}"


@pytest.mark.parametrize("a,b,expected", [c[1:] for c in SAME], ids=[c[0] for c in SAME])
def test_r8_same_signedness_the_wider_wins(
    a: ScalarType, b: ScalarType, expected: ScalarType
) -> None:
    got = P.integer_promote(a, b)
    assert got == expected, f"{a} with {b} gives {got}, expected {expected}"
