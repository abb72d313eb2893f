"""The MiniTriton AST: one frozen dataclass per syntax node.

The parser (:mod:`minitriton.frontend.parser`) builds these nodes from the
Lark parse tree. Every node carries ``loc``, the :class:`Location` of its
first token in the kernel's real source file. Locations are keyword-only and
do not take part in equality, so two trees compare equal when their
structure is equal::

    Name("x", loc=UNKNOWN) == Name("x", loc=Location("k.py", 3, 5))  # True

Operators are kept as Python's operator strings (``"+"``, ``"//"``,
``"<="``, ``"not in"``, ``"and"``). ``AugAssign.op`` is the binary operator
(``"+"`` for ``+=``), so lowering can share code with :class:`BinOp`.

:func:`dump` prints a stable, indented text form (``--emit ast`` and the
golden tests); :class:`NodeVisitor` is the base for passes over the tree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeVar

from minitriton.diagnostics import Location

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    _C = TypeVar("_C")

    def dataclass_transform(**_options: Any) -> Callable[[_C], _C]:
        """Python 3.11's ``typing.dataclass_transform``: it only informs type checkers."""
        return lambda cls: cls


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
@dataclass(frozen=True)
class Node:
    """Base class of every AST node; each subclass is made a frozen dataclass.

    A node class lists its fields and nothing else, as in Python's own ASDL
    description of its AST: ``class Name(Node): id: str``.
    """

    loc: Location = field(kw_only=True, compare=False)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dataclass(frozen=True)(cls)  # in place: the class body is complete here


# ---------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------


class Name(Node):
    """A variable or module name: ``x``, ``tl``."""

    id: str


class Constant(Node):
    """A literal: int, float, bool, None or str (adjacent strings joined)."""

    value: int | float | bool | str | None


class Attribute(Node):
    """``value.attr``: ``tl.load``, ``x.shape``, ``x.T``."""

    value: Expr
    attr: str


class Keyword(Node):
    """A keyword argument ``name=value`` of a call."""

    name: str
    value: Expr


class Call(Node):
    """``func(*args, **keywords)``; positional args always come first."""

    func: Expr
    args: list[Expr]
    keywords: list[Keyword]


class Slice(Node):
    """``lower:upper:step`` inside a subscript; each part may be None."""

    lower: Expr | None
    upper: Expr | None
    step: Expr | None


class Subscript(Node):
    """``value[i0, i1, ...]``; each index is a :class:`Slice` or an expression.

    ``x[:, None]`` has ``index == [Slice(None, None, None), Constant(None)]``.
    """

    value: Expr
    index: list[Expr]


class Tuple(Node):
    """``a, b`` or ``(a, b)``."""

    elts: list[Expr]


class List(Node):
    """``[a, b]`` (e.g. ``order=[1, 0]``)."""

    elts: list[Expr]


class Dict(Node):
    """``{k: v}``; the frontend allows it only in decorator arguments."""

    keys: list[Expr]
    values: list[Expr]


class BinOp(Node):
    """``left op right`` for ``+ - * / // % ** @ & | ^ << >>``."""

    left: Expr
    op: str
    right: Expr


class UnaryOp(Node):
    """``op operand`` for ``-``, ``+``, ``~`` and ``not``."""

    op: str
    operand: Expr


class BoolOp(Node):
    """``a and b and c`` or ``a or b`` (``op`` is ``"and"`` / ``"or"``)."""

    op: str
    values: list[Expr]


class Compare(Node):
    """A possibly chained comparison: ``0 <= x < n``."""

    left: Expr
    ops: list[str]
    comparators: list[Expr]


class IfExp(Node):
    """``body if test else orelse``."""

    test: Expr
    body: Expr
    orelse: Expr


class Starred(Node):
    """``*args`` among a call's arguments: the items of a compile-time tuple."""

    value: Expr


class ListComp(Node):
    """``[elt for target in iter if cond ...]``: one ``for``, any number of compile-time
    ``if`` filters; it builds a tuple, as in Triton."""

    elt: Expr
    target: Expr
    iter: Expr
    ifs: list[Expr] = field(default_factory=list)


class NamedExpr(Node):
    """``target := value``: assigns ``value`` to the name and is worth it."""

    target: Name
    value: Expr


class FormattedValue(Node):
    """``{value!r:>8}`` inside an f-string: the value, its conversion and format spec."""

    value: Expr
    conversion: str  # "", "r", "s" or "a"
    format_spec: str


class JoinedStr(Node):
    """An f-string: string constants and formatted values, in order."""

    values: list[Constant | FormattedValue]


Expr = (
    Name
    | Constant
    | Attribute
    | Call
    | Slice
    | Subscript
    | Tuple
    | List
    | Dict
    | BinOp
    | UnaryOp
    | BoolOp
    | Compare
    | IfExp
    | JoinedStr
    | Starred
    | ListComp
)

# ---------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------


class Assign(Node):
    """``t1 = t2 = value``; a target is a Name or a Tuple of targets."""

    targets: list[Expr]
    value: Expr


class AugAssign(Node):
    """``target op= value``; ``op`` is the binary operator (``"+"`` for ``+=``)."""

    target: Expr
    op: str
    value: Expr


class AnnAssign(Node):
    """``target: annotation [= value]``, e.g. ``x: tl.constexpr = 3``."""

    target: Expr
    annotation: Expr
    value: Expr | None


class If(Node):
    """``if test: body else: orelse``; ``elif`` is a nested If in ``orelse``."""

    test: Expr
    body: list[Stmt]
    orelse: list[Stmt]


class For(Node):
    """``for target in iter: body``."""

    target: Expr
    iter: Expr
    body: list[Stmt]


class While(Node):
    """``while test: body``."""

    test: Expr
    body: list[Stmt]


class Return(Node):
    """``return [value]``; ``return a, b`` returns a Tuple."""

    value: Expr | None


class PassStmt(Node):
    """``pass`` (named apart from :class:`minitriton.passes.Pass`, the IR pass base class)."""


class Raise(Node):
    """``raise exc``: an error only where lowering reaches it (a branch that a
    compile-time condition leaves out may hold one, as in Triton)."""

    exc: Expr | None


class Assert(Node):
    """``assert test[, msg]``."""

    test: Expr
    msg: Expr | None


class ExprStmt(Node):
    """An expression used as a statement, usually a call like ``tl.store``."""

    value: Expr


Stmt = (
    Assign
    | AugAssign
    | AnnAssign
    | If
    | For
    | While
    | Return
    | PassStmt
    | Raise
    | Assert
    | ExprStmt
)

# ---------------------------------------------------------------------------
# Functions
# ---------------------------------------------------------------------------


class Param(Node):
    """A parameter: ``name[: annotation][= default]``, or ``*name`` (``star``), which
    collects the remaining positional arguments in a tuple."""

    name: str
    annotation: Expr | None
    default: Expr | None
    star: bool = False


class Decorator(Node):
    """A decorator. ``text`` is its source after the ``@``.

    ``expr`` is the parsed expression, or None when the decorator uses syntax
    outside the kernel language (such as a ``lambda`` in
    ``@triton.heuristics``): decorators run as ordinary Python, so the
    compiler keeps only their text.
    """

    text: str
    expr: Expr | None


class FunctionDef(Node):
    """A kernel or helper function. ``loc`` points at the ``def`` keyword.

    The docstring, if any, is removed from ``body`` and kept in ``docstring``.
    """

    name: str
    params: list[Param]
    decorators: list[Decorator]
    body: list[Stmt]
    docstring: str | None
    returns: Expr | None = None


# ---------------------------------------------------------------------------
# Traversal
# ---------------------------------------------------------------------------


def iter_fields(node: Node) -> Iterator[tuple[str, Any]]:
    """Yield ``(name, value)`` for every field of ``node`` except ``loc``."""
    for f in fields(node):
        if f.name != "loc":
            yield f.name, getattr(node, f.name)


def iter_child_nodes(node: Node) -> Iterator[Node]:
    """Yield the direct child nodes of ``node``, in field order."""
    for _, value in iter_fields(node):
        if isinstance(value, Node):
            yield value
        elif isinstance(value, list):
            yield from (item for item in value if isinstance(item, Node))


def walk(node: Node) -> Iterator[Node]:
    """Yield ``node`` and all its descendants, parents before children."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(iter_child_nodes(current))))


class NodeVisitor:
    """Base class for passes over the AST.

    ``visit(node)`` calls ``visit_<ClassName>(node)`` if the subclass defines
    it, and :meth:`generic_visit` otherwise, which visits every child. A
    ``visit_*`` method that wants the children visited too calls
    ``self.generic_visit(node)`` itself.
    """

    def visit(self, node: Node) -> Any:
        """Dispatch on the node's class name."""
        method = getattr(self, "visit_" + type(node).__name__, self.generic_visit)
        return method(node)

    def generic_visit(self, node: Node) -> None:
        """Visit every child of ``node``."""
        for child in iter_child_nodes(node):
            self.visit(child)


# ---------------------------------------------------------------------------
# Text form
# ---------------------------------------------------------------------------


def dump(node: Node, locations: bool = False) -> str:
    """Return a stable, indented text form of ``node``.

    Scalar fields print inline, child nodes on indented lines below, and
    None / empty fields are left out::

        Assign
          targets:
            - Name id='pid'
          value: Call
            func: Attribute attr='program_id'
              value: Name id='tl'

    With ``locations=True`` every node also prints ``@line:col``.
    """
    return "\n".join(_dump_lines(node, 0, locations)) + "\n"


def _dump_lines(node: Node, depth: int, locations: bool) -> list[str]:
    """The lines of ``node``'s text form, its header at ``depth``."""
    pad = "  " * depth
    scalars, children = _split_fields(node)
    header = type(node).__name__
    if scalars:
        header += " " + " ".join(f"{k}={v!r}" for k, v in scalars)
    if locations:
        header += f" @{node.loc.line}:{node.loc.col}"
    lines = [pad + header]
    for name, value in children:
        lines.extend(_dump_field(name, value, depth + 1, locations))
    return lines


def _split_fields(node: Node) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """Split the non-empty fields of ``node`` into scalars and children (a flag at its
    default, such as ``Param.star=False``, is left out too)."""
    scalars: list[tuple[str, Any]] = []
    children: list[tuple[str, Any]] = []
    defaults = {f.name: f.default for f in fields(node) if f.default is not MISSING}
    for name, value in iter_fields(node):
        if value is None or value == [] or (name in defaults and value == defaults[name]):
            continue
        if _is_child(value):
            children.append((name, value))
        else:
            scalars.append((name, value))
    # Constant(None) must still show its value.
    if isinstance(node, Constant) and node.value is None:
        scalars.append(("value", None))
    return scalars, children


def _is_child(value: Any) -> bool:
    """A node, or a non-empty list of nodes: printed on its own lines."""
    if isinstance(value, list):
        return isinstance(value[0], Node)
    return isinstance(value, Node)


def _dump_field(name: str, value: Any, depth: int, locations: bool) -> list[str]:
    """Lines for one child field: a single node, or a list of nodes."""
    pad = "  " * depth
    if isinstance(value, Node):
        first, *rest = _dump_lines(value, depth, locations)
        return [f"{pad}{name}: {first.lstrip()}", *rest]
    lines = [f"{pad}{name}:"]
    for item in value:
        first, *rest = _dump_lines(item, depth + 1, locations)
        lines.append(f"{pad}  - {first.lstrip()}")
        lines.extend("  " + line for line in rest)
    return lines
