"""Layouts: Triton's default blocked encodings and the linear-layout transforms."""

from __future__ import annotations

from minitriton.backend.layouts import (
    BlockedParams,
    blocked,
    default_params,
    expand_layout,
    restrict,
    slice_layout,
    squeeze_layout,
)


def owners(layout, tid):
    """Coordinates held by thread ``tid`` (brute force from the bases)."""
    lane, warp = tid % 32, tid // 32
    base = [0] * layout.rank
    for bits, bases in ((lane, layout.lane_bases), (warp, layout.warp_bases)):
        for i, b in enumerate(bases):
            if bits >> i & 1:
                base = [x ^ y for x, y in zip(base, b)]
    return {tuple(x ^ y for x, y in zip(base, c)) for c in layout.reg_coords()}


def test_default_params_match_triton():
    assert str(default_params((1024,), 4, 4)) == "blocked<spt=[4], tpw=[32], wpc=[4], order=[0]>"
    assert str(default_params((64, 32), 4, 4)) == (
        "blocked<spt=[1, 4], tpw=[4, 8], wpc=[4, 1], order=[1, 0]>"
    )
    assert str(default_params((128, 128), 8, 8)) == (
        "blocked<spt=[1, 8], tpw=[2, 16], wpc=[8, 1], order=[1, 0]>"
    )


def test_blocked_covers_every_element_once_per_owner():
    shape = (64, 32)
    layout = blocked(default_params(shape, 4, 4), shape)
    seen = {}
    for tid in range(128):
        for c in owners(layout, tid):
            seen[c] = seen.get(c, 0) + 1
    assert len(seen) == 64 * 32 and set(seen.values()) == {1}
    assert layout.contiguous_run() == (1, 4)


def test_small_blocks_replicate():
    layout = blocked(BlockedParams((4,), (32,), (4,), (0,)), (8,))
    assert layout.num_regs == 4
    assert layout.replicated_lane_mask() == 0b11110 and layout.replicated_warp_mask() == 0b11
    assert owners(layout, 0) == owners(layout, 2 * 1 + 32 * 2) == {(0,), (1,), (2,), (3,)}


def test_slice_expand_restrict_round_trip():
    parent = blocked(default_params((64, 32), 4, 4), (64, 32))
    rows = slice_layout(parent, 1)
    assert rows.shape == (64,)
    back = expand_layout(rows, 1)
    assert back == restrict(parent, (64, 1))
    assert str(back) == str(parent)
    assert squeeze_layout(back, 1) == rows


def test_slice_keeps_the_rows_each_thread_owned():
    parent = blocked(default_params((64, 32), 4, 4), (64, 32))
    rows = slice_layout(parent, 1)
    for tid in range(0, 128, 7):
        assert owners(rows, tid) == {(r,) for r, _ in owners(parent, tid)}
