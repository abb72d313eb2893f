"""Triton's type names of ``tl``: ``tl.void``, ``tl.slice``, ``tl.str_to_ty`` and
``tl.tensor_descriptor_type``, on the host and in kernels (run on the emulator, checked
against NumPy), and the located errors where a kernel misuses them."""

from __future__ import annotations

import copy
import pickle
from collections import namedtuple
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.diagnostics import CompileError
from minitriton.tools.tensor_descriptor import TensorDescriptor

LINES = Path(__file__).read_text(encoding="utf-8").splitlines()
X = np.linspace(-3.0, 3.0, 16, dtype=np.float32)


def marked_line(tag: str) -> int:
    """The 1-based line holding the comment ``# <- tag``."""
    return next(i for i, text in enumerate(LINES, 1) if text.rstrip().endswith(f"# <- {tag}"))


def diagnostic(kernel: Any, *args: Any) -> Any:
    with pytest.raises(CompileError) as info:
        kernel[(1,)](*args, backend="emulator")
    assert "internal" not in str(info.value)
    return info.value.first


# ---------------------------------------------------------------- tl.void


def test_void_is_the_type_of_no_value() -> None:
    assert repr(tl.void) == "void" and tl.void.name == "void"
    assert tl.void.is_void() and tl.void.primitive_bitwidth == 0
    assert not tl.void.is_int() and not tl.void.is_floating() and not tl.void.is_ptr()
    assert not tl.float32.is_void() and tl.void != tl.float32
    assert pickle.loads(pickle.dumps(tl.void)) is tl.void and copy.deepcopy(tl.void) is tl.void


@triton.jit
def _store_scaled(p, x, scale) -> tl.void:
    tl.store(p, x * scale)


@triton.jit
def void_helper(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.static_assert(tl.void.is_void() and not tl.float16.is_void())
    _store_scaled(y_ptr + offs, tl.load(x_ptr + offs), 3.0)


def test_void_return_annotation() -> None:
    y = np.zeros_like(X)
    void_helper[(1,)](X, y, 16, backend="emulator")
    np.testing.assert_array_equal(y, X * 3)


@triton.jit
def void_as_element_type(x_ptr):
    tl.store(x_ptr + tl.arange(0, 4), tl.zeros([4], tl.void))  # <- void-dtype


def test_void_is_no_element_type() -> None:
    d = diagnostic(void_as_element_type, X)
    assert d.loc.line == marked_line("void-dtype")
    assert d.message == (
        "dtype must be a tl dtype such as tl.float32, "
        "got tl.void (the type of no value, not an element type)"
    )


# ---------------------------------------------------------------- tl.str_to_ty

Named = namedtuple("Named", ["ptr", "n"])


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("fp32", tl.float32),
        ("bf16", tl.bfloat16),
        ("fp8e4nv", tl.float8e4nv),
        ("i1", tl.int1),
        ("u1", tl.int1),
        ("B", tl.int1),
        ("i64", tl.int64),
        ("u8", tl.uint8),
        ("*fp16", tl.pointer_type(tl.float16)),
        ("*kfp32", tl.pointer_type(tl.float32, const=True)),  # Triton's read-only pointer
        ("*i8", tl.pointer_type(tl.int8)),
    ],
)
def test_str_to_ty_names(name: str, expected: Any) -> None:
    assert tl.str_to_ty(name, None) == expected


def test_str_to_ty_tuples_and_constexpr() -> None:
    assert tl.str_to_ty("constexpr", 8) == tl.constexpr_type(8)
    pair = tl.str_to_ty(("*fp32", "i32"), None)
    assert pair == tl.tuple_type([tl.pointer_type(tl.float32), tl.int32])
    named = tl.str_to_ty(Named("*fp16", "i64"), None)
    assert named.fields == ["ptr", "n"] and named.types == [tl.pointer_type(tl.float16), tl.int64]


def test_str_to_ty_descriptor() -> None:
    ty = tl.str_to_ty("tensordesc<fp16[16, 32]>", None)
    assert isinstance(ty, tl.tensor_descriptor_type)
    assert ty.block_type.shape == (16, 32) and ty.block_type.element == tl.float16
    assert ty.shape_type == tl.tuple_type([tl.int32, tl.int32])
    assert ty.strides_type == tl.tuple_type([tl.int64, tl.int64])
    assert str(ty) == "tensor_descriptor<tensor<16x32xf16>>"
    assert ty == tl.str_to_ty("tensordesc<fp16[16,32]>", None)
    assert ty != tl.str_to_ty("tensordesc<fp16[32, 16]>", None)


def test_str_to_ty_refusals() -> None:
    with pytest.raises(KeyError, match="unknown type name 'void'"):
        tl.str_to_ty("void", None)
    with pytest.raises(ValueError, match="Gluon shared-memory layout"):
        tl.str_to_ty("tensordesc<fp16[64, 64],NVMMASharedLayout(128, False, 16)>", None)


@triton.constexpr_function
def _pointee(signature):
    return tl.str_to_ty(signature, None).element_ty


@triton.jit
def cast_to_signature_type(x_ptr, y_ptr, N: tl.constexpr, SIG: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs).to(_pointee(SIG))
    tl.static_assert(tl.str_to_ty("i64") == tl.int64)
    tl.store(y_ptr + offs, x.to(tl.float32))


def test_str_to_ty_in_a_kernel() -> None:
    x = np.linspace(-3.0, 3.0, 16, dtype=np.float32) / 7
    y = np.zeros_like(x)
    cast_to_signature_type[(1,)](x, y, 16, "*fp16", backend="emulator")
    np.testing.assert_array_equal(y, x.astype(np.float16).astype(np.float32))
    assert not np.array_equal(y, x)  # the cast did round


@triton.jit
def str_to_ty_of_unknown(x_ptr):
    tl.store(x_ptr, tl.zeros([1], tl.str_to_ty("fp33")))  # <- unknown


def test_str_to_ty_error_in_a_kernel_is_located() -> None:
    d = diagnostic(str_to_ty_of_unknown, X)
    assert d.loc.line == marked_line("unknown")
    assert "unknown type name 'fp33'" in d.message


# ---------------------------------------------------------------- tl.tensor_descriptor_type


@triton.jit
def descriptor_types(desc, y_ptr, N: tl.constexpr):
    local = tl.make_tensor_descriptor(y_ptr, [N], [1], [N])
    tl.static_assert(isinstance(desc.type, tl.tensor_descriptor_type))
    tl.static_assert(desc.type == tl.str_to_ty("tensordesc<fp32[16]>"))
    tl.static_assert(local.type == desc.type)
    tl.static_assert(local.type.block_type.shape[0] == N)
    local.store([0], desc.load([0]) + 1)


def test_descriptor_type_in_a_kernel() -> None:
    y = np.zeros_like(X)
    descriptor_types[(1,)](TensorDescriptor.from_tensor(X, [16]), y, 16, backend="emulator")
    np.testing.assert_array_equal(y, X + 1)


# ---------------------------------------------------------------- tl.slice


def test_slice_values() -> None:
    s = tl.slice(1, None, 2)
    assert (s.start, s.stop, s.step) == (1, None, 2) and s.type == tl.core.slice_type()
    assert isinstance(s, tl.slice) and isinstance(slice(0, 4), tl.slice)
    assert not isinstance((0, 4), tl.slice)


@triton.constexpr_function
def _every_other(n, s):
    return sum(range(n)[s.start : s.stop : s.step]) if isinstance(s, tl.slice) else -1


@triton.aggregate
class Row:
    x: tl.tensor

    @triton.jit
    def __getitem__(self, key):
        if isinstance(key, tl.slice):
            return self.x * 2
        return self.x


@triton.jit
def slices(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    total: tl.constexpr = _every_other(N, tl.slice(1, None, 2))
    row = Row(tl.load(x_ptr + offs))
    tl.store(y_ptr + offs, row[:] + row[0] + total)


def test_slice_in_a_kernel() -> None:
    y = np.zeros_like(X)
    slices[(1,)](X, y, 16, backend="emulator")
    np.testing.assert_array_equal(y, X * 3 + sum(range(1, 16, 2)))


# ---------------------------------------------------------------- the rest of the surface


def test_triton_names_are_there() -> None:
    for name in ("void", "slice", "str_to_ty", "tensor_descriptor_type", "target_info"):
        assert getattr(tl, name) is not None
    assert tl.core.tensor_descriptor_base_type is not None
    for name in ("flip", "interleave", "ravel", "squeeze", "swizzle2d", "topk", "unsqueeze"):
        assert getattr(tl.standard, name) is getattr(tl, name)
    assert tl.core.is_builtin(tl.load) and not tl.core.is_builtin(len)
