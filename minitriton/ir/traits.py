"""Op traits: what passes and checkers may assume about an op, declared once.

Every op class lists its traits in ``traits``; passes ask
``op.has_trait(Pure)`` instead of keeping their own lists of op names, so a
new op is handled everywhere by declaring what it is. The traits:

Effects (every op declares at least one):

* :class:`Pure`: the results are its only effect, computed from the operands
  alone. Pure ops may be merged (CSE), hoisted (LICM) and deleted (DCE).
* :class:`ReadsMemory`: reads the global memory its first operand points to
  (``tt.load``, atomics). Never merged or hoisted (a store may change what it
  reads); deleted when unused if it writes nothing.
* :class:`WritesMemory`: writes the memory its first operand points to
  (``tt.store``, atomics). Never deleted.
* :class:`SideEffects`: an effect outside memory: printing, failing the
  program, synchronising threads. Never deleted or moved.
* :class:`UnknownEffects`: may do anything (``tt.call``: the callee may
  store or print). Never deleted or moved.
* :class:`RecursiveEffects`: an op with regions whose effects are those of
  the ops inside (``scf.for``, ``scf.if``, ``scf.while``).

Others:

* :class:`MayNotTerminate`: may run forever (``scf.while``); deleting it
  could turn a hang into termination.
* :class:`MayTrap`: undefined for some operand values (integer division by
  zero), so it must not run where the source would not run it.
* :class:`Elementwise`: result lane ``i`` depends only on lane ``i`` of each
  block operand, all of one shape, so any one layout serves operands and
  results alike.
* :class:`ViewLike`: the result is a view of the first operand: the same
  data moved, reshaped, offset or read as another type (``tt.broadcast``,
  ``tt.addptr``, ``arith.bitcast``...), so a pointer result points into the
  buffer the first operand points into.
* :class:`Commutative`: two operands that may be swapped.
* :class:`Terminator`: ends a block.
* :class:`HasRegions`: has regions (loop bodies, branches, combiners).
* :class:`LoopLike`: runs a region repeatedly (``scf.for``, ``scf.while``).
* :class:`Symbol`: defines a function (``tt.func``).

:func:`trait_problems` lists what is inconsistent in an op class's traits;
a test runs it on every registered op.
"""

from __future__ import annotations

from collections.abc import Iterable


class Trait:
    """Base class of the trait markers; a trait is the class itself, never an instance."""

    #: One line for the docs' semantics table.
    summary = ""


class Pure(Trait):
    """No effect besides the results."""

    summary = "no effect besides its results"


class ReadsMemory(Trait):
    """Reads the global memory its first operand points to."""

    summary = "reads memory"


class WritesMemory(Trait):
    """Writes the global memory its first operand points to."""

    summary = "writes memory"


class SideEffects(Trait):
    """Prints, fails the program or synchronises threads."""

    summary = "an effect outside memory"


class UnknownEffects(Trait):
    """May do anything (a call)."""

    summary = "may do anything"


class RecursiveEffects(Trait):
    """Its effects are those of the ops in its regions."""

    summary = "the effects of its regions"


class MayNotTerminate(Trait):
    """May run forever."""

    summary = "may run forever"


class MayTrap(Trait):
    """Undefined for some operand values (integer division by zero)."""

    summary = "undefined for some operands"


class Elementwise(Trait):
    """Lane ``i`` of the result depends on lane ``i`` of each operand only."""

    summary = "lane by lane"


class ViewLike(Trait):
    """The result is a view of the first operand (a pointer result: into its buffer)."""

    summary = "a view of its first operand"


class Commutative(Trait):
    """The two operands may be swapped."""

    summary = "commutative"


class Terminator(Trait):
    """Ends a block."""

    summary = "ends a block"


class HasRegions(Trait):
    """Holds regions."""

    summary = "holds regions"


class LoopLike(Trait):
    """Runs a region repeatedly."""

    summary = "a loop"


class Symbol(Trait):
    """Defines a named function."""

    summary = "defines a function"


#: The effect traits; every op declares at least one.
EFFECTS: tuple[type[Trait], ...] = (
    Pure,
    ReadsMemory,
    WritesMemory,
    SideEffects,
    UnknownEffects,
    RecursiveEffects,
    Symbol,
)

#: Every trait, in the order the docs list them.
ALL_TRAITS: tuple[type[Trait], ...] = (
    *EFFECTS,
    MayNotTerminate,
    MayTrap,
    Elementwise,
    ViewLike,
    Commutative,
    Terminator,
    HasRegions,
    LoopLike,
)

Traits = frozenset[type[Trait]]


def trait_set(*items: type[Trait]) -> Traits:
    """The trait set of an op class: ``traits = trait_set(Pure, Elementwise)``."""
    for item in items:
        if not (isinstance(item, type) and issubclass(item, Trait)):
            raise TypeError(f"{item!r} is not a trait")
    return frozenset(items)


def trait_problems(name: str, declared: Iterable[type[Trait]], arity: int | None) -> list[str]:
    """What is inconsistent in op ``name``'s traits (empty when all is well).

    ``arity`` is the op's fixed operand count, or None when it varies.
    """
    have = set(declared)
    problems: list[str] = []

    def need(cond: bool, message: str) -> None:
        if not cond:
            problems.append(f"{name}: {message}")

    need(bool(have & set(EFFECTS)), "declares no effect trait")
    need(not (Pure in have and len(have & set(EFFECTS)) > 1), "is Pure and has effects")
    need(RecursiveEffects not in have or HasRegions in have, "RecursiveEffects without regions")
    need(LoopLike not in have or RecursiveEffects in have, "a loop without its body's effects")
    need(MayNotTerminate not in have or LoopLike in have, "MayNotTerminate but not a loop")
    need(Symbol not in have or HasRegions in have, "a Symbol without a body")
    need(not (Terminator in have and HasRegions in have), "a Terminator with regions")
    need(Terminator not in have or Pure in have, "a Terminator with effects")
    need(Commutative not in have or arity == 2, "Commutative without exactly two operands")
    need(Commutative not in have or Pure in have, "Commutative but not Pure")
    need(MayTrap not in have or Pure in have, "MayTrap on an op that is not Pure")
    need(not (Elementwise in have and HasRegions in have), "Elementwise with regions")
    need(ViewLike not in have or Pure in have, "ViewLike but not Pure")
    return problems
