"""Tensor-core layouts (mma_v2 accumulator, dot operands) against the PTX ISA's fragment tables.

The expected tables below are written from the PTX ISA's "Matrix Fragments
for mma.m16n8k16 / m16n8k8 / m16n8k32" sections (``g = lane / 4``,
``t = lane % 4``), independently of the layout code.
"""

from __future__ import annotations

import pytest

from minitriton.backend.layouts import (
    MmaParams,
    dot_operand_layout,
    mma_layout,
    mma_warps,
)


def coord(layout, tid: int, reg: int) -> tuple[int, ...]:
    """The element thread ``tid`` holds in register ``reg`` (brute force from the bases)."""
    lane, warp = tid % 32, tid // 32
    out = [0] * layout.rank
    for bits, bases in (
        (reg, layout.reg_bases),
        (lane, layout.lane_bases),
        (warp, layout.warp_bases),
    ):
        for i, b in enumerate(bases):
            if bits >> i & 1:
                out = [x ^ y for x, y in zip(out, b)]
    return tuple(out)


# The ISA's tables: (lane, element index) -> (row, col) of the fragment.
def isa_acc(lane: int, i: int) -> tuple[int, int]:
    g, t = lane // 4, lane % 4
    return (g + 8 * (i >= 2), 2 * t + i % 2)


def isa_a_f16(lane: int, i: int) -> tuple[int, int]:
    g, t = lane // 4, lane % 4
    row = g if i in (0, 1, 4, 5) else g + 8
    col = 2 * t + i % 2 + (8 if i >= 4 else 0)
    return (row, col)


def isa_b_f16(lane: int, i: int) -> tuple[int, int]:
    g, t = lane // 4, lane % 4
    return (2 * t + i % 2 + (8 if i >= 2 else 0), g)


def isa_a_tf32(lane: int, i: int) -> tuple[int, int]:
    g, t = lane // 4, lane % 4
    return (g + 8 * (i in (1, 3)), t + 4 * (i >= 2))


def isa_b_tf32(lane: int, i: int) -> tuple[int, int]:
    g, t = lane // 4, lane % 4
    return (t + 4 * i, g)


def isa_a_s8(lane: int, i: int) -> tuple[int, int]:
    g, t = lane // 4, lane % 4
    row = g if (i < 4 or 8 <= i < 12) else g + 8
    col = 4 * t + (i & 3) + (16 if i >= 8 else 0)
    return (row, col)


def isa_b_s8(lane: int, i: int) -> tuple[int, int]:
    g, t = lane // 4, lane % 4
    return (4 * t + (i & 3) + (16 if i >= 4 else 0), g)


ONE_WARP = MmaParams((1, 1))


def test_accumulator_matches_the_isa():
    layout = mma_layout(ONE_WARP, (16, 8))
    assert layout.num_regs == 4
    for lane in range(32):
        assert [coord(layout, lane, i) for i in range(4)] == [isa_acc(lane, i) for i in range(4)]


@pytest.mark.parametrize(
    "op_idx, bits, shape, n, table",
    [
        (0, 16, (16, 16), 8, isa_a_f16),
        (1, 16, (16, 8), 4, isa_b_f16),
        (0, 32, (16, 8), 4, isa_a_tf32),
        (1, 32, (8, 8), 2, isa_b_tf32),
        (0, 8, (16, 32), 16, isa_a_s8),
        (1, 8, (32, 8), 8, isa_b_s8),
    ],
)
def test_operand_fragments_match_the_isa(op_idx, bits, shape, n, table):
    layout = dot_operand_layout(ONE_WARP, op_idx, bits, shape)
    assert layout.num_regs == n
    for lane in range(32):
        assert [coord(layout, lane, i) for i in range(n)] == [table(lane, i) for i in range(n)]


def test_a_wrong_table_is_rejected():
    # The checker above must be able to fail: B's table is not A's.
    layout = dot_operand_layout(ONE_WARP, 0, 16, (16, 16))
    got = [coord(layout, lane, i) for lane in range(32) for i in range(8)]
    assert got != [isa_b_f16(lane, i % 4) for lane in range(32) for i in range(8)]


def test_warps_per_tile_follow_triton():
    assert mma_warps((128, 128), 4, False) == (2, 2)
    assert mma_warps((128, 256), 8, False) == (2, 4)
    assert mma_warps((64, 64), 4, False) == (2, 2)
    assert mma_warps((128, 64), 4, True) == (4, 1)
    assert (
        str(MmaParams((2, 2)))
        == "nvidia_mma<versionMajor=2, warpsPerCTA=[2, 2], instrShape=[16, 8]>"
    )


@pytest.mark.parametrize("wpc", [(2, 2), (4, 1), (1, 4), (2, 4)])
def test_accumulator_covers_the_block_once(wpc):
    shape = (128, 64)
    layout = mma_layout(MmaParams(wpc), shape)
    threads = 32 * wpc[0] * wpc[1]
    seen = [coord(layout, tid, r) for tid in range(threads) for r in range(layout.num_regs)]
    assert len(seen) == len(set(seen)) == 128 * 64
    # Warp w holds rows 16 (w // wn) ... of the CTA tile and columns 8 (w % wn) ...
    wm, wn = wpc
    for w in range(threads // 32):
        assert coord(layout, 32 * w, 0) == (16 * (w // wn), 8 * (w % wn))


def test_operands_replicate_over_the_other_warps():
    params = MmaParams((2, 2))
    a = dot_operand_layout(params, 0, 16, (64, 32))
    b = dot_operand_layout(params, 1, 16, (32, 64))
    # Warp bit 0 moves along N: A does not change with it, B does.
    assert a.warp_bases == ((0, 0), (16, 0))
    assert b.warp_bases == ((0, 8), (0, 0))
    for layout, shape in ((a, (64, 32)), (b, (32, 64))):
        held = {coord(layout, t, r) for t in range(128) for r in range(layout.num_regs)}
        assert len(held) == shape[0] * shape[1]


def test_accumulator_is_the_next_dots_a_operand():
    # Attention: P = dot(q, k) (M x 64, fp32) becomes the fp16 A operand of dot(p, v).
    params = MmaParams((4, 1))
    assert mma_layout(params, (128, 64)) == dot_operand_layout(params, 0, 16, (128, 64))
    # Not with warps along N, nor for 32-bit operands.
    assert mma_layout(MmaParams((2, 2)), (64, 64)) != dot_operand_layout(
        MmaParams((2, 2)), 0, 16, (64, 64)
    )
    assert mma_layout(params, (128, 64)) != dot_operand_layout(params, 0, 32, (128, 64))
