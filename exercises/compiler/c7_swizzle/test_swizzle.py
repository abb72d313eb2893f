"""Tests for exercise c7: where each element of a swizzled shared-memory tile is stored.

``SharedTile.linear`` and ``SharedTile.physical`` (in
``minitriton/backend/shared_layout.py``) give the unswizzled and the stored
byte offset of element (row, col); the tensor cores read the tile through a
descriptor that assumes exactly this layout. Golden offsets worked out by
hand, and the properties the layout exists for.
"""

from __future__ import annotations

import pytest

from minitriton.backend.shared_layout import SharedTile

pytestmark = pytest.mark.exercise("c7-swizzle")

#: (shape, bytes per element) -> the swizzle width it gets; all row-major.
TILES = {
    128: ((64, 64), 2),  # 64 fp16 per row: 128 bytes
    64: ((16, 32), 2),  # 32 fp16: 64 bytes
    32: ((8, 16), 2),  # 16 fp16: 32 bytes
}
WIDE = ((64, 128), 2)  # 256 bytes per row: two 128-byte column blocks
ALL = [*TILES.values(), WIDE, ((32, 32), 4), ((128, 64), 1)]


def tile(shape: tuple[int, int], eb: int, contig: int = 1) -> SharedTile:
    t = SharedTile.make(shape, contig, eb)
    assert t is not None
    return t


def _ids(cases: list) -> list[str]:
    return [f"{s[0]}x{s[1]}-{8 * eb}bit" for s, eb in cases]


# ---------------------------------------------------------------- golden offsets


@pytest.mark.parametrize(
    "width, row, col, linear, physical",
    [
        # 128 B: chunk index ^= row % 8
        (128, 0, 0, 0, 0),
        (128, 1, 0, 128, 144),
        (128, 3, 8, 400, 416),  # chunk 1 of row 3 -> chunk 2
        (128, 7, 56, 1008, 896),  # chunk 7 of row 7 -> chunk 0
        (128, 8, 0, 1024, 1024),  # the pattern repeats every 8 rows
        (128, 5, 1, 642, 722),  # the byte inside the chunk stays put
        # 64 B: two rows per 128-byte line, chunk index ^= (row // 2) % 4
        (64, 1, 0, 64, 64),
        (64, 3, 8, 208, 192),
        (64, 7, 56, 1520, 1472),  # column block 1 starts at 16 rows * 64 B
        # 32 B: four rows per line, chunk index ^= (row // 4) % 2
        (32, 1, 0, 32, 32),
        (32, 5, 1, 162, 178),
        (32, 7, 56, 1008, 992),  # column block 3 starts at 3 * 8 rows * 32 B
    ],
)
def test_golden_offsets(width: int, row: int, col: int, linear: int, physical: int) -> None:
    t = tile(*TILES[width])
    assert t.swizzle == width
    assert t.linear(row, col) == linear, f"linear({row}, {col}) of a {width}B-swizzled tile"
    assert t.physical(row, col) == physical, f"physical({row}, {col}) of a {width}B tile"


def test_golden_wide_tile_column_blocks() -> None:
    t = tile(*WIDE)  # column 64 starts the second block: after 64 rows of 128 bytes
    assert [t.linear(0, 64), t.linear(1, 72), t.linear(9, 127)] == [8192, 8336, 9470]
    assert [t.physical(0, 64), t.physical(1, 72), t.physical(9, 127)] == [8192, 8320, 9454]


def test_golden_transposed_tile() -> None:
    # contig = 0: dimension 0 is contiguous, so tile rows run along dimension 1.
    t = tile((32, 64), 2, contig=0)
    assert (t.rows, t.swizzle) == (64, 64)
    assert [t.physical(0, 0), t.physical(1, 0), t.physical(2, 40)] == [0, 64, 4224]


# ---------------------------------------------------------------- properties


@pytest.mark.parametrize("shape, eb", ALL, ids=_ids(ALL))
def test_every_16_byte_chunk_lands_once(shape: tuple[int, int], eb: int) -> None:
    t = tile(shape, eb)
    per_chunk = 16 // eb
    starts = [
        t.physical(r, c) for r in range(t.rows) for c in range(0, t.shape[t.contig], per_chunk)
    ]
    assert sorted(starts) == list(range(0, t.nbytes, 16)), "chunks collide or leave the tile"


@pytest.mark.parametrize("shape, eb", ALL, ids=_ids(ALL))
def test_a_chunk_stays_contiguous(shape: tuple[int, int], eb: int) -> None:
    t = tile(shape, eb)
    for r in range(min(t.rows, 16)):
        for c in range(t.shape[t.contig]):
            chunk_start = c - c % (16 // eb)
            offset = t.physical(r, chunk_start) + (c - chunk_start) * eb
            assert t.physical(r, c) == offset, f"element ({r}, {c}) left its 16-byte chunk"


@pytest.mark.parametrize("width", sorted(TILES), ids=lambda w: f"{w}B")
def test_chunks_stay_in_their_row(width: int) -> None:
    t = tile(*TILES[width])
    for r in range(t.rows):
        for c in range(t.shape[1]):
            assert t.physical(r, c) // width == t.linear(r, c) // width, (
                f"{width}B swizzle: ({r}, {c}) moved out of its {width}-byte row"
            )


@pytest.mark.parametrize("width", sorted(TILES), ids=lambda w: f"{w}B")
def test_xor_pattern(width: int) -> None:
    t = tile(*TILES[width])
    for r in range(t.rows):
        for c in range(t.shape[1]):
            o = t.linear(r, c)
            flipped = t.physical(r, c) ^ o
            assert flipped & ~0x70 == 0, f"{width}B: bits other than 4-6 changed at ({r}, {c})"
            assert flipped == ((o >> 7) % (width // 16)) << 4, f"{width}B: xor at ({r}, {c})"


@pytest.mark.parametrize("width", sorted(TILES), ids=lambda w: f"{w}B")
def test_column_read_of_8_rows_is_bank_conflict_free(width: int) -> None:
    # Shared memory has 32 banks of 4 bytes: 8 groups of 16 bytes per 128-byte
    # line. Eight threads reading one 16-byte chunk each, from one column of
    # eight consecutive rows, are conflict-free when they hit 8 groups.
    t = tile(*TILES[width])
    per_chunk = 16 // t.eb
    for r0 in range(0, t.rows, 8):
        for c in range(0, t.shape[1], per_chunk):
            groups = {t.physical(r0 + i, c) // 16 % 8 for i in range(8)}
            assert len(groups) == 8, (
                f"{width}B: rows {r0}..{r0 + 7}, column {c}: bank conflict, "
                f"only {len(groups)} of 8 bank groups"
            )
