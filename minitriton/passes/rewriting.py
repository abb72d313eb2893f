"""Small helpers shared by the passes: find, insert, replace and erase ops.

They keep the IR's invariants in one place: a replaced op's results are
rewired everywhere in its function, and a new op made by a rewrite takes the
location of the op it replaces.
"""

from __future__ import annotations

from collections.abc import Sequence

from minitriton.ir.core import Attr, Operation, OpResult, Value, replace_all_uses
from minitriton.ir.ops import ConstantOp
from minitriton.ir.types import Type


def insert_before(anchor: Operation, op: Operation) -> Operation:
    """Insert ``op`` just before ``anchor`` in ``anchor``'s block."""
    block = anchor.parent
    assert block is not None, "anchor is not in a block"
    return block.insert(block.ops.index(anchor), op)


def erase_op(op: Operation) -> None:
    """Remove ``op`` (and everything nested in it) from its block."""
    if op.parent is not None:
        op.parent.remove(op)


def replace_op(op: Operation, values: Sequence[Value], root: Operation) -> None:
    """Use ``values[i]`` wherever ``op.results[i]`` is used in ``root``; erase ``op``."""
    for old, new in zip(op.results, values):
        if new.name_hint is None:
            # Keep the source variable's name on the replacement (``%offsets``).
            new.name_hint = old.name_hint
        replace_all_uses(root, old, new)
    erase_op(op)


def is_attached(op: Operation, root: Operation) -> bool:
    """True if ``op`` is ``root`` or still nested in it (not erased)."""
    while op is not root:
        parent = op.parent_op
        if parent is None or op.parent is None or op not in op.parent.ops:
            return False
        op = parent
    return True


def constant_of(value: Value) -> Attr | None:
    """The ``value`` attribute if ``value`` comes from ``arith.constant``."""
    if isinstance(value, OpResult) and value.owner.name == "arith.constant":
        return value.owner.attrs.get("value")
    return None


def make_constant(value: int | float | bool, type: Type, like: Operation) -> Value:
    """Insert ``arith.constant`` of ``value`` before ``like``, with its location."""
    const = ConstantOp([], [type], {"value": value}, loc=like.loc)
    insert_before(like, const)
    return const.result
