"""The fast LALR driver builds exactly Lark's trees, and errors still come from Lark.

Every ``@jit`` function of the test kernels, the examples, the exercises
and the benchmarks is parsed by Lark's own loop and by
:class:`minitriton.frontend.lalr.FastLALR`; the trees must match node for
node, token for token, positions included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from frontend_helpers import KernelSource, kernel_functions
from lark import Tree
from lark.exceptions import LarkError

from minitriton.diagnostics import CompileError
from minitriton.frontend import lalr, parse_expression, parse_function
from minitriton.frontend.parser import _Source, fast_driver, lark_parser

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("tests/kernels", "tests/e2e", "examples", "exercises", "benchmarks/kernels_src")


def every_kernel() -> list[KernelSource]:
    """The ``@jit`` functions of every Python file in :data:`FOLDERS`."""
    found: list[KernelSource] = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            try:
                found += kernel_functions(path)
            except SyntaxError:
                continue  # a file that Python itself rejects (a syntax-error example)
    return found


KERNELS = every_kernel()


def describe(node: Any) -> Any:
    """A tree as nested tuples: rule names, token types and values, and every position."""
    if isinstance(node, Tree):
        meta = node.meta
        where = None
        if not meta.empty:
            where = (meta.line, meta.column, meta.end_line, meta.end_column,
                     meta.start_pos, meta.end_pos)  # fmt: skip
        return (node.data, where, tuple(describe(c) for c in node.children))
    if node is None:
        return None
    return (node.type, str(node), node.line, node.column, node.end_line, node.end_column)


def test_enough_kernels_are_compared() -> None:
    assert len(KERNELS) > 100


@pytest.mark.parametrize("fn", KERNELS, ids=lambda k: f"{k.path.name}:{k.name}")
def test_same_tree_as_lark(fn: KernelSource) -> None:
    text = _Source.dedent(fn.source, str(fn.path), fn.first_line, 0).text
    try:
        expected = lark_parser().parse(text, start="function_input")
    except LarkError:
        pytest.skip("a kernel with a syntax error (its diagnostic is tested elsewhere)")
    driver = fast_driver()
    assert driver is not None
    assert describe(driver.parse(text, "function_input")) == describe(expected)


def test_expressions_match_lark() -> None:
    driver = fast_driver()
    assert driver is not None
    for text in ("x[:, None] + 1\n", "a if b else -c ** 2\n", "tl.sum(x, axis=0) // 3\n"):
        expected = lark_parser().parse(text, start="expression_input")
        assert describe(driver.parse(text, "expression_input")) == describe(expected)


def test_valid_source_never_reaches_lark(monkeypatch: pytest.MonkeyPatch) -> None:
    """A well-formed kernel is parsed by the fast driver alone."""

    def lark_parse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("Lark's own loop ran on valid input")

    fast_driver()  # built before Lark's parse is replaced
    monkeypatch.setattr(lark_parser(), "parse", lark_parse)
    fdef = parse_function("def k(x):\n    y = x + 1\n    return y\n", "k.py")
    assert fdef.name == "k"


@pytest.mark.parametrize(
    "source",
    [
        "def k(x):\n    y = (x + 1\n",  # unbalanced bracket
        "def k(x):\n    y = x +\n",  # unexpected newline
        "def k(x):\n      y = 1\n    z = 2\n",  # bad dedent
        "def k(x):\n    y = x $ 1\n",  # unexpected character
        "def k(x):\n    y = lambda: 1\n",  # a keyword outside the language
    ],
)
def test_errors_are_lark_errors(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error falls back to Lark: the same diagnostic as without the fast driver."""
    with pytest.raises(CompileError) as fast:
        parse_function(source, "k.py")
    monkeypatch.setattr("minitriton.frontend.parser.fast_driver", lambda: None)
    with pytest.raises(CompileError) as slow:
        parse_function(source, "k.py")
    assert str(fast.value) == str(slow.value)


def test_rejects_what_lark_rejects() -> None:
    """The fast loop itself raises (to fall back) instead of returning a tree."""
    driver = fast_driver()
    assert driver is not None
    with pytest.raises(LarkError):
        lalr.parse(lark_parser(), driver, "def k(x):\n    y = x +\n", "function_input")
    with pytest.raises(lalr._Fallback):
        driver.parse("def k(x):\n    y = x +\n", "function_input")


def test_expression_api_uses_it() -> None:
    assert parse_expression("x + 1") is not None
