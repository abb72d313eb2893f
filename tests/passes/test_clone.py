"""``minitriton.ir.clone``: deep copies that share nothing with the original."""

from __future__ import annotations

from pathlib import Path

from minitriton.ir import parse_module, print_module
from minitriton.ir.clone import clone_module

LOOP = (Path(__file__).parent / "goldens" / "pipeline" / "loop_kernel.ir").read_text()


def test_clone_prints_the_same_with_locations() -> None:
    module = parse_module(LOOP, "loop.ir")
    copy = clone_module(module)
    assert print_module(copy, with_locs=True) == print_module(module, with_locs=True)


def test_clone_shares_no_op_value_or_attribute() -> None:
    module = parse_module(LOOP)
    copy = clone_module(module)
    old_ops, new_ops = list(module.walk()), list(copy.walk())
    assert len(old_ops) == len(new_ops)
    old_values = {id(v) for op in old_ops for v in (*op.results, *op.operands)}
    for old, new in zip(old_ops, new_ops):
        assert old is not new and new.loc == old.loc
        assert not any(id(v) in old_values for v in (*new.results, *new.operands))
        assert new.attrs == old.attrs
    # Mutating the copy leaves the original untouched.
    copy.funcs[0].attrs["sym_name"] = "other"
    new_ops[1].attrs["axis"] = 2
    assert print_module(module) == LOOP
