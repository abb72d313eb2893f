"""The parser accepts the kernel language and builds a located AST.

The tutorial kernels in tests/kernels are parsed and compared with Python's
own parser (converted to our AST by ``frontend_helpers``): same structure,
and every name at the same line and column.
"""

from __future__ import annotations

import ast as pyast
import textwrap

import pytest
from frontend_helpers import (
    KERNELS,
    KernelSource,
    all_kernel_functions,
    kernel_functions,
    python_function,
    without_decorators,
)

from minitriton.diagnostics import UNKNOWN, CompileError, Location
from minitriton.frontend import NodeVisitor, ast, dump, load_grammar, parse_expression
from minitriton.frontend import parse_function as _parse_function

KERNEL_FUNCTIONS = all_kernel_functions()


def parse_function(source: str, first_line: int = 1) -> ast.FunctionDef:
    return _parse_function(textwrap.dedent(source), "k.py", first_line)


def parse_kernel(fn: KernelSource) -> ast.FunctionDef:
    return _parse_function(fn.source, str(fn.path), fn.first_line)


def body_expr(source: str) -> ast.Expr:
    """The value of the single expression statement in a function body."""
    stmt = parse_function(f"def k(x, y, z):\n    {source}\n").body[0]
    assert isinstance(stmt, ast.ExprStmt)
    return stmt.value


# ---------------------------------------------------------------------------
# The tutorial kernels
# ---------------------------------------------------------------------------


def test_every_tutorial_kernel_is_present() -> None:
    names = {fn.name for fn in KERNEL_FUNCTIONS}
    assert {
        "add_kernel",
        "softmax_kernel",
        "matmul_kernel",
        "leaky_relu",
        "_layer_norm_fwd_fused",
        "_layer_norm_bwd_dx_fused",
        "_layer_norm_bwd_dwdb",
        "_attn_fwd_inner",
        "_attn_fwd",
        "_seeded_dropout",
    } <= names


@pytest.mark.parametrize("fn", KERNEL_FUNCTIONS, ids=lambda fn: fn.name)
def test_kernel_matches_python_structure(fn: KernelSource) -> None:
    ours = parse_kernel(fn)
    assert ours.name == fn.name
    assert dump(without_decorators(ours)) == dump(python_function(fn.source))


def _python_names(fn: KernelSource) -> list[tuple[str, int, int]]:
    module = pyast.parse(fn.path.read_text(encoding="utf-8"))
    node = next(n for n in module.body if getattr(n, "name", None) == fn.name)
    assert isinstance(node, pyast.FunctionDef)
    roots = [*node.body, *node.args.args, *node.args.defaults]
    return sorted(
        (n.id, n.lineno, n.col_offset + 1)
        for root in roots
        for n in pyast.walk(root)
        if isinstance(n, pyast.Name)
    )


def _our_names(fn: ast.FunctionDef) -> list[tuple[str, int, int]]:
    roots: list[ast.Node] = [*fn.body, *fn.params]
    return sorted(
        (n.id, n.loc.line, n.loc.col)
        for root in roots
        for n in ast.walk(root)
        if isinstance(n, ast.Name)
    )


@pytest.mark.parametrize("fn", KERNEL_FUNCTIONS, ids=lambda fn: fn.name)
def test_kernel_name_locations_match_python(fn: KernelSource) -> None:
    ours = parse_kernel(fn)
    assert _our_names(ours) == _python_names(fn)
    assert all(n.loc.file == str(fn.path) for n in ast.walk(ours))


def test_vector_add_golden(golden) -> None:
    (fn,) = kernel_functions(KERNELS / "vector_add.py")
    text = dump(parse_kernel(fn), locations=True)
    golden(text, "vector_add.ast")


def test_matmul_autotune_decorator_is_parsed() -> None:
    fn = next(f for f in KERNEL_FUNCTIONS if f.name == "matmul_kernel")
    autotune, jit = parse_kernel(fn).decorators
    assert jit.text == "triton.jit"
    assert autotune.text.startswith("triton.autotune(\n    configs=[")
    assert isinstance(autotune.expr, ast.Call)
    assert [k.name for k in autotune.expr.keywords] == ["configs", "key"]
    configs = autotune.expr.keywords[0].value
    assert isinstance(configs, ast.List)
    first = configs.elts[0]
    assert isinstance(first, ast.Call) and isinstance(first.args[0], ast.Dict)
    assert first.args[0].keys[0] == ast.Constant("BLOCK_SIZE_M", loc=UNKNOWN)
    assert autotune.loc == Location(str(fn.path), fn.first_line, 1)


def test_layer_norm_spin_lock() -> None:
    fn = next(f for f in KERNEL_FUNCTIONS if f.name == "_layer_norm_bwd_dx_fused")
    loops = [s for s in parse_kernel(fn).body if isinstance(s, ast.While)]
    (loop,) = loops
    assert isinstance(loop.test, ast.Compare) and loop.test.ops == ["=="]
    assert isinstance(loop.test.left, ast.Call)
    assert loop.body == [ast.PassStmt(loc=UNKNOWN)]


def test_attention_stage_if_elif_else() -> None:
    fn = next(f for f in KERNEL_FUNCTIONS if f.name == "_attn_fwd_inner")
    node = parse_kernel(fn).body[0]
    assert isinstance(node, ast.If)
    (elif_,) = node.orelse
    assert isinstance(elif_, ast.If)
    assert dump(elif_.test) == dump(parse_expression("STAGE == 2"))
    assert len(elif_.orelse) == 1 and isinstance(elif_.orelse[0], ast.Assign)
    first = node.body[0]
    assert isinstance(first, ast.Assign) and isinstance(first.targets[0], ast.Tuple)
    assert elif_.loc.line == node.loc.line + 2 and elif_.loc.col == node.loc.col


# ---------------------------------------------------------------------------
# Functions and parameters
# ---------------------------------------------------------------------------


def test_params_annotations_defaults_and_docstring() -> None:
    fn = parse_function(
        '''
        @triton.jit
        def k(x_ptr, eps=1e-5, BLOCK: tl.constexpr = 16, ACT: tl.constexpr = ""):
            """Docs."""
            pass
        '''
    )
    assert [p.name for p in fn.params] == ["x_ptr", "eps", "BLOCK", "ACT"]
    assert fn.params[1].default == ast.Constant(1e-5, loc=UNKNOWN)
    assert fn.params[2].annotation == parse_expression("tl.constexpr")
    assert fn.params[3].default == ast.Constant("", loc=UNKNOWN)
    assert fn.docstring == "Docs."
    assert fn.body == [ast.PassStmt(loc=UNKNOWN)]
    assert fn.loc == Location("k.py", 3, 1)


def test_indented_source_keeps_real_columns() -> None:
    source = "    @triton.jit\n    def k(x):\n        y = x + 1\n"
    fn = _parse_function(source, "m.py", first_line=40)
    assert fn.decorators[0].loc == Location("m.py", 40, 5)
    assert fn.loc == Location("m.py", 41, 5)
    assign = fn.body[0]
    assert isinstance(assign, ast.Assign)
    assert assign.loc == Location("m.py", 42, 9)
    assert isinstance(assign.value, ast.BinOp)
    assert assign.value.right.loc == Location("m.py", 42, 17)


def test_heuristics_decorator_with_lambda_keeps_text() -> None:
    fn = parse_function(
        """
        @triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
        @triton.jit
        def k(x):
            pass
        """
    )
    heuristics = fn.decorators[0]
    assert heuristics.expr is None
    assert heuristics.text.startswith('triton.heuristics({"EVEN_K": lambda args:')
    assert heuristics.text.endswith("== 0})")


def test_one_line_function_and_return_annotation() -> None:
    fn = parse_function("def k(x) -> None: return x")
    assert fn.returns == ast.Constant(None, loc=UNKNOWN)
    assert fn.body == [ast.Return(ast.Name("x", loc=UNKNOWN), loc=UNKNOWN)]


# ---------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------


def test_tuple_unpacking_and_chained_assignment() -> None:
    fn = parse_function("def k(x):\n    a, b = f(x)\n    c = d = 0\n    (e, g) = x, x\n")
    first, second, third = fn.body
    assert isinstance(first, ast.Assign)
    assert first.targets == [
        ast.Tuple([ast.Name("a", loc=UNKNOWN), ast.Name("b", loc=UNKNOWN)], loc=UNKNOWN)
    ]
    assert isinstance(second, ast.Assign) and len(second.targets) == 2
    assert isinstance(third, ast.Assign) and isinstance(third.value, ast.Tuple)


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>"])
def test_every_augmented_assignment(op: str) -> None:
    fn = parse_function(f"def k(x):\n    x {op}= 2\n")
    (stmt,) = fn.body
    assert isinstance(stmt, ast.AugAssign)
    assert stmt.op == op
    assert stmt.loc == Location("k.py", 2, 5)


def test_annotated_assignment_assert_and_return_tuple() -> None:
    fn = parse_function(
        """
        def k(x):
            n: tl.constexpr = 3
            assert x > 0, "x must be positive"
            assert x
            return x, n
        """
    )
    ann, assert_msg, assert_plain, ret = fn.body
    assert isinstance(ann, ast.AnnAssign) and ann.value == ast.Constant(3, loc=UNKNOWN)
    assert isinstance(assert_msg, ast.Assert)
    assert assert_msg.msg == ast.Constant("x must be positive", loc=UNKNOWN)
    assert isinstance(assert_plain, ast.Assert) and assert_plain.msg is None
    assert isinstance(ret, ast.Return) and isinstance(ret.value, ast.Tuple)


def test_for_loops_over_any_call() -> None:
    fn = parse_function(
        """
        def k(n):
            for i in range(0, n, 4):
                pass
            for j in tl.static_range(4):
                pass
            for a, b in tl.range(0, n, 2, num_stages=3):
                pass
        """
    )
    loops = fn.body
    assert all(isinstance(loop, ast.For) for loop in loops)
    assert [loop.loc.line for loop in loops] == [3, 5, 7]
    assert isinstance(loops[2].target, ast.Tuple)
    assert isinstance(loops[2].iter, ast.Call) and loops[2].iter.keywords[0].name == "num_stages"


def test_comments_continuations_and_semicolons() -> None:
    fn = parse_function(
        """
        def k(x):
            # a comment line

            y = x + \\
                1  # trailing comment
            z = (x +
                 y)
            a = 1; b = 2
        """
    )
    assert [type(s).__name__ for s in fn.body] == ["Assign"] * 4
    assert [s.loc.line for s in fn.body] == [5, 7, 9, 9]
    assert fn.body[3].loc == Location("k.py", 9, 12)


def test_if_else_body_on_same_line() -> None:
    fn = parse_function("def k(x):\n    if x: y = 1\n    else: y = 2\n")
    (node,) = fn.body
    assert isinstance(node, ast.If) and len(node.body) == 1 and len(node.orelse) == 1


# ---------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------

PYTHON_EXPRESSIONS = [
    "a + b * c - d / e // f % g",
    "-x ** 2",
    "2 ** -1",
    "a ** b ** c",
    "~a & b | c ^ d << 2 >> 1",
    "0 <= x < n",
    "a is not None and b not in c or not d",
    "a if b else c if d else e",
    "tl.load(p + offs, mask=m, other=0.0)",
    "x.to(tl.float16).T",
    "x[:, None] * y[None, :]",
    "x.shape[0]",
    "offs[:8]",
    "x[::2, 1:]",
    "(a, b)",
    "()",
    "(a,)",
    "[1, 0]",
    "float('inf')",
    "0x1F + 0b101 + 0o17 + 1_000",
    "1.0 + 1e-5 + .5 + 2. + 1E+3",
    "True, False, None",
    "'a' 'b' \"c\"",
    "'\\t\\n'",
    "r'\\d'",
    "f(a)(b)[:, None].c",
]


@pytest.mark.parametrize("text", PYTHON_EXPRESSIONS)
def test_expression_matches_python(text: str) -> None:
    from frontend_helpers import expr as python_expr

    expected = python_expr(pyast.parse(text, mode="eval").body)
    assert dump(parse_expression(text)) == dump(expected)


def test_constant_types() -> None:
    assert parse_expression("0x10") == ast.Constant(16, loc=UNKNOWN)
    assert isinstance(parse_expression("1.").value, float)  # type: ignore[union-attr]
    assert parse_expression("True").value is True  # type: ignore[union-attr]
    assert parse_expression("None").value is None  # type: ignore[union-attr]


def test_expression_locations() -> None:
    node = parse_expression("a + foo(b)[:, None]")
    assert isinstance(node, ast.BinOp)
    assert node.loc == Location("<expr>", 1, 1)
    assert node.right.loc == Location("<expr>", 1, 5)
    assert isinstance(node.right, ast.Subscript)
    assert node.right.index[1].loc == Location("<expr>", 1, 15)


def test_subscripts_parse_any_index() -> None:
    node = parse_expression("x[3, i]")
    assert isinstance(node, ast.Subscript)
    assert node.index == [ast.Constant(3, loc=UNKNOWN), ast.Name("i", loc=UNKNOWN)]


# ---------------------------------------------------------------------------
# AST utilities
# ---------------------------------------------------------------------------


def test_node_visitor_dispatch() -> None:
    class Calls(NodeVisitor):
        def __init__(self) -> None:
            self.names: list[str] = []

        def visit_Call(self, node: ast.Call) -> None:
            assert isinstance(node.func, ast.Attribute)
            self.names.append(node.func.attr)
            self.generic_visit(node)

    fn = next(f for f in KERNEL_FUNCTIONS if f.name == "add_kernel")
    visitor = Calls()
    visitor.visit(parse_kernel(fn))
    assert visitor.names == ["program_id", "arange", "load", "load", "store"]


def test_equality_ignores_locations_but_dump_can_show_them() -> None:
    a = parse_expression("x + 1")
    b = parse_expression("  x  +  1")
    assert a == b
    assert dump(a) == dump(b)
    assert dump(a, locations=True) != dump(b, locations=True)


def test_dump_format() -> None:
    assert dump(parse_expression("f(x, k=1)")) == (
        "Call\n"
        "  func: Name id='f'\n"
        "  args:\n"
        "    - Name id='x'\n"
        "  keywords:\n"
        "    - Keyword name='k'\n"
        "        value: Constant value=1\n"
    )


def test_grammar_is_pure_lark() -> None:
    text = load_grammar()
    assert "function_input" in text and "%declare _INDENT _DEDENT" in text
    assert "%import" not in text  # self-contained: the docs include it verbatim


def test_line_continuation_at_end_of_file_is_rejected() -> None:
    # Python's tokenizer rejects it ("unexpected EOF"); so must we.
    with pytest.raises(CompileError, match="line continuation"):
        parse_function("def k(x):\n    False\n\\\n")
    # A continuation that joins two lines of the function is fine.
    assert parse_function("def k(x):\n    y = 1 + \\\n      2\n").name == "k"
