"""Swizzled shared-memory tiles, as the Hopper tensor cores read them.

``wgmma`` reads its operands from shared memory through a 64-bit *matrix
descriptor*. The tile must be laid out the way the descriptor says (Triton
calls this encoding ``nvmma_shared``):

* the tile is a stack of *rows* along its non-contiguous dimension; each row
  holds ``S`` bytes (the *swizzle width*: 128, 64 or 32 bytes) of the
  contiguous dimension. A tile whose contiguous dimension is wider than ``S``
  is cut into column blocks of ``S`` bytes, stored one after the other
  (``rows * S`` bytes each);
* inside every group of 8 rows, the 16-byte chunks of a row are permuted:
  byte offset ``o`` is stored at ``o ^ (((o >> 7) & (S/16 - 1)) << 4)``
  (CUTLASS's ``Swizzle<log2(S/16), 4, 3>``). Eight threads storing one
  16-byte chunk each of eight consecutive rows then hit eight different bank
  groups, and the tensor cores read without conflicts.

A tile starts at a 1024-byte boundary, so the swizzle pattern (which depends
on address bits 4 to 9) lines up with the tile.

The descriptor (PTX ISA, "Matrix Descriptor Format")::

    bits  0-13  start address >> 4
    bits 16-29  leading dimension byte offset >> 4  (between column blocks)
    bits 32-45  stride dimension byte offset >> 4   (between groups of 8 rows: 8 * S)
    bits 62-63  swizzle mode (1: 128 B, 2: 64 B, 3: 32 B)

A ``wgmma`` that starts at row ``r0`` and column ``c0`` of the tile gets the
descriptor of the *unswizzled* offset of ``(r0, c0)``; the hardware applies
the swizzle itself.

``mma.sync`` operands (sm_80 and later) use Triton's other encoding,
``swizzled_shared`` (:class:`MmaTile`): 16-byte units XORed with a phase
that changes every ``per_phase`` rows, read back with ``ldmatrix``.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from minitriton.backend.lltypes import I32

#: Swizzle widths, widest first, and their descriptor mode.
SWIZZLE_MODES = {128: 1, 64: 2, 32: 3}
TILE_ALIGN = 1024


def choose_swizzle(contig_bytes: int) -> int | None:
    """The widest swizzle that fits a contiguous dimension of ``contig_bytes``."""
    for width in SWIZZLE_MODES:
        if contig_bytes >= width:
            return width
    return None


def align_tile(offset: int) -> int:
    """``offset`` rounded up to a tile boundary."""
    return (offset + TILE_ALIGN - 1) // TILE_ALIGN * TILE_ALIGN


@dataclass(frozen=True)
class SharedTile:
    """A swizzled tile of a 2-D block in shared memory (see the module docstring)."""

    shape: tuple[int, int]
    #: The block dimension that is contiguous in memory (1: row-major).
    contig: int
    #: Bytes per element.
    eb: int
    #: Swizzle width in bytes.
    swizzle: int

    @classmethod
    def make(cls, shape: tuple[int, int], contig: int, eb: int) -> SharedTile | None:
        """The tile of ``shape`` with its widest swizzle, or ``None`` if it is too narrow."""
        width = choose_swizzle(shape[contig] * eb)
        return None if width is None else cls((shape[0], shape[1]), contig, eb, width)

    @property
    def rows(self) -> int:
        """Rows: the size of the non-contiguous dimension."""
        return self.shape[1 - self.contig]

    @property
    def row_elems(self) -> int:
        """Elements of one swizzled row."""
        return self.swizzle // self.eb

    @property
    def nbytes(self) -> int:
        """Bytes the tile takes."""
        return self.shape[0] * self.shape[1] * self.eb

    @property
    def mask(self) -> int:
        """The swizzle's XOR mask (applied to 16-byte chunk indices)."""
        return self.swizzle // 16 - 1

    def linear(self, row: int, col: int) -> int:
        """Unswizzled byte offset of (row, col) in tile coordinates."""
        # BEGIN EXERCISE c7-swizzle
        # STUB: raise NotImplementedError("c7-swizzle: SharedTile.linear")
        e = self.row_elems
        return (col // e) * self.rows * self.swizzle + row * self.swizzle + (col % e) * self.eb
        # END EXERCISE

    def physical(self, row: int, col: int) -> int:
        """Byte offset where element (row, col) is stored."""
        # BEGIN EXERCISE c7-swizzle
        # STUB: raise NotImplementedError("c7-swizzle: SharedTile.physical")
        o = self.linear(row, col)
        return o ^ (((o >> 7) & self.mask) << 4)
        # END EXERCISE

    def splits_at(self, col_step: int) -> bool:
        """Whether :meth:`linear` adds up over column offsets that are multiples of ``col_step``.

        ``linear(r1 + r2, c1 + c2) == linear(r1, c1) + linear(r2, c2)`` for every
        ``c1`` that is a multiple of ``col_step``: rows always add up, columns do
        when ``c1`` never moves ``c2`` across a swizzled row (or the tile's
        columns fit in one). A ``wgmma``'s descriptors are then one run-time
        descriptor plus constants.
        """
        return col_step % self.row_elems == 0 or self.shape[self.contig] <= self.row_elems

    def descriptor_bits(self) -> int:
        """The descriptor without its start address."""
        lbo = self.rows * self.swizzle
        sbo = 8 * self.swizzle
        mode = SWIZZLE_MODES[self.swizzle]
        return ((lbo >> 4) & 0x3FFF) << 16 | ((sbo >> 4) & 0x3FFF) << 32 | mode << 62

    def __str__(self) -> str:
        transposed = "true" if self.contig == 0 else "false"
        return (
            f"nvmma_shared<swizzlingByteWidth={self.swizzle}, transposed={transposed}, "
            f"elementBitWidth={8 * self.eb}>"
        )


@dataclass(frozen=True)
class MmaTile:
    """A ``rows x cols`` row-major tile of ``eb``-byte elements with XOR-swizzled 16-byte units.

    A row has ``vecs`` units; ``per_phase`` consecutive rows share a phase
    (rows shorter than 128 bytes share a 128-byte bank line), and the phase
    takes ``max_phase`` values: ``phase(r) = (r / per_phase) % max_phase``.

    ``contig = 0`` marks a K-major B ring tile: the ``K x N`` block is stored
    transposed, one row per ``n`` (``rows = N``, ``cols = K``), so its 16-byte
    units run along K like A's, and B's fragments come back with plain
    ``ldmatrix`` (no ``.trans``) under the same swizzle.
    """

    rows: int
    cols: int
    eb: int
    #: 1: the block's rows are the tile's rows; 0: the tile holds the block transposed.
    contig: int = 1

    @property
    def unit(self) -> int:
        """Elements in one 16-byte unit."""
        return 16 // self.eb

    @property
    def vecs(self) -> int:
        """16-byte units per row."""
        return self.cols * self.eb // 16

    @property
    def per_phase(self) -> int:
        """Rows sharing one phase."""
        return max(1, 8 // self.vecs)

    @property
    def max_phase(self) -> int:
        """Distinct phases."""
        return min(self.vecs, 8)

    @property
    def nbytes(self) -> int:
        """Size of the tile."""
        return self.rows * self.cols * self.eb

    def describe(self) -> str:
        """The tile as the ``ttgir`` dump prints it (Triton's ``swizzled_shared`` encoding)."""
        return (
            f"swizzled_shared<vec={self.unit}, perPhase={self.per_phase}, "
            f"maxPhase={self.max_phase}, order={[1, 0] if self.contig else [0, 1]}>"
        )

    def offset(self, row: int, col: int) -> int:
        """Byte offset of element ``(row, col)`` (the reference for :meth:`emit_offset`)."""
        phase = (row // self.per_phase) % self.max_phase
        unit = (col // self.unit) ^ phase
        return row * self.cols * self.eb + unit * 16 + (col % self.unit) * self.eb

    def emit_offset(self, b: ir.IRBuilder, row: ir.Value, col: ir.Value) -> ir.Value:
        """:meth:`offset` on i32 values."""

        def c(v: int) -> ir.Constant:
            return ir.Constant(I32, v)

        phase = b.and_(b.lshr(row, c(_log2(self.per_phase))), c(self.max_phase - 1))
        unit = b.xor(b.lshr(col, c(_log2(self.unit))), phase)
        within = b.mul(b.and_(col, c(self.unit - 1)), c(self.eb))
        base = b.mul(row, c(self.cols * self.eb))
        return b.add(b.add(base, b.shl(unit, c(4))), within)


def ring_tile(shape: list[int] | tuple[int, ...], eb: int, contig: int) -> MmaTile:
    """The ``mma.sync`` ring tile of a ``shape`` block (``contig = 0``: K-major, transposed)."""
    rows, cols = shape
    return MmaTile(rows, cols, eb) if contig else MmaTile(cols, rows, eb, 0)


def _log2(n: int) -> int:
    return n.bit_length() - 1
