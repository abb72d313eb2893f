"""The generated op semantics table has a filled cell for every op and column."""

from __future__ import annotations

import pytest

from minitriton.ir.core import OP_REGISTRY
from minitriton.tools.semantics_table import COLUMNS, OpRow, op_rows

ROWS = {row.op: row for row in op_rows()}


def empty_cells(row: OpRow) -> list[str]:
    """The columns of ``row`` with nothing in them (``n/a`` needs a reason)."""
    bad = []
    for column, cell in zip(COLUMNS, row.cells()):
        text = cell.strip()
        if not text or text.rstrip(" -") == "n/a" or "missing" in text:
            bad.append(column)
    return bad


def test_every_registered_op_has_a_row() -> None:
    assert sorted(ROWS) == sorted(OP_REGISTRY)


@pytest.mark.parametrize("name", sorted(ROWS))
def test_no_cell_is_empty(name: str) -> None:
    assert empty_cells(ROWS[name]) == []


def test_the_check_finds_empty_cells() -> None:
    row = OpRow("x.op", "Pure", "", "n/a", "n/a - missing", "ok", "n/a -", "ok", "none")
    assert empty_cells(row) == ["verified", "folded", "emulator", "layout"]


@pytest.mark.parametrize(
    ("name", "column", "expected"),
    [
        ("arith.add", "folded", "passes.canonicalize._add"),
        ("tt.dot", "emulator", "emulator.ops.matrix._dot"),
        ("math.exp", "emulator", "emulator.ops.math.elementwise"),
        ("arith.add", "emulator", "emulator.ops.arith.elementwise"),
        ("tt.dot", "gpu", "backend.lower.matrix.lower_dot"),
        ("math.exp", "gpu", "backend.lower.math.lower_math_unary"),
        ("tt.get_num_programs", "gpu", "backend.lower.control.lower_num_programs"),
        ("arith.add", "axis", "backend.axis._arith_add"),
        ("tt.load", "traits", "ReadsMemory, Elementwise"),
        ("tt.store", "layout", "backend.prepare._back_tt_store, backend.prepare._fwd_tt_store"),
        ("tt.sort", "layout", "backend.prepare._back_tt_scan, backend.prepare._fwd_tt_scan"),
        ("tt.trans", "verified", "ir.ops.TransOp.verify_; declared: operands 1; attributes order"),
        ("tt.assert", "verified", "declared: operands 1; attributes message"),
        ("scf.yield", "verified", "by its parent op's verify_"),
        ("ttng.warp_group_dot", "verified", "backend.ops._Effect.verify_; declared: operands 2"),
    ],
)
def test_cells_point_at_the_code(name: str, column: str, expected: str) -> None:
    assert getattr(ROWS[name], column).startswith(expected)
