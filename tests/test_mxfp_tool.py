"""``minitriton.tools.mxfp`` (``triton.tools.mxfp``): the MX formats' host-side helpers."""

from __future__ import annotations

import pytest

from minitriton.tools.mxfp import E2M1_VALUES, MXFP4Tensor, MXScaleTensor

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def test_fp4_rounds_to_nearest_even_and_clamps() -> None:
    x = torch.tensor([0.0, -0.0, 0.2, 0.25, 0.3, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 5.1, 7.0, -7.0,
                      float("inf"), float("-inf"), float("nan"), -1.5])  # fmt: skip
    codes = MXFP4Tensor(x).data.tolist()
    # magnitudes 0, .5, 1, 1.5, 2, 3, 4, 6 are codes 0..7; a tie goes to the even code
    assert codes == [0, 8, 0, 0, 1, 2, 2, 4, 4, 6, 6, 7, 7, 15, 7, 15, 7, 11]


def test_every_fp4_code_round_trips() -> None:
    codes = torch.arange(16, dtype=torch.uint8)
    t = MXFP4Tensor(size=16)
    t.data = codes
    values = t.to(torch.float32)
    expected = [v for v in E2M1_VALUES] + [-v for v in E2M1_VALUES]
    assert values.tolist() == expected
    assert torch.signbit(values[8])  # 0b1000 is -0
    assert torch.equal(MXFP4Tensor(values).data, codes)


@pytest.mark.parametrize(("shape", "dim"), [((6, 7), 1), ((5, 4), 0), ((3, 5, 2), 1)])
def test_packing_puts_the_first_code_in_the_low_nibble(shape: tuple[int, ...], dim: int) -> None:
    t = MXFP4Tensor(size=shape).random()
    packed = t.to_packed_tensor(dim)
    assert packed.shape[dim] == (shape[dim] + 1) // 2
    first = packed.select(dim, 0)
    assert torch.equal(first & 0xF, t.data.select(dim, 0))
    assert torch.equal(first >> 4, t.data.select(dim, 1))
    assert torch.equal(t.unpack_packed_tensor(packed, dim, shape), t.data)


def test_scales_are_the_floor_of_log2_and_nan_otherwise() -> None:
    x = torch.tensor([1.0, 1.9, 0.5, 3.0, 2.0**-127, 2.0**127 * 1.5, 0.0, -2.0, float("nan"),
                      float("inf")])  # fmt: skip
    s = MXScaleTensor(x)
    assert s.data.tolist() == [127, 127, 126, 128, 0, 254, 255, 255, 255, 255]
    back = s.to(torch.float32)
    assert back[:4].tolist() == [1.0, 1.0, 0.5, 2.0] and torch.isnan(back[6:]).all()


def test_random_scales_stay_within_bounds_and_are_never_nan() -> None:
    s = MXScaleTensor(size=(4096,)).random(low=0.5, high=8.0)
    assert int(s.data.min()) >= 126 and int(s.data.max()) <= 130
    assert int(MXScaleTensor(size=4096).random().data.max()) <= 254


def test_either_data_or_a_size_is_needed() -> None:
    with pytest.raises(ValueError, match="Either parameter data or size"):
        MXFP4Tensor()
    with pytest.raises(ValueError, match="Either parameter data or size"):
        MXScaleTensor()
