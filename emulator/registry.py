"""The one registry of op semantics: ``@semantics(AddOp)``.

Each op's run-time meaning is one small function registered here under the
op's class. It receives the op, the :class:`~minitriton.emulator.interpreter.ProgramState`
it runs in and the runtime values of its operands, and returns its results
(one :class:`~minitriton.emulator.values.RVal`, a sequence of them, or
``None`` for ops without results)::

    @semantics(HintOp)
    def _hint(op, state, x):
        return x  # hints never change values

Keys are op classes, not names, so a misspelt op fails when its module is
imported (a ``NameError``, or the ``TypeError`` below for anything that is not
an op class), never when a kernel first reaches it. The test that every op
in ``OP_REGISTRY`` has semantics catches a forgotten one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minitriton.ir.core import Operation

SemanticsFn = Callable[..., Any]

#: Op class -> the function that executes it.
SEMANTICS: dict[type[Operation], SemanticsFn] = {}


def semantics(*ops: type[Operation]) -> Callable[[SemanticsFn], SemanticsFn]:
    """Register the decorated function as the semantics of the op classes ``ops``."""
    for cls in ops:
        if not (isinstance(cls, type) and issubclass(cls, Operation)):
            raise TypeError(f"@semantics takes op classes, got {cls!r}")

    def register(fn: SemanticsFn) -> SemanticsFn:
        for cls in ops:
            if cls in SEMANTICS:
                raise ValueError(f"semantics of {cls.name} registered twice")
            SEMANTICS[cls] = fn
        return fn

    return register
