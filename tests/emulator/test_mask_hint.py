"""An out-of-bounds access says which mask would have prevented it, from the kernel itself."""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator import EmulatorError


@triton.jit
def copy_n(x_ptr, out_ptr, stride, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x)


@triton.jit
def copy_plain(x_ptr, out_ptr, count, BLOCK: tl.constexpr):
    idx = tl.arange(0, BLOCK) - count
    tl.store(out_ptr + idx, tl.load(x_ptr + idx))


@triton.jit
def copy_masked(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n + 2)
    tl.store(out_ptr + offs, x, mask=offs < n)


@triton.jit
def copy_expression(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + tl.arange(0, BLOCK)))


def help_line(launch: object) -> str:
    with pytest.raises(EmulatorError) as caught:
        launch()  # type: ignore[operator]
    return str(caught.value).splitlines()[-1]


def test_the_bound_is_the_parameter_named_like_one() -> None:
    """``stride`` fits too (1 <= 100) but is no bound; ``n_elements`` is."""
    x, out = np.ones(100, np.float32), np.zeros(100, np.float32)
    line = help_line(lambda: copy_n[(1,)](x, out, 1, 100, BLOCK=128, backend="emulator"))
    assert line == "help: mask=offs < n_elements"


def test_a_bound_larger_than_the_array_is_not_suggested() -> None:
    x, out = np.ones(100, np.float32), np.zeros(100, np.float32)
    line = help_line(lambda: copy_n[(1,)](x, out, 1, 200, BLOCK=128, backend="emulator"))
    assert line == "help: mask=offs < N, N at most 100 (the length of 'x_ptr')"


def test_a_parameter_equal_to_the_length_is_a_bound_whatever_its_name() -> None:
    x, out = np.ones(64, np.float32), np.zeros(64, np.float32)
    line = help_line(lambda: copy_plain[(1,)](x, out, 0, BLOCK=128, backend="emulator"))
    assert line == "help: mask=idx < N, N at most 64 (the length of 'x_ptr')"
    x = np.ones(128, np.float32)
    line = help_line(lambda: copy_plain[(1,)](x, out, 64, BLOCK=128, backend="emulator"))
    assert line == "help: mask=idx >= 0"  # every offset out of bounds is below 0


def test_a_mask_that_does_not_cover_a_lane_says_which() -> None:
    x, out = np.ones(100, np.float32), np.zeros(100, np.float32)
    line = help_line(lambda: copy_masked[(1,)](x, out, 100, BLOCK=128, backend="emulator"))
    assert line == "help: the mask did not cover lane 100 (offset 100); use mask=offs < n"


def test_an_unnamed_offset_gets_a_generic_name() -> None:
    x, out = np.ones(100, np.float32), np.zeros(100, np.float32)
    line = help_line(lambda: copy_expression[(1,)](x, out, 100, BLOCK=128, backend="emulator"))
    assert line == "help: mask=offsets < n"


@triton.jit
def rows_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * in_row_stride + cols)
    tl.store(out_ptr + row * in_row_stride + cols, x, mask=cols < n_cols)


def test_the_mask_of_a_row_is_on_its_columns() -> None:
    """``cols`` is out of bounds from 6 on: ``n_cols`` (6) fits, the strides (8, 6) are no bound."""
    wide = np.zeros((4, 8), np.float32)
    out = np.zeros((4, 6), np.float32)
    x = wide[:, :6]
    launch = lambda: rows_kernel[(4,)](out, x, 8, 6, 6, BLOCK=8, backend="emulator")  # noqa: E731
    assert help_line(launch) == "help: mask=cols < n_cols"


def test_a_mask_over_an_offset_of_unknown_values_gets_no_suggestion() -> None:
    """The store's pointer uses the wrong stride: no mask is the fix, and none is suggested.

    (Its ``cols`` is gone by then, freed after its last use, so only the
    pointer's offsets are known.)
    """
    wide = np.zeros((4, 8), np.float32)  # every load in bounds
    out = np.zeros((4, 6), np.float32)
    launch = lambda: rows_kernel[(4,)](out, wide, 8, 6, 6, BLOCK=8, backend="emulator")  # noqa: E731
    assert help_line(launch) == (
        "help: the mask did not cover lane 0 (offset 24; 'out_ptr' has 24 elements)"
    )
