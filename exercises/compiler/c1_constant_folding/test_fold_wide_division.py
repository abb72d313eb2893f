"""Tests for exercise c1: integer division and remainder fold exactly at every width.

Python's ``//`` and ``%`` round toward minus infinity, C's ``/`` and ``%``
toward zero; and a double holds integers exactly only up to 2**53, so
``int(a / b)`` or ``math.fmod`` are wrong for large 64-bit values. Each
test folds ``a / b`` and ``a % b`` on constants and compares with exact
integer arithmetic, wrapped to the type's width.
"""

from __future__ import annotations

import pytest

from minitriton.ir import parse_module
from minitriton.ir.printer import format_attr
from minitriton.passes import run_pipeline

pytestmark = pytest.mark.exercise("c1-fold")

BITS = {"i8": 8, "i32": 32, "i64": 64, "u8": 8, "u32": 32, "u64": 64}
EDGES = {
    "i64": [
        -(2**63),
        -(2**63) + 1,
        -(2**53) - 3,
        -7,
        -1,
        1,
        3,
        7,
        2**53 + 3,
        2**62 + 12345,
        2**63 - 1,
    ],  # fmt: skip
    "u64": [1, 3, 7, 2**53 + 3, 2**63, 2**63 + 1, 2**64 - 1],
    "i32": [-(2**31), -7, -1, 1, 3, 2**31 - 1],
    "u32": [1, 7, 2**31, 2**32 - 1],
    "i8": [-128, -7, -1, 1, 3, 127],
    "u8": [1, 7, 128, 255],
}


def fold(op: str, t: str, a: int, b: int) -> int | None:
    """The constant ``op(a, b)`` folds to in type ``t``, or None if it is not folded."""
    text = (
        f"tt.func @f() -> ({t}) {{\n"
        f"  %a = arith.constant() {{value = {format_attr(a)}}} : {t}\n"
        f"  %b = arith.constant() {{value = {format_attr(b)}}} : {t}\n"
        f"  %r = {op}(%a, %b) : {t}\n"
        "  tt.return(%r)\n}\n"
    )
    module = run_pipeline(parse_module(text), ["canonicalize", "dce"], verify=True)
    owner = module.funcs[0].body.ops[-1].operands[0].owner
    return owner.attrs["value"] if owner.name == "arith.constant" else None


def wrap(value: int, t: str) -> int:
    """``value`` wrapped around to the width and signedness of ``t``."""
    bits = BITS[t]
    value %= 2**bits
    return value - 2**bits if t.startswith("i") and value >= 2 ** (bits - 1) else value


def c_div(a: int, b: int) -> int:
    """C's quotient, truncated toward zero, with exact integers."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _pairs(t: str) -> list[tuple[int, int]]:
    return [(a, b) for a in EDGES[t] for b in EDGES[t]]


@pytest.mark.parametrize("t", sorted(EDGES))
def test_div_exact_at_every_width(t: str) -> None:
    for a, b in _pairs(t):
        want = wrap(c_div(a, b), t)
        got = fold("arith.div", t, a, b)
        assert got == want, f"{t}: {a} / {b} folded to {got}, C gives {want} (exact beyond 2**53)"


@pytest.mark.parametrize("t", sorted(EDGES))
def test_rem_exact_at_every_width(t: str) -> None:
    for a, b in _pairs(t):
        want = wrap(a - b * c_div(a, b), t)
        got = fold("arith.rem", t, a, b)
        assert got == want, f"{t}: {a} % {b} folded to {got}, C gives {want} (exact beyond 2**53)"


@pytest.mark.parametrize("t", ["i64", "u64"])
def test_div_and_rem_by_zero_are_not_folded_at_64_bits(t: str) -> None:
    assert fold("arith.div", t, 7, 0) is None
    assert fold("arith.rem", t, 7, 0) is None
