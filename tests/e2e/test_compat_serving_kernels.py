"""Constructs of LLM-serving kernels (paged KV copies, grid-stride loops), against NumPy.

Serving libraries write persistent copy kernels as a grid-stride loop over
tokens, ``for i in range(pid, n, num_programs)``. Python's ``range`` in a
kernel takes its bounds by position only: Triton's compiler drops a keyword
such as ``step=`` (the loop then steps by 1) and its interpreter refuses it,
so MiniTriton refuses it with a located error that names the spelling to use.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.diagnostics import CompileError


@triton.jit
def grid_stride_copy(src, dst, n_rows, width: tl.constexpr, BLOCK: tl.constexpr):
    """Copy rows ``i, i + G, i + 2G, ...`` in program ``i`` of ``G``, by positional step."""
    offs = tl.arange(0, BLOCK)
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(src + row * width + offs, mask=offs < width, other=0.0)
        tl.store(dst + row * width + offs, x * 2.0, mask=offs < width)


@triton.jit
def grid_stride_copy_tl_range(src, dst, n_rows, width: tl.constexpr, BLOCK: tl.constexpr):
    """The same loop spelled ``tl.range(..., step=...)``, which takes keywords."""
    offs = tl.arange(0, BLOCK)
    for row in tl.range(tl.program_id(0), n_rows, step=tl.num_programs(0), num_stages=2):
        x = tl.load(src + row * width + offs, mask=offs < width, other=0.0)
        tl.store(dst + row * width + offs, x * 2.0, mask=offs < width)


@triton.jit
def range_with_step_keyword(src, dst, n_rows, width: tl.constexpr):
    offs = tl.arange(0, width)
    for row in range(tl.program_id(0), n_rows, step=tl.num_programs(0)):
        tl.store(dst + row * width + offs, tl.load(src + row * width + offs))


@triton.jit
def range_with_num_stages(src, dst, n_rows, width: tl.constexpr):
    offs = tl.arange(0, width)
    for row in range(n_rows, num_stages=3):
        tl.store(dst + row * width + offs, tl.load(src + row * width + offs))


@triton.jit
def range_with_four_bounds(src, dst, n_rows, width: tl.constexpr):
    offs = tl.arange(0, width)
    for row in range(0, n_rows, 1, 1):
        tl.store(dst + row * width + offs, tl.load(src + row * width + offs))


@pytest.mark.parametrize("kernel", [grid_stride_copy, grid_stride_copy_tl_range])
def test_a_grid_stride_loop_visits_every_row_once(kernel, rng: np.random.Generator) -> None:
    src = rng.standard_normal((11, 24)).astype(np.float32)
    dst = np.full_like(src, -1.0)
    kernel[(3,)](src, dst, 11, 24, 32, backend="emulator")
    np.testing.assert_array_equal(dst, src * 2.0)


def _compile_error(kernel) -> CompileError:
    src = np.zeros((4, 8), np.float32)
    with pytest.raises(CompileError) as info:
        kernel[(2,)](src, np.zeros_like(src), 4, 8, backend="emulator")
    return info.value


def test_range_step_keyword_is_refused_at_the_keyword() -> None:
    d = _compile_error(range_with_step_keyword).first
    assert d.message == "range() takes no keyword arguments, got step="
    assert d.loc.line == range_with_step_keyword.fn.__code__.co_firstlineno + 3
    assert d.help.startswith("pass the step by position: range(start, end, step)")
    assert "silently drop" in d.help


def test_range_hint_keyword_points_to_tl_range() -> None:
    d = _compile_error(range_with_num_stages).first
    assert d.message == "range() takes no keyword arguments, got num_stages="
    assert d.help.startswith("use tl.range")


def test_range_with_four_bounds_says_how_many_it_got() -> None:
    d = _compile_error(range_with_four_bounds).first
    assert d.message == "range() takes 1 to 3 positional arguments, got 4"
    assert "range(start, end, step)" in d.help
