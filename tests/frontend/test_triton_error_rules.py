"""Triton's compile-time rules and the shape of its errors, as tests written for Triton read them.

* A GPU compile reads only compile-time globals (``tl.constexpr`` values,
  modules, ``@jit`` functions, dtypes), as Triton's compiler; the emulator reads
  any, as Triton's interpreter; ``TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1`` lifts it.
  The help fits what the global holds: a value, a class or a function.
* ``triton.compile`` chains the error's message as ``__cause__`` in Triton's
  words (``str(err.__cause__)``), as a launch does; a failed
  ``static_assert`` chains nothing.
* A ``tl.constexpr`` parameter named in ``do_not_specialize`` is refused.
* A ``constexpr_function`` that raises is reported with its own error at the call;
  one that computes with a run-time value is told to be a ``@jit`` function.
* ``tl.histogram`` takes 32-bit integers; ``tl.where`` on a non-boolean
  condition warns.
"""

from __future__ import annotations

import collections
import warnings
from pathlib import Path

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.compiler.aot import ASTSource
from minitriton.diagnostics import CompileError, CompileTimeAssertionFailure

LINES = Path(__file__).read_text(encoding="utf-8").splitlines()

PLAIN = 42
ANNOTATED: tl.constexpr = 42
CONSTANT = tl.constexpr(42)
PTR_I32 = tl.pointer_type(tl.int32)
Pair = collections.namedtuple("Pair", ["a", "b"])


def marked_line(tag: str) -> int:
    """The 1-based line holding the comment ``# <- tag``."""
    return next(i for i, text in enumerate(LINES, 1) if text.rstrip().endswith(f"# <- {tag}"))


@triton.jit
def reads_plain(out_ptr):
    tl.store(out_ptr, PLAIN)  # <- plain


@triton.jit
def reads_annotated(out_ptr):
    tl.store(out_ptr, ANNOTATED)  # <- annotated


class Bounds:  # a plain class: Triton's compiler reads only aggregates and named tuples
    LOW = 3


def doubled(x):  # a plain Python function: neither @triton.jit nor @constexpr_function
    return x * 2


@triton.jit
def reads_class(out_ptr):
    tl.store(out_ptr, Bounds.LOW)  # <- class


@triton.jit
def calls_plain_function(out_ptr):
    tl.store(out_ptr, doubled(3))  # <- function


@triton.jit
def reads_constants(out_ptr):
    p = Pair(CONSTANT, 1)
    tl.static_assert(tl.pointer_type(tl.int32) == PTR_I32)
    tl.store(out_ptr, p.a + p.b + triton.cdiv(7, 2))


@triton.constexpr_function
def checked(block, x):  # checks a compile-time value, passes a run-time one through
    if block % 16:
        raise ValueError(f"a block of {block} is not a multiple of 16")
    return x


@triton.constexpr_function
def scaled(block, x):  # computes with a run-time value: only a @jit function can
    return x * block


@triton.jit
def calls_checked(out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr, checked(BLOCK, tl.load(out_ptr)) + 1)  # <- checked


@triton.jit
def calls_scaled(out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr, scaled(BLOCK, tl.load(out_ptr)))  # <- scaled


def run(kernel, **kw):
    out = np.zeros(1, np.int32)
    kernel[(1,)](out, backend="emulator", **kw)
    return int(out[0])


def compile_for_gpu(kernel) -> None:
    """Triton's compiler path (down to PTX, no GPU needed), as a GPU launch compiles."""
    triton.compile(ASTSource(fn=kernel, signature={"out_ptr": "*i32"}, constexprs={}))


def test_a_gpu_compile_refuses_a_plain_global_where_it_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", raising=False)
    for kernel, tag in ((reads_plain, "plain"), (reads_annotated, "annotated")):
        with pytest.raises(CompileError) as info:
            compile_for_gpu(kernel)
        d = info.value.first
        assert d.loc.line == marked_line(tag)
        assert "Cannot access global variable" in d.message
        assert d.help is not None and "= tl.constexpr(42)" in d.help
        # Triton's own sentence is the cause, as tests written for Triton read it.
        assert "envvar TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1" in str(info.value.__cause__)


@pytest.mark.parametrize(
    ("kernel", "tag", "kind", "fix"),
    [
        (reads_plain, "plain", "int", "make it a constant: PLAIN = tl.constexpr(42), or pass it "
         "as a parameter"),
        (reads_class, "class", "class", "decorate the class Bounds with @triton.aggregate, or "
         "make it a named tuple: class Bounds(typing.NamedTuple)"),
        (calls_plain_function, "function", "function", "decorate doubled with @triton.jit (a "
         "device function) or with @triton.constexpr_function (a function of compile-time "
         "values)"),
    ],
)  # fmt: skip
def test_the_help_fits_the_kind_of_global(
    monkeypatch: pytest.MonkeyPatch, kernel, tag: str, kind: str, fix: str
) -> None:
    monkeypatch.delenv("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", raising=False)
    with pytest.raises(CompileError) as info:
        compile_for_gpu(kernel)
    d = info.value.first
    assert d.loc.line == marked_line(tag)
    assert d.message.endswith(f" is a {kind}")
    assert d.help == f"{fix} (TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1 lifts the rule, as in Triton)"


def test_the_emulator_reads_plain_globals_as_tritons_interpreter_does() -> None:
    assert run(reads_plain) == 42 and run(reads_annotated) == 42


def test_constexpr_values_modules_dtypes_and_named_tuples_are_read_everywhere() -> None:
    assert run(reads_constants) == 42 + 1 + 4
    compile_for_gpu(reads_constants)


def test_a_closure_variable_follows_the_same_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", raising=False)
    block = 7
    fixed = tl.constexpr(9)

    @triton.jit
    def reads_closure(out_ptr):
        tl.store(out_ptr, block)

    @triton.jit
    def reads_constexpr_closure(out_ptr):
        tl.store(out_ptr, fixed)

    with pytest.raises(CompileError, match="Cannot access global variable block"):
        compile_for_gpu(reads_closure)
    compile_for_gpu(reads_constexpr_closure)
    assert run(reads_closure) == 7 and run(reads_constexpr_closure) == 9


def test_the_switch_lifts_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", "1")
    compile_for_gpu(reads_plain)
    monkeypatch.delenv("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS")
    from minitriton import knobs

    with knobs.compilation.scope():
        knobs.compilation.allow_non_constexpr_globals = True
        compile_for_gpu(reads_annotated)
    with pytest.raises(CompileError):
        compile_for_gpu(reads_annotated)  # the knob is back to False


@triton.jit
def reads_plain_in_a_helper(out_ptr):
    reads_plain(out_ptr)


def test_a_kernel_reading_a_refused_global_has_its_own_gpu_cache_entry() -> None:
    # The emulator's compile must not hand its IR to a GPU launch, which refuses it.
    from minitriton import ircache
    from minitriton.compiler import CompileOptions

    specs = ASTSource(fn=reads_plain, signature={"out_ptr": "*i32"}).arg_specs()
    options = CompileOptions()
    plain = [ircache.entry_key(reads_plain.source, specs, options, gpu=g) for g in (0, 1)]
    fine = [ircache.entry_key(reads_constants.source, specs, options, gpu=g) for g in (0, 1)]
    assert plain[0] != plain[1] and fine[0] == fine[1]
    # A helper's refused global counts too (the key's own walk finds the helper).
    helper = [ircache.entry_key(reads_plain_in_a_helper.source, specs, options, gpu=g)
              for g in (0, 1)]  # fmt: skip
    assert helper[0] != helper[1] and helper[1].endswith("-gpu")


@triton.jit
def short_arange():
    tl.arange(2, 7)


@triton.jit
def odd_full():
    tl.full((33,), 0, dtype=tl.int64)


@triton.jit
def failing_static_assert():
    tl.static_assert(1 == 2)


@triton.jit
def histogram_of(x_ptr, z_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    tl.store(z_ptr + tl.arange(0, N), tl.histogram(x, N))  # <- histogram


def compile_error(kernel, signature=None, constexprs=None) -> CompileError:
    with pytest.raises(CompileError) as info:
        triton.compile(ASTSource(fn=kernel, signature=signature or {}, constexprs=constexprs or {}))
    return info.value


def test_triton_compile_chains_the_message_in_tritons_words() -> None:
    err = compile_error(short_arange)
    assert str(err.__cause__) == "arange's range must be a power of 2"
    assert "tl.arange's length must be a power of 2, got 5" in err.first.message
    err = compile_error(odd_full)
    assert str(err.__cause__) == "Shape element 0 must be a power of 2"
    err = compile_error(failing_static_assert)
    assert isinstance(err, CompileTimeAssertionFailure) and err.__cause__ is None


def test_a_constexpr_function_reports_its_own_error_at_the_call() -> None:
    assert run(calls_checked, BLOCK=32) == 1  # the run-time value passes through
    with pytest.raises(CompileError) as info:
        run(calls_checked, BLOCK=24)
    d = info.value.first
    assert d.loc.line == marked_line("checked")
    assert d.message == (
        "calling the Python function 'checked' at compile time failed: "
        "ValueError: a block of 24 is not a multiple of 16"
    )


def test_a_constexpr_function_computing_with_a_run_time_value_is_told_so() -> None:
    with pytest.raises(CompileError) as info:
        run(calls_scaled, BLOCK=32)
    d = info.value.first
    assert d.loc.line == marked_line("scaled")
    assert "its arguments must be compile-time values, but argument 2 ('x') is a run-time" in (
        d.message
    )
    assert d.help == "decorate 'scaled' with @triton.jit to call it on run-time values"


@pytest.mark.parametrize("ptr", ["*i8", "*i16", "*i64"])
def test_histogram_takes_32_bit_integers(ptr: str) -> None:
    sig = {"x_ptr": ptr, "z_ptr": "*i32", "N": "constexpr"}
    err = compile_error(histogram_of, sig, {"N": 4})
    assert err.first.loc.line == marked_line("histogram")
    assert "histogram only supports 32-bit integer input" in str(err.__cause__)
    assert err.first.help == "cast first: tl.histogram(x.to(tl.int32), num_bins)"


def test_histogram_of_int32_still_counts() -> None:
    x = np.array([0, 1, 1, 3, 3, 3, 2, 0], np.int32)
    z = np.zeros(4, np.int32)
    histogram_of[(1,)](x, z, N=4, backend="emulator")
    np.testing.assert_array_equal(z, np.bincount(x, minlength=4))


def test_a_constexpr_parameter_cannot_be_left_unspecialized() -> None:
    @triton.jit(do_not_specialize=["N"])
    def kernel(N: tl.constexpr):
        pass

    message = "N marked as constexpr and listed in do_not_specialize"
    err = compile_error(kernel, {}, {"N": 5})
    assert message in err.first.message
    with pytest.raises(CompileError, match=message):
        kernel[(1,)](5, backend="emulator")


@triton.jit
def where_on(c_ptr, out_ptr):
    offs = tl.arange(0, 8)
    c = tl.load(c_ptr + offs)
    tl.store(out_ptr + offs, tl.where(c, 1.0, 2.0))


def test_where_on_a_non_boolean_condition_warns_and_still_tests_non_zero() -> None:
    c = np.array([0, 3, 0, 2**32 - 1, 0, 0, 7, 0], np.uint32)
    out = np.zeros(8, np.float32)
    with pytest.warns(UserWarning, match="non-boolean condition is deprecated.*Got uint32"):
        where_on[(1,)](c, out, backend="emulator")
    np.testing.assert_array_equal(out, np.where(c != 0, 1.0, 2.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a boolean condition: no warning
        where_on[(1,)](c != 0, out, backend="emulator")
    np.testing.assert_array_equal(out, np.where(c != 0, 1.0, 2.0))


@triton.jit
def shape_as_list(x_ptr, B: tl.constexpr):
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    dims = list(x.shape) + [2]
    tl.static_assert(len(dims) == 2)
    tl.store(x_ptr + offs, x + dims[0] * dims[1])


def test_list_is_one_of_tritons_builtins() -> None:
    x = np.arange(8, dtype=np.float32)
    shape_as_list[(1,)](x, 8, backend="emulator")
    np.testing.assert_array_equal(x, np.arange(8) + 16)
