"""The op registry: every op module's list of ops is complete, and names stay unique."""

from __future__ import annotations

import inspect
from types import ModuleType

import pytest

import minitriton.backend.ops as backend_ops
import minitriton.ir.ops as ir_ops
from minitriton.ir.core import OP_REGISTRY, Operation, register_ops


def _op_classes(module: ModuleType) -> list[type[Operation]]:
    """The op classes ``module`` defines that name an op of their own."""
    candidates = list(vars(module).values())
    if module is ir_ops:  # the math functions' ops are made by a factory, kept in tables
        candidates += [*ir_ops.MATH_UNARY_OPS.values(), *ir_ops.MATH_BINARY_OPS.values()]
    return [
        cls
        for cls in candidates
        if inspect.isclass(cls)
        and issubclass(cls, Operation)
        and "name" in vars(cls)
        and cls.__module__ == module.__name__
    ]


@pytest.mark.parametrize("module", [ir_ops, backend_ops], ids=lambda m: m.__name__)
def test_every_op_class_of_a_module_is_registered(module: ModuleType) -> None:
    classes = _op_classes(module)
    assert len(classes) > 10
    missing = [cls.__name__ for cls in classes if OP_REGISTRY.get(cls.name) is not cls]
    assert missing == []


def test_the_registry_holds_the_ops_of_the_two_modules_only() -> None:
    expected = {cls.name for m in (ir_ops, backend_ops) for cls in _op_classes(m)}
    assert set(OP_REGISTRY) == expected


def test_backend_ops_are_the_ttg_and_ttng_ones() -> None:
    names = {cls.name for cls in _op_classes(backend_ops)}
    assert names and all(n.startswith(("ttg.", "ttng.")) for n in names)
    kernel = {cls.name for cls in _op_classes(ir_ops)}
    assert not any(n.startswith(("ttg.", "ttng.")) for n in kernel)


def test_a_taken_name_fails_and_changes_nothing() -> None:
    class Impostor(Operation):
        name = "arith.add"

    class Newcomer(Operation):
        name = "test.newcomer"

    before = dict(OP_REGISTRY)
    with pytest.raises(TypeError, match="'arith.add' is taken by AddOp"):
        register_ops(Newcomer, Impostor)
    assert before == OP_REGISTRY  # not even the newcomer


def test_two_classes_of_one_name_in_one_list_fail() -> None:
    class First(Operation):
        name = "test.twice"

    class Second(Operation):
        name = "test.twice"

    with pytest.raises(TypeError, match="'test.twice' is taken by First"):
        register_ops(First, Second)
    assert "test.twice" not in OP_REGISTRY


def test_a_class_without_a_name_of_its_own_fails() -> None:
    class Unnamed(ir_ops.AddOp):  # inherits "arith.add"
        pass

    before = dict(OP_REGISTRY)
    with pytest.raises(TypeError, match="Unnamed declares no op name of its own"):
        register_ops(Unnamed)
    assert before == OP_REGISTRY


def test_registering_a_class_again_is_harmless() -> None:
    before = dict(OP_REGISTRY)
    register_ops(ir_ops.AddOp, backend_ops.LocalAllocOp)
    assert before == OP_REGISTRY
