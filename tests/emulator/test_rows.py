"""Row-contiguous loads and stores (``emulator/rows.py``) give what a gather and a scatter give."""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator import EmulatorError
from minitriton.emulator.rows import MAX_EDGE_ROWS, complete_despite_interrupt, find_rows


def blocks(starts: list[int], width: int, dtype: type = np.int32) -> np.ndarray:
    """Rows ``start + arange(width)``, one per start."""
    return (np.asarray(starts)[:, None] + np.arange(width)).astype(dtype)


# ---------------------------------------------------------------- find_rows


def test_runs_of_one_step_are_found_with_the_rows_inside() -> None:
    rows = find_rows(blocks([0, 8, 16, 24], 8), size=30)
    assert rows is not None
    assert (rows.start, rows.step, rows.count, rows.width) == (0, 8, 4, 8)
    assert (rows.first, rows.stop, rows.edge()) == (0, 3, [3])  # 24..31 passes 30


def test_a_strided_step_and_a_1d_block_are_rows() -> None:
    rows = find_rows(blocks([5, 105, 205], 64), size=1000)
    assert rows is not None and (rows.step, rows.edge()) == (100, [])
    single = find_rows(np.arange(3, 19, dtype=np.int64), size=20)
    assert single is not None and (single.count, single.start, single.width) == (1, 3, 16)


@pytest.mark.parametrize(
    "offsets",
    [
        blocks([0, 8], 8)[:, ::-1].copy(),  # descending lanes
        np.array([[0, 1, 3, 2], [4, 5, 6, 7]], np.int32),  # one pair swapped
        np.array([[0, 2, 1, 3]], np.int32),  # the ends fit, the middle does not
        blocks([0, 8, 24], 8),  # uneven steps between rows
        blocks([16, 8, 0], 8),  # a negative step
        np.array([[2**31 - 2, 2**31 - 1, -(2**31), -(2**31) + 1]], np.int32),  # wraps around
        np.zeros((4, 8), np.int32),  # every lane on one element
        np.arange(8, dtype=np.float32),  # not offsets
        np.arange(8, dtype=np.int32).reshape(2, 2, 2),  # 3-D
    ],
)
def test_other_blocks_are_not_rows(offsets: np.ndarray) -> None:
    assert find_rows(offsets, size=1 << 32) is None


def test_more_edge_rows_than_the_limit_are_not_rows() -> None:
    count = MAX_EDGE_ROWS + 2
    assert find_rows(blocks([8 * i for i in range(count)], 8), size=8) is None  # 1 inside
    assert find_rows(blocks([8 * i for i in range(count)], 8), size=8 * 3) is not None


def test_the_view_selects_what_the_offsets_select() -> None:
    flat = np.arange(1000, dtype=np.float32) * 0.5
    offsets = blocks([7, 107, 207, 307], 50)
    rows = find_rows(offsets, flat.size)
    assert rows is not None
    np.testing.assert_array_equal(rows.view(flat), flat[offsets])
    assert not rows.view(flat).flags.writeable
    assert rows.no_overlap() and not find_rows(blocks([0, 4], 8), 16).no_overlap()


# ---------------------------------------------------------------- through kernels


@triton.jit
def copy_rows(x_ptr, y_ptr, n, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + pid * stride + offs, mask=mask, other=-1.0)
    tl.store(y_ptr + pid * stride + offs, x * 2.0, mask=mask)


@pytest.mark.parametrize(("rows", "n", "stride", "block"), [
    (5, 100, 100, 128),  # rows that overlap, the tails masked
    (5, 64, 100, 64),  # gaps between the rows
    (3, 7, 8, 8),  # the last row runs past the end, masked (an unbatched mask)
    (3, 7, 7, 8),  # overlapping rows, the last past the end
])  # fmt: skip
def test_masked_rows_match_numpy(rows: int, n: int, stride: int, block: int) -> None:
    x = np.random.default_rng(0).random((rows - 1) * stride + n, dtype=np.float32)
    y = np.full_like(x, 9.0)
    copy_rows[(rows,)](x, y, n, stride, BLOCK=block, backend="emulator")
    want = np.full_like(x, 9.0)
    for r in range(rows):
        want[r * stride : r * stride + n] = 2 * x[r * stride : r * stride + n]
    np.testing.assert_array_equal(y, want)


@triton.jit
def add_with_other(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs % 3 != 0, other=offs.to(tl.float32))
    tl.store(out_ptr + offs, x, mask=offs < n)


def test_disabled_lanes_take_other_inside_and_at_the_edge() -> None:
    n = 70
    x = np.arange(n, dtype=np.float32) + 0.25
    out = np.zeros(n, np.float32)
    with pytest.raises(EmulatorError, match="out-of-bounds tt.load"):
        add_with_other[(3,)](x, out, n, BLOCK=32, backend="emulator")  # lane 71 is enabled
    x = np.arange(96, dtype=np.float32) + 0.25
    add_with_other[(3,)](x, out, n, BLOCK=32, backend="emulator")
    lanes = np.arange(n)
    np.testing.assert_array_equal(out, np.where(lanes % 3 != 0, x[:n], lanes.astype(np.float32)))


@triton.jit
def scalar_other(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_first_half = tl.arange(0, BLOCK) < BLOCK // 2  # unbatched, beside batched offsets
    x = tl.load(x_ptr + offs, mask=in_first_half & (offs < n), other=-3.0)
    tl.store(out_ptr + offs, x, mask=offs < n)


def test_an_unbatched_mask_and_a_scalar_other_broadcast() -> None:
    n = 40
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    scalar_other[(3,)](x, out, n, BLOCK=16, backend="emulator")
    np.testing.assert_array_equal(out, np.where(np.arange(n) % 16 < 8, x, -3.0))


@triton.jit
def unmasked_copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


def test_an_edge_row_out_of_bounds_is_still_located() -> None:
    x = np.zeros(40, np.float32)
    y = np.zeros(64, np.float32)
    located = r"out-of-bounds tt.load from 'x_ptr'.*program \(2, 0, 0\)"
    with pytest.raises(EmulatorError, match=located):
        unmasked_copy[(4,)](x, y, BLOCK=16, backend="emulator")
    np.testing.assert_array_equal(y, 0.0)


@triton.jit
def overlapping_store(y_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * (BLOCK // 2) + tl.arange(0, BLOCK)  # each row overlaps the next by half
    tl.store(y_ptr + offs, tl.zeros([BLOCK], tl.float32) + pid)


def test_overlapping_rows_keep_the_highest_program() -> None:
    y = np.zeros(40, np.float32)
    overlapping_store[(4,)](y, BLOCK=16, backend="emulator")
    want = np.zeros(40, np.float32)
    for pid in range(4):
        want[pid * 8 : pid * 8 + 16] = pid
    np.testing.assert_array_equal(y, want)


# ---------------------------------------------------------------- interrupts


def test_an_interrupted_step_is_run_again_and_the_interrupt_raised_last() -> None:
    done: list[int] = []
    raised = [False]

    def step(i: int) -> None:
        done.append(i)
        if i == 1 and not raised[0]:
            raised[0] = True
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        complete_despite_interrupt([lambda i=i: step(i) for i in range(3)])
    assert done == [0, 1, 1, 2]


def test_steps_without_an_interrupt_run_once() -> None:
    done: list[int] = []
    complete_despite_interrupt([lambda i=i: done.append(i) for i in range(3)])
    assert done == [0, 1, 2]
