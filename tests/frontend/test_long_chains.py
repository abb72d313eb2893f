"""Long expression chains of random numbers: the passes stay linear.

Each ``tl.randn`` expands to a few hundred ops, and canonicalization folds
some of them into constants, inserting each constant before the op it
replaces. Finding that op's position from the start of the block each time
made a 400-term ``tl.randn`` chain spend seconds on the search alone. The
terms have distinct counters (identical calls are lowered once): DCE then
erases the dead parts of each network backwards, one by one, and a search
that only looked forward from the last erasure was quadratic too.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from minitriton.compiler import compile_kernel
from minitriton.ir.core import Operation

SOURCE = """
import minitriton as triton
import minitriton.language as tl


@triton.jit
def noise(out_ptr, seed, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, CHAIN)
"""


def noise(tmp_path: Path, terms: int) -> Any:
    path = tmp_path / f"noise_{terms}.py"
    # Distinct counters: identical calls would be lowered once (see purecalls.py).
    chain = " + ".join(f"tl.randn(seed, offs + {k})" for k in range(terms))
    path.write_text(SOURCE.replace("CHAIN", chain))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.noise


def comparisons(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, terms: int) -> int:
    """How often the compile compares two ops (what a search of a block's list costs)."""
    count = [0]

    def counting_eq(self: Operation, other: object) -> bool:
        count[0] += 1
        return self is other

    monkeypatch.setattr(Operation, "__eq__", counting_eq, raising=False)
    monkeypatch.setattr(Operation, "__hash__", object.__hash__, raising=False)
    fn = noise(tmp_path, terms)
    specs = fn.specialize(fn.bind((np.zeros(16, np.float32), 1), {"BLOCK": 16}))
    out = compile_kernel(fn.source, specs, stop_after="ir-opt")
    assert "tt.store" in out.asm["ir-opt"]
    return count[0]


def test_folding_a_long_chain_searches_in_linear_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = comparisons(tmp_path, monkeypatch, 20)
    large = comparisons(tmp_path, monkeypatch, 80)
    # Four times the terms: about four times the work (sixteen if quadratic).
    assert large < 6 * max(small, 1_000), (small, large)
