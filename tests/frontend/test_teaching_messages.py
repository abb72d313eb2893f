"""Mistakes people make coming from NumPy or PyTorch get a located message that teaches.

Each kernel marks the line the error points at with a ``# <-`` comment.
"""

from __future__ import annotations

import math
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


@triton.jit
def math_on_a_block(x_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, math.exp(x))  # <- math-exp


@triton.jit
def math_on_a_scalar(x_ptr, i):
    v = tl.load(x_ptr + i)
    tl.store(x_ptr + i, math.log10(v + 1.0))  # <- math-log10


@triton.jit
def math_without_a_tl_twin(x_ptr):
    offs = tl.arange(0, 16)
    tl.store(x_ptr + offs, math.factorial(tl.load(x_ptr + offs)))  # <- math-none


@pytest.mark.parametrize(
    ("kernel", "tag", "args", "col", "name", "help_"),
    [
        (math_on_a_block, "math-exp", (X,), 28, "exp", "write tl.exp(x), "),
        (math_on_a_scalar, "math-log10", (X, 3), 25, "log10", "write tl.math.log10(v + 1.0), "),
        (math_without_a_tl_twin, "math-none", (X,), 28, "factorial", "tl has no math.factorial"),
    ],
)
def test_python_math_on_a_run_time_value(
    kernel: Any, tag: str, args: tuple, col: int, name: str, help_: str
) -> None:
    d = diagnostic(kernel, *args)
    assert (d.loc.line, d.loc.col) == (marked_line(tag), col)
    assert d.message.startswith(f"math.{name} runs at compile time on Python numbers, but its ")
    assert d.help.startswith(help_)


@triton.jit
def math_on_constants(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, 16)
    scale = math.sqrt(N) + math.log2(N)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * scale)


def test_python_math_on_compile_time_values_still_runs_at_compile_time() -> None:
    x = X.copy()
    math_on_constants[(1,)](x, 16, backend="emulator")
    np.testing.assert_allclose(x, X * 8.0)


@triton.jit
def if_on_a_block(x_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    if x > 0:  # <- if-block
        x = x * 2
    tl.store(x_ptr + offs, x)


@triton.jit
def while_on_a_block(x_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    while x > 0:  # <- while-block
        x = x - 3
    tl.store(x_ptr + offs, x)


def test_if_on_a_block_suggests_where() -> None:
    d = diagnostic(if_on_a_block, X)
    assert (d.loc.line, d.loc.col) == (marked_line("if-block"), 8)
    assert d.message == (
        "the condition of if must be a scalar, got a block (tensor<16xi1>): "
        "it has one truth value per element"
    )
    assert d.help.startswith("choose per element with tl.where(x > 0, a, b)")


def test_while_on_a_block_suggests_a_reduced_condition() -> None:
    d = diagnostic(while_on_a_block, X)
    assert (d.loc.line, d.loc.col) == (marked_line("while-block"), 11)
    assert d.message.startswith("the condition of while must be a scalar, got a block")
    assert "while tl.max((x > 0).to(tl.int32)) > 0:" in d.help
    assert "tl.where(x > 0, new, old)" in d.help


@triton.jit
def conditional_expression_on_a_block(x_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, x * 2 if x > 0 else -x)  # <- ifexp-block


def test_a_conditional_expression_on_a_block_suggests_where() -> None:
    d = diagnostic(conditional_expression_on_a_block, X)
    assert (d.loc.line, d.loc.col) == (marked_line("ifexp-block"), 37)
    assert d.message.startswith("a conditional expression needs a scalar condition")
    assert d.help == "choose per element with tl.where(x > 0, x * 2, -x)"


@triton.jit
def while_as_the_help_says(x_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    while tl.max((x > 0).to(tl.int32)) > 0:
        x = tl.where(x > 0, x - 3, x)
    tl.store(x_ptr + offs, tl.where(x > 0, x * 2, x))


def test_the_code_the_condition_helps_suggest_compiles_and_runs() -> None:
    x = X.copy()
    while_as_the_help_says[(1,)](x, backend="emulator")
    expected = X.copy()
    while (expected > 0).any():
        expected = np.where(expected > 0, expected - 3, expected)
    np.testing.assert_array_equal(x, expected)


@triton.jit
def arange_of_100(x_ptr):
    offs = tl.arange(0, 100)  # <- arange-100
    tl.store(x_ptr + offs, 1.0)


@triton.jit
def arange_from_8(x_ptr):
    offs = tl.arange(8, 20)  # <- arange-8
    tl.store(x_ptr + offs, 1.0)


def test_arange_of_a_length_that_is_no_power_of_two() -> None:
    d = diagnostic(arange_of_100, X)
    assert (d.loc.line, d.loc.col) == (marked_line("arange-100"), 12)
    assert d.message == "tl.arange's length must be a power of 2, got 100 (tl.arange(0, 100))"
    assert d.help == (
        "use tl.arange(0, triton.next_power_of_2(100)), i.e. tl.arange(0, 128), and mask the "
        "28 extra lanes: offs = tl.arange(0, 128); mask = offs < 100; "
        "tl.load(ptr + offs, mask=mask)"
    )
    d = diagnostic(arange_from_8, X)
    assert d.message == "tl.arange's length must be a power of 2, got 12 (tl.arange(8, 20))"
    assert d.help.startswith("use tl.arange(8, 8 + 16), i.e. tl.arange(8, 24), and mask the 4 ")
    assert "mask = offs < 20" in d.help


@triton.jit
def arange_as_the_help_says(x_ptr):
    offs = tl.arange(0, triton.next_power_of_2(100))
    mask = offs < 100
    tl.store(x_ptr + offs, 1.0, mask=mask)


def test_the_arange_help_compiles_and_masks() -> None:
    x = np.zeros(128, dtype=np.float32)
    arange_as_the_help_says[(1,)](x, backend="emulator")
    np.testing.assert_array_equal(x, [1.0] * 100 + [0.0] * 28)


@triton.jit
def assert_on_a_merged_value(x_ptr, limit):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    a = x + 1.0
    b = x + 1.0  # CSE merges it into a: one SSA value for two variables
    tl.device_assert(a > -1.0, "a is positive")
    tl.device_assert(b < limit, "b is below the limit")  # <- assert-b


def test_a_failed_assert_names_the_variable_it_compares_not_its_cse_twin() -> None:
    with pytest.raises(Exception) as info:
        assert_on_a_merged_value[(1,)](X, 4.0, backend="emulator", debug=True)
    text = str(info.value)
    assert f":{marked_line('assert-b')}:5: error: device assertion failed: b is below" in text
    assert "lhs (b): 4.0, 5.0, 6.0, ..." in text
    assert "rhs: 4.0, 4.0, 4.0, ..." in text  # a splat of limit: no variable of its own
    assert "(a)" not in text


def test_the_gpu_debug_mode_names_the_compared_variables_alike() -> None:
    from minitriton.compiler import CompileOptions, compile_kernel
    from minitriton.signature import spec_for_value

    kernel = assert_on_a_merged_value
    specs = [spec_for_value(p.name, v, p.is_constexpr) for p, v in zip(kernel.params, [X, 4.0])]
    options = CompileOptions(debug=True, arch="sm_90a")
    compiled = compile_kernel(kernel.source, specs, options, stop_after="ptx")
    sites = [s for s in compiled.binary.checks.sites if s.kind == "assert"]
    assert [s.message for s in sites] == ["a is positive", "b is below the limit"]
    assert [[name for _, name, _ in s.sides] for s in sites] == [["a", ""], ["b", ""]]


@triton.jit
def sgd_with_four_mistakes(w_ptr, grad_ptr, lr, n):
    size = w_ptr.shape[0]  # <- sgd-1
    offs = tl.arange(0, 16)
    g = tl.load(grad_ptr + offs, mask=offs < n, other=0.0)
    norm = math.sqrt(tl.sum(g * g))  # <- sgd-2
    if g > 1.0:  # <- sgd-3
        g = tl.minimum(g, 1.0)
    tl.atomic_add(w_ptr, offs, -lr)  # <- sgd-4
    tl.store(w_ptr + offs, lr / norm + size)  # uses size and norm: no error of its own


def test_the_sgd_kernel_reports_its_four_mistakes_in_one_error() -> None:
    with pytest.raises(CompileError) as info:
        sgd_with_four_mistakes[(1,)](X, X, 0.1, 16, backend="emulator")
    found = [(d.loc.file, d.loc.line, d.loc.col) for d in info.value.diagnostics]
    lines = [marked_line(f"sgd-{i}") for i in (1, 2, 3, 4)]
    assert found == [(str(THIS), line, col) for line, col in zip(lines, (12, 12, 8, 5))]
    messages = [d.message for d in info.value.diagnostics]
    assert messages[0].startswith("a pointer argument has no shape")
    assert messages[1].startswith("math.sqrt runs at compile time on Python numbers")
    assert messages[2].startswith("the condition of if must be a scalar")
    assert messages[3].startswith("the third argument of tl.atomic_add is the mask")
    text = str(info.value)  # every one rendered: location, source line, caret, help
    assert text.count(": error: ") == 4 and text.count("\nhelp: ") == 4


@triton.jit
def broken_helper(x):
    y = x * tl.sum(x, dim=0)  # <- helper-keyword
    return x + undefined_in_helper + y  # noqa: F821  # <- helper-undefined


@triton.jit
def independent_mistakes(x_ptr, n):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = x * scale  # noqa: F821  # <- undefined
    z = tl.sum(x, dim=0)  # <- keyword
    for _ in range(4):
        w = x + (1, 2)  # <- types
        tl.store(x_ptr + offs, w + y + z)
    u = broken_helper(x)  # <- helper-call-1
    v = broken_helper(x)
    tl.store(x_ptr + offs, u + v + z)


def test_independent_mistakes_are_reported_together_each_once() -> None:
    with pytest.raises(CompileError) as info:
        independent_mistakes[(1,)](X, 16, backend="emulator")
    found = [(d.loc.line, d.message) for d in info.value.diagnostics]
    # each error in the helper is followed by a note at the (first) call that reached it
    called = (marked_line("helper-call-1"), "'broken_helper' is called here")
    assert found == [
        (marked_line("undefined"), "name 'scale' is not defined"),
        (marked_line("keyword"), "tl.sum() got an unexpected keyword argument 'dim'"),
        (marked_line("types"), found[2][1]),
        (marked_line("helper-keyword"), "tl.sum() got an unexpected keyword argument 'dim'"),
        called,
        (marked_line("helper-undefined"), "name 'undefined_in_helper' is not defined"),
        called,
    ]
    assert found[2][1] == "cannot use tuple (1, 2) in an arithmetic expression"
    severities = [d.severity for d in info.value.diagnostics]
    assert severities == ["error"] * 4 + ["note", "error", "note"]


@triton.jit
def one_mistake(x_ptr):
    offs = tl.arange(0, 16)
    y = tl.load(x_ptr + offs) * scale  # noqa: F821  # <- only
    tl.store(x_ptr + offs, y)
    tl.store(x_ptr + offs, y + 1.0)


def test_a_single_mistake_is_a_single_diagnostic() -> None:
    with pytest.raises(CompileError) as info:
        one_mistake[(1,)](X, backend="emulator")
    assert [(d.loc.line, d.message) for d in info.value.diagnostics] == [
        (marked_line("only"), "name 'scale' is not defined")
    ]


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("(a + b) * c", "(a + b) * c"),
        ("a * b + c", "a * b + c"),
        ("a - (b - c)", "a - (b - c)"),
        ("(-x) ** 2", "(-x) ** 2"),
        ("-x ** 2", "-(x ** 2)"),
        ("(a < b) + 1", "(a < b) + 1"),
        ("tl.sum(g * g, 0)", "tl.sum(g * g, 0)"),
        ("a if c else b", "cond"),  # too complex for an example: the placeholder
    ],
)
def test_helps_quote_expressions_with_the_parentheses_they_need(written: str, shown: str) -> None:
    from minitriton.frontend.lower import _source_text
    from minitriton.frontend.parser import parse_expression

    assert _source_text(parse_expression(written, "<test>"), "cond") == shown
