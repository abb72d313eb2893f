"""What mixture-of-experts kernel libraries need: kernels generated from a template's text.

A library may compile a kernel per combination of fused functions by
rewriting a template kernel's source: it drops the specialized parameters
from the ``def`` line, binds them as ``tl.constexpr`` lines, compiles the
text with ``_unsafe_update_src``, and points the result's ``file_name`` and
``def_file_line_number`` back at the template so that errors are reported
there. It asks ``is_gluon()`` to pick between ``tl.`` and ``gl.``.
"""

from __future__ import annotations

import inspect
import types
from pathlib import Path

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.diagnostics import CompileError


def _placeholder() -> None:
    """The generated kernels' Python function: their text comes from ``_unsafe_update_src``."""


@triton.jit(
    repr=lambda _: "scale",
)
def _scale_template(out_ptr, x_ptr, SCALE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    tl.store(out_ptr + tl.arange(0, 4), x * SCALE)  # <- BODY


def _specialize(template: triton.JITFunction, scale: str) -> triton.JITFunction:
    """``template`` with ``SCALE`` bound to the expression ``scale``, as a generator writes it."""
    lang = "gl" if template.is_gluon() else "tl"
    body = template.src.splitlines(keepends=True)[1:]
    header = [
        "@triton.jit\n",
        "def scaled(out_ptr, x_ptr):\n",
        f"    SCALE: {lang}.constexpr = {scale}\n",
    ]
    fn = types.FunctionType(_placeholder.__code__, dict(globals()), "scaled")
    fn.__signature__ = inspect.signature(lambda out_ptr, x_ptr: None)  # type: ignore[attr-defined]
    kernel = triton.JITFunction(fn)
    kernel._unsafe_update_src("".join(header + body))
    # The generated text has one line more between its def and the body than the template.
    kernel.def_file_line_number = template.def_file_line_number - 1
    kernel.file_name = template.file_name
    return kernel


def _line_of(marker: str) -> int:
    lines = Path(__file__).read_text(encoding="utf-8").splitlines()
    return next(i for i, t in enumerate(lines, 1) if t.rstrip().endswith(marker))


def test_jit_functions_tell_where_their_text_is() -> None:
    k = _scale_template
    assert k.is_gluon() is False
    assert k.file_name == __file__
    assert k.starting_line_number == _line_of("# <- BODY") - 5  # the decorator's first line
    assert k.def_file_line_number == k.starting_line_number + 3
    assert k.def_file_col_number == 1
    assert k.raw_src[0].startswith("@triton.jit(")
    assert k.raw_src[3].startswith("def _scale_template")


def test_a_kernel_generated_from_a_template_runs() -> None:
    x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    _specialize(_scale_template, "3.0")[(1,)](out, x)
    np.testing.assert_array_equal(out, x * 3)


def test_a_generated_kernels_error_is_located_in_the_template() -> None:
    x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    kernel = _specialize(_scale_template, "None")
    with pytest.raises(CompileError) as info:
        kernel[(1,)](out, x)
    loc = info.value.first.loc
    assert (Path(loc.file).resolve(), loc.line) == (Path(__file__).resolve(), _line_of("# <- BODY"))


# -- a load's pointer, mask and other broadcast together -------------------------------------


@triton.jit
def _row_under_a_block_mask(out_ptr, x_ptr, fill_ptr):
    rows = tl.arange(0, 2)[:, None]
    cols = tl.arange(0, 4)[None, :]
    # One row of pointers under a 2x4 mask: a 2x4 block (the row read once per mask row).
    a = tl.load(x_ptr + cols, mask=(rows + cols) < 4, other=-1.0)
    # A column of pointers with a 2x4 `other`: a 2x4 block too.
    fill = tl.load(fill_ptr + rows * 4 + cols)
    b = tl.load(x_ptr + rows, mask=rows < 1, other=fill)
    tl.store(out_ptr + rows * 4 + cols, a * 10 + b)


def test_a_load_broadcasts_its_pointer_to_the_mask_and_other(backend: str) -> None:
    x = np.arange(4, dtype=np.float32) + 1
    fill = np.arange(8, dtype=np.float32).reshape(2, 4) + 100
    out = np.zeros((2, 4), np.float32)
    _row_under_a_block_mask[(1,)](out, x, fill, backend=backend)
    rows, cols = np.arange(2)[:, None], np.arange(4)[None, :]
    a = np.where(rows + cols < 4, x[cols], -1.0)
    b = np.where(rows < 1, x[rows], fill)
    np.testing.assert_array_equal(out, a * 10 + b)


# -- Python code run while compiling sees run-time values as Triton's ------------------------


@triton.constexpr_function
def _element_type(value):  # noqa: ANN001, ANN202 - a helper as libraries write it
    """A compile-time helper that looks at a run-time argument's type, as libraries write."""
    if isinstance(value, tl.tensor_descriptor):
        return value.dtype
    if isinstance(value, tl.tensor):
        return value.dtype.element_ty
    raise ValueError(f"not a tensor: {type(value)}")


@triton.jit
def _typed_by_a_helper(out_ptr, x_ptr):
    x_type: tl.constexpr = _element_type(x_ptr)
    desc = tl.make_tensor_descriptor(out_ptr, [4], [1], [4])
    out_type: tl.constexpr = _element_type(desc)
    x = tl.load(x_ptr + tl.arange(0, 4))
    tl.static_assert(x_type == tl.int32)
    desc.store([0], x.to(out_type) * 0.5)


def test_a_constexpr_function_reads_the_type_of_run_time_values() -> None:
    x, out = np.arange(4, dtype=np.int32), np.zeros(4, np.float32)
    _typed_by_a_helper[(1,)](out, x)
    np.testing.assert_array_equal(out, x * 0.5)
