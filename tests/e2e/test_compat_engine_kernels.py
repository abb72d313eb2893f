"""Constructs of inference-engine kernels (attention, norms, quantized matmuls).

A run-time ``if`` whose branch gives a variable another type than the value it
had before the ``if`` (a tuple there, a scalar in the branch) is refused as in
Triton, and the diagnostic says where the other path's value comes from.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.diagnostics import CompileError


def _line_of(marker: str) -> int:
    """The 1-based line of this file that carries ``marker``."""
    lines = Path(__file__).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.rstrip().endswith(marker))


@triton.jit
def tuple_before_if(out_ptr, n):
    idx = (n,)
    if n > 2:  # <- no-else
        idx = 0
    tl.store(out_ptr, idx)


@triton.jit
def types_differ_per_branch(out_ptr, x_ptr, n):
    if n > 2:  # noqa: SIM108 (a conditional expression would unify the two types)
        v = tl.load(x_ptr)
    else:
        v = n
    tl.store(out_ptr, v)


def test_if_without_else_names_the_value_from_before_it() -> None:
    out = np.zeros(1, np.int32)
    with pytest.raises(CompileError) as info:
        tuple_before_if[(1,)](out, 5, backend="emulator")
    text = str(info.value)
    assert "variable 'idx' has type i32 in the then-branch but (i32) in the else-branch" in text
    assert "the if has no else-branch" in text
    assert "keeps its value from before the if" in text
    assert info.value.first.loc.line == _line_of("# <- no-else")  # located at the if


def test_if_with_else_asks_for_one_type_in_both_branches() -> None:
    out, x = np.zeros(1, np.float32), np.ones(1, np.float32)
    with pytest.raises(CompileError) as info:
        types_differ_per_branch[(1,)](out, x, 5, backend="emulator")
    text = str(info.value)
    assert "has type f32 in the then-branch but i32 in the else-branch" in text
    assert "give 'v' one type in both branches" in text
    assert "no else-branch" not in text
