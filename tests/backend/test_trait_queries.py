"""The backend's op sets that come from the IR traits: which ops each one covers.

``accumulators`` lets an accumulator layout flow through an op, and
``sink-transposes`` remakes an op on transposed operands, by asking the op's
traits; these tests pin the ops each covers, including the exceptions.
"""

from __future__ import annotations

from collections.abc import Callable

import minitriton.backend.passes.software_pipeline  # noqa: F401 - registers the ttng ops
from minitriton.backend.accumulators import _propagates
from minitriton.backend.passes.sink_transposes import _lane_by_lane
from minitriton.ir.core import OP_REGISTRY, Operation


def _bare(name: str) -> Operation:
    """An op of class ``name`` without operands: the predicates read only its class."""
    cls = OP_REGISTRY[name]
    return cls.__new__(cls)


def _covered(pred: Callable[[Operation], bool]) -> set[str]:
    return {name for name in OP_REGISTRY if pred(_bare(name))}


def _arith_and_math() -> set[str]:
    return {n for n in OP_REGISTRY if n.startswith(("arith.", "math."))} - {"arith.constant"}


def test_accumulator_layouts_flow_through_arith_math_and_the_wgmma_wait() -> None:
    assert _covered(_propagates) == _arith_and_math() | {"ttng.warp_group_dot_wait"}


def test_transposes_remake_arith_math_and_addptr() -> None:
    assert _covered(_lane_by_lane) == _arith_and_math() | {"tt.addptr"}


def test_memory_ops_and_hints_are_neither() -> None:
    for name in ("tt.load", "tt.store", "tt.atomic_rmw", "tt.hint", "arith.constant", "tt.dot"):
        assert not _propagates(_bare(name)), name
        assert not _lane_by_lane(_bare(name)), name
    assert not _propagates(_bare("tt.addptr"))
    assert not _lane_by_lane(_bare("ttng.warp_group_dot_wait"))


def test_debug_mode_provenance_follows_the_view_like_ops() -> None:
    # A pointer made by one of these points into its first operand's buffer
    # (backend/provenance.py): debug mode checks it against that argument.
    from minitriton.ir.traits import ViewLike

    views = {"tt.addptr", "tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape",
             "tt.trans", "ttg.convert_layout", "tt.hint", "arith.bitcast"}  # fmt: skip
    assert _covered(lambda op: op.has_trait(ViewLike)) == views


def test_pipelined_masks_are_recomputed_with_pure_lane_by_lane_ops_and_index_views() -> None:
    # A ring load's mask is recomputed stages ahead (backend/passes/software_pipeline.py) from
    # ops that compute nothing but it: constants, arithmetic, index views.
    from minitriton.backend.passes.software_pipeline import _clonable

    views = {"tt.splat", "tt.broadcast", "tt.expand_dims", "tt.make_range", "tt.trans"}
    expected = _arith_and_math() | {"arith.constant", "tt.addptr", "tt.hint"} | views
    assert _covered(_clonable) == expected
