"""Lazy lane runs, prefix masks and loads (``emulator/lanes.py``) give what plain arrays give."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator import EmulatorError, lanes
from minitriton.emulator.lanes import (
    MAX_PARTIAL_ROWS,
    LanePrefix,
    LaneRuns,
    add_runs,
    addptr_runs,
    compare_runs,
    make_range,
    runs_access,
)
from minitriton.emulator.values import RVal
from tests.kernels.vector_add import add_kernel


def splat(values: int | list[int], width: int, dtype: type = np.int32) -> RVal:
    """A splat as ``tt.splat`` makes it: a broadcast view, one row per program if a list."""
    column = np.asarray(values, dtype=dtype)
    data = column.reshape(column.shape + (1,))
    return RVal(np.broadcast_to(data, (*column.shape, width)), column.ndim == 1)


def runs(starts: int | list[int], width: int, buffer: int | None = None) -> LaneRuns:
    """Int32 runs of ``width`` lanes from ``starts`` (a pointer into ``buffer`` if given)."""
    return LaneRuns(np.asarray(starts, dtype=np.int64), width, np.int32, buffer)


# ---------------------------------------------------------------- the lazy values


def test_a_range_and_a_shifted_range_are_made_as_numpy_makes_them() -> None:
    r = make_range(3, 11)
    assert np.array_equal(r.data, np.arange(3, 11, dtype=np.int32)) and not r.batched
    shifted = add_runs(splat([0, 8, 16], 8), r)
    assert isinstance(shifted, LaneRuns) and shifted.batched
    expected = np.array([0, 8, 16], np.int32)[:, None] + np.arange(3, 11, dtype=np.int32)
    assert np.array_equal(shifted.data, expected) and shifted.data.dtype == np.int32
    assert np.array_equal(shifted.take(np.array([2, 0])).data, expected[[2, 0]])


@pytest.mark.parametrize(
    ("pred", "swap", "bound"), [("lt", False, 20), ("le", False, 20), ("gt", True, 5),
                                ("ge", True, -3), ("lt", False, 10**6)],
)  # fmt: skip
def test_a_comparison_with_a_bound_is_a_prefix_mask(pred: str, swap: bool, bound: int) -> None:
    offsets = add_runs(splat([0, 8, 16], 8), make_range(0, 8))
    assert offsets is not None
    b = splat(bound, 8)
    a, b = (b, offsets) if swap else (offsets, b)
    mask = compare_runs(pred, a, b)
    fn = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}[pred]
    assert isinstance(mask, LanePrefix)
    assert np.array_equal(mask.data, fn(a.data, b.data))


def test_forms_that_do_not_apply_give_none() -> None:
    r = make_range(0, 8)
    near_max = splat(2**31 - 4, 8)
    assert add_runs(near_max, r) is None  # its last lanes would wrap around i32
    assert add_runs(RVal(np.arange(8, dtype=np.int32), False), r) is None  # not a splat
    assert add_runs(splat(1, 8, np.int64), r) is None  # another dtype
    assert compare_runs("eq", r, splat(3, 8)) is None
    assert compare_runs("gt", r, splat(3, 8)) is None  # runs > bound is a suffix
    assert compare_runs("lt", r, RVal(np.arange(8, dtype=np.int32), False)) is None
    assert addptr_runs(RVal(np.arange(8), False, 0), r) is None  # pointer not a splat


def test_a_pointer_from_element_0_keeps_the_offsets_dtype() -> None:
    zero = RVal(np.broadcast_to(np.zeros(1, np.int64), (8,)), False, 2)
    ptr = addptr_runs(zero, make_range(0, 8))
    assert ptr is not None and ptr.buffer == 2 and ptr.data.dtype == np.int32
    five = RVal(np.broadcast_to(np.full(1, 5, np.int64), (8,)), False, 2)
    assert addptr_runs(five, ptr) is None  # runs already in a buffer are a pointer, not offsets
    row = addptr_runs(five, make_range(0, 8))
    assert row is not None and np.array_equal(row.data, np.arange(5, 13)) and row.dtype == np.int64


# ---------------------------------------------------------------- runs_access


def test_an_access_copies_the_full_rows_through_one_view() -> None:
    access = runs_access(runs([0, 8, 16, 24], 8, buffer=0), None, 32, False)
    assert access is not None
    assert (access.first, access.stop, access.step, access.partial) == (0, 4, 8, [])
    flat = np.arange(32.0)
    assert np.array_equal(access.view(flat), flat.reshape(4, 8))
    mask = LanePrefix(np.array([8, 8, 8, 5]), 8)
    access = runs_access(runs([0, 8, 16, 24], 8, buffer=0), mask, 29, False)
    assert access is not None and (access.first, access.stop) == (0, 3)
    assert access.partial == [3] and access.lanes(3) == slice(24, 29)


@pytest.mark.parametrize(
    ("starts", "mask", "size", "store"),
    [
        ([0, 8, 16, 24], None, 30, False),  # an on lane past the end
        ([-8, 0, 8], LanePrefix(np.array([8, 8, 8]), 8), 30, False),  # before the start
        ([0, 4, 8], None, 30, True),  # a store into overlapping rows
        ([8 * i for i in range(MAX_PARTIAL_ROWS + 2)], LanePrefix(np.array(3), 8), 1000, False),
    ],
)
def test_accesses_the_runs_cannot_take_are_left_to_the_general_path(
    starts: list[int], mask: LanePrefix | None, size: int, store: bool
) -> None:
    assert runs_access(runs(starts, 8, buffer=0), mask, size, store) is None


def test_offsets_outside_a_buffer_are_not_an_access() -> None:
    assert runs_access(runs([0, 8], 8), None, 100, False) is None  # no buffer: not a pointer
    masked = RVal(np.ones((2, 8), bool), True)
    assert runs_access(runs([0, 8], 8, buffer=0), masked, 100, False) is None  # a plain mask


# ---------------------------------------------------------------- whole kernels


@triton.jit
def _copy_rows(src, dst, n, stride, BLOCK: tl.constexpr, FLIP: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    base = row * stride
    mask = n > offs if FLIP else offs < n  # the bound on either side
    x = tl.load(src + base + offs, mask=mask, other=-1.0)
    tl.store(dst + base + offs, x + 1.0, mask=mask)


@pytest.mark.parametrize("flip", [False, True])
@pytest.mark.parametrize(("n", "stride"), [(16, 16), (11, 16), (16, 20), (0, 16)])
def test_strided_masked_rows_match_numpy(n: int, stride: int, flip: bool) -> None:
    rows, block = 5, 16
    src = np.arange(rows * stride, dtype=np.float32)
    dst = np.full_like(src, 7.0)
    _copy_rows[(rows,)](src, dst, n, stride, BLOCK=block, FLIP=flip, backend="emulator")
    expected = np.full_like(src, 7.0)
    for r in range(rows):
        on = slice(r * stride, r * stride + min(n, block))
        expected[on] = src[on] + 1
    np.testing.assert_array_equal(dst, expected)


@triton.jit
def _plus_offsets(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    value = tl.load(x + offs, mask=offs < n) + offs.to(tl.float32)  # the offsets made, too
    tl.store(out + offs, value, mask=offs < n)


@pytest.mark.parametrize("n", [1, 63, 64, 1000, 4097])
def test_offsets_read_as_values_match_numpy(n: int) -> None:
    x = np.random.default_rng(n).random(n, dtype=np.float32)
    out = np.zeros_like(x)
    _plus_offsets[(triton.cdiv(n, 64),)](x, out, n, BLOCK=64, backend="emulator")
    np.testing.assert_array_equal(out, x + np.arange(n, dtype=np.float32))


@triton.jit
def _overlapping_store(out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * (BLOCK // 2) + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.zeros([BLOCK], dtype=tl.int32) + pid)


def test_overlapping_rows_are_stored_in_program_order() -> None:
    out = np.full(8 * 5, -1, dtype=np.int32)
    _overlapping_store[(9,)](out, BLOCK=8, backend="emulator")
    expected = np.full_like(out, -1)
    for pid in range(9):  # the last writer of each element wins
        expected[pid * 4 : pid * 4 + 8] = pid
    np.testing.assert_array_equal(out, expected[: out.size])


def test_an_unmasked_lane_past_the_end_is_still_a_located_error() -> None:
    x = np.zeros(100, np.float32)
    with pytest.raises(EmulatorError, match="out of bounds"):
        _copy_rows[(2,)](x, np.zeros_like(x), 64, 64, BLOCK=64, FLIP=False, backend="emulator")


@pytest.mark.usefixtures("fast_paths")
def test_the_vector_add_takes_the_runs_and_never_looks_for_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_rows(*args: object) -> None:
        raise AssertionError("the general path ran")

    monkeypatch.setattr("minitriton.emulator.ops.speed.find_rows", no_rows)
    monkeypatch.setattr("minitriton.emulator.ops.memory.check_bounds", no_rows)
    n = 1000
    x, y = np.ones(n, np.float32), np.full(n, 2.0, np.float32)
    out = np.zeros_like(x)
    add_kernel[(triton.cdiv(n, 64),)](x, y, out, n, BLOCK_SIZE=64, backend="emulator")
    np.testing.assert_array_equal(out, 3.0)


def peak_of_vector_add(n: int) -> int:
    """The most memory tutorial 01's second launch holds (its first one compiles)."""
    x, y, out = np.ones(n, np.float32), np.full(n, 2.0, np.float32), np.zeros(n, np.float32)
    grid = (triton.cdiv(n, 1024),)
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024, backend="emulator")
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024, backend="emulator")
        peak = tracemalloc.get_traced_memory()[1] - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(out, 3.0)
    return peak


@pytest.mark.usefixtures("fast_paths")
def test_lazy_loads_and_a_deferred_sum_make_no_block(monkeypatch: pytest.MonkeyPatch) -> None:
    n = (1 << 16) + 100  # a partial last row too
    lazy = peak_of_vector_add(n)
    monkeypatch.setattr(lanes, "elementwise", lambda *args: None)  # computed as usual
    made = peak_of_vector_add(n)
    block = n * 4  # one fp32 block
    assert lazy < 0.5 * block  # the sum is computed into the output's memory
    assert made - lazy >= 2.5 * block  # the two loaded blocks and the sum


@triton.jit
def _chain(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask)
    b = tl.load(y + offs, mask=mask, other=1.0)
    s = a + b  # deferred, then read by ops that take pieces and by one that needs an array
    tl.store(out + offs, (s - b) * s + tl.sum(s * b, axis=0), mask=mask)


def test_a_deferred_sum_read_several_ways_matches_numpy() -> None:
    n, block = 1000, 128
    rng = np.random.default_rng(3)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.zeros_like(x)
    _chain[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block, backend="emulator")
    a = np.zeros(1024, np.float32)  # the lanes past the end: a = 0, b = other = 1
    b = np.ones(1024, np.float32)
    a[:n], b[:n] = x, y
    s = (a + b).reshape(-1, block)
    b = b.reshape(-1, block)
    want = (s - b) * s + np.sum(s * b, axis=1, keepdims=True)
    np.testing.assert_allclose(out, want.reshape(-1)[:n], rtol=1e-6)


@triton.jit
def _add_into(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)


@pytest.mark.parametrize("shift", [0, 1, -1])
def test_a_sum_stored_over_its_own_operand_is_computed_first(shift: int) -> None:
    n = 300
    base = np.arange(n + 2, dtype=np.float32)
    x, out = base[1 : n + 1], base[1 + shift : n + 1 + shift]  # out overlaps x
    y = np.full(n, 0.5, np.float32)
    want = x + y
    _add_into[(triton.cdiv(n, 64),)](x, y, out, n, BLOCK=64, backend="emulator")
    np.testing.assert_array_equal(out, want)
