"""Inline: replace calls of private helpers by the helpers' bodies.

Not in the default pipeline; the GPU backend can use it to emit a single
function, and it shows what inlining does. A ``tt.call`` is inlined when its
callee is a private ``tt.func`` that is not recursive (directly or through
other helpers) and whose only ``tt.return`` is its last op. The callee's body
is copied (:func:`minitriton.ir.clone.clone_op`) before the call with the
call's arguments in place of the parameters, and the returned values replace
the call's results. Inlined code keeps the helper's source locations, so
errors still point into the helper. Helpers that no call refers to any more
are then deleted.

Example
-------

Before::

    tt.func @kernel(%x: f32, %p: ptr<f32>) {
      %y = tt.call(%x) {callee = "square"} : f32
      tt.store(%p, %y)
      tt.return()
    }
    tt.func private @square(%v: f32) -> (f32) {
      %sq = arith.mul(%v, %v) : f32
      tt.return(%sq)
    }

After::

    tt.func @kernel(%x: f32, %p: ptr<f32>) {
      %sq = arith.mul(%x, %x) : f32
      tt.store(%p, %sq)
      tt.return()
    }

Conditions
----------

Precondition: verified IR. Postcondition: verified IR; no call of an
inlinable helper is left, and every private function left is called.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from minitriton.ir.clone import clone_op
from minitriton.ir.core import Operation, Value
from minitriton.ir.ops import CallOp, FuncOp, Module, ReturnOp
from minitriton.passes.base import Pass, register_pass
from minitriton.passes.rewriting import insert_before, replace_op


@register_pass
@dataclass(frozen=True)
class Inline(Pass):
    """Inline calls of private helpers, then delete helpers nobody calls."""

    name: ClassVar[str] = "inline"

    def apply(self, module: Module) -> None:
        inlinable = _inlinable(module)
        for func in module.funcs:
            # Inlined bodies may hold more calls: repeat until none is left.
            # Recursive helpers are never inlinable, so this terminates.
            while _inline_calls_in(func, inlinable):
                pass
        _remove_uncalled_helpers(module)


def _calls(func: FuncOp) -> list[Operation]:
    return [op for op in func.walk() if isinstance(op, CallOp)]


def _inlinable(module: Module) -> dict[str, FuncOp]:
    """Private, non-recursive helpers whose only ``tt.return`` is the last op."""
    graph = {f.sym_name: {c.attrs["callee"] for c in _calls(f)} for f in module.funcs}
    result: dict[str, FuncOp] = {}
    for func in module.funcs:
        returns = [op for op in func.walk() if isinstance(op, ReturnOp)]
        if not func.attrs.get("private") or returns != func.body.ops[-1:]:
            continue
        if not _reaches(graph, func.sym_name, func.sym_name):
            result[func.sym_name] = func
    return result


def _reaches(graph: dict[str, set[str]], start: str, target: str) -> bool:
    """True if a chain of calls leads from ``start`` back to ``target``."""
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        name = todo.pop()
        if name == target:
            return True
        if name not in seen:
            seen.add(name)
            todo.extend(graph.get(name, ()))
    return False


def _inline_calls_in(func: FuncOp, inlinable: dict[str, FuncOp]) -> bool:
    changed = False
    for call in _calls(func):
        callee = inlinable.get(call.attrs["callee"])
        if callee is not None:
            _inline(call, callee, func)
            changed = True
    return changed


def _inline(call: Operation, callee: FuncOp, func: FuncOp) -> None:
    inline_call(call, callee, func)


def inline_call(
    call: Operation, callee: FuncOp, func: FuncOp, *, name_results: bool = True
) -> list[Operation]:
    """Copy ``callee``'s body before ``call``; its returned values replace the call.

    An unnamed returned value takes the call result's name unless
    ``name_results`` is false. Returns the copied ops (the GPU backend records
    where each came from).
    """
    mapping: dict[Value, Value] = dict(zip(callee.body.args, call.operands))
    copied = [insert_before(call, clone_op(op, mapping)) for op in callee.body.ops[:-1]]
    returned = [mapping.get(v, v) for v in callee.body.ops[-1].operands]
    hints = [v.name_hint for v in returned]
    replace_op(call, returned, func)
    if not name_results:
        for v, hint in zip(returned, hints):
            v.name_hint = hint
    return copied


def _remove_uncalled_helpers(module: Module) -> None:
    # Removing one helper can leave another uncalled: repeat until stable.
    while True:
        called = {c.attrs["callee"] for f in module.funcs for c in _calls(f)}
        dead = [f for f in module.funcs if f.attrs.get("private") and f.sym_name not in called]
        if not dead:
            return
        module.funcs = [f for f in module.funcs if f not in dead]
