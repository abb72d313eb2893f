"""The backend's registries: keyed by IR op class, checked when a lowering is registered."""

from __future__ import annotations

import pytest

import minitriton.backend.lower  # noqa: F401 - registers every lowering
from minitriton.backend.registry import LOWERINGS, OpTable, layout_rule, lowering
from minitriton.ir.core import OP_REGISTRY, Operation
from minitriton.ir.ops import AddOp, NumProgramsOp, ProgramIdOp
from minitriton.ir.traits import Terminator


def test_a_key_that_is_not_an_op_class_fails_at_registration() -> None:
    with pytest.raises(TypeError, match="not an IR op class"):
        lowering("tt.dot")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not an IR op class"):
        lowering(int)  # type: ignore[arg-type]


def test_a_second_entry_for_a_class_fails() -> None:
    with pytest.raises(TypeError, match="registered twice"):
        lowering(AddOp)(lambda ctx, op: None)


def test_a_layout_rule_needs_a_direction() -> None:
    with pytest.raises(ValueError, match="'back' or 'fwd'"):
        layout_rule("up", AddOp)  # type: ignore[arg-type]


def test_lookup_prefers_the_class_then_its_bases() -> None:
    table = OpTable("test")

    def base_fn() -> None: ...
    def own_fn() -> None: ...

    table.register(ProgramIdOp)(base_fn)
    assert table.lookup(NumProgramsOp) is base_fn  # NumProgramsOp derives from ProgramIdOp
    table.register(NumProgramsOp)(own_fn)
    assert table.lookup(NumProgramsOp) is own_fn
    assert table.lookup(ProgramIdOp) is base_fn
    assert table.lookup(AddOp) is None


def test_every_op_with_a_meaning_on_the_gpu_has_a_lowering() -> None:
    # Terminators are lowered by their parent op; calls are inlined; the function is the kernel.
    skip = {"tt.call", "tt.func"}
    missing = [
        name
        for name, cls in OP_REGISTRY.items()
        if name not in skip and Terminator not in cls.traits and LOWERINGS.lookup(cls) is None
    ]
    assert missing == []


def test_the_lowering_of_an_op_comes_from_its_family_module() -> None:
    where = {name: LOWERINGS.lookup(cls) for name, cls in OP_REGISTRY.items()}
    families = {
        "arith.add": "arith",
        "math.exp": "math",
        "tt.load": "memory",
        "tt.broadcast": "shape",
        "tt.reduce": "reduce",
        "tt.dot": "matrix",
        "scf.for": "control",
        "tt.print": "debug",
    }
    for name, family in families.items():
        fn = where[name]
        assert fn is not None and fn.__module__ == f"minitriton.backend.lower.{family}", name


def test_an_op_without_a_lowering_gets_a_located_error() -> None:
    from minitriton.backend.build import compile_ir
    from minitriton.diagnostics import CompileError
    from minitriton.ir.parser import parse_module

    class _Mystery(Operation):
        name = "test.mystery"

    module = parse_module(
        "tt.func @k(%p: ptr<f32>) {\n  %x = arith.constant() {value = 1.0} : f32\n"
        "  tt.store(%p, %x)\n  tt.return()\n}\n",
        "k.ir",
    )
    store = module.kernel.body.ops[1]
    mystery = _Mystery([], [], {}, (), store.loc)
    module.kernel.body.block.insert(1, mystery)
    with pytest.raises(CompileError, match="cannot lower 'test.mystery'") as info:
        compile_ir(module, "sm_80", 4)
    assert "k.ir:3:" in str(info.value)
