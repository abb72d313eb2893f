"""``tl.const`` pointers, with Triton's meaning.

* A parameter annotated ``tl.const`` is a pointer to read-only data: its type is
  ``tl.pointer_type(elem, const=True)`` (``ptr<f32, const>`` in the IR), and
  pointer arithmetic, loads, comparisons, selects, casts, loops and helper calls
  keep it; the kernels compute as with a plain pointer.
* ``tl.store`` and atomics through it are located errors in Triton's words
  ("Cannot store to a constant pointer").
* A const and a plain pointer are different types: a run-time ``if``, a
  conditional expression or a helper's returns that mix them fail with
  Triton's words; with a ``tl.constexpr`` condition nothing merges.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.diagnostics import CompileError
from minitriton.frontend.lower import lower_kernel
from minitriton.frontend.source import ArgSpec
from minitriton.ir.parser import parse_module
from minitriton.ir.printer import print_module
from minitriton.ir.types import F32, PointerType, parse_type
from minitriton.signature import Param, kernel_params, parse_signature

THIS = Path(__file__).resolve()
LINES = THIS.read_text(encoding="utf-8").splitlines()


def marked_line(tag: str) -> int:
    """The 1-based line holding the comment ``# <- tag``."""
    return next(i for i, text in enumerate(LINES, 1) if text.rstrip().endswith(f"# <- {tag}"))


# ---------------------------------------------------------------- the type


def test_pointer_type_takes_const() -> None:
    p = tl.pointer_type(tl.float32, const=True)
    assert p.const and p.is_const()
    assert not tl.pointer_type(tl.float32).is_const()
    assert p != tl.pointer_type(tl.float32)
    assert p.element_ty == tl.float32
    assert repr(p) == "const_pointer<fp32>"


@pytest.mark.parametrize("text", ["ptr<f32, const>", "tensor<128xptr<f16, const>>", "ptr<i8>"])
def test_type_text_round_trips(text: str) -> None:
    assert str(parse_type(text)) == text


def test_const_pointer_is_kept_in_the_ir_text_and_round_trips() -> None:
    src = const_in_loop_and_call.source
    specs = [
        ArgSpec("x_ptr", "pointer", PointerType(F32, const=True)),
        ArgSpec("y_ptr", "pointer", PointerType(F32)),
        ArgSpec("n", "scalar", parse_type("i32")),
        ArgSpec("BLOCK", "constexpr", value=16),
    ]
    text = print_module(lower_kernel(src, specs))
    assert "%x_ptr: ptr<f32, const>" in text
    assert "tensor<16xptr<f32, const>>" in text
    assert print_module(parse_module(text)) == text


def test_signature_star_k_is_a_const_pointer() -> None:
    specs = parse_signature("*kfp16, *fp16", [Param("a", False), Param("b", False)])
    assert specs[0].type == PointerType(parse_type("f16"), const=True)
    assert specs[1].type == PointerType(parse_type("f16"))
    assert tl.str_to_ty("*kfp32", None) == tl.pointer_type(tl.float32, const=True)


def test_annotation_marks_the_parameter_const() -> None:
    params = kernel_params(const_in_loop_and_call.fn)
    assert [p.is_const for p in params] == [True, False, False, False]
    signature = "*fp32, *fp32, i32, 16"
    specs = parse_signature(signature, params)
    assert specs[0].type == PointerType(F32, const=True)
    assert specs[1].type == PointerType(F32)


# ---------------------------------------------------------------- kernels that run


@triton.jit
def offset_by_one(p, q):
    return p + 1, q


@triton.jit
def const_in_loop_and_call(x_ptr: tl.const, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    src, _ = offset_by_one(x_ptr + offs - 1, y_ptr)
    acc = tl.zeros([BLOCK], tl.float32)
    for _i in range(3):
        acc += tl.load(src, mask=mask, other=0.0)
        src += 0
    tl.static_assert(x_ptr.dtype.const)
    tl.static_assert(x_ptr.dtype.is_const())
    tl.static_assert(not y_ptr.dtype.is_const())
    same = src == x_ptr + offs
    picked = tl.where(same, src, x_ptr + offs)
    acc += tl.load(picked, mask=mask, other=0.0)
    plain = (x_ptr + offs).to(tl.pointer_type(tl.float32))
    acc += tl.load(plain, mask=mask, other=0.0)
    tl.store(y_ptr + offs, acc, mask=mask)


def test_const_pointers_load_and_compute(backend: str) -> None:
    x = np.random.default_rng(0).standard_normal(16).astype(np.float32)
    y = np.zeros(16, np.float32)
    const_in_loop_and_call[(1,)](x, y, 13, BLOCK=16, backend=backend)
    want = np.zeros(16, np.float32)
    want[:13] = 5 * x[:13]
    np.testing.assert_allclose(y, want, rtol=1e-6)


@triton.jit
def pick_by_constexpr(x_ptr: tl.const, out, c_out: tl.const, CHOOSE_CONST: tl.constexpr):
    offs = tl.arange(0, 8)
    dst = c_out if CHOOSE_CONST else out
    tl.store(dst + offs, tl.load(x_ptr + offs) * 2)  # <- constexpr-store


def test_a_constexpr_condition_merges_nothing(backend: str) -> None:
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    pick_by_constexpr[(1,)](x, out, out, CHOOSE_CONST=False, backend=backend)
    np.testing.assert_array_equal(out, 2 * x)
    with pytest.raises(CompileError) as info:
        pick_by_constexpr[(1,)](x, out, out, CHOOSE_CONST=True, backend="emulator")
    d = info.value.first
    assert (d.loc.line, d.loc.col) == (marked_line("constexpr-store"), 5)
    assert "Cannot store to a constant pointer" in d.message


# ---------------------------------------------------------------- errors


@triton.jit
def stores_to_const(x_ptr: tl.const):
    offs = tl.arange(0, 8)
    tl.store(x_ptr + offs, 1.0)  # <- store


@triton.jit
def atomic_on_const(x_ptr: tl.const):
    tl.atomic_add(x_ptr, 1.0)  # <- atomic


@triton.jit
def cas_on_const(x_ptr: tl.const):
    tl.atomic_cas(x_ptr, 0.0, 1.0)  # <- cas


@triton.jit
def stores_through_cast(x_ptr):
    p = x_ptr.to(tl.pointer_type(tl.float32, const=True))
    tl.store(p, 1.0)  # <- cast-store


@pytest.mark.parametrize(
    "kernel, tag",
    [
        (stores_to_const, "store"),
        (atomic_on_const, "atomic"),
        (cas_on_const, "cas"),
        (stores_through_cast, "cast-store"),
    ],
)
def test_no_store_through_a_const_pointer(kernel: object, tag: str) -> None:
    x = np.zeros(8, np.float32)
    with pytest.raises(triton.CompilationError) as info:
        kernel[(1,)](x, backend="emulator")  # type: ignore[index]
    assert "Cannot store to a constant pointer" in info.value.error_message
    d = info.value.first
    assert (d.loc.file, d.loc.line, d.loc.col) == (str(THIS), marked_line(tag), 5)
    assert d.help is not None and "tl.const" in d.help


@triton.jit
def choose(a, b, choose_b):  # <- choose-def
    if choose_b:  # <- returns
        return b
    else:
        return a


@triton.jit
def merge_by_if(out, c_out: tl.const, flag):
    if flag:  # noqa: SIM108  # <- if
        final_out = c_out
    else:
        final_out = out
    tl.store(final_out, 1.0)


@triton.jit
def merge_by_ternary(out, c_out: tl.const, flag):
    final_out = c_out if flag else out  # <- ternary
    tl.store(final_out, 1.0)


@triton.jit
def merge_by_ternary_with_call(out, c_out: tl.const, flag):
    final_out = c_out + tl.program_id(0) if flag else out  # <- ternary-call
    tl.store(final_out, 1.0)


@triton.jit
def merge_by_call(out, c_out: tl.const, flag):
    final_out = choose(out, c_out, flag)
    tl.store(final_out, 1.0)


@pytest.mark.parametrize(
    "kernel, tag, col, words",
    [
        (merge_by_if, "if", 5, "Mismatched type for final_out"),
        (merge_by_ternary, "ternary", 17,
         "Ternary expression with dynamic condition has inconsistent type"),
        (merge_by_ternary_with_call, "ternary-call", 17,
         "Ternary expression with dynamic condition has inconsistent type"),
        (merge_by_call, "choose-def", 1, "Return type mismatch: "),  # at the def, as Triton
    ],
)  # fmt: skip
def test_const_and_plain_pointers_do_not_merge(
    kernel: object, tag: str, col: int, words: str
) -> None:
    out = np.zeros(1, np.float32)
    with pytest.raises(triton.CompilationError) as info:
        kernel[(1,)](out, out, 3, backend="emulator")  # type: ignore[index]
    assert words in info.value.error_message
    assert "ptr<f32, const>" in info.value.error_message
    d = info.value.first
    assert (d.loc.line, d.loc.col) == (marked_line(tag), col)


def test_a_return_type_mismatch_notes_the_if_whose_paths_differ() -> None:
    out = np.zeros(1, np.float32)
    with pytest.raises(triton.CompilationError) as info:
        merge_by_call[(1,)](out, out, 3, backend="emulator")  # type: ignore[index]
    error, at_if, called = info.value.diagnostics
    assert "at 1:0: in choose" in error.render()
    assert (at_if.severity, at_if.loc.line, at_if.loc.col) == ("note", marked_line("returns"), 5)
    assert at_if.message == "the two paths of this if return different types"
    assert called.message == "'choose' is called here"


def test_same_const_pointers_merge(backend: str) -> None:
    x = np.arange(4, dtype=np.float32)
    out = np.zeros(4, np.float32)
    merged_const[(1,)](x, x + 10, out, 3, backend=backend)
    np.testing.assert_array_equal(out, x + 10)


@triton.jit
def merged_const(a: tl.const, b: tl.const, out, flag):
    offs = tl.arange(0, 4)
    if flag > 1:  # noqa: SIM108 (a run-time if, not a select)
        src = b
    else:
        src = a
    picked = b + tl.program_id(0) if flag > 1 else a  # a conditional expression's scf.if
    tl.store(out + offs, tl.load(src + offs) + tl.load(picked + offs) - tl.load(b + offs))


# ---------------------------------------------------------------- Triton's test_const


@triton.jit(do_not_specialize=["choose_const"])
def const_template(in_ptr: tl.const, out, c_out: tl.const, choose_const, n_elems: tl.int32,
                   BLOCK_SIZE: tl.constexpr):  # fmt: skip
    offsets = tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elems
    val = tl.load(in_ptr + offsets, mask=mask)
    LOSE_TAIL  # noqa: F821, B018 - replaced before compiling
    tl.store(final_out + offsets, val, mask=mask)  # noqa: F821


@triton.jit
def const_template_constexpr(in_ptr: tl.const, out, c_out: tl.const, choose_const: tl.constexpr,
                             n_elems: tl.int32, BLOCK_SIZE: tl.constexpr):  # fmt: skip
    offsets = tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elems
    val = tl.load(in_ptr + offsets, mask=mask)
    LOSE_TAIL  # noqa: F821, B018 - replaced before compiling
    tl.store(final_out + offsets, val, mask=mask)  # noqa: F821


_TAILS = {
    "call": "final_out = choose(out, c_out, choose_const)",
    "ternary": "final_out = c_out if choose_const else out",
    "if": "\n    if choose_const:\n        final_out = c_out\n    else:\n        final_out = out\n",
}
_WORDS = {
    "call": "Return type mismatch: ",
    "if": "Mismatched type for final_out",
    "ternary": "Ternary expression with dynamic condition has inconsistent type",
}


@pytest.mark.parametrize("choose_const", [True, False])
@pytest.mark.parametrize("constexpr", [True, False])
@pytest.mark.parametrize("mode", ["direct", "call", "ternary", "if"])
def test_triton_const_cases(choose_const: bool, constexpr: bool, mode: str) -> None:
    """Triton's ``test_const``: each of its 16 cases fails or runs as in Triton."""
    template = const_template_constexpr if constexpr else const_template
    kernel = triton.JITFunction(template.fn)
    direct = "final_out = c_out" if choose_const else "final_out = out"
    kernel._unsafe_update_src(kernel.src.replace("LOSE_TAIL", _TAILS.get(mode, direct)))
    size = 128
    x = np.random.default_rng(1).standard_normal(size).astype(np.float32)
    out = np.zeros(size, np.float32)
    if (not constexpr and mode != "direct") or choose_const:
        with pytest.raises(triton.CompilationError) as info:
            kernel.warmup(x, out, out, choose_const, size, size, grid=(1,), backend="emulator")
        words = "Cannot store to a constant pointer" if constexpr else _WORDS.get(mode)
        words = words or "Cannot store to a constant pointer"
        assert words in (info.value.error_message or str(info.value.__cause__))
    else:
        kernel[(1,)](x, out, out, choose_const, size, size, backend="emulator")
        np.testing.assert_array_equal(out, x)
