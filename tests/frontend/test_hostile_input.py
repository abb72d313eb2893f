"""Hostile input: every class of mistake that once reached MiniTriton's internals.

Each test compiles a small kernel written to a file (some are too long to
write inline) and asserts the located diagnostic, or that the kernel now
compiles. None of the messages may show a Python repr of the compiler's
objects or Python's own exception text.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from minitriton.compiler import compile_kernel
from minitriton.diagnostics import CompileError
from minitriton.frontend.lower import UNROLL_BUDGET
from minitriton.passes import rewriting

HEADER = "import minitriton as triton\nimport minitriton.language as tl\n\n\n@triton.jit\n"
PARAMS = "x_ptr, y_ptr, n, BLOCK: tl.constexpr"
_COUNT = itertools.count()


def kernel(tmp_path: Path, body: str, params: str = PARAMS) -> Any:
    """A @jit kernel ``k(params)`` with ``body``, defined in its own file."""
    path = tmp_path / f"hostile_{next(_COUNT)}.py"
    path.write_text(HEADER + f"def k({params}):\n" + textwrap.indent(textwrap.dedent(body), "    "))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.k


def compile_body(
    tmp_path: Path, body: str, x: Any = None, y: Any = None, stop_after: str = "ir-opt"
) -> Any:
    """Compile ``body`` for (x: *fp32, y: *i32, n: i32, BLOCK=16) unless told otherwise."""
    k = kernel(tmp_path, body)
    x = np.zeros(16, np.float32) if x is None else x
    y = np.zeros(16, np.int32) if y is None else y
    specs = k.specialize(k.bind((x, y, 16), {"BLOCK": 16}))
    return compile_kernel(k.source, specs, stop_after=stop_after)


def diagnostic(tmp_path: Path, body: str, **kwargs: Any) -> str:
    """The first diagnostic's message for ``body`` (it must not compile)."""
    with pytest.raises(CompileError) as info:
        compile_body(tmp_path, body, **kwargs)
    text = str(info.value)
    assert_no_internals(text)
    return info.value.first.message


LEAKS = ("<function", " at 0x", "Tensor(", "PyBuiltin(", "Error:", "internal compiler error")


def assert_no_internals(text: str) -> None:
    """No Python repr of our objects, no Python exception text."""
    for leak in LEAKS:
        assert leak not in text, text


# ---------------------------------------------------------------- long chains


def test_a_chain_of_a_thousand_terms_compiles(tmp_path: Path) -> None:
    chain = " + ".join(["x"] * 1000)
    body = (
        f"offs = tl.arange(0, BLOCK)\nx = tl.load(x_ptr + offs)\ntl.store(x_ptr + offs, {chain})\n"
    )
    compiled = compile_body(tmp_path, body)
    assert compiled.asm["ast"].count("right: Name id='x'") == 999
    assert compiled.asm["ir-opt"].count("arith.add(") == 999


def test_cse_of_a_long_chain_does_not_walk_the_function_per_replacement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    original = rewriting.replace_all_uses
    monkeypatch.setattr(rewriting, "replace_all_uses", lambda *a: calls.append(1) or original(*a))
    chain = " < ".join(["x"] * 300)
    body = (
        f"offs = tl.arange(0, BLOCK)\nx = tl.load(x_ptr + offs)\ntl.store(y_ptr + offs, {chain})\n"
    )
    compiled = compile_body(tmp_path, body)
    assert compiled.asm["ir-opt"].count("arith.cmp(") == 1  # 299 equal comparisons, one kept
    assert calls == []


# ---------------------------------------------------------------- range bounds


@pytest.mark.parametrize("fn", ["range", "tl.static_range", "tl.range"])
@pytest.mark.parametrize(
    ("bound", "message"),
    [
        ("'a'", "range bounds must be integers, got str 'a'"),
        ("1.5", "range bounds must be integers, got float 1.5"),
        ("10**30", "a range bound does not fit in 64 bits"),
    ],
)
def test_bad_range_bounds(tmp_path: Path, fn: str, bound: str, message: str) -> None:
    assert diagnostic(tmp_path, f"for i in {fn}({bound}):\n    pass\n") == message


@pytest.mark.parametrize("fn", ["tl.static_range", "tl.range"])
def test_a_tl_range_without_an_end(tmp_path: Path, fn: str) -> None:
    message = diagnostic(tmp_path, f"for i in {fn}(None):\n    pass\n")
    assert message == f"{fn}() needs an end bound, got None"


def test_python_range_of_none(tmp_path: Path) -> None:
    message = diagnostic(tmp_path, "for i in range(None):\n    pass\n")
    assert message == "range bounds must be integers, got None"


# ---------------------------------------------------------------- other= and stored constants

LOAD_INT = "offs = tl.arange(0, BLOCK)\nv = tl.load(y_ptr + offs, mask=offs < n, other={})\n"
LOAD_INT += "tl.store(y_ptr + offs, v)\n"
LOAD_X = LOAD_INT.replace("y_ptr", "x_ptr")


@pytest.mark.parametrize(
    ("other", "message"),
    [
        ("float('-inf')", "other=float('-inf') is not a value of the integer type int32"),
        ("float('nan')", "other=float('nan') is not a value of the integer type int32"),
        ("10**400", "other=an integer of 401 digits does not fit in int32"),
        ("2**32", "other=4294967296 does not fit in int32 (-2147483648 to 2147483647)"),
    ],
)
def test_other_that_an_int_pointer_cannot_hold(tmp_path: Path, other: str, message: str) -> None:
    assert diagnostic(tmp_path, LOAD_INT.format(other)).startswith(message)


def test_an_int32_other_may_be_a_32_bit_pattern(tmp_path: Path) -> None:
    """As in Triton, 2**31 .. 2**32 - 1 are uint32 literals, cast to int32: their bits."""
    k = kernel(tmp_path, LOAD_INT.format("0xFFFFFFFF"))
    y = np.arange(16, dtype=np.int32)
    k[(1,)](np.zeros(16, np.float32), y, 8, BLOCK=16)
    np.testing.assert_array_equal(y, np.where(np.arange(16) < 8, np.arange(16), -1))


def test_other_that_fp16_cannot_hold(tmp_path: Path) -> None:
    message = diagnostic(tmp_path, LOAD_X.format("1048576"), x=np.zeros(16, np.float16))
    assert message == "other=1048576 does not fit in fp16 (largest finite value 65504)"


@pytest.mark.parametrize("other", ["float('-inf')", "float('nan')", "65504", "-1"])
def test_other_that_fits_compiles(tmp_path: Path, other: str) -> None:
    compile_body(tmp_path, LOAD_X.format(other), x=np.zeros(16, np.float16))


def test_fp16_constants_past_the_range_compile_to_infinity(tmp_path: Path) -> None:
    """A Python float scalar takes an fp16 block's type (rule 3), as in Triton: it overflows."""
    body = (
        "offs = tl.arange(0, BLOCK)\nx = tl.load(x_ptr + offs)\ntl.store(x_ptr + offs, x * 1e10)\n"
    )
    compiled = compile_body(tmp_path, body, x=np.zeros(16, np.float16), stop_after="ptx")
    assert re.search(r"fmul .*half %[^,]+, 0xH7C00", compiled.asm["llir"])  # times +inf


# ---------------------------------------------------------------- pointers, names, shapes


@pytest.mark.parametrize("fn", ["tl.max", "tl.min", "tl.sum", "tl.argmax", "tl.cumsum"])
def test_reductions_over_pointer_blocks(tmp_path: Path, fn: str) -> None:
    message = diagnostic(tmp_path, f"offs = tl.arange(0, BLOCK)\nv = {fn}(x_ptr + offs, 0)\n")
    assert message == "input must be a block of values, not of pointers (tensor<16xptr<f32>>)"


@pytest.mark.parametrize("name", ["TypeVar", "Any", "Callable", "F", "BUILTINS", "builtin"])
def test_tl_exposes_only_the_public_surface(tmp_path: Path, name: str) -> None:
    assert diagnostic(tmp_path, f"v = tl.{name}\n") == f"unknown function 'tl.{name}'"


def test_tl_public_names_still_resolve(tmp_path: Path) -> None:
    body = "v = tl.zeros((BLOCK,), tl.float32) + tl.constexpr(1)\n"
    body += "tl.store(x_ptr + tl.arange(0, BLOCK), v)\n"
    compile_body(tmp_path, body)


@pytest.mark.parametrize(
    "body",
    [
        "a = tl.arange(0, 1048576)\nb = a[:, None] + a[None, :]\n",
        "a = tl.arange(0, 2048)\nb = a[:, None] * tl.arange(0, 1024)[None, :]\n",
    ],
)
def test_broadcasting_past_two_to_the_twenty_elements(tmp_path: Path, body: str) -> None:
    message = diagnostic(tmp_path, body)
    assert "a block has at most 2^20 (1048576)" in message


def test_columns_past_65535_compile_to_ptx(tmp_path: Path) -> None:
    body = "offs = tl.arange(0, BLOCK)\nx = (" + " " * 70000 + "tl.load(x_ptr + offs) + 1.0)\n"
    body += "tl.store(x_ptr + offs, x)\n"
    compiled = compile_body(tmp_path, body, stop_after="ptx")
    assert ".loc" in compiled.asm["ptx"]


# ---------------------------------------------------------------- no reprs in messages


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("tl.dot", "the function tl.dot"),
        ("range", "the Python builtin 'range'"),
        ("tl", "the module 'tl'"),
        ("triton", "the module 'minitriton'"),
        ("tl.float32.to", None),
    ],
)
def test_messages_name_objects_in_kernel_terms(tmp_path: Path, value: str, shown: str) -> None:
    message = diagnostic(tmp_path, f"tl.store(x_ptr, {value})\n")
    if shown is not None:
        assert shown in message


def test_an_internal_error_says_it_is_a_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from minitriton.frontend import builtins

    def broken(*args: Any) -> None:
        raise ZeroDivisionError("division by zero in our own code")

    monkeypatch.setitem(builtins.IMPLS, "program_id", broken)
    with pytest.raises(CompileError) as info:
        compile_body(tmp_path, "pid = tl.program_id(0)\n")
    d = info.value.first
    assert d.message.endswith("this is a bug in MiniTriton, please report it")
    assert d.loc.line == 7 and d.loc.file.endswith(".py")
    assert "division by zero in our own code" not in str(info.value)


# ---------------------------------------------------------------- bounded growth


@pytest.mark.parametrize(
    "loop",
    [
        "for i in tl.static_range(0, 10**18):\n    pass\n",
        "for i in tl.static_range(2**63):\n    pass\n",
        "for i in tl.static_range(64):\n    for j in tl.static_range(65):\n        v = i + j\n",
    ],
)
def test_static_range_has_an_unrolling_budget(tmp_path: Path, loop: str) -> None:
    message = diagnostic(tmp_path, loop)
    assert message.startswith("tl.static_range unrolls too much: this loop of ")
    assert message.endswith(f"past {UNROLL_BUDGET} unrolled statements")


def test_static_range_within_the_budget_unrolls(tmp_path: Path) -> None:
    body = "acc = tl.zeros((BLOCK,), tl.float32)\nfor i in tl.static_range(64):\n"
    body += "    for j in tl.static_range(32):\n        acc += 1.0\n"
    body += "tl.store(x_ptr + tl.arange(0, BLOCK), acc)\n"
    compiled = compile_body(tmp_path, body)
    assert "2048.0" in compiled.asm["ir-opt"]  # folded: 64 * 32 additions of 1.0


def test_canonicalize_and_the_printer_are_linear(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    original = rewriting.replace_all_uses
    monkeypatch.setattr(rewriting, "replace_all_uses", lambda *a: calls.append(1) or original(*a))
    body = "acc = tl.zeros((BLOCK,), tl.float32)\nfor i in tl.static_range(500):\n    acc += 1.0\n"
    body += "tl.store(x_ptr + tl.arange(0, BLOCK), acc)\n"
    compiled = compile_body(tmp_path, body)
    assert "500.0" in compiled.asm["ir-opt"]
    assert "%acc_499 " in compiled.asm["ir"]
    assert calls == []
