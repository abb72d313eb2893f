"""Fuzzing the parser with random and mutated kernel sources.

Two properties:

1. Every input either parses or raises CompileError, never any other
   exception (no traceback from our internals can reach a user).
2. Python's own parser is the oracle: whatever we accept, Python accepts
   too, with the same structure. (We may reject more: that is the subset.)
"""

from __future__ import annotations

import ast as pyast
import contextlib
import keyword
import warnings

import pytest
from frontend_helpers import (
    all_kernel_functions,
    dedent_like_parser,
    python_function,
    without_decorators,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minitriton.diagnostics import CompileError
from minitriton.frontend import ast, dump, parse_expression, parse_function

SOURCES = [fn.source for fn in all_kernel_functions()]
KEYWORDS = [*keyword.kwlist, "tl", "range", "None", "lambda x: x", "f'{x}'", "*", "**"]
# ASCII only: Python normalizes Unicode identifiers (NFKC), which we do not model.
CHARS = "()[]{}:;,.=+-*/%<>!&|^~@#\\'\"\n\t 0123456789abcxyz_eEjJ"
SETTINGS = settings(
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: The long run, ``pytest -m heavy`` (its own CI step).
LONG = settings(SETTINGS, max_examples=4000)


def check(source: str) -> ast.FunctionDef | None:
    """Property 1: parse, or fail with a CompileError."""
    try:
        return parse_function(source, "fuzz.py", first_line=1)
    except CompileError as err:
        assert err.diagnostics and err.first.loc.line >= 1 and err.first.loc.col >= 1
        return None


def check_against_python(source: str) -> None:
    """Property 2: accepted sources are Python with the same AST."""
    ours = check(source)
    if ours is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences warn
        try:
            pyast.parse(dedent_like_parser(source))
        except SyntaxError:
            # Only a decorator we kept as text (it holds a lambda or the like)
            # may hide an error: decorators are checked by Python at import.
            assert any(d.expr is None for d in ours.decorators)
            return
        expected = python_function(source)
    assert dump(without_decorators(ours)) == dump(expected)


# -- mutations of real kernels -----------------------------------------------


@st.composite
def mutated_kernel(draw: st.DrawFn) -> str:
    """A tutorial kernel with a few random edits applied."""
    text = draw(st.sampled_from(SOURCES))
    for _ in range(draw(st.integers(1, 4))):
        text = draw(st.sampled_from(MUTATIONS))(draw, text)
    return text


def _position(draw: st.DrawFn, text: str) -> int:
    return draw(st.integers(0, max(len(text) - 1, 0)))


def _delete_char(draw: st.DrawFn, text: str) -> str:
    i = _position(draw, text)
    return text[:i] + text[i + 1 :]


def _duplicate_char(draw: st.DrawFn, text: str) -> str:
    i = _position(draw, text)
    return text[: i + 1] + text[i:]


def _swap_chars(draw: st.DrawFn, text: str) -> str:
    i = _position(draw, text[:-1])
    return text[:i] + text[i + 1 : i + 2] + text[i : i + 1] + text[i + 2 :]


def _insert_char(draw: st.DrawFn, text: str) -> str:
    i = _position(draw, text)
    return text[:i] + draw(st.sampled_from(CHARS)) + text[i:]


def _insert_keyword(draw: st.DrawFn, text: str) -> str:
    i = _position(draw, text)
    return text[:i] + f" {draw(st.sampled_from(KEYWORDS))} " + text[i:]


def _line_edit(draw: st.DrawFn, text: str) -> str:
    """Delete, duplicate, swap or re-indent one line."""
    lines = text.split("\n")
    i = draw(st.integers(0, len(lines) - 1))
    j = draw(st.integers(0, len(lines) - 1))
    action = draw(st.sampled_from(["delete", "duplicate", "swap", "indent", "dedent"]))
    if action == "delete":
        del lines[i]
    elif action == "duplicate":
        lines.insert(i, lines[i])
    elif action == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif action == "indent":
        lines[i] = draw(st.sampled_from([" ", "    ", "\t"])) + lines[i]
    else:
        lines[i] = lines[i][draw(st.integers(1, 4)) :]
    return "\n".join(lines)


def _token_edit(draw: st.DrawFn, text: str) -> str:
    """Delete, duplicate or swap whole words / punctuation runs."""
    words = text.split(" ")
    i = draw(st.integers(0, len(words) - 1))
    j = draw(st.integers(0, len(words) - 1))
    action = draw(st.sampled_from(["delete", "duplicate", "swap"]))
    if action == "delete":
        del words[i]
    elif action == "duplicate":
        words.insert(i, words[i])
    else:
        words[i], words[j] = words[j], words[i]
    return " ".join(words)


MUTATIONS = [
    _delete_char,
    _duplicate_char,
    _swap_chars,
    _insert_char,
    _insert_keyword,
    _line_edit,
    _token_edit,
]


@SETTINGS
@given(mutated_kernel())
def test_mutated_kernels_parse_or_fail_cleanly(source: str) -> None:
    check_against_python(source)


@pytest.mark.parametrize(
    "literal", ['"" f\'{x}\' "A"', 'f""', '"" f""', 'f"" "a"', 'f"{x}" ""', '"a" f"" "b"']
)
def test_empty_parts_of_an_fstring_leave_no_trace(literal: str) -> None:
    # found by the fuzzer: Python's AST drops an f-string's empty constant parts
    check_against_python(f"def f():\n    {literal}\n    return 1\n")


@pytest.mark.heavy
@LONG
@given(mutated_kernel())
def test_many_mutated_kernels_parse_or_fail_cleanly(source: str) -> None:
    check_against_python(source)


# -- random text -------------------------------------------------------------

_FRAGMENTS = st.sampled_from(
    [*KEYWORDS, "def k(x):\n", "    ", "\n", "x", "(", ")", "[", "]", ":", ",", "=", "1", "'s'"]
)


@settings(max_examples=800, deadline=None)
@given(st.lists(_FRAGMENTS | st.sampled_from(CHARS), max_size=40))
def test_random_token_soup(parts: list[str]) -> None:
    check_against_python("def k(x):\n    " + "".join(parts) + "\n")


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=60))
def test_random_text(text: str) -> None:
    check(text)
    with contextlib.suppress(CompileError):
        parse_expression(text)
