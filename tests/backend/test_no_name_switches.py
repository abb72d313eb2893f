"""The GPU backend decides what an op is by its class or traits, never by its name.

A string switch on ``op.name`` is what the class-keyed registries replace: a
new op would have to be added to every such switch. This test finds every
comparison of a value with an op name (``x == "arith.add"``,
``x in ("tt.load", ...)``, ``x.startswith("arith.")``), every dict literal
keyed by op names, and every slice of a ``.name`` (``op.name[5:]``), in the
backend's sources. At most :data:`ALLOWED` may remain, each with a
``# why:`` comment on its line or the line before it saying why a string is
needed.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import minitriton.backend

BACKEND = Path(minitriton.backend.__file__).parent
ALLOWED = 5
#: An op name (``tt.load``) or a dialect prefix (``arith.``).
_OP_NAME = re.compile(r"^(tt|arith|math|scf|ttg|ttng)\.[a-z0-9_]*$")


def _op_names(node: ast.expr) -> bool:
    """Whether ``node`` is an op-name string, or a tuple, list or set holding one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and bool(_OP_NAME.match(node.value))
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_op_names(e) for e in node.elts)
    return False


def _is_switch(node: ast.expr) -> bool:
    """Whether ``node`` compares with, prefix-tests, keys by or slices op names."""
    if isinstance(node, ast.Compare):
        return any(_op_names(x) for x in (node.left, *node.comparators))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in ("startswith", "endswith") and any(map(_op_names, node.args))
    if isinstance(node, ast.Dict):
        return any(k is not None and _op_names(k) for k in node.keys)
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Attribute) and node.value.attr == "name"
    return False


def name_switches(source: str) -> list[int]:
    """The line of every comparison, prefix test, dict or slice keyed by op names."""
    nodes = ast.walk(ast.parse(source))
    return sorted(n.lineno for n in nodes if isinstance(n, ast.expr) and _is_switch(n))


def _explained(lines: list[str], lineno: int) -> bool:
    """Whether line ``lineno`` (1-based) or the one before it carries a ``# why:`` comment."""
    return any("# why:" in lines[i] for i in (lineno - 1, lineno - 2) if i >= 0)


def _backend_switches() -> list[tuple[str, int, bool]]:
    found = []
    for path in sorted(BACKEND.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for lineno in name_switches(source):
            found.append((str(path.relative_to(BACKEND)), lineno, _explained(lines, lineno)))
    return found


def test_the_backend_has_few_name_switches_each_explained() -> None:
    found = _backend_switches()
    unexplained = [f"{path}:{line}" for path, line, why in found if not why]
    assert not unexplained, f"op-name switches without a '# why:' comment: {unexplained}"
    assert len(found) <= ALLOWED, f"{len(found)} op-name switches (at most {ALLOWED}): {found}"


def test_the_literal_op_name_comparisons_are_few() -> None:
    count = sum(
        path.read_text(encoding="utf-8").count("op.name ==") for path in BACKEND.rglob("*.py")
    )
    assert count <= ALLOWED


def test_the_finder_sees_every_form_of_switch() -> None:
    source = """
if op.name == "tt.dot": pass
if op.name != "arith.cmp": pass
if op.name in ("tt.broadcast", "tt.expand_dims"): pass
if name not in ["scf.for"]: pass
ok = op.name.startswith("arith.")
table = {"arith.add": "add"}
fn = op.name[5:]
"""
    assert name_switches(source) == [2, 3, 4, 5, 6, 7, 8]


def test_the_finder_leaves_other_strings_alone() -> None:
    source = """
if st.name == "f8e5": pass
if fn.name != kernel_name: pass
emit(block, op, "arith.constant", [], [t])
table = {AddOp: "add", "f32": 1}
if isinstance(op, DotOp): pass
"""
    assert name_switches(source) == []


def test_a_why_comment_on_the_line_or_the_one_before_explains_it() -> None:
    lines = ["# why: the name is the interface", 'if name == "arith.div":', 'x = "tt.dot" == n']
    assert _explained(lines, 2)
    assert not _explained(lines, 3)
    assert not _explained(['if name == "arith.div":'], 1)
