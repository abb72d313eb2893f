"""Test helpers: find kernel functions in tests/kernels, and convert Python's
own AST into MiniTriton's so the two parsers can be compared (an oracle).

Python's ``ast`` module is used only here, in tests; the compiler never uses it.
"""

from __future__ import annotations

import ast as pyast
from dataclasses import dataclass
from pathlib import Path

from minitriton.diagnostics import UNKNOWN
from minitriton.frontend import ast

KERNELS = Path(__file__).resolve().parents[1] / "kernels"


@dataclass(frozen=True)
class KernelSource:
    """The source of one function in a kernel file, as inspect.getsource gives it."""

    path: Path
    name: str
    first_line: int
    source: str


def kernel_functions(path: Path) -> list[KernelSource]:
    """Every top-level ``@jit`` function of the Python file at ``path``."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    found = []
    for node in pyast.parse(text).body:
        if not isinstance(node, pyast.FunctionDef) or not _is_jit(node):
            continue
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        source = "".join(lines[first - 1 : node.end_lineno])
        found.append(KernelSource(path, node.name, first, source))
    return found


def _is_jit(node: pyast.FunctionDef) -> bool:
    return any("jit" in pyast.unparse(d) for d in node.decorator_list)


def all_kernel_functions() -> list[KernelSource]:
    """Every function of every file in tests/kernels."""
    return [fn for path in sorted(KERNELS.glob("*.py")) for fn in kernel_functions(path)]


# ---------------------------------------------------------------------------
# Python AST -> MiniTriton AST (locations are left UNKNOWN)
# ---------------------------------------------------------------------------

_OPS = {
    pyast.Add: "+",
    pyast.Sub: "-",
    pyast.Mult: "*",
    pyast.Div: "/",
    pyast.FloorDiv: "//",
    pyast.Mod: "%",
    pyast.Pow: "**",
    pyast.MatMult: "@",
    pyast.BitAnd: "&",
    pyast.BitOr: "|",
    pyast.BitXor: "^",
    pyast.LShift: "<<",
    pyast.RShift: ">>",
    pyast.USub: "-",
    pyast.UAdd: "+",
    pyast.Invert: "~",
    pyast.Not: "not",
    pyast.And: "and",
    pyast.Or: "or",
    pyast.Eq: "==",
    pyast.NotEq: "!=",
    pyast.Lt: "<",
    pyast.LtE: "<=",
    pyast.Gt: ">",
    pyast.GtE: ">=",
    pyast.In: "in",
    pyast.NotIn: "not in",
    pyast.Is: "is",
    pyast.IsNot: "is not",
}


def _op(op: pyast.AST) -> str:
    return _OPS[type(op)]


def convert_function(node: pyast.FunctionDef) -> ast.FunctionDef:
    """Convert a Python FunctionDef (decorators are not compared: empty list)."""
    body = node.body
    docstring = pyast.get_docstring(node, clean=False)
    if docstring is not None:
        body = body[1:]
    args = node.args.args
    defaults = [None] * (len(args) - len(node.args.defaults)) + node.args.defaults
    params = [
        ast.Param(a.arg, _opt(a.annotation), _opt(d), loc=UNKNOWN) for a, d in zip(args, defaults)
    ]
    if node.args.vararg is not None:
        params.append(ast.Param(node.args.vararg.arg, None, None, star=True, loc=UNKNOWN))
    return ast.FunctionDef(
        node.name, params, [], stmts(body), docstring, _opt(node.returns), loc=UNKNOWN
    )


def stmts(nodes: list[pyast.stmt]) -> list[ast.Stmt]:
    return [stmt(n) for n in nodes]


def stmt(n: pyast.stmt) -> ast.Stmt:
    loc = UNKNOWN
    if isinstance(n, pyast.Assign):
        return ast.Assign([expr(t) for t in n.targets], expr(n.value), loc=loc)
    if isinstance(n, pyast.AugAssign):
        return ast.AugAssign(expr(n.target), _op(n.op), expr(n.value), loc=loc)
    if isinstance(n, pyast.AnnAssign):
        return ast.AnnAssign(expr(n.target), expr(n.annotation), _opt(n.value), loc=loc)
    if isinstance(n, pyast.If):
        return ast.If(expr(n.test), stmts(n.body), stmts(n.orelse), loc=loc)
    if isinstance(n, pyast.For):
        return ast.For(expr(n.target), expr(n.iter), stmts(n.body), loc=loc)
    if isinstance(n, pyast.While):
        return ast.While(expr(n.test), stmts(n.body), loc=loc)
    if isinstance(n, pyast.Return):
        return ast.Return(_opt(n.value), loc=loc)
    if isinstance(n, pyast.Raise):
        return ast.Raise(_opt(n.exc), loc=loc)
    if isinstance(n, pyast.Pass):
        return ast.PassStmt(loc=loc)
    if isinstance(n, pyast.Assert):
        return ast.Assert(expr(n.test), _opt(n.msg), loc=loc)
    if isinstance(n, pyast.Expr):
        return ast.ExprStmt(expr(n.value), loc=loc)
    raise NotImplementedError(type(n).__name__)


def _opt(n: pyast.expr | None) -> ast.Expr | None:
    return None if n is None else expr(n)


def expr(n: pyast.expr) -> ast.Expr:  # noqa: C901 - one flat dispatch
    loc = UNKNOWN
    if isinstance(n, pyast.Name):
        return ast.Name(n.id, loc=loc)
    if isinstance(n, pyast.Constant):
        return ast.Constant(n.value, loc=loc)
    if isinstance(n, pyast.Attribute):
        return ast.Attribute(expr(n.value), n.attr, loc=loc)
    if isinstance(n, pyast.Call):
        keywords = [ast.Keyword(k.arg, expr(k.value), loc=loc) for k in n.keywords]
        return ast.Call(expr(n.func), [expr(a) for a in n.args], keywords, loc=loc)
    if isinstance(n, pyast.Subscript):
        items = n.slice.elts if isinstance(n.slice, pyast.Tuple) else [n.slice]
        return ast.Subscript(expr(n.value), [expr(i) for i in items], loc=loc)
    if isinstance(n, pyast.Slice):
        return ast.Slice(_opt(n.lower), _opt(n.upper), _opt(n.step), loc=loc)
    if isinstance(n, pyast.Tuple):
        return ast.Tuple([expr(e) for e in n.elts], loc=loc)
    if isinstance(n, pyast.List):
        return ast.List([expr(e) for e in n.elts], loc=loc)
    if isinstance(n, pyast.Dict):
        return ast.Dict([expr(k) for k in n.keys], [expr(v) for v in n.values], loc=loc)
    if isinstance(n, pyast.BinOp):
        return ast.BinOp(expr(n.left), _op(n.op), expr(n.right), loc=loc)
    if isinstance(n, pyast.UnaryOp):
        return ast.UnaryOp(_op(n.op), expr(n.operand), loc=loc)
    if isinstance(n, pyast.BoolOp):
        return ast.BoolOp(_op(n.op), [expr(v) for v in n.values], loc=loc)
    if isinstance(n, pyast.Compare):
        ops = [_op(o) for o in n.ops]
        return ast.Compare(expr(n.left), ops, [expr(c) for c in n.comparators], loc=loc)
    if isinstance(n, pyast.IfExp):
        return ast.IfExp(expr(n.test), expr(n.body), expr(n.orelse), loc=loc)
    if isinstance(n, pyast.JoinedStr):
        return ast.JoinedStr([_fstring_part(v) for v in n.values], loc=loc)
    if isinstance(n, pyast.Starred):
        return ast.Starred(expr(n.value), loc=loc)
    if isinstance(n, pyast.ListComp) and len(n.generators) == 1:
        (comp,) = n.generators
        ifs = [expr(i) for i in comp.ifs]
        return ast.ListComp(expr(n.elt), expr(comp.target), expr(comp.iter), ifs, loc=loc)
    if isinstance(n, pyast.NamedExpr):
        return ast.NamedExpr(ast.Name(n.target.id, loc=loc), expr(n.value), loc=loc)
    raise NotImplementedError(type(n).__name__)


def _fstring_part(n: pyast.expr) -> ast.Expr:
    if not isinstance(n, pyast.FormattedValue):
        return expr(n)
    spec = "".join(str(v.value) for v in n.format_spec.values) if n.format_spec else ""
    conversion = "" if n.conversion == -1 else chr(n.conversion)
    return ast.FormattedValue(expr(n.value), conversion, spec, loc=UNKNOWN)


def dedent_like_parser(source: str) -> str:
    """Remove the first line's indentation from every line, as the parser does."""
    lines = source.split("\n")
    first = next((line for line in lines if line.strip()), "")
    indent = len(first) - len(first.lstrip(" \t"))
    out = []
    for line in lines:
        cut = min(indent, len(line) - len(line.lstrip(" \t")))
        out.append(line[cut:])
    return "\n".join(out)


def python_function(source: str) -> ast.FunctionDef:
    """Parse ``source`` (one function) with Python and convert it."""
    module = pyast.parse(dedent_like_parser(source))
    node = module.body[0]
    assert isinstance(node, pyast.FunctionDef)
    return convert_function(node)


def without_decorators(fn: ast.FunctionDef) -> ast.FunctionDef:
    """``fn`` with an empty decorator list (Python's are not compared)."""
    return ast.FunctionDef(fn.name, fn.params, [], fn.body, fn.docstring, fn.returns, loc=fn.loc)
