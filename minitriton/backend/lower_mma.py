"""Tensor cores with ``mma.sync`` (sm_80 and later): operand staging and the dot.

Two lowerings, for the ops :mod:`minitriton.backend.mma_plan` set up:

* ``ttg.convert_layout`` to a dot-operand layout. The operand's registers
  (a blocked layout, 16 bytes per thread along a row) are written to a
  row-major shared-memory tile whose 16-byte units are *swizzled*: unit
  ``u`` of row ``r`` is stored at unit ``u ^ phase(r)``, so the eight rows
  that one ``ldmatrix`` phase reads fall in eight different bank groups
  (:class:`SharedTile`). After a barrier, A (``[M, K]``) comes back with
  ``ldmatrix.x4`` (one m16 x k instruction fragment per call, for every
  element type), 16-bit B (``[K, N]``) with ``ldmatrix.x4.trans`` (two n8
  fragments per call: B's fragment holds K-consecutive pairs, across the
  rows of the tile). tf32 and int8 B, whose fragments ``ldmatrix.trans``
  cannot produce, are read with plain ``ld.shared`` in the fragment layout.
* ``tt.dot``: for each k step, each m16 and each n8 tile of a warp, one
  ``mma.sync.aligned.m16n8k16`` (fp16, bf16), ``m16n8k8`` (tf32: operands
  rounded with ``cvt.rna.tf32.f32``, as Triton does) or ``m16n8k32`` (int8,
  int32 accumulators) as inline PTX. Fragment registers pack ``32 / bits``
  K-consecutive elements each.

The registers of a dot-operand layout are in fragment order (see the
layouts' docstring), so fragment element ``e`` of tile ``(i, j)`` is the
register whose coordinate is the fragment's ``e``-th plus the tile origin.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from minitriton.backend.layouts import Layout, _combine, _fragment, mma_instr_k
from minitriton.backend.lltypes import F16_T, F32_T, I8, I16, I32, I64, Tensor, byte_size, ll_type
from minitriton.backend.mma_plan import MmaDot
from minitriton.ir.core import Operation
from minitriton.ir.types import BF16, F16, F32, ScalarType
from minitriton.ir.types import I8 as S8

_MMA_PTX = {
    "f16": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    "bf16": "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    "tf32": "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
    "s8": "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
}


@dataclass(frozen=True)
class SharedTile:
    """A ``rows x cols`` row-major tile of ``eb``-byte elements with XOR-swizzled 16-byte units.

    A row has ``vecs`` units; ``per_phase`` consecutive rows share a phase
    (rows shorter than 128 bytes share a 128-byte bank line), and the phase
    takes ``max_phase`` values: ``phase(r) = (r / per_phase) % max_phase``.
    """

    rows: int
    cols: int
    eb: int

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


def _log2(n: int) -> int:
    return n.bit_length() - 1


def _c(v: int) -> ir.Constant:
    return ir.Constant(I32, v)


class MmaMixin:
    """``mma.sync`` lowering for :class:`~minitriton.backend.codegen.Codegen`."""

    b: ir.IRBuilder

    # ------------------------------------------------------------ dispatch
    def op_tt_dot(self, op: Operation) -> Tensor:
        mma = self.plan.mma.get(id(op))
        if mma is None:
            return super().op_tt_dot(op)
        return self.mma_dot(op, mma)

    def op_ttg_convert_layout(self, op: Operation) -> Tensor:
        target = self.plan.dot_operands.get(id(op.result))
        if target is None:
            return super().op_ttg_convert_layout(op)
        mma, op_idx = target
        return self.to_dot_operand(self.tensor(op.operands[0]), mma, op_idx)

    # ------------------------------------------------------------ staging
    def to_dot_operand(self, src: Tensor, mma: MmaDot, op_idx: int) -> Tensor:
        """Move an operand into its dot-operand layout through a swizzled tile."""
        dst = mma.a if op_idx == 0 else mma.b
        st = mma_element(mma.kind)
        rows, cols = dst.shape
        tile = SharedTile(rows, cols, byte_size(st))
        self.reserve(tile.nbytes)
        self.barrier()
        self._write_tile(src, tile)
        self.barrier()
        vals: list[ir.Value | None] = [None] * dst.num_regs
        if op_idx == 0:
            self._ldmatrix_a(mma, tile, vals)
        elif mma.bits == 16:
            self._ldmatrix_b(mma, tile, vals)
        else:
            self._read_scalar(dst, tile, st, vals)
        return Tensor(dst, vals)

    def _write_tile(self, src: Tensor, tile: SharedTile) -> None:
        layout = src.layout
        dim, run = layout.contiguous_run()
        vec = min(run, tile.unit) if dim == 1 else 1
        toff = self.thread_offsets(layout)
        coords = layout.reg_coords()
        for r in range(0, layout.num_regs, vec):
            row = self.b.add(toff[0], _c(coords[r][0]))
            col = self.b.add(toff[1], _c(coords[r][1]))
            off = tile.emit_offset(self.b, row, col)
            self._store_vec(off, src.vals[r : r + vec], tile.eb)

    def _store_vec(self, off: ir.Value, vals: list[ir.Value], eb: int) -> None:
        ptr = self.b.gep(self.smem, [off], source_etype=I8)
        if len(vals) == 1:
            self.b.store(vals[0], ptr, align=eb)
            return
        vec = ir.Constant(ir.VectorType(vals[0].type, len(vals)), None)
        for i, v in enumerate(vals):
            vec = self.b.insert_element(vec, v, _c(i))
        self.b.store(vec, ptr, align=eb * len(vals))

    def _read_scalar(self, dst: Layout, tile: SharedTile, st, vals: list) -> None:
        toff = self.thread_offsets(dst)
        for r, (c0, c1) in enumerate(dst.reg_coords()):
            row = self.b.add(toff[0], _c(c0))
            col = self.b.add(toff[1], _c(c1))
            ptr = self.b.gep(self.smem, [tile.emit_offset(self.b, row, col)], source_etype=I8)
            vals[r] = self.b.load(ptr, typ=ll_type(st), align=tile.eb)

    def warp_offset(self, layout: Layout, dim: int) -> ir.Value:
        """This warp's coordinate offset along ``dim`` (lane bits left out)."""

        def make(b: ir.IRBuilder) -> ir.Value:
            total: ir.Value = _c(0)
            for bit, basis in enumerate(layout.warp_bases):
                if basis[dim]:
                    flag = b.and_(b.lshr(self.warp, _c(bit)), _c(1))
                    total = b.or_(total, b.mul(flag, _c(basis[dim])))
            return total

        return self.cached(("woff", layout, dim), make)

    def _ldmatrix_lane(self) -> tuple[ir.Value, ir.Value, ir.Value]:
        """The row this lane addresses in its 8x8 matrix, and the matrix index bits."""

        def make(b: ir.IRBuilder) -> ir.Value:
            return b.and_(self.lane, _c(7))

        r = self.cached("ldm_r", make)
        j0 = self.cached("ldm_j0", lambda b: b.and_(b.lshr(self.lane, _c(3)), _c(1)))
        j1 = self.cached("ldm_j1", lambda b: b.lshr(self.lane, _c(4)))
        return r, j0, j1

    def _ldmatrix(self, tile: SharedTile, row: ir.Value, col: ir.Value, n: int, trans: bool):
        b = self.b
        off = tile.emit_offset(b, row, col)
        ptr = b.ptrtoint(b.gep(self.smem, [off], source_etype=I8), I64)
        outs = ", ".join(f"${i}" for i in range(n))
        shape = f"x{n}.trans" if trans else f"x{n}"
        asm = f"ldmatrix.sync.aligned.m8n8.{shape}.shared.b16 {{{outs}}}, [${n}];"
        ret = ir.LiteralStructType([I32] * n)
        fn = ir.InlineAsm(ir.FunctionType(ret, [I64]), asm, ",".join(["=r"] * n + ["l"]), True)
        res = b.call(fn, [ptr])
        return [b.extract_value(res, i) for i in range(n)]

    def _ldmatrix_a(self, mma: MmaDot, tile: SharedTile, vals: list) -> None:
        dst = mma.a
        m, k = dst.shape
        wm = mma.params.wpc[0]
        k_step = mma_instr_k(mma.bits)
        r, j0, j1 = self._ldmatrix_lane()
        wrow = self.warp_offset(dst, 0)
        lane_row = self.b.add(self.b.add(wrow, r), self.b.mul(j0, _c(8)))
        lane_col = self.b.mul(j1, _c(tile.unit))
        for mi in range(max(1, m // (16 * wm))):
            for ki in range(k // k_step):
                row = self.b.add(lane_row, _c(mi * 16 * wm))
                col = self.b.add(lane_col, _c(ki * k_step))
                regs = self._ldmatrix(tile, row, col, 4, False)
                self._scatter(mma, 0, regs, (mi * 16 * wm, ki * k_step), vals)

    def _ldmatrix_b(self, mma: MmaDot, tile: SharedTile, vals: list) -> None:
        dst = mma.b
        k, n = dst.shape
        wn = mma.params.wpc[1]
        n_tiles = max(1, n // (8 * wn))
        r, j0, j1 = self._ldmatrix_lane()
        wcol = self.warp_offset(dst, 1)
        lane_row = self.b.add(r, self.b.mul(j0, _c(8)))
        for ki in range(k // 16):
            row = self.b.add(lane_row, _c(ki * 16))
            for ni in range(0, n_tiles, 2):
                pair = ni + 1 < n_tiles
                col = self.b.add(wcol, _c(ni * 8 * wn))
                if pair:
                    col = self.b.add(col, self.b.mul(j1, _c(8 * wn)))
                regs = self._ldmatrix(tile, row, col, 4 if pair else 2, True)
                self._scatter(mma, 1, regs[:2], (ki * 16, ni * 8 * wn), vals)
                if pair:
                    self._scatter(mma, 1, regs[2:], (ki * 16, (ni + 1) * 8 * wn), vals)

    def _scatter(self, mma: MmaDot, op_idx: int, regs: list, origin, vals: list) -> None:
        """Unpack fragment registers into the dot-operand tensor's registers."""
        layout = mma.a if op_idx == 0 else mma.b
        index = _reg_index(layout)
        frag, _ = _fragment(op_idx, mma.bits)
        kw = 32 // mma.bits
        for q, reg in enumerate(regs):
            for h, v in enumerate(self._frag_unpack(reg, mma.kind)):
                c = _combine(tuple(frag), q * kw + h, 2)
                vals[index[(c[0] + origin[0], c[1] + origin[1])]] = v

    def _frag_unpack(self, reg: ir.Value, kind: str) -> list[ir.Value]:
        b = self.b
        if kind == "f16":
            pair = b.bitcast(reg, ir.VectorType(F16_T, 2))
            return [b.extract_element(pair, _c(i)) for i in range(2)]
        if kind == "tf32":
            return [b.bitcast(reg, F32_T)]
        width, n = (I16, 2) if kind == "bf16" else (I8, 4)
        return [b.trunc(b.lshr(reg, _c(i * width.width)), width) for i in range(n)]

    # ------------------------------------------------------------ the dot
    def mma_dot(self, op: Operation, mma: MmaDot) -> Tensor:
        """Accumulate ``A @ B`` into the accumulator with ``mma.sync`` instructions."""
        a, bm, c = (self.tensor(v) for v in op.operands)
        (m, k), n = op.operands[0].shape, op.operands[1].shape[1]
        wm, wn = mma.params.wpc
        k_step = mma_instr_k(mma.bits)
        m_tiles, n_tiles = max(1, m // (16 * wm)), max(1, n // (8 * wn))
        a_regs = {
            (mi, ki): self._pack_fragment(a, mma, 0, (mi * 16 * wm, ki * k_step))
            for mi in range(m_tiles)
            for ki in range(k // k_step)
        }
        b_regs = {
            (ki, ni): self._pack_fragment(bm, mma, 1, (ki * k_step, ni * 8 * wn))
            for ki in range(k // k_step)
            for ni in range(n_tiles)
        }
        index = _reg_index(c.layout)
        out = list(c.vals)
        slots = {
            (mi, ni): [
                index[(mi * 16 * wm + 8 * (i >> 1), ni * 8 * wn + (i & 1))] for i in range(4)
            ]
            for mi in range(m_tiles)
            for ni in range(n_tiles)
        }
        for ki in range(k // k_step):
            for (mi, ni), idx in slots.items():
                acc = [out[i] for i in idx]
                res = self._mma(mma.kind, a_regs[(mi, ki)], b_regs[(ki, ni)], acc)
                for i, v in zip(idx, res):
                    out[i] = v
        return Tensor(c.layout, out)

    def _pack_fragment(self, t: Tensor, mma: MmaDot, op_idx: int, origin) -> list[ir.Value]:
        index = _reg_index(t.layout)
        frag, _ = _fragment(op_idx, mma.bits)
        kw = 32 // mma.bits
        n = 1 << len(frag)
        elems = []
        for e in range(n):
            c = _combine(tuple(frag), e, 2)
            elems.append(t.vals[index[(c[0] + origin[0], c[1] + origin[1])]])
        return [self._frag_pack(elems[i : i + kw], mma.kind) for i in range(0, n, kw)]

    def _frag_pack(self, elems: list[ir.Value], kind: str) -> ir.Value:
        b = self.b
        if kind == "f16":
            vec = ir.Constant(ir.VectorType(F16_T, 2), None)
            for i, v in enumerate(elems):
                vec = b.insert_element(vec, v, _c(i))
            return b.bitcast(vec, I32)
        if kind == "tf32":
            cvt = ir.InlineAsm(ir.FunctionType(I32, [F32_T]), "cvt.rna.tf32.f32 $0, $1;", "=r,f")
            return b.call(cvt, elems)
        width = elems[0].type.width
        out: ir.Value = _c(0)
        for i, v in enumerate(elems):
            out = b.or_(out, b.shl(b.zext(v, I32), _c(i * width)))
        return out

    def _mma(self, kind: str, a: list, bv: list, acc: list) -> list[ir.Value]:
        b = self.b
        acc_t = I32 if kind == "s8" else F32_T
        c = "r" if kind == "s8" else "f"
        names = [f"${i}" for i in range(14)]
        asm = (
            f"{_MMA_PTX[kind]} {{{', '.join(names[0:4])}}}, {{{', '.join(names[4:8])}}}, "
            f"{{{', '.join(names[8:10])}}}, {{{', '.join(names[10:14])}}};"
        )
        cons = ",".join([f"={c}"] * 4 + ["r"] * 6 + [c] * 4)
        fnty = ir.FunctionType(ir.LiteralStructType([acc_t] * 4), [I32] * 6 + [acc_t] * 4)
        res = b.call(ir.InlineAsm(fnty, asm, cons), [*a, *bv, *acc])
        return [b.extract_value(res, i) for i in range(4)]


def mma_element(kind: str) -> ScalarType:
    """The IR element type of an mma kind's operands."""
    return {"f16": F16, "bf16": BF16, "tf32": F32, "s8": S8}[kind]


_INDEX: dict[Layout, dict[tuple[int, ...], int]] = {}


def _reg_index(layout: Layout) -> dict[tuple[int, ...], int]:
    """Register index of each compile-time coordinate of ``layout``."""
    if layout not in _INDEX:
        _INDEX[layout] = {c: i for i, c in enumerate(layout.reg_coords())}
    return _INDEX[layout]
