"""Small IR accessors for the backend's passes, with the types they are known to have.

The IR's own accessors are general (an op may be outside any block, a block
may be empty, a value may be a block argument); after verification the
backend knows better, and these say so once, with an assertion, instead of
at every use.
"""

from __future__ import annotations

from minitriton.ir.core import Block, Operation, OpResult, Value


def parent_block(op: Operation) -> Block:
    """The block holding ``op`` (every op the backend rewrites is in one)."""
    assert op.parent is not None, f"{op.name} is not in a block"
    return op.parent


def terminator(block: Block) -> Operation:
    """The last op of a verified region's block (``scf.yield``, ``tt.return`` ...)."""
    term = block.terminator
    assert term is not None, "a verified block ends with its terminator"
    return term


def producer(v: Value) -> Operation | None:
    """The op whose result ``v`` is, or None for a block argument."""
    return v.owner if isinstance(v, OpResult) else None
