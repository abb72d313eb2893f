"""Fuzz: mutated project kernels compile, or give our diagnostic, in time; nothing internal.

Hypothesis draws the random stream each mutant is made from (see
``fuzz_inputs.py`` for the mutations and the property). The long run of the
same property is ``fuzz_long.py``.
"""

from __future__ import annotations

import random

import pytest
from fuzz_inputs import LEAKS, SEEDS, Internal, check, mutant
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(
    max_examples=1200,
    deadline=None,
    derandomize=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.heavy
@SETTINGS
@given(st.integers(0, 2**63))
def test_mutants_compile_or_give_a_diagnostic_in_time(seed: int) -> None:
    name, text = mutant(random.Random(seed))
    check(name, text, seconds=10.0)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**63))
def test_mutants_compile_to_ptx_or_give_a_diagnostic(seed: int) -> None:
    name, text = mutant(random.Random(seed))
    check(name, text, stop_after="ptx", seconds=20.0)


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_the_seeds_compile(name: str) -> None:
    assert check(name, SEEDS[name][0].source).kind == "compiled"


def test_the_property_rejects_leaks_and_internal_errors() -> None:
    """The checker itself: a diagnostic that leaks, or an exception, fails it."""
    name = sorted(SEEDS)[0]
    source = SEEDS[name][0].source
    assert "Tensor(" in LEAKS and "internal compiler error" in LEAKS
    broken = source.replace("tl.arange(", "tl.arange(", 1) + "\n"  # still compiles
    assert check(name, broken).kind == "compiled"
    with pytest.raises(Internal):
        check(name, 12345)  # type: ignore[arg-type]  # not text: an exception, not a diagnostic


#: Seeds that once found a bug, kept as regressions (name of the bug in the comment).
KNOWN_SEEDS = [
    18160,  # attention with a boolean block in the wgmma accumulator layout: i1 through smem
]


@pytest.mark.parametrize("seed", KNOWN_SEEDS)
def test_known_seeds_compile_to_ptx(seed: int) -> None:
    name, text = mutant(random.Random(seed))
    assert check(name, text, stop_after="ptx", seconds=60.0).kind in {"compiled", "diagnostic"}
