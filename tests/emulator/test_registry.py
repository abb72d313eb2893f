"""``@semantics`` is keyed by op class: a name or a non-op fails at once."""

from __future__ import annotations

import pytest

from minitriton.emulator import SEMANTICS, semantics
from minitriton.emulator.registry import SemanticsFn
from minitriton.ir.core import Operation
from minitriton.ir.ops import MATH_UNARY_OPS, AddOp, DotOp, HintOp


def _noop(op: Operation, state: object) -> None:
    """A stand-in semantics function."""


@pytest.mark.parametrize("key", ["tt.dot", DotOp(), int, None])
def test_a_key_that_is_not_an_op_class_fails_when_decorating(key: object) -> None:
    with pytest.raises(TypeError, match="takes op classes"):
        semantics(key)  # type: ignore[arg-type]


def test_registering_an_op_twice_fails() -> None:
    with pytest.raises(ValueError, match="semantics of tt.hint registered twice"):
        semantics(HintOp)(_noop)
    assert SEMANTICS[HintOp] is not _noop


def test_keys_are_the_op_classes() -> None:
    assert all(isinstance(k, type) and issubclass(k, Operation) for k in SEMANTICS)
    fns: list[SemanticsFn] = [SEMANTICS[AddOp], SEMANTICS[MATH_UNARY_OPS["exp"]]]
    assert SEMANTICS[DotOp].__module__.startswith("minitriton.emulator.")
    assert all(callable(fn) for fn in fns)
    assert "arith.add" not in SEMANTICS  # type: ignore[comparison-overlap]
