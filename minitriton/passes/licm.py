"""LICM: loop-invariant code motion.

An op in the body of an ``scf.for`` (or in either region of an ``scf.while``)
is loop-invariant when all its operands are defined outside the loop; the
pass moves it just before the loop, so it runs once. Ops are visited in
order, so an op whose operands were just hoisted is hoisted too, and inner
loops are processed first, so an op can leave several loops, one level at a
time. Ops nested deeper (inside an ``scf.if`` of the body) stay.

Only pure ops without regions move. Never hoisted: ``tt.load`` (a store in
the loop may change what it reads), stores, atomics, calls, region ops (such
as ``tt.reduce``) and integer ``div``/``rem`` whose divisor is not a non-zero
constant: a hoisted op runs even if the loop runs zero times, and integer
division by zero is undefined.

Example
-------

Before::

    tt.func @kernel(%p: ptr<f32>, %x: f32, %n: i32) -> (f32) {
      %zero = arith.constant() {value = 0} : i32
      %one = arith.constant() {value = 1} : i32
      %r = scf.for(%zero, %n, %one, %x) : f32 {
      ^(%i: i32, %acc: f32):
        %two = arith.constant() {value = 2.0} : f32
        %scale = arith.mul(%x, %two) : f32
        %v = tt.load(%p) : f32
        %t = arith.mul(%v, %scale) : f32
        %s = arith.add(%acc, %t) : f32
        scf.yield(%s)
      }
      tt.return(%r)
    }

After::

    tt.func @kernel(%p: ptr<f32>, %x: f32, %n: i32) -> (f32) {
      %zero = arith.constant() {value = 0} : i32
      %one = arith.constant() {value = 1} : i32
      %two = arith.constant() {value = 2.0} : f32
      %scale = arith.mul(%x, %two) : f32
      %r = scf.for(%zero, %n, %one, %x) : f32 {
      ^(%i: i32, %acc: f32):
        %v = tt.load(%p) : f32
        %t = arith.mul(%v, %scale) : f32
        %s = arith.add(%acc, %t) : f32
        scf.yield(%s)
      }
      tt.return(%r)
    }

Conditions
----------

Precondition: verified IR. Postcondition: verified IR; no hoistable op
is left directly in a loop body.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from minitriton.ir.core import Block, Operation, Value
from minitriton.ir.ops import FuncOp
from minitriton.ir.traits import HasRegions, LoopLike, MayTrap, Pure, Terminator
from minitriton.ir.types import element_type
from minitriton.passes.base import FunctionPass, register_pass
from minitriton.passes.rewriting import constant_of, insert_before


@register_pass
@dataclass(frozen=True)
class LICM(FunctionPass):
    """Move loop-invariant pure ops out of ``scf.for`` and ``scf.while``."""

    name: ClassVar[str] = "licm"

    def apply_to_function(self, func: FuncOp) -> None:
        _visit_block(func.body.block)


def _visit_block(block: Block) -> None:
    # Inner loops first: what leaves an inner loop may then leave the outer one.
    for op in list(block.ops):
        for region in op.regions:
            _visit_block(region.block)
        if op.has_trait(LoopLike):
            _hoist_from(op)


def _hoist_from(loop: Operation) -> None:
    """Move every invariant op of ``loop``'s regions just before ``loop``."""
    inside = _defined_inside(loop)
    for region in loop.regions:
        # In order, so an op whose operands were hoisted just before it
        # becomes invariant too.
        for op in list(region.ops):
            if not _can_hoist(op, inside):
                continue
            region.block.remove(op)
            insert_before(loop, op)
            inside.difference_update(op.results)


def _defined_inside(loop: Operation) -> set[Value]:
    """Every value the loop defines: block arguments and nested results."""
    inside: set[Value] = set()
    for op in loop.walk():
        if op is not loop:
            inside.update(op.results)
        for region in op.regions:
            inside.update(region.args)
    return inside


def _can_hoist(op: Operation, inside: set[Value]) -> bool:
    # Loads, stores, atomics, calls are not Pure; region ops (reduce, nested
    # loops) and terminators stay where they are.
    if not op.has_trait(Pure) or op.has_trait(Terminator) or op.has_trait(HasRegions):
        return False
    if any(v in inside for v in op.operands):
        return False
    return not _may_trap(op)


def _may_trap(op: Operation) -> bool:
    """Integer division by a value that might be zero (the ``MayTrap`` ops: div, rem).

    A hoisted op runs even when the loop runs zero times, so it must be safe
    to run speculatively; integer division by zero is undefined.
    """
    if not op.has_trait(MayTrap):
        return False
    if not element_type(op.result.type).is_int():
        return False
    divisor = constant_of(op.operands[1])
    return divisor is None or divisor == 0
