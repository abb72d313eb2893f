"""The MMA v3 accumulator layout, swizzled shared tiles and the wgmma shape choice."""

from __future__ import annotations

import pytest

from minitriton.backend.layouts import WARP_SIZE
from minitriton.backend.mma_v3 import accumulator_layout, is_mma_layout, shape_for
from minitriton.backend.shared_layout import SharedTile, choose_swizzle


def _coord(layout, reg: int, lane: int, warp: int) -> tuple[int, int]:
    out = [0, 0]
    parts = ((reg, layout.reg_bases), (lane, layout.lane_bases), (warp, layout.warp_bases))
    for bits, bases in parts:
        for i, basis in enumerate(bases):
            if bits >> i & 1:
                out = [o ^ b for o, b in zip(out, basis)]
    return tuple(out)


@pytest.mark.parametrize(
    ("m", "n", "warps"), [(128, 128, 4), (128, 256, 8), (64, 128, 8), (256, 64, 4)]
)
def test_accumulator_layout_is_the_wgmma_fragment(m, n, warps):
    shape = shape_for(m, n, 64, "f16", warps)
    layout = accumulator_layout(shape)
    seen = set()
    per = shape.instr_n // 2
    for warp in range(warps):
        g, w = divmod(warp, 4)
        g_m, g_n = g % shape.wg_m, g // shape.wg_m
        for lane in range(WARP_SIZE):
            for reg in range(layout.num_regs):
                instr, i = divmod(reg, per)
                mi, ni = divmod(instr, shape.n_reps)
                # PTX ISA, wgmma D fragment: row = 16w + l/4 (+8), col = 8j + 2(l%4) (+1).
                row = 64 * (g_m + shape.wg_m * mi) + 16 * w + lane // 4 + 8 * (i >> 1 & 1)
                col = shape.n_per_wg * g_n + shape.instr_n * ni + 8 * (i >> 2) + 2 * (lane % 4)
                col += i & 1
                assert _coord(layout, reg, lane, warp) == (row, col)
                seen.add((row, col))
    assert len(seen) == m * n  # every element exactly once
    assert is_mma_layout(layout)
    assert str(layout).startswith(f"nvidia_mma<versionMajor=3, warpsPerCTA=[{4 * shape.wg_m}, ")


def test_shapes_that_do_not_fit_are_refused():
    assert shape_for(32, 64, 64, "f16", 4) is None  # M below one warpgroup's 64 rows
    assert shape_for(128, 64, 64, "f16", 2) is None  # not a whole warpgroup
    assert shape_for(64, 64, 24, "f16", 4) is None  # K not a multiple of 16
    assert shape_for(64, 64, 16, "s8", 4) is None  # int8 needs K steps of 32
    assert shape_for(64, 512, 64, "f16", 4).n_reps == 2  # N above 256: two instructions


TILES = [((64, 64), 1, 2), ((128, 32), 1, 2), ((64, 16), 1, 2), ((32, 64), 0, 4)]


@pytest.mark.parametrize(("shape", "contig", "eb"), TILES)
def test_swizzled_tile_is_a_permutation_without_bank_conflicts(shape, contig, eb):
    tile = SharedTile.make(shape, contig, eb)
    rows, cols = tile.rows, shape[contig]
    offsets = {tile.physical(r, c) for r in range(rows) for c in range(cols)}
    assert offsets == {eb * i for i in range(rows * cols)}
    # Eight threads storing the same 16-byte chunk of eight consecutive rows hit 8 bank groups.
    per_chunk = 16 // eb
    for c in range(0, min(cols, tile.row_elems), per_chunk):
        groups = {(tile.physical(r, c) % 128) // 16 for r in range(8)}
        assert len(groups) == 8


SPLIT_TILES = [*TILES, ((64, 128), 1, 1), ((256, 64), 0, 2), ((64, 256), 1, 2)]


@pytest.mark.parametrize(("shape", "contig", "eb"), SPLIT_TILES)
def test_linear_offsets_split_into_a_run_time_part_and_constants(shape, contig, eb):
    """The wgmma lowering's descriptor arithmetic: one run-time descriptor plus constants."""
    tile = SharedTile.make(shape, contig, eb)
    cols = shape[contig]
    for step in (8, 16, 32, 64, 128):
        adds_up = all(
            tile.linear(r1 + r2, c1 + c2) == tile.linear(r1, c1) + tile.linear(r2, c2)
            for r1 in (0, 8, 64) for r2 in (0, 1, 24)
            for c1 in range(0, cols, step) for c2 in range(0, cols - c1)
        )  # fmt: skip
        # Where the tile says the offsets split, they do; where it says not, a case shows why.
        assert adds_up == tile.splits_at(step), (step, tile)


def test_descriptor_fields():
    tile = SharedTile.make((128, 64), 1, 2)  # 128 rows of 128 bytes
    bits = tile.descriptor_bits()
    assert bits >> 62 == 1  # 128-byte swizzle
    assert (bits >> 32) & 0x3FFF == 1024 >> 4  # 8 rows of 128 bytes
    assert (bits >> 16) & 0x3FFF == 128 * 128 >> 4  # the next 128-byte column block
    assert choose_swizzle(16) is None and choose_swizzle(64) == 64 and choose_swizzle(512) == 128
