"""Deep copies of ops and modules.

A clone has fresh :class:`~minitriton.ir.core.Value` objects everywhere, the
same types, attributes (deep-copied), name hints and locations. Operands that
refer to values defined outside the cloned op are kept as they are, unless
``mapping`` maps them to something else; this is what the inliner uses to
substitute call arguments for a callee's parameters.
"""

from __future__ import annotations

import copy

from minitriton.ir.core import Block, Operation, Region, Value
from minitriton.ir.ops import FuncOp, Module


def clone_op(op: Operation, mapping: dict[Value, Value] | None = None) -> Operation:
    """A deep copy of ``op``; ``mapping`` (old -> new value) is read and extended."""
    mapping = {} if mapping is None else mapping
    operands = [mapping.get(v, v) for v in op.operands]
    # Regions first: they may use values from outside ``op``, never its results.
    regions = [clone_region(r, mapping) for r in op.regions]
    types = [r.type for r in op.results]
    new = type(op)(operands, types, copy.deepcopy(op.attrs), regions, op.loc)
    for old_result, new_result in zip(op.results, new.results):
        new_result.name_hint = old_result.name_hint
        mapping[old_result] = new_result
    return new


def clone_region(region: Region, mapping: dict[Value, Value]) -> Region:
    """A deep copy of ``region`` (its block arguments become fresh values)."""
    old = region.block
    block = Block([a.type for a in old.args], [a.name_hint for a in old.args])
    mapping.update(zip(old.args, block.args))
    for op in old.ops:
        block.append(clone_op(op, mapping))
    return Region(block)


def clone_module(module: Module) -> Module:
    """A deep copy of ``module``; the original is never touched."""
    funcs = [clone_op(f) for f in module.funcs]
    assert all(isinstance(f, FuncOp) for f in funcs)
    copy = Module(funcs)  # type: ignore[arg-type]
    copy.target = getattr(module, "target", None)
    return copy
