"""Mistakes people make coming from NumPy or PyTorch get a located message that teaches.

Each kernel marks the line the error points at with a ``# <-`` comment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.diagnostics import CompileError

THIS = Path(__file__).resolve()
LINES = THIS.read_text(encoding="utf-8").splitlines()


def marked_line(tag: str) -> int:
    """The 1-based line holding the comment ``# <- tag``."""
    return next(i for i, text in enumerate(LINES, 1) if text.rstrip().endswith(f"# <- {tag}"))


def diagnostic(kernel: Any, *args: Any, **kwargs: Any) -> Any:
    with pytest.raises(CompileError) as info:
        kernel[(1,)](*args, backend="emulator", **kwargs)
    return info.value.first


X = np.arange(16, dtype=np.float32)


@triton.jit
def address_as_pointer(x_addr, n):
    offs = tl.arange(0, 16)
    tl.store(x_addr + offs, offs.to(tl.float32))  # <- int-pointer


def test_an_integer_address_is_not_a_pointer() -> None:
    d = diagnostic(address_as_pointer, X.ctypes.data, 16)
    assert d.loc.line == marked_line("int-pointer")
    assert d.message.startswith("pointer must be a pointer or a block of pointers, got")
    assert "not its address (x.data_ptr())" in d.help


@triton.jit
def shape_of_a_pointer(x_ptr):
    n = x_ptr.shape[0]  # <- shape
    tl.store(x_ptr, n)


def test_shape_of_a_pointer_argument() -> None:
    d = diagnostic(shape_of_a_pointer, X)
    assert (d.loc.line, d.loc.col) == (marked_line("shape"), 9)
    assert d.message.startswith("a pointer argument has no shape")
    assert "pass the sizes as arguments" in d.help


@triton.jit
def atomic_add_numpy_style(w_ptr, i, v):
    tl.atomic_add(w_ptr, i, v)  # <- atomic


def test_atomic_add_with_index_and_value() -> None:
    d = diagnostic(atomic_add_numpy_style, X, 3, 1.5)
    assert d.loc.line == marked_line("atomic")
    assert (
        d.message == "the third argument of tl.atomic_add is the mask, got a Python float (1.5)"
        or (d.message.startswith("the third argument of tl.atomic_add is the mask"))
    )
    assert d.help == "to update element i of w, offset the pointer: tl.atomic_add(w + i, v)"


@triton.jit
def atomic_add_pointer_as_mask(w_ptr, v_ptr):
    tl.atomic_add(w_ptr, 1.0, v_ptr)  # <- pointer-mask


def test_a_pointer_is_no_atomic_mask() -> None:
    d = diagnostic(atomic_add_pointer_as_mask, X, X)
    assert d.loc.line == marked_line("pointer-mask")
    assert d.message.startswith("the third argument of tl.atomic_add is the mask, got")


@triton.jit
def atomic_add_with_a_mask(w_ptr):
    offs = tl.arange(0, 16)
    tl.atomic_add(w_ptr + offs, 1.0, offs < 4)


def test_atomic_add_with_a_real_mask_still_works() -> None:
    w = np.zeros(16, dtype=np.float32)
    atomic_add_with_a_mask[(2,)](w, backend="emulator")
    np.testing.assert_array_equal(w, [2.0] * 4 + [0.0] * 12)


@triton.jit
def item_assignment(x_ptr):
    d = tl.load(x_ptr + tl.arange(0, 16))
    d[3] = 0.0  # <- setitem
    tl.store(x_ptr + tl.arange(0, 16), d)


@triton.jit
def item_augmented_assignment(x_ptr):
    d = tl.load(x_ptr + tl.arange(0, 16))
    d[3] += 1.0  # <- augitem
    tl.store(x_ptr + tl.arange(0, 16), d)


@pytest.mark.parametrize(
    ("kernel", "tag"), [(item_assignment, "setitem"), (item_augmented_assignment, "augitem")]
)
def test_item_assignment_to_a_block(kernel: Any, tag: str) -> None:
    d = diagnostic(kernel, X)
    assert (d.loc.line, d.loc.col) == (marked_line(tag), 5)
    assert d.message == "unsupported construct: assignment to a subscript"
    assert "tl.where(mask, new_values, x)" in d.help


@triton.jit
def mask_indexing(x_ptr, labels_ptr, out_ptr, c):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    labels = tl.load(labels_ptr + offs)
    tl.store(out_ptr, tl.sum(x[labels == c]))  # <- maskindex


def test_boolean_mask_indexing() -> None:
    labels = np.zeros(16, dtype=np.int32)
    d = diagnostic(mask_indexing, X, labels, X, 1)
    assert (d.loc.line, d.loc.col) == (marked_line("maskindex"), 32)
    assert d.message == "unsupported construct: indexing a block or pointer with a comparison"
    assert "a mask cannot select elements" in d.help
    assert "tl.sum(tl.where(m, x, 0))" in d.help
