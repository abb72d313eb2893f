"""A launch leaves no reference cycles behind.

Objects in a cycle wait for Python's cyclic garbage collector, and every
such object brings its next collection closer; a collection of the older
generations then lands in whatever comes next (a compile, the next launch).
A plain launch (and a compile with it) frees everything it made as soon as
it is done, so ``gc.collect()`` afterwards finds nothing to collect.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl


@mt.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)  # fmt: skip


@pytest.fixture
def no_collector() -> Iterator[None]:
    """The collector off, so that only the test's own ``gc.collect()`` runs."""
    was_enabled = gc.isenabled()
    gc.disable()
    gc.collect()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def launch(n: int, block: int) -> np.ndarray:
    x = np.arange(n, dtype=np.float32)
    out = np.zeros_like(x)
    add_kernel[(mt.cdiv(n, block),)](x, x, out, n, BLOCK=block, backend="emulator")
    return out


def test_a_launch_leaves_no_cycles(no_collector: None) -> None:
    launch(5000, 256)  # compiled (or loaded) and launched once before
    gc.collect()
    out = launch(5000, 256)
    assert gc.collect() == 0
    np.testing.assert_array_equal(out, 2 * np.arange(5000, dtype=np.float32))


def test_a_new_specialization_leaves_no_cycles(no_collector: None) -> None:
    launch(5000, 256)
    gc.collect()
    out = launch(5000, 128)  # lowered, optimized, stored and launched
    assert gc.collect() == 0
    np.testing.assert_array_equal(out, 2 * np.arange(5000, dtype=np.float32))
