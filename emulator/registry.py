"""The one registry of op semantics: ``@semantics("arith.add")``.

Each op's run-time meaning is one small function registered here under the
op's name. It receives the op, the :class:`~minitriton.emulator.interpreter.ProgramState`
it runs in and the runtime values of its operands, and returns its results
(one :class:`~minitriton.emulator.values.RVal`, a sequence of them, or
``None`` for ops without results)::

    @semantics("tt.hint")
    def _hint(op, state, x):
        return x  # hints never change values
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SemanticsFn = Callable[..., Any]

#: Op name -> the function that executes it.
SEMANTICS: dict[str, SemanticsFn] = {}


def semantics(*names: str) -> Callable[[SemanticsFn], SemanticsFn]:
    """Register the decorated function as the semantics of the ops ``names``."""

    def register(fn: SemanticsFn) -> SemanticsFn:
        for name in names:
            if name in SEMANTICS:
                raise ValueError(f"semantics of {name} registered twice")
            SEMANTICS[name] = fn
        return fn

    return register
