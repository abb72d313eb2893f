"""Fuzzing the whole frontend (parser + lowering) with mutated kernels.

The property: every input either compiles to verified IR or raises our
diagnostic type, CompileError, located in the kernel's file. No other
exception may escape: a user must never see a traceback from MiniTriton's
internals. Mutations are semantic as well as textual: swapped names,
operators, numbers, dtypes and builtins, so most mutants still parse and
exercise the type checker, promotion and control-flow checks.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_lower_kernels import CASES, kernel_source, load_kernel_module, specs

from minitriton.diagnostics import CompileError
from minitriton.frontend.lower import lower_kernel
from minitriton.ir import verify_module

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: The long run, ``pytest -m heavy`` (its own CI step).
LONG = settings(SETTINGS, max_examples=3000)

_SOURCES = {}
for _name, (_file, _fn, _args) in sorted(CASES.items()):
    _src = kernel_source(load_kernel_module(_file), _fn)
    _SOURCES[_name] = (_src, specs(_src, _args))

OPERATORS = ["+", "-", "*", "/", "//", "%", "<", "<=", "==", "!=", "&", "|", "^", "<<", ">>"]
NUMBERS = ["0", "1", "-1", "3", "16", "100", "0.5", "1e-5", "2**31", "True", "None", "'s'"]
BUILTINS = ["tl.load", "tl.store", "tl.sum", "tl.max", "tl.dot", "tl.where", "tl.exp"]
BUILTINS += ["tl.arange", "tl.zeros", "tl.program_id", "tl.cumsum", "tl.sort", "tl.atomic_add"]
DTYPES = ["tl.float16", "tl.float32", "tl.int8", "tl.int64", "tl.uint32", "tl.bfloat16"]
IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
OP = re.compile(r"(?<=\s)(\+|-|\*|/|//|%|<|<=|==|!=|&|\||\^|<<|>>)(?=\s)")
NUM = re.compile(r"(?<![A-Za-z_0-9.])\d+(\.\d*)?(e-?\d+)?")
CALL = re.compile(r"\btl\.[a-z_0-9]+")
DTYPE = re.compile(r"\btl\.(float|int|uint|bfloat)\d+")


def _sub_one(draw: st.DrawFn, pattern: re.Pattern[str], text: str, choices: list[str]) -> str:
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    m = draw(st.sampled_from(matches))
    return text[: m.start()] + draw(st.sampled_from(choices)) + text[m.end() :]


def _swap_name(draw: st.DrawFn, text: str) -> str:
    names = sorted(set(IDENT.findall(text)))
    return _sub_one(draw, IDENT, text, names)


def _swap_operator(draw: st.DrawFn, text: str) -> str:
    return _sub_one(draw, OP, text, OPERATORS)


def _swap_number(draw: st.DrawFn, text: str) -> str:
    return _sub_one(draw, NUM, text, NUMBERS)


def _swap_builtin(draw: st.DrawFn, text: str) -> str:
    return _sub_one(draw, CALL, text, BUILTINS)


def _swap_dtype(draw: st.DrawFn, text: str) -> str:
    return _sub_one(draw, DTYPE, text, DTYPES)


def _drop_line(draw: st.DrawFn, text: str) -> str:
    lines = text.split("\n")
    i = draw(st.integers(2, max(len(lines) - 2, 2)))
    return "\n".join(lines[:i] + lines[i + 1 :])


def _drop_char(draw: st.DrawFn, text: str) -> str:
    i = draw(st.integers(0, len(text) - 1))
    return text[:i] + text[i + 1 :]


MUTATIONS = [_swap_name, _swap_operator, _swap_number, _swap_builtin, _swap_dtype, _drop_line]
MUTATIONS += [_drop_char]


@st.composite
def mutant(draw: st.DrawFn) -> tuple[str, str]:
    """A (kernel name, mutated source) pair."""
    name = draw(st.sampled_from(sorted(_SOURCES)))
    text = _SOURCES[name][0].source
    for _ in range(draw(st.integers(1, 3))):
        text = draw(st.sampled_from(MUTATIONS))(draw, text)
    return name, text


def compile_or_diagnose(name: str, text: str) -> None:
    """The property under test."""
    src, args = _SOURCES[name]
    try:
        module = lower_kernel(replace(src, source=text), args)
    except CompileError as err:
        loc = err.first.loc
        assert loc.file == src.filename and loc.line >= 1 and loc.col >= 1, err
        assert "internal compiler error" not in str(err), str(err)
        return
    verify_module(module)


@SETTINGS
@given(mutant())
def test_mutated_kernels_compile_or_fail_with_a_diagnostic(case: tuple[str, str]) -> None:
    compile_or_diagnose(*case)


@pytest.mark.heavy
@LONG
@given(mutant())
def test_many_mutated_kernels_compile_or_fail_with_a_diagnostic(case: tuple[str, str]) -> None:
    compile_or_diagnose(*case)


def test_unmutated_kernels_compile() -> None:
    for name, (src, _) in _SOURCES.items():
        compile_or_diagnose(name, src.source)
