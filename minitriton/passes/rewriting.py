"""Small helpers shared by the passes: find, insert, replace and erase ops.

They keep the IR's invariants in one place: a replaced op's results are
rewired everywhere in its function, and a new op made by a rewrite takes the
location of the op it replaces.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from minitriton.ir.core import Attr, Operation, OpResult, Value, replace_all_uses
from minitriton.ir.ops import ConstantOp
from minitriton.ir.types import Type


def insert_before(anchor: Operation, op: Operation) -> Operation:
    """Insert ``op`` just before ``anchor`` in ``anchor``'s block."""
    block = anchor.parent
    assert block is not None, "anchor is not in a block"
    if _USE_INDEXES:  # the new op's uses must be found by later replacements
        index = _USE_INDEXES[-1][1]
        for inner in op.walk():
            for v in inner.operands:
                index.setdefault(id(v), []).append(inner)
    # Passes insert in the order they sweep: searching near the last position keeps a
    # sweep that folds many ops linear (a 400-term tl.randn chain spent seconds here).
    return block.insert(block.index_of(anchor), op)


def erase_op(op: Operation) -> None:
    """Remove ``op`` (and everything nested in it) from its block."""
    if op.parent is not None:
        op.parent.remove(op)


def replace_op(op: Operation, values: Sequence[Value], root: Operation) -> None:
    """Use ``values[i]`` wherever ``op.results[i]`` is used in ``root``; erase ``op``."""
    index = _USE_INDEXES[-1][1] if _USE_INDEXES and _USE_INDEXES[-1][0] is root else None
    for old, new in zip(op.results, values):
        if new.name_hint is None:
            # Keep the source variable's name on the replacement (``%offsets``).
            new.name_hint = old.name_hint
        if index is None:
            replace_all_uses(root, old, new)
        else:
            _replace_indexed(index, old, new)
    erase_op(op)


#: The innermost :func:`use_index`: its root and the users of each value (by id).
_USE_INDEXES: list[tuple[Operation, dict[int, list[Operation]]]] = []


@contextmanager
def use_index(root: Operation) -> Iterator[None]:
    """Within it, :func:`replace_op` on ``root`` finds uses in an index built once.

    Without it each replacement walks all of ``root``, so that a pass making
    one replacement per op is quadratic in the function's size (a chain of a
    thousand equal comparisons took seconds to CSE). New ops must be
    inserted with :func:`insert_before`, which indexes their uses; a pass
    that sets an existing op's operands itself must not use the index.
    """
    index: dict[int, list[Operation]] = {}
    for op in root.walk():
        for v in op.operands:
            index.setdefault(id(v), []).append(op)
    _USE_INDEXES.append((root, index))
    try:
        yield
    finally:
        _USE_INDEXES.pop()


def users_of(value: Value) -> list[Operation] | None:
    """The ops of the innermost :func:`use_index`'s root that use ``value``; None outside one."""
    if not _USE_INDEXES:
        return None
    root, index = _USE_INDEXES[-1]
    return [op for op in index.get(id(value), []) if is_attached(op, root)]


def _replace_indexed(index: dict[int, list[Operation]], old: Value, new: Value) -> None:
    users = index.pop(id(old), [])
    for user in users:
        user.operands = [new if v is old else v for v in user.operands]
    index.setdefault(id(new), []).extend(users)


def is_attached(op: Operation, root: Operation) -> bool:
    """True if ``op`` is ``root`` or still nested in it (not erased)."""
    # Block.remove clears an erased op's parent: no need to search the block's list.
    while op is not root:
        parent = op.parent_op
        if parent is None or op.parent is None:
            return False
        op = parent
    return True


def constant_of(value: Value) -> Attr | None:
    """The ``value`` attribute if ``value`` comes from ``arith.constant``."""
    if isinstance(value, OpResult) and isinstance(value.owner, ConstantOp):
        return value.owner.attrs.get("value")
    return None


def make_constant(value: int | float | bool, type: Type, like: Operation) -> Value:
    """Insert ``arith.constant`` of ``value`` before ``like``, with its location."""
    const = ConstantOp([], [type], {"value": value}, loc=like.loc)
    insert_before(like, const)
    return const.result
