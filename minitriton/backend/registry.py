"""Where each op's meaning lives in the GPU backend: registries keyed by the IR op class.

Three tables, each filled by a decorator next to the code it names:

* :data:`LOWERINGS` (``@lowering(DotOp)``): how an op becomes LLVM IR; the
  functions live in ``backend/lower/<family>.py`` and take the typed
  :class:`~minitriton.backend.lower.context.LoweringContext` and the op;
* :data:`BACKWARD_RULES` and :data:`FORWARD_RULES` (``@layout_rule("back",
  StoreOp)``): the layout pass's rules (:mod:`~minitriton.backend.prepare`),
  what an op's users want of its operands (backwards) and which layout its
  results get (forwards);
* :data:`AXIS_RULES` (``@axis_rule(AddOp)``): the axis analysis's transfer
  functions (:mod:`~minitriton.backend.axis`).

A key must be an IR op class (a subclass of
:class:`~minitriton.ir.core.Operation`); anything else, or a class given a
second entry in the same table, fails when the module registering it is
imported, not when a kernel happens to use the op.

**Lookup order.** :meth:`OpTable.lookup` walks the op's class and then its
bases in method resolution order and returns the first entry: a class
registered itself wins over a shared base class. Families of ops that share
one meaning register each class (``@lowering(AddOp, SubOp, ...)``); an op
class derived from another one (``NumProgramsOp`` from ``ProgramIdOp``)
gets its own entry when its meaning differs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Literal, TypeVar

from minitriton.ir.core import Operation

#: A registered function; its exact signature is its table's (see the module doc).
F = TypeVar("F", bound=Callable[..., Any])


class OpTable:
    """One registry: op class -> function, with lookup through the class's bases.

    The functions of one table share a calling convention: a lowering is
    ``fn(ctx, op)``, a layout rule ``fn(plan, op)``, an axis rule
    ``fn(axis, op)``.
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self._entries: dict[type[Operation], Callable[..., Any]] = {}

    def register(self, *classes: type[Operation]) -> Callable[[F], F]:
        """A decorator that registers its function for each of ``classes``."""
        for cls in classes:
            if not (isinstance(cls, type) and issubclass(cls, Operation)):
                raise TypeError(f"{self.what}: {cls!r} is not an IR op class")

        def add(fn: F) -> F:
            for cls in classes:
                old = self._entries.get(cls)
                if old is not None:
                    raise TypeError(
                        f"{self.what}: {cls.__name__} ('{cls.name}') is registered twice: "
                        f"{old.__module__}.{old.__qualname__} and {fn.__module__}.{fn.__qualname__}"
                    )
                self._entries[cls] = fn
            return fn

        return add

    def lookup(self, cls: type[Operation]) -> Callable[..., Any] | None:
        """The entry of ``cls`` or of its nearest registered base class (see the module doc)."""
        for base in cls.__mro__:
            fn = self._entries.get(base)
            if fn is not None:
                return fn
        return None

    def __iter__(self) -> Iterator[type[Operation]]:
        return iter(self._entries)


LOWERINGS = OpTable("@lowering")
BACKWARD_RULES = OpTable("@layout_rule('back', ...)")
FORWARD_RULES = OpTable("@layout_rule('fwd', ...)")
AXIS_RULES = OpTable("@axis_rule")


def lowering(*classes: type[Operation]) -> Callable[[F], F]:
    """Register a GPU lowering for ops of ``classes``."""
    return LOWERINGS.register(*classes)


def layout_rule(direction: Literal["back", "fwd"], *classes: type[Operation]) -> Callable[[F], F]:
    """Register a layout rule for ops of ``classes``: ``"back"`` (users' wants) or ``"fwd"``."""
    if direction not in ("back", "fwd"):
        raise ValueError(f"@layout_rule: direction must be 'back' or 'fwd', not {direction!r}")
    return (BACKWARD_RULES if direction == "back" else FORWARD_RULES).register(*classes)


def axis_rule(*classes: type[Operation]) -> Callable[[F], F]:
    """Register an axis-analysis transfer function for ops of ``classes``."""
    return AXIS_RULES.register(*classes)
