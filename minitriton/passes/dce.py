"""DCE: dead-code elimination.

An op is removed when none of its results is used and running it has no
effect besides its results:

* ``Pure`` ops (:mod:`~minitriton.ir.traits`), including region ops like
  ``tt.reduce``;
* ops that only read memory (``ReadsMemory``: ``tt.load``): CSE and LICM
  never move them across a store, but an *unused* load has no visible effect
  and is deleted;
* ops whose effects are those of their regions (``RecursiveEffects``:
  ``scf.for`` and ``scf.if``) whose regions hold only such ops.

Never removed: ops that write memory (``tt.store``, atomics), have other
effects (``tt.print``, ``tt.assert``, ``tt.barrier``), may do anything
(``tt.call``: the callee may store), may not terminate (``scf.while``:
removing it could turn a hang into termination), and anything holding one of
these.

The pass walks each function backward, so the users of a value die before
its producer is visited and a dead chain goes in one sweep; it repeats until
nothing changes. It also shrinks control flow: unused results of ``scf.if``
are dropped with their yields, and unused results of ``scf.for`` when the
iter arg is simple (only passed back by the yield, or unused). A loop-carried
accumulator that nobody reads after the loop is kept (the cycle through its
yield is not analysed), unless the whole loop is dead.

Example
-------

Before::

    tt.func @kernel(%p: ptr<f32>, %x: f32) {
      %sq = arith.mul(%x, %x) : f32
      %dead = math.exp(%sq) : f32
      %unused_load = tt.load(%p) : f32
      %y = arith.add(%x, %x) : f32
      tt.store(%p, %y)
      tt.return()
    }

After::

    tt.func @kernel(%p: ptr<f32>, %x: f32) {
      %y = arith.add(%x, %x) : f32
      tt.store(%p, %y)
      tt.return()
    }

Conditions
----------

Precondition: verified IR. Postcondition: verified IR with the same
effects; no removable op has unused results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from minitriton.ir import traits
from minitriton.ir.core import Operation, replace_all_uses, use_counts
from minitriton.ir.ops import ForOp, FuncOp, IfOp
from minitriton.passes.base import FunctionPass, register_pass
from minitriton.passes.rewriting import erase_op, insert_before, is_attached

# Effects that make an op removable when its results are unused: none
# (Pure), only reading memory (nobody can observe a read), or only those of
# its regions (scf.for, scf.if: removable when their regions are).
_REMOVABLE_EFFECTS = (traits.Pure, traits.ReadsMemory, traits.RecursiveEffects)

# Effects that keep an op whatever else it declares (a dead scf.while is
# kept: removing it could turn a hang into termination).
_KEPT_EFFECTS = (
    traits.WritesMemory,
    traits.SideEffects,
    traits.UnknownEffects,
    traits.Symbol,
    traits.MayNotTerminate,
)


@register_pass
@dataclass(frozen=True)
class DCE(FunctionPass):
    """Delete ops without effects whose results nobody uses."""

    name: ClassVar[str] = "dce"

    def apply_to_function(self, func: FuncOp) -> None:
        while _remove_dead_ops(func) | _drop_unused_results(func):
            pass


def is_effect_free(op: Operation) -> bool:
    """True if running ``op`` (and its regions) changes nothing but its results."""
    # BEGIN EXERCISE c2-dce
    # STUB: raise NotImplementedError("c2-dce: is_effect_free (see the module docstring)")
    if op.has_trait(traits.Terminator):
        return True
    if any(op.has_trait(t) for t in _KEPT_EFFECTS):
        return False
    if not any(op.has_trait(t) for t in _REMOVABLE_EFFECTS):
        return False
    return all(is_effect_free(inner) for r in op.regions for inner in r.ops)
    # END EXERCISE


def _remove_dead_ops(func: FuncOp) -> bool:
    """One backward sweep; True if an op was removed."""
    # BEGIN EXERCISE c2-dce
    # STUB: raise NotImplementedError("c2-dce: one backward sweep that erases dead ops")
    counts = use_counts(func)
    changed = False
    # Backward, so that the users of a value die before its producer is
    # visited: a whole dead chain goes in one sweep.
    for op in reversed(list(func.walk())):
        if op is func or not is_attached(op, func) or not is_effect_free(op):
            continue
        if op.has_trait(traits.Terminator) or any(counts.get(id(r), 0) for r in op.results):
            continue
        for inner in op.walk():
            for v in inner.operands:
                counts[id(v)] -= 1
        erase_op(op)
        changed = True
    return changed
    # END EXERCISE


# ---------------------------------------------------------------- unused results


def _drop_unused_results(func: FuncOp) -> bool:
    """Shrink scf.if / scf.for whose results are partly unused."""
    counts = use_counts(func)
    changed = False
    for op in list(func.walk()):
        unused = [r.index for r in op.results if not counts.get(id(r), 0)]
        if not unused or not is_attached(op, func):
            continue
        if isinstance(op, IfOp):
            changed |= _shrink(op, unused, func)
        elif isinstance(op, ForOp):
            changed |= _shrink(op, [i for i in unused if _simple_iter_arg(op, i)], func)
    return changed


def _simple_iter_arg(loop: Operation, i: int) -> bool:
    """True if iter arg ``i`` is only passed back by the yield (or not used)."""
    # A loop-carried accumulator (``acc = acc + x``) feeds its own yield
    # through other ops; we keep those rather than analyse the cycle.
    body = loop.regions[0].block
    arg = body.args[i + 1]
    yield_op = body.ops[-1]
    uses = sum(v is arg for inner in body.ops for o in inner.walk() for v in o.operands)
    return uses == (1 if yield_op.operands[i] is arg else 0)


def _shrink(op: Operation, drop: list[int], func: FuncOp) -> bool:
    """Rebuild ``op`` without results ``drop`` (and their yields, inits, args)."""
    if not drop:
        return False
    keep = [r for r in op.results if r.index not in drop]
    for region in op.regions:
        term = region.block.ops[-1]
        term.operands = [v for i, v in enumerate(term.operands) if i not in drop]
    if isinstance(op, ForOp):
        _drop_iter_args(op, drop)
    operands = op.operands
    if isinstance(op, ForOp):
        operands = op.operands[:3] + [v for i, v in enumerate(op.operands[3:]) if i not in drop]
    cls = ForOp if isinstance(op, ForOp) else IfOp
    new = cls(operands, [r.type for r in keep], op.attrs, op.regions, op.loc)
    insert_before(op, new)
    # The dropped results are unused, so only the kept ones need rewiring.
    for old, fresh in zip(keep, new.results):
        fresh.name_hint = old.name_hint
        replace_all_uses(func, old, fresh)
    erase_op(op)
    return True


def _drop_iter_args(loop: Operation, drop: list[int]) -> None:
    body = loop.regions[0].block
    body.args = [a for a in body.args if a.index == 0 or a.index - 1 not in drop]
    for index, arg in enumerate(body.args):
        arg.index = index
