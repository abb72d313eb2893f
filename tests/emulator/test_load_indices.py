"""Masked loads and stores, and ``x_ptr + offsets``, make no block-sized copies of offsets.

A first launch in a fresh process pays for every page it touches for the
first time, so the emulator's memory ops keep their temporaries small:

* ``tt.addptr`` on an argument's pointer (element 0 everywhere) keeps the
  offsets block itself as the pointer's data, 32-bit offsets included;
* ``np.take`` copies an index array that is not a writable ``intp`` array
  of the right shape (a broadcast view, 32-bit offsets): such loads are
  taken a slice of rows at a time;
* a masked store gathers its enabled lanes a slice of rows at a time.

NumPy reports its array memory to :mod:`tracemalloc`, so the tests count
the bytes a call holds at its peak instead of timing it.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl
from minitriton.emulator.memory import Memory
from minitriton.emulator.ops.memory import TAKE_CHUNK, _outside, _take_clipped
from minitriton.emulator.ops.speed import offsets_from_base
from minitriton.emulator.registry import SEMANTICS
from minitriton.emulator.values import RVal
from minitriton.ir.ops import StoreOp
from minitriton.ir.types import ScalarType

ROWS, LANES = 97, 1024  # the vector add's batch: 97 programs of 1024 lanes


def peak_bytes(fn: Callable[[], Any]) -> tuple[Any, int]:
    """``fn()`` and the most memory traced while it ran, over what it returns."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        out = fn()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    return out, peak


def test_take_matches_numpy_for_every_offset_layout() -> None:
    flat = np.arange(500, dtype=np.float32) * 0.5
    rng = np.random.default_rng(0)
    full64 = rng.integers(-20, 520, size=(40, 600)).astype(np.int64)
    cases = [
        (full64, (40, 600)),  # writable intp: one take
        (full64.astype(np.int32), (40, 600)),  # 32-bit: in slices of rows
        (full64[0], (40, 600)),  # a row broadcast over the batch
        (np.broadcast_to(np.int32(7), (40, 600)), (40, 600)),  # a splat
        (np.array(3, dtype=np.int32), ()),  # a scalar load
        (full64[:, :5].astype(np.int32), (40, 5)),  # small: one take
    ]
    for offsets, shape in cases:
        want = np.take(flat, np.broadcast_to(offsets, shape).astype(np.int64), mode="clip")
        got = _take_clipped(flat, offsets, shape)
        assert got.shape == shape and got.dtype == flat.dtype
        np.testing.assert_array_equal(got, want)


def test_take_of_32_bit_offsets_copies_no_block_of_indices() -> None:
    rows = 8 * ROWS  # a block much bigger than a slice
    flat = np.zeros(rows * LANES, dtype=np.float32)
    offsets = np.arange(rows * LANES, dtype=np.int32).reshape(rows, LANES)
    values, peak = peak_bytes(lambda: _take_clipped(flat, offsets, offsets.shape))
    # The result, plus one slice's 64-bit indices; a whole-block copy would be 8 bytes a lane.
    assert peak <= values.nbytes + 2 * TAKE_CHUNK * 8 < values.nbytes + offsets.size * 8


def test_take_of_64_bit_offsets_passes_them_as_they_are() -> None:
    flat = np.zeros(ROWS * LANES, dtype=np.float32)
    offsets = np.arange(ROWS * LANES, dtype=np.int64).reshape(ROWS, LANES)
    values, peak = peak_bytes(lambda: _take_clipped(flat, offsets, offsets.shape))
    assert peak <= values.nbytes + 4096


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_outside_finds_both_ends(dtype: type) -> None:
    offsets = np.array([-(2**31), -1, 0, 9, 10, 2**31 - 1], dtype=dtype)
    np.testing.assert_array_equal(_outside(offsets, 10), [True, True, False, False, True, True])


def test_outside_widens_32_bit_offsets_for_huge_buffers() -> None:
    """-1 as a uint32 is 2^32 - 1, below a buffer of 2^33 elements: it must still be outside."""
    offsets = np.array([-1, 5], dtype=np.int32)
    np.testing.assert_array_equal(_outside(offsets, 2**33), [True, False])


def test_argument_pointer_plus_offsets_shares_the_offsets() -> None:
    offsets = np.arange(ROWS * LANES, dtype=np.int32).reshape(ROWS, LANES)
    base = np.broadcast_to(np.zeros((1,), dtype=np.int64), (LANES,))
    assert offsets_from_base(base, offsets) is offsets


@pytest.mark.parametrize(
    "base, offset",
    [
        (np.broadcast_to(np.int64(3), (4,)), np.arange(4, dtype=np.int32)),  # not element 0
        (np.arange(4, dtype=np.int64), np.arange(4, dtype=np.int32)),  # a block of pointers
        (np.broadcast_to(np.int64(0), (2, 4)), np.arange(4, dtype=np.int32)),  # offsets broadcast
        (np.broadcast_to(np.int64(0), (4,)), np.arange(4, dtype=np.uint32)),  # unsigned
        (np.broadcast_to(np.int64(0), (4,)), np.arange(4, dtype=np.int16)),  # narrow
        (np.zeros((0,), dtype=np.int64), np.zeros((0,), dtype=np.int32)),  # empty
    ],
)
def test_other_pointer_sums_are_computed(base: np.ndarray, offset: np.ndarray) -> None:
    assert offsets_from_base(base, offset) is None


@mt.jit
def scatter_kernel(out_ptr, idx_ptr, val_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask)
    val = tl.load(val_ptr + offs, mask=mask)
    tl.store(out_ptr + idx, val, mask=mask & (val > 0.25))


@pytest.mark.parametrize("n", [ROWS * LANES - 700, 3000])
def test_masked_store_in_slices_keeps_lane_order(n: int) -> None:
    """Many lanes write each address; the enabled one of the highest program id wins."""
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 5000, size=n).astype(np.int32)
    val = rng.random(n, dtype=np.float32)
    out = np.full(5000, -1.0, dtype=np.float32)
    scatter_kernel[(mt.cdiv(n, LANES),)](out, idx, val, n, BLOCK=LANES, backend="emulator")
    want = np.full(5000, -1.0, dtype=np.float32)
    enabled = val > 0.25
    want[idx[enabled]] = val[enabled]  # NumPy assigns in order: the last lane wins
    np.testing.assert_array_equal(out, want)


def test_masked_store_copies_no_block_of_lanes() -> None:
    """The enabled lanes' offsets and values are gathered a slice at a time."""
    rows = 8 * ROWS  # a block much bigger than a slice
    flat = np.zeros(rows * LANES, dtype=np.float32)
    memory = Memory()
    buffer = memory.add("out", flat, ScalarType("f32"))
    state = SimpleNamespace(interp=SimpleNamespace(memory=memory))
    offsets = np.arange(rows * LANES, dtype=np.int32).reshape(rows, LANES)
    values = np.ones((rows, LANES), dtype=np.float32)
    mask = offsets % 3 != 0
    ptr, value, enabled = RVal(offsets, True, buffer), RVal(values, True), RVal(mask, True)
    _, peak = peak_bytes(lambda: SEMANTICS[StoreOp](None, state, ptr, value, enabled))
    np.testing.assert_array_equal(flat, mask.reshape(-1).astype(np.float32))
    # A slice's 64-bit indices and values, not the enabled lanes of the whole block.
    assert peak <= 2 * TAKE_CHUNK * (8 + 4) < mask.sum() * (4 + 4)


@pytest.mark.parametrize("masked", [False, True])
def test_unmasked_and_fully_enabled_stores_of_32_bit_offsets(masked: bool) -> None:
    """Widened a slice at a time; lanes that share an address keep the last value."""
    rows = 2 * ROWS
    flat = np.zeros(1000, dtype=np.float32)
    memory = Memory()
    buffer = memory.add("out", flat, ScalarType("f32"))
    state = SimpleNamespace(interp=SimpleNamespace(memory=memory))
    offsets = (np.arange(rows * LANES, dtype=np.int32) % 1000).reshape(rows, LANES)
    values = np.arange(rows * LANES, dtype=np.float32).reshape(rows, LANES)
    mask = RVal(np.ones((rows, LANES), dtype=bool), True) if masked else None
    SEMANTICS[StoreOp](None, state, RVal(offsets, True, buffer), RVal(values, True), mask)
    want = np.zeros(1000, dtype=np.float32)
    want[offsets.reshape(-1).astype(np.int64)] = values.reshape(-1)
    np.testing.assert_array_equal(flat, want)
