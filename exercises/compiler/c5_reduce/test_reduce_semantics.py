"""Tests for exercise c5: reductions on the emulator agree with NumPy.

Run by ``minitriton exercises check c5`` against the student's copy of the
package (the copy is first on ``sys.path``), and by ``verify`` against the
real one.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl

pytestmark = pytest.mark.exercise("c5-reduce")


@triton.jit
def _row_stats_kernel(x_ptr, sum_ptr, max_ptr, argmax_ptr, N: tl.constexpr):
    row = tl.program_id(axis=0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    tl.store(sum_ptr + row, tl.sum(x, axis=0))
    tl.store(max_ptr + row, tl.max(x, axis=0))
    tl.store(argmax_ptr + row, tl.argmax(x, axis=0))


@triton.jit
def _column_sum_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(out_ptr + cols, tl.sum(x, axis=0))


@triton.jit
def _first_nonzero(a, b):
    # Associative but not commutative: the left operand must come first.
    return tl.where(a != 0, a, b)


@triton.jit
def _first_nonzero_kernel(x_ptr, out_ptr, N: tl.constexpr):
    row = tl.program_id(axis=0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    tl.store(out_ptr + row, tl.reduce(x, 0, _first_nonzero))


def _run_row_stats(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m, n = x.shape
    s, mx = np.zeros(m, np.float32), np.zeros(m, np.float32)
    am = np.zeros(m, np.int32)
    _row_stats_kernel[(m,)](x, s, mx, am, N=n, backend="emulator")
    return s, mx, am


@pytest.mark.parametrize("n", [1, 2, 8, 64])
def test_row_sum_max_argmax(n: int) -> None:
    x = np.random.default_rng(n).standard_normal((5, n)).astype(np.float32)
    s, mx, am = _run_row_stats(x)
    np.testing.assert_allclose(s, x.sum(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(mx, x.max(axis=1))
    np.testing.assert_array_equal(am, x.argmax(axis=1))


def test_argmax_keeps_the_first_index_on_ties() -> None:
    x = np.array([[1, 3, 3, 0, 3, 2, 1, 0], [5, 5, 5, 5, 5, 5, 5, 5]], np.float32)
    _, _, am = _run_row_stats(x)
    np.testing.assert_array_equal(am, [1, 0])


def test_sum_is_a_pairwise_tree() -> None:
    # In tree order (1e8 + 1) + (-1e8 + 1) loses both ones in fp32: 0. The
    # sequential order ((1e8 + 1) - 1e8) + 1 would give 1; the GPU uses a tree.
    x = np.array([[1e8, 1.0, -1e8, 1.0]], np.float32)
    s, _, _ = _run_row_stats(x)
    assert s[0] == 0.0


def test_column_sum_reduces_axis_0() -> None:
    x = np.random.default_rng(3).standard_normal((16, 8)).astype(np.float32)
    out = np.zeros(8, np.float32)
    _column_sum_kernel[(1,)](x, out, M=16, N=8, backend="emulator")
    np.testing.assert_allclose(out, x.sum(axis=0), rtol=1e-5, atol=1e-6)


def test_custom_combiner_sees_left_operands_first() -> None:
    x = np.array(
        [[0, 0, 7, 0, 3, 0, 0, 9], [0, 0, 0, 0, 0, 0, 0, 4], [2, 1, 0, 0, 0, 0, 0, 0]], np.float32
    )
    out = np.zeros(3, np.float32)
    _first_nonzero_kernel[(3,)](x, out, N=8, backend="emulator")
    np.testing.assert_array_equal(out, [7, 4, 2])


def _tree_sum(values: list[float]) -> np.float32:
    """Neighbours first, in fp32: ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7)), ..."""
    level = [np.float32(v) for v in values]
    while len(level) > 1:
        level = [np.float32(level[i] + level[i + 1]) for i in range(0, len(level), 2)]
    return level[0]


def _fold(values: list[float]) -> np.float32:
    total = np.float32(values[0])
    for v in values[1:]:
        total = np.float32(total + np.float32(v))
    return total


def test_sum_tree_order_with_cancellation() -> None:
    # Every order of these eight fp32 additions loses different small terms
    # next to 1e8: only neighbours first, level by level, gives 16.
    x = [5.0, 5.0, -1e8, 3.0, 1e8, 3.0, 1.0, 5.0]
    halves = [x[i] + x[i + 4] for i in range(4)]  # first half + second half
    others = {
        "left fold": _fold(x),
        "right fold": _fold(x[::-1]),
        "halves": _tree_sum([np.float32(h) for h in halves]),
    }
    expected = _tree_sum(x)
    assert expected == 16.0 and all(v != expected for v in others.values()), others
    s, _, _ = _run_row_stats(np.array([x, x[::-1]], np.float32))
    assert s[0] == expected, f"got {s[0]}; the other orders give {others}"
    assert s[1] == _tree_sum(x[::-1])
