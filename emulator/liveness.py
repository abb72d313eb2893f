"""Which values a block no longer needs after each of its ops.

A batched value is a whole NumPy array per IR value (the vector add's
pointers are 97 x 1024 int64). Dropping each value after its last use lets
the next op's result reuse the memory, so a launch touches fewer fresh pages:
that was most of a first launch's time. Plain launches do this; a launch with
listeners (debugger, tracer) keeps every value, since they read them.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from minitriton.ir.core import Block, Operation, OpResult, Value
from minitriton.ir.ops import AssertOp

#: Ops whose semantics also read their operands' own operands (an assert's
#: message shows both sides of the comparison it checks).
READS_PRODUCER_OPERANDS: tuple[type[Operation], ...] = (AssertOp,)

#: Per block: for each op, the values defined in the block whose last use it is.
_DEAD: WeakKeyDictionary[Block, list[tuple[Value, ...]]] = WeakKeyDictionary()


def dead_after(block: Block) -> list[tuple[Value, ...]]:
    """``dead[i]``: values of ``block`` (its arguments, its ops' results) last used by op ``i``."""
    dead = _DEAD.get(block)
    if dead is None:
        dead = _analyze(block)
        _DEAD[block] = dead
    return dead


def _analyze(block: Block) -> list[tuple[Value, ...]]:
    last: dict[Value, int] = {arg: 0 for arg in block.args}
    for i, op in enumerate(block.ops):
        for result in op.results:
            last[result] = i  # unused: dead at once
        for value in _uses(op):
            if value in last:
                last[value] = i
    dead: list[list[Value]] = [[] for _ in block.ops]
    for value, i in last.items():
        dead[i].append(value)
    return [tuple(values) for values in dead]


def _uses(op: Operation) -> list[Value]:
    """The operands of ``op`` and of every op nested in its regions (and what they peek at)."""
    uses = []
    for nested in op.walk():
        uses += nested.operands
        if isinstance(nested, READS_PRODUCER_OPERANDS):
            producers = [o.owner for o in nested.operands if isinstance(o, OpResult)]
            uses += [v for producer in producers for v in producer.operands]
    return uses
