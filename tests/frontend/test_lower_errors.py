"""Negative tests: each bad kernel gives one located diagnostic.

Every kernel marks the line the error points at with a ``# <-`` comment;
the tests assert that exact line, the column and the message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.diagnostics import CompileError, UnsupportedLanguageConstruct
from minitriton.frontend.lower import lower_kernel
from minitriton.frontend.source import ArgSpec
from minitriton.ir.types import parse_type

THIS = Path(__file__).resolve()
LINES = THIS.read_text(encoding="utf-8").splitlines()


def marked_line(tag: str) -> int:
    """The 1-based line holding the comment ``# <- tag``."""
    return next(i for i, text in enumerate(LINES, 1) if text.rstrip().endswith(f"# <- {tag}"))


def compile_error(fn: Any, *args: Any) -> CompileError:
    """Lower ``fn`` with a pointer, an i32 and then constexprs; return the error."""
    src = fn.source
    specs = []
    for name, arg in zip(src.param_names, args):
        if isinstance(arg, str):
            kind = "pointer" if arg.startswith("ptr") else "scalar"
            specs.append(ArgSpec(name, kind, parse_type(arg)))
        else:
            specs.append(ArgSpec(name, "constexpr", value=arg))
    with pytest.raises(CompileError) as info:
        lower_kernel(src, specs)
    return info.value


def check(err: CompileError, tag: str, col: int, message: str) -> None:
    d = err.first
    assert (d.loc.file, d.loc.line, d.loc.col) == (str(THIS), marked_line(tag), col)
    assert d.message == message


@triton.jit
def innermost(x):
    return x + no_such_value  # noqa: F821  # <- innermost


@triton.jit
def middle(x):
    return innermost(x) * 2  # <- middle


@triton.jit
def calls_through_two_helpers(p):
    x = tl.load(p + tl.arange(0, 16))
    # a comment line, counted as Triton counts the lines of a function
    tl.store(p + tl.arange(0, 16), middle(x))  # <- outer


def test_an_error_in_a_helper_shows_the_calls_that_reached_it() -> None:
    err = compile_error(calls_through_two_helpers, "ptr<i32>")
    check(err, "innermost", 16, "name 'no_such_value' is not defined")
    chain = [(d.severity, d.loc.line, d.message) for d in err.diagnostics]
    assert chain == [  # the innermost call first, as a compiler's "required from here"
        ("error", marked_line("innermost"), "name 'no_such_value' is not defined"),
        ("note", marked_line("middle"), "'innermost' is called here"),
        ("note", marked_line("outer"), "'middle' is called here"),
    ]
    # each caret says where it points as Triton does: line:column within its function
    where = [d.in_function() for d in err.diagnostics]
    assert where == [
        "at 2:15: in innermost",
        "at 2:11: in middle",
        "at 4:35: in calls_through_two_helpers",
    ]
    text = str(err)
    assert "    ^ at 4:35: in calls_through_two_helpers" in text.splitlines()[-1]
    # Triton chains the helper's own located error as the cause, and its message under it
    cause = err.cause()
    assert cause is not None and str(cause) == err.first.render()
    assert str(cause.__cause__) == "name 'no_such_value' is not defined"


def test_an_error_in_the_kernel_chains_its_message_alone() -> None:
    err = compile_error(shape_mismatch, "ptr<i32>")
    assert len(err.diagnostics) == 1 and err.first.in_function() == "at 4:8: in shape_mismatch"
    assert str(err.cause()) == "shapes [128] and [64] cannot be broadcast together"


@triton.jit
def arange_not_pow2(p):
    x = tl.arange(0, 100)  # <- arange
    tl.store(p + x, x)


def test_arange_not_power_of_two() -> None:
    err = compile_error(arange_not_pow2, "ptr<i32>")
    message = "tl.arange's length must be a power of 2, got 100 (tl.arange(0, 100))"
    check(err, "arange", 9, message)
    assert "tl.arange(0, triton.next_power_of_2(100)), i.e. tl.arange(0, 128)" in err.first.help
    assert "mask = offs < 100" in err.first.help


@triton.jit
def float_floordiv(p, BLOCK: tl.constexpr):
    x = tl.load(p + tl.arange(0, BLOCK))
    y = x // 2.0  # <- floordiv
    tl.store(p + tl.arange(0, BLOCK), y)


def test_float_floor_division() -> None:
    err = compile_error(float_floordiv, "ptr<f32>", 16)
    check(
        err,
        "floordiv",
        9,
        "floor division '//' is not supported on floating-point values (fp32 // fp32)",
    )


@triton.jit
def loop_type_change(p, n):
    acc = 0
    for i in range(n):
        acc += tl.load(p + i)  # <- loop
    tl.store(p, acc)


def test_loop_carried_type_change() -> None:
    err = compile_error(loop_type_change, "ptr<f32>", "i32")
    check(err, "loop", 9, "loop-carried variable 'acc' changes type from i32 to f32")


@triton.jit
def undefined_on_one_path(p, n):
    if n > 0:
        y = tl.load(p)
    tl.store(p, y)  # <- undef


def test_variable_undefined_on_one_path() -> None:
    err = compile_error(undefined_on_one_path, "ptr<f32>", "i32")
    if_line = marked_line("undef") - 2
    check(
        err,
        "undef",
        17,
        "variable 'y' is not defined on every path to this use: it is "
        f"assigned only in the then-branch of the if at line {if_line}",
    )


@triton.jit
def defined_in_one_branch_unused(p, n):
    if n > 0:
        y = tl.load(p)
        tl.store(p, y + 1)
    tl.store(p, 0.0)


def test_variable_in_one_branch_unused_after_is_fine() -> None:
    src = defined_in_one_branch_unused.source
    lower_kernel(
        src,
        [
            ArgSpec("p", "pointer", parse_type("ptr<f32>")),
            ArgSpec("n", "scalar", parse_type("i32")),
        ],
    )


@triton.jit
def unknown_function(p):
    x = tl.lod(p)  # <- unknown
    tl.store(p, x)


def test_unknown_tl_function() -> None:
    err = compile_error(unknown_function, "ptr<f32>")
    check(err, "unknown", 9, "unknown function 'tl.lod'")
    assert err.first.help == "did you mean 'tl.load'?"


@triton.jit
def misspelled_keyword(p):
    x = tl.load(p, maks=None)  # <- keyword
    tl.store(p, x)


def test_misspelled_keyword() -> None:
    err = compile_error(misspelled_keyword, "ptr<f32>")
    check(err, "keyword", 20, "tl.load() got an unexpected keyword argument 'maks'")
    assert err.first.help == "did you mean 'mask'?"


@triton.jit
def other_without_mask(p):
    x = tl.load(p, other=0.0)  # <- other
    tl.store(p, x)


def test_other_without_mask() -> None:
    err = compile_error(other_without_mask, "ptr<f32>")
    check(err, "other", 9, "`other` cannot be provided without `mask`")


@triton.jit
def pointer_indexing(p, i):
    x = p[i]  # <- index
    tl.store(p, x)


def test_pointer_indexing() -> None:
    err = compile_error(pointer_indexing, "ptr<f32>", "i32")
    d = err.first
    assert (d.loc.line, d.loc.col) == (marked_line("index"), 11)
    assert "a variable 'i'" in d.message
    assert "tl.load(p + i)" in (d.help or "")


@triton.jit
def failing_static_assert(p, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK >= 64, "BLOCK too small")  # <- static
    tl.store(p, 1.0)


def test_static_assert_failure() -> None:
    err = compile_error(failing_static_assert, "ptr<f32>", 32)
    check(err, "static", 5, "static_assert failed: BLOCK too small")


@triton.jit
def two_args(x, y):
    return x + y


@triton.jit
def wrong_helper_arity(p):
    z = two_args(1.0, 2.0, 3.0)  # <- arity
    tl.store(p, z)


def test_wrong_helper_arity() -> None:
    err = compile_error(wrong_helper_arity, "ptr<f32>")
    check(
        err,
        "arity",
        9,
        "wrong arguments for @jit function 'two_args': too many positional arguments",
    )


@triton.jit
def too_big_block(p):
    x = tl.zeros((2048, 1024), dtype=tl.float32)  # <- numel
    tl.store(p, tl.sum(x))


def test_block_too_big() -> None:
    err = compile_error(too_big_block, "ptr<f32>")
    check(err, "numel", 9, "block shape [2048, 1024] has 2097152 elements, more than 2^20")


@triton.jit
def early_return_in_loop(p, n):
    for i in range(n):
        if i > 3:
            return  # <- return
    tl.store(p, 1.0)


def test_early_return_in_loop() -> None:
    err = compile_error(early_return_in_loop, "ptr<f32>", "i32")
    message = "Cannot have `return` statements inside `while` or `for` statements in triton"
    check(err, "return", 13, message)


@triton.jit
def branch_type_mismatch(p, n):
    x = 0  # <- mismatch-before
    if n > 0:
        x = tl.load(p)
    tl.store(p, x)


def test_if_branches_with_different_types() -> None:
    err = compile_error(branch_type_mismatch, "ptr<f32>", "i32")
    d = err.first
    assert d.loc.line == marked_line("mismatch-before") + 1
    assert d.message == "variable 'x' has type f32 in the then-branch but i32 in the else-branch"


@triton.jit
def undefined_name(p):
    tl.store(p, undefined_thing)  # <- name  # noqa: F821


def test_undefined_name() -> None:
    err = compile_error(undefined_name, "ptr<f32>")
    assert err.first.message == "name 'undefined_thing' is not defined"


@triton.jit
def shape_mismatch(p):
    a = tl.arange(0, 128)
    b = tl.arange(0, 64)
    c = a + b  # <- shapes
    tl.store(p + a, c)


def test_shape_mismatch_exact_text() -> None:
    err = compile_error(shape_mismatch, "ptr<i32>")
    check(err, "shapes", 9, "shapes [128] and [64] cannot be broadcast together")
    line = marked_line("shapes")
    assert str(err) == (
        f"{THIS}:{line}:9: error: shapes [128] and [64] cannot be broadcast together\n"
        "        c = a + b  # <- shapes\n"
        "            ^ at 4:8: in shape_mismatch"  # Triton's way: line 4 of the function
    )


@triton.jit
def _step_helper(x):
    return x


@triton.jit
def function_as_range_step(p, n):
    for i in range(0, n, _step_helper):  # <- fnstep
        tl.store(p + i, 1.0)


def test_function_as_range_step_is_a_located_error() -> None:
    # A non-number step once reached a '<' comparison inside the lowering.
    err = compile_error(function_as_range_step, "ptr<f32>", "i32")
    d = err.first
    assert (d.loc.line, d.loc.col) == (marked_line("fnstep"), 14)
    assert d.message.startswith("range bounds must be integers")


@triton.jit
def dtype_of_a_number(p):
    t = tl.dtype(0)  # <- dtype-number
    tl.store(p, tl.zeros((1,), t))


@triton.jit
def dtype_by_name(p):
    tl.store(p + tl.arange(0, 2), tl.zeros((2,), tl.dtype("int32")) + 7)


def test_tl_dtype_needs_a_type_name() -> None:
    err = compile_error(dtype_of_a_number, "ptr<i32>")
    check(err, "dtype-number", 9, "tl.dtype() needs the name of a type, got int 0")
    assert len(err.diagnostics) == 1
    out = np.zeros(2, dtype=np.int32)
    dtype_by_name[(1,)](out, backend="emulator")
    np.testing.assert_array_equal(out, [7, 7])


@triton.jit
def negates_a_tuple(p):
    t = -(0, 0)  # <- unary
    tl.store(p, t[0])


@triton.jit
def adds_a_string(p):
    t = 0 + "a"  # <- binary
    tl.store(p, t)


def test_compile_time_operators_name_their_operands() -> None:
    unary = compile_error(negates_a_tuple, "ptr<i32>")
    check(unary, "unary", 9, "bad operand type for unary '-': tuple (0, 0)")
    binary = compile_error(adds_a_string, "ptr<i32>")
    check(binary, "binary", 9, "unsupported operand types for '+': int 0 and str 'a'")
    # Triton's code generator refuses the unary op itself: nothing is chained
    assert isinstance(unary, UnsupportedLanguageConstruct) and unary.cause() is None
    assert not isinstance(binary, UnsupportedLanguageConstruct) and binary.cause() is not None


def test_an_unsupported_construct_reaches_the_user_with_no_cause() -> None:
    with pytest.raises(triton.compiler.errors.UnsupportedLanguageConstruct) as info:
        negates_a_tuple[(1,)](np.zeros(1, np.int32), backend="emulator")
    assert info.value.__cause__ is None and "^ at 2:8: in negates_a_tuple" in str(info.value)
