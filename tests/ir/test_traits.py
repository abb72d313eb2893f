"""Op traits: every registered op declares a consistent set, and passes obey them."""

from __future__ import annotations

import pytest

import minitriton.backend.prepare  # noqa: F401 - registers the GPU backend's ops too
from minitriton.diagnostics import CompileError
from minitriton.ir import parse_module, verify_module
from minitriton.ir.core import OP_REGISTRY, Operation, Region
from minitriton.ir.traits import (
    ALL_TRAITS,
    Commutative,
    Elementwise,
    HasRegions,
    LoopLike,
    MayNotTerminate,
    MayTrap,
    Pure,
    ReadsMemory,
    Terminator,
    WritesMemory,
    trait_problems,
    trait_set,
)
from minitriton.passes.cse import CSE
from minitriton.passes.dce import DCE
from minitriton.passes.licm import LICM


def _arity(cls: type[Operation]) -> int | None:
    counts = cls.operand_counts
    return counts[0] if counts is not None and len(counts) == 1 else None


@pytest.mark.parametrize("name", sorted(OP_REGISTRY))
def test_every_registered_op_declares_a_consistent_trait_set(name: str) -> None:
    cls = OP_REGISTRY[name]
    assert cls.traits, f"{name} declares no traits"
    assert cls.traits <= set(ALL_TRAITS)
    assert trait_problems(name, cls.traits, _arity(cls)) == []


@pytest.mark.parametrize(
    ("declared", "arity", "problem"),
    [
        ((), None, "declares no effect trait"),
        ((Pure, WritesMemory), None, "is Pure and has effects"),
        ((Pure, Terminator, HasRegions), None, "a Terminator with regions"),
        ((WritesMemory, Terminator), None, "a Terminator with effects"),
        ((Pure, Commutative), 1, "Commutative without exactly two operands"),
        ((ReadsMemory, Commutative), 2, "Commutative but not Pure"),
        ((ReadsMemory, MayTrap), None, "MayTrap on an op that is not Pure"),
        ((Pure, MayNotTerminate), None, "MayNotTerminate but not a loop"),
        ((Pure, HasRegions, LoopLike), None, "a loop without its body's effects"),
        ((Pure, Elementwise, HasRegions), None, "Elementwise with regions"),
    ],
)
def test_the_checker_rejects_inconsistent_traits(
    declared: tuple, arity: int | None, problem: str
) -> None:
    assert trait_problems("x.op", declared, arity) == [f"x.op: {problem}"]


def test_trait_set_rejects_what_is_not_a_trait() -> None:
    with pytest.raises(TypeError, match="not a trait"):
        trait_set(Pure, "Pure")  # type: ignore[arg-type]


def test_an_op_that_sets_pure_instead_of_traits_fails_at_import() -> None:
    with pytest.raises(TypeError, match="declare traits instead"):
        type("LegacyOp", (Operation,), {"name": "x.legacy", "pure": False})


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("arith.add", {Pure, Elementwise, Commutative}),
        ("arith.sub", {Pure, Elementwise}),
        ("arith.div", {Pure, Elementwise, MayTrap}),
        ("tt.load", {ReadsMemory, Elementwise}),
        ("tt.store", {WritesMemory, Elementwise}),
        ("tt.atomic_rmw", {ReadsMemory, WritesMemory, Elementwise}),
        ("scf.yield", {Pure, Terminator}),
    ],
)
def test_traits_of_well_known_ops(name: str, expected: set) -> None:
    assert OP_REGISTRY[name].traits == expected


def test_the_verifier_rejects_regions_on_an_op_without_the_trait() -> None:
    module = parse_module(
        "tt.func @k(%x: f32) -> (f32) {\n  %y = arith.neg(%x) : f32\n  tt.return(%y)\n}\n"
    )
    neg = module.kernel.body.ops[0]
    neg.regions = [Region()]
    with pytest.raises(CompileError, match="has regions"):
        verify_module(module)


_EFFECTS = """\
tt.func @k(%p: ptr<f32>, %x: f32, %n: i32) {
  %zero = arith.constant() {value = 0} : i32
  %one = arith.constant() {value = 1} : i32
  %r = scf.for(%zero, %n, %one, %x) : f32 {
  ^(%i: i32, %acc: f32):
    %a = arith.mul(%x, %x) : f32
    %v = tt.load(%p) : f32
    %s = arith.add(%acc, %v) : f32
    scf.yield(%s)
  }
  %dead = tt.load(%p) : f32
  %old = tt.atomic_rmw(%p, %x) {kind = "add", sem = "acq_rel"} : f32
  tt.store(%p, %r)
  tt.return()
}
"""


def _names(module_text: str, *passes: object) -> list[str]:
    module = parse_module(module_text)
    for p in passes:
        p.apply(module)  # type: ignore[attr-defined]
        verify_module(module)
    return [op.name for op in module.kernel.walk()]


def test_passes_follow_the_traits() -> None:
    names = _names(_EFFECTS, LICM(), CSE(), DCE())
    # LICM hoisted the Pure mul, then DCE deleted it (unused); the load in
    # the loop stays (ReadsMemory), the unused load outside goes, the atomic
    # (WritesMemory) and the store stay.
    assert names.count("arith.mul") == 0
    assert names.count("tt.load") == 1
    assert "tt.atomic_rmw" in names and "tt.store" in names
    body = parse_module(_EFFECTS)
    LICM().apply(body)
    loop = next(op for op in body.kernel.walk() if op.name == "scf.for")
    assert [op.name for op in loop.regions[0].ops] == ["tt.load", "arith.add", "scf.yield"]
