"""Negative tests: every syntax error and unsupported construct is a located
CompileError whose message names the problem (and, for constructs outside
the kernel language, says what to write instead)."""

from __future__ import annotations

import pytest

import minitriton.language as tl
from minitriton.diagnostics import CompileError, Location
from minitriton.frontend import UnsupportedConstruct, parse_expression, parse_function
from minitriton.frontend.lower import lower_kernel
from minitriton.frontend.source import ArgSpec, KernelSource
from minitriton.ir.types import F32, I32, PointerType


def first_error(source: str, first_line: int = 1) -> tuple[int, int, str, str | None]:
    with pytest.raises(CompileError) as info:
        parse_function(source, "k.py", first_line)
    diag = info.value.first
    assert diag.loc.file == "k.py"
    return diag.loc.line, diag.loc.col, diag.message, diag.help


def K(*body: str) -> str:  # noqa: N802 - reads like a template
    """A kernel ``def k(x, p, i):`` with the given body lines (line 2 onwards)."""
    return "def k(x, p, i):\n" + "".join(f"    {line}\n" for line in body)


HELPER = "define a separate @triton.jit helper function at module level and call it"
NO_BREAK = "Triton does not support 'break' or 'continue'"
INDEX = "only None and ':' are allowed in kernel subscripts"

# (id, source, line, col, message, a phrase of the help or None)
UNSUPPORTED = [
    ("lambda", K("f = lambda y: y"), 2, 9, "lambda", "@triton.jit helper"),
    ("class", K("class A:", "    pass"), 2, 5, "class definition", HELPER),
    ("list-comp-nested", K("y = [j for i in x for j in i]"), 2, 23, "nested comprehension",
     "tl.static_range"),
    ("dict-comp", K("y = {j: j for j in x}"), 2, 9, "dict comprehension", "no dicts"),
    ("set-comp", K("y = {j for j in x}"), 2, 9, "set comprehension", "no sets"),
    ("generator", K("y = (j for j in x)"), 2, 9, "generator expression", "tl.sum"),
    ("generator-arg", K("y = sum(j for j in x)"), 2, 13, "generator expression", "tl.sum"),
    ("try", K("try:", "    pass", "except Exception:", "    pass"), 2, 5, "try/except", "masks"),
    ("with", K("with a as b:", "    pass"), 2, 5, "with statement", "body"),
    ("global", K("global g"), 2, 5, "global statement", "kernel argument"),
    ("nonlocal", K("nonlocal g"), 2, 5, "nonlocal statement", "argument"),
    ("import", K("import numpy as np"), 2, 5, "import inside a kernel", "module level"),
    ("from-import", K("from math import exp"), 2, 5, "import inside a kernel", "module level"),
    ("async-for", K("async for j in x:", "    pass"), 2, 5, "async", "remove 'async'"),
    ("yield", K("yield x"), 2, 5, "yield", "tl.store"),
    ("yield-expr", K("y = yield x"), 2, 9, "yield", "tl.store"),
    ("del", K("del x"), 2, 5, "del statement", None),
    ("bytes", K('print(b"x")'), 2, 11, "bytes literal", None),
    ("kwargs-unpack", K("f(**x)"), 2, 7, "keyword unpacking '**kwargs'", "explicitly"),
    ("starred-target", K("a, *b = x"), 2, 8, "starred assignment targets are not supported",
     "rest = t[1:]"),
    ("decorator-in-body", K("@triton.jit", "def g():", "    pass"), 2, 5,
     "decorator inside a kernel body", HELPER),
    ("nested-def", K("def g():", "    pass"), 2, 5, "nested function definition 'g'", HELPER),
    ("break", K("for j in range(3):", "    break"), 3, 9, "break", NO_BREAK),
    ("continue", K("while x:", "    continue"), 3, 9, "continue", NO_BREAK),
    ("store-subscript", K("x[0] = 1"), 2, 5, "assignment to a subscript", "tl.store"),
    ("store-attribute", K("x.a = 1"), 2, 5, "assignment to an attribute", None),
    ("dict-literal", K("d = {1: 2}"), 2, 9, "dict literal", "no dicts"),
    ("set-literal", K("d = {1, 2}"), 2, 9, "set literal", "no sets"),
    ("for-else", K("for j in x:", "    pass", "else:", "    pass"), 4, 5,
     "'else' clause on a 'for' loop", "after the loop"),
    ("complex", K("y = 1j"), 2, 9, "complex literal 1j", None),
    ("await", K("y = await x"), 2, 9, "await", None),
    ("star-param", "def k(*, args):\n    pass\n", 1, 7, "keyword-only marker '*'", None),
    ("param-after-star", "def k(*a, b):\n    pass\n", 1, 11,
     "parameters after '*args' (keyword-only) are not supported", "last"),
    ("kwargs-param", "def k(**kw):\n    pass\n", 1, 7, "'**kwargs' parameter", None),
    ("async-def", "async def k(x):\n    pass\n", 1, 1, "async def", None),
    ("class-kernel", "class K:\n    pass\n", 1, 1, "class definition", None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("source", "line", "col", "construct", "help_phrase"),
    [case[1:] for case in UNSUPPORTED],
    ids=[case[0] for case in UNSUPPORTED],
)
def test_unsupported_construct(
    source: str, line: int, col: int, construct: str, help_phrase: str | None
) -> None:
    with pytest.raises(UnsupportedConstruct):
        parse_function(source, "k.py")
    got_line, got_col, message, help_ = first_error(source)
    assert (got_line, got_col) == (line, col)
    assert message == f"unsupported construct: {construct}"
    assert help_  # every unsupported construct says what to write instead
    if help_phrase is not None:
        assert help_phrase in help_


# (id, source, line, col, exact message)
SYNTAX_ERRORS = [
    ("missing-colon-if", K("if x", "    pass"), 2, 9, "expected ':'"),
    ("missing-colon-def", "def k(x)\n    pass\n", 1, 9, "expected ':'"),
    ("unexpected-indent", K("a = 1", "  b = 2"), 3, 7, "unexpected indent"),
    ("bad-dedent", K("if x:", "    a = 1", "  b = 2"), 4, 7,
     "unindent does not match any outer indentation level"),
    ("missing-block", K("if x:", "b = 2"), 3, 5, "expected an indented block"),
    ("unclosed-paren", K("y = f(x,", "z = 1"), 2, 10, "'(' was never closed"),
    ("unclosed-at-end", K("y = [x,"), 2, 9, "'[' was never closed"),
    ("unmatched-close", K("y = x)"), 2, 10, "unmatched ')'"),
    ("mismatched-close", K("y = (x]"), 2, 11, "closing bracket ']' does not match '('"),
    ("bad-character", K("y = x $ 1"), 2, 11, "invalid character '$'"),
    ("unterminated-string", K("y = 'abc"), 2, 9, "unterminated string literal"),
    ("assign-in-if", K("if x = 1:", "    pass"), 2, 10, "invalid syntax: unexpected '='"),
    ("stray-else", K("else:", "    pass"), 2, 5, "invalid syntax: unexpected 'else'"),
    ("keyword-as-name", K("x = if"), 2, 9, "invalid syntax: unexpected 'if'"),
    ("two-names", K("y = a b"), 2, 11, "invalid syntax: unexpected name 'b'"),
    ("empty-source", "", 1, 1, "invalid syntax: unexpected end of input"),
    ("call-target", K("f() = 1"), 2, 5, "cannot assign to a function call"),
    ("keyword-expression", K("f(x + 1=2)"), 2, 7,
     "invalid keyword argument: only a name may stand before '='"),
    ("positional-after-keyword", K("f(a=1, 2)"), 2, 12,
     "positional argument follows keyword argument"),
    ("repeated-keyword", K("f(a=1, a=2)"), 2, 12, "keyword argument repeated: a"),
    ("duplicate-param", "def k(x, x):\n    pass\n", 1, 10, "duplicate parameter 'x'"),
    ("default-order", "def k(x=1, y):\n    pass\n", 1, 12,
     "parameter without a default follows a parameter with one"),
    ("tuple-augassign", K("a, b += 1"), 2, 5,
     "a tuple cannot be the target of an augmented assignment"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("source", "line", "col", "message"),
    [case[1:] for case in SYNTAX_ERRORS],
    ids=[case[0] for case in SYNTAX_ERRORS],
)
def test_syntax_error(source: str, line: int, col: int, message: str) -> None:
    assert first_error(source)[:3] == (line, col, message)


def test_locations_follow_first_line_and_indentation() -> None:
    source = "    def k(x):\n        for j in x:\n            break\n"
    with pytest.raises(CompileError) as info:
        parse_function(source, "m.py", first_line=100)
    assert info.value.first.loc == Location("m.py", 102, 13)


def test_syntax_error_location_in_indented_source() -> None:
    source = "    def k(x):\n        y = (x]\n"
    with pytest.raises(CompileError) as info:
        parse_function(source, "m.py", first_line=10)
    assert info.value.first.loc == Location("m.py", 11, 15)


def test_rendered_error_reads_like_a_compiler(tmp_path) -> None:
    path = tmp_path / "kern.py"
    path.write_text("def k(x):\n    f = lambda y: y\n", encoding="utf-8")
    with pytest.raises(CompileError) as info:
        parse_function(path.read_text(encoding="utf-8"), str(path))
    assert str(info.value).splitlines() == [
        f"{path}:2:9: error: unsupported construct: lambda",
        "        f = lambda y: y",
        "            ^",
        "help: define a @triton.jit helper function at module level and call it",
    ]


# (id, subscript, col, message, a phrase of the help): indexing a block is refused
# when the kernel is lowered (the parser cannot tell a block from a tuple).
BLOCK_INDEX = [
    ("index-variable", "p[i]", 11, "indexing a block or pointer with a variable 'i'",
     "tl.load(p + i)"),
    ("index-integer", "x[0]", 11, "indexing a block or pointer with an integer '0'", INDEX),
    ("index-expression", "x[:, i + 1]", 14, "indexing a block or pointer with an expression",
     INDEX),
]  # fmt: skip


@pytest.mark.parametrize(("subscript", "col", "message", "help_phrase"),
                         [c[1:] for c in BLOCK_INDEX], ids=[c[0] for c in BLOCK_INDEX])  # fmt: skip
def test_indexing_a_block_is_refused_when_lowered(
    subscript: str, col: int, message: str, help_phrase: str
) -> None:
    source = "def k(x, p, i):\n    x = tl.arange(0, 8)\n    p = p + x\n" + f"    y = {subscript}\n"
    parse_function(source, "k.py")  # a tuple could be indexed so: the parser lets it be

    def k(x, p, i):  # noqa: ANN001, ANN202 - the signature the source declares
        pass

    specs = [ArgSpec("x", "scalar", I32), ArgSpec("p", "pointer", PointerType(F32)),
             ArgSpec("i", "scalar", I32)]  # fmt: skip
    with pytest.raises(UnsupportedConstruct) as info:
        lower_kernel(KernelSource(k, source, "k.py", 1, {"tl": tl}), specs)
    diag = info.value.first
    assert (diag.loc.line, diag.loc.col) == (4, col)
    assert diag.message == f"unsupported construct: {message}"
    assert diag.help is not None and help_phrase in diag.help


def test_expression_syntax_error_is_located() -> None:
    with pytest.raises(CompileError) as info:
        parse_expression("a + * b")
    diag = info.value.first
    assert (diag.loc.file, diag.loc.line, diag.loc.col) == ("<expr>", 1, 5)
    assert diag.message == "invalid syntax: unexpected '*'"


WALRUS_STATEMENTS = [
    ("x := 1", False), ("y = x := 1", False), ("y = (x := 1)", True), ("(x := 1)", True),
    ("return x := 1", False), ("return (x := 1)", True), ("a, b := 1", False),
    ("a, (b := 1)", True), ("z = (a, b := 1)", True), ("f(x := 1)", True),
    ("assert x := 1", False), ("assert (x := 1)", True), ("y += x := 1", False),
    ("y += (x := 1)", True), ("y: int = x := 1", False), ("y = [x := 1, 2]", True),
    ("y = (x := 1) + (z := 2)", True), ("if x := 1:\n        pass", True),
]  # fmt: skip


@pytest.mark.parametrize(("statement", "valid"), WALRUS_STATEMENTS)
def test_an_assignment_expression_needs_parentheses_where_python_says(
    statement: str, valid: bool
) -> None:
    import ast as pyast

    source = f"def k(a):\n    {statement}\n"
    try:
        pyast.parse(source)
    except SyntaxError:
        assert not valid, "the table disagrees with Python"
    else:
        assert valid, "the table disagrees with Python"
    if valid:
        parse_function(source, "k.py", 1)
        return
    line, col, message, help_ = first_error(source)
    assert line == 2 and "(:=) must be in parentheses" in message
    assert help_ is not None and help_.startswith("write (")
