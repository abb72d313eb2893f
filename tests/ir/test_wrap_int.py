"""``wrap_int``: the one integer wrap-around of the frontend, the folder and the emulator."""

import numpy as np
import pytest

from minitriton.ir.types import SCALAR_NAMES, scalar, wrap_int

INT_TYPES = [t for t in map(scalar, SCALAR_NAMES) if t.is_int() and not t.is_bool()]
VALUES = [0, 1, -1, 127, 128, 255, 256, -129, 2**31, 2**32 + 5, -(2**63), 2**64 - 1, 3 * 2**64 + 7]


@pytest.mark.parametrize("t", INT_TYPES, ids=str)
def test_wrap_int_matches_numpys_two_complement_cast(t) -> None:  # noqa: ANN001
    for value in VALUES:
        expected = np.array(value % 2**64, dtype=np.uint64).astype(t.numpy)  # C-style truncation
        assert wrap_int(value, t) == int(expected), (value, t)
        assert isinstance(wrap_int(value, t), int)


def test_i1_keeps_the_low_bit_as_an_int() -> None:
    i1 = scalar("i1")
    assert [wrap_int(v, i1) for v in (0, 1, 2, 3, -1)] == [0, 1, 0, 1, 1]
    assert type(wrap_int(3, i1)) is int  # the folder turns it into a bool itself


def test_the_folder_and_the_emulator_share_it() -> None:
    from minitriton.emulator.values import scalar_constant
    from minitriton.passes.folding import wrap_int as fold_wrap

    i8, i1 = scalar("i8"), scalar("i1")
    assert fold_wrap(200, i8) == -56 and fold_wrap(3, i1) is True
    assert scalar_constant(200, i8).dtype == np.int8 and int(scalar_constant(200, i8)) == -56
    assert scalar_constant(2, i1).dtype == np.bool_ and not scalar_constant(2, i1)
