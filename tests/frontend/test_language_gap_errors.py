"""Misuses of the newer language pieces get located messages, never internal errors.

``tl.pointer_type``, Python functions called in a kernel, the
``logical_and`` / ``logical_or`` methods and ``tl.assume``. Each kernel
marks the line the error points at with a ``# <-`` comment.
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
X = np.arange(16, dtype=np.float32)
TABLE = np.array([X.ctypes.data], np.int64)


def marked_line(tag: str) -> int:
    """The 1-based line holding the comment ``# <- tag``."""
    return next(i for i, text in enumerate(LINES, 1) if text.rstrip().endswith(f"# <- {tag}"))


def diagnostic(kernel: Any, *args: Any, **kwargs: Any) -> Any:
    with pytest.raises(CompileError) as info:
        kernel[(1,)](*args, backend="emulator", **kwargs)
    assert "internal" not in str(info.value)
    return info.value.first


class Scale:
    """A class: kernels have no objects of their own."""

    def __init__(self, factor: int) -> None:
        self.factor = factor


def halve(n: int) -> int:
    return n // 2


@triton.jit
def pointer_to_a_pointer(table_ptr):
    p = tl.load(table_ptr).to(tl.pointer_type(tl.pointer_type(tl.float32)))  # <- ptr-of-ptr
    tl.store(p, 1.0)


@triton.jit
def shared_address_space(table_ptr):
    p = tl.load(table_ptr).to(tl.pointer_type(tl.float32, 3))  # <- address-space
    tl.store(p, 1.0)


@triton.jit
def float_to_pointer(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    p = x.to(tl.pointer_type(tl.float32))  # <- float-pointer
    tl.store(p, x)


@triton.jit
def call_a_class(x_ptr):
    s = Scale(2)  # <- class
    tl.store(x_ptr, s.factor)


@triton.jit
def python_function_of_a_keyword_block(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(x_ptr + tl.arange(0, 16), halve(n=x))  # <- keyword


@triton.jit
def logical_and_of_two(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    m = (x > 0).logical_and(x < 4, x < 5)  # <- logical
    tl.store(x_ptr + tl.arange(0, 16), x, mask=m)


@triton.jit
def pointer_type_of_a_block(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(x_ptr, 1.0, mask=tl.pointer_type(x) is None)  # <- block


def test_pointer_to_a_pointer() -> None:
    d = diagnostic(pointer_to_a_pointer, TABLE)
    assert d.loc.line == marked_line("ptr-of-ptr")
    assert d.message.startswith("tl.pointer_type() needs a tl dtype, got the type")
    assert d.help == "write tl.pointer_type(tl.float16)"


def test_other_address_spaces() -> None:
    d = diagnostic(shared_address_space, TABLE)
    assert d.loc.line == marked_line("address-space")
    assert "only global memory (address_space=1) exists, got 3" in d.message


def test_float_block_to_pointer() -> None:
    d = diagnostic(float_to_pointer, X)
    assert d.loc.line == marked_line("float-pointer")
    assert d.message == "cannot cast tensor<16xf32> to pointer<fp32>"
    assert d.help == "only integers (addresses) cast to pointers, and pointers to integers"


def test_calling_a_class() -> None:
    d = diagnostic(call_a_class, X)
    assert d.loc.line == marked_line("class")
    assert d.message.startswith("a kernel cannot call the class 'Scale'")


def test_python_function_with_a_run_time_keyword() -> None:
    d = diagnostic(python_function_of_a_keyword_block, X)
    assert d.loc.line == marked_line("keyword")
    assert "the Python function 'halve' runs at compile time" in d.message
    assert "argument 'n' is a run-time tensor<16xf32>" in d.message


def test_logical_and_takes_one_argument() -> None:
    d = diagnostic(logical_and_of_two, X)
    assert d.loc.line == marked_line("logical")
    assert d.message == "logical_and() takes exactly one argument"


def test_pointer_type_of_a_block() -> None:
    d = diagnostic(pointer_type_of_a_block, X)
    assert d.loc.line == marked_line("block")
    assert d.message.startswith("tl.pointer_type() needs a tl dtype, got tensor<16xf32>")


@triton.jit
def pointer_type_compared(x_ptr, y_ptr):
    if x_ptr.dtype == tl.pointer_type(tl.float32):
        tl.store(y_ptr, 1)
    if x_ptr.dtype != tl.pointer_type(tl.float16):
        tl.store(y_ptr + 1, 2)
    ann: tl.pointer_type(tl.float32) = x_ptr + 3
    tl.store(y_ptr + 2, tl.load(ann).to(tl.int32))


def test_pointer_types_compare_and_annotate() -> None:
    y = np.zeros(3, np.int32)
    pointer_type_compared[(1,)](X, y)
    assert y.tolist() == [1, 2, 3]


@triton.jit
def pointer_to_int32(x_ptr, y_ptr):
    tl.store(y_ptr, x_ptr.to(tl.int32))  # <- ptr-int32


def test_pointer_to_int32() -> None:
    d = diagnostic(pointer_to_int32, X, np.zeros(1, np.int32))
    assert d.loc.line == marked_line("ptr-int32")
    assert d.message == (
        "cannot cast ptr<f32> to int32: a pointer casts to a 64-bit integer (or to int1)"
    )
    assert d.help == "cast to tl.int64, then to the type you need"


@triton.jit
def pointer_truth(x_ptr, y_ptr):
    tl.store(y_ptr, x_ptr.to(tl.int1).to(tl.int32))
    tl.store(y_ptr + 1, (x_ptr + 1).to(tl.uint64) - x_ptr.to(tl.uint64))


def test_pointer_to_int1_and_uint64() -> None:
    y = np.zeros(2, np.int32)
    pointer_truth[(1,)](X, y)
    assert y.tolist() == [1, 4]
