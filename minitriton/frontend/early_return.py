"""Early ``return`` inside a run-time ``if``: the continuation is moved into the branches.

IR regions are structured (``scf.if`` has no "leave the function" edge), so
``if pid >= n: return`` cannot become a jump. Instead, the statements that
follow an ``if`` containing a ``return`` are copied into each branch that
does not end in a ``return`` itself::

    if pid >= n:            if pid >= n:
        return                  return
    x = tl.load(p)    ->    else:
    tl.store(q, x)              x = tl.load(p)
                                tl.store(q, x)

After the rewrite every path through the ``if`` reaches the end of the
function, so the lowerer merges the returned values of the two branches like
any other variable (a value-returning helper yields them from the ``scf.if``).
Nested ``if`` statements are handled the same way when their branch is
lowered. A ``return`` inside a run-time loop cannot be rewritten like this;
the lowerer reports it.
"""

from __future__ import annotations

import dataclasses

from minitriton.frontend import ast


def contains_return(stmt: ast.Stmt) -> bool:
    """True if ``stmt`` has a ``return`` anywhere inside it."""
    return any(isinstance(node, ast.Return) for node in ast.walk(stmt))


def always_returns(stmts: list[ast.Stmt]) -> bool:
    """True if every path through ``stmts`` ends in a ``return``."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    return False


def with_continuation(stmt: ast.If, rest: list[ast.Stmt]) -> ast.If:
    """``stmt`` with ``rest`` appended to each branch that can fall through."""
    body = stmt.body if always_returns(stmt.body) else [*stmt.body, *rest]
    orelse = stmt.orelse if always_returns(stmt.orelse) else [*stmt.orelse, *rest]
    return dataclasses.replace(stmt, body=body, orelse=orelse)
