"""Lowering of a ``tt.dot`` to Hopper's ``wgmma.mma_async``, and the epilogue.

The dot path (:func:`~minitriton.backend.accelerate_matmul.dot_path`) picks
``wgmma`` on sm_90 for the operand types and shapes of
:mod:`~minitriton.backend.mma_v3`. A dot whose operands are ordinary block
values (registers) is lowered in five steps:

1. a barrier (the shared buffer may still be in use), then every thread
   stores its registers of A and B into swizzled tiles
   (:mod:`~minitriton.backend.shared_layout`), 16 bytes at a time where the
   tile's contiguous dimension is the registers' (A always; B row-major for
   fp16 and bf16 held row-major, K-major when its registers run along K;
   tf32 and int8 B always K-major, element by element from row-major
   registers). An fp16/bf16 A already in the accumulator layout of a
   previous dot (attention's ``P``) is not stored at all: ``wgmma`` takes
   it from registers (:class:`RegisterA`);
2. ``fence.proxy.async.shared::cta`` (the tensor cores read shared memory
   through the *async proxy*, which must see the ordinary stores), barrier;
3. ``wgmma.fence``, then per warpgroup ``m_reps x n_reps x K/k_step``
   instructions, each with a descriptor of A's and of B's tile at the
   instruction's rows, columns and K offset;
4. ``wgmma.commit_group``;
5. ``wgmma.wait_group 0``, which returns the accumulator registers (they go
   through the wait as tied operands, so nothing reads them too early).

A dot in a pipelined loop (:mod:`~minitriton.backend.pipeline`) skips steps 1
and 2 (its operands are already in shared memory, or A in registers) and
may wait with one group left in flight.

**Epilogue.** Converting an accumulator to a blocked layout (for the store
after the loop) goes through shared memory with vector accesses: each
thread stores its pairs of consecutive columns (8 bytes for fp32, 4 for
fp16) into a row-major buffer whose rows are padded (4 pairs' worth of
bytes) so the eight rows a warp writes at once fall into different banks,
then reads 16-byte vectors of the blocked layout back.
"""

from __future__ import annotations

from llvmlite import ir

from minitriton.backend.accelerate_matmul import DotPath, dot_path
from minitriton.backend.layouts import Layout
from minitriton.backend.lltypes import (
    F32_T,
    I32,
    I64,
    VOID,
    RegTile,
    byte_size,
    mem_type,
    to_tf32,
)
from minitriton.backend.mma_v3 import (
    WgmmaShape,
    accumulator_layout,
    is_mma_layout,
    shape_for,
    shape_of_async_dot,
    wgmma_shape,
)
from minitriton.backend.shared_layout import SharedTile, align_tile
from minitriton.ir.core import Operation
from minitriton.ir.types import ScalarType, element_type


class WgmmaMixin:
    """``wgmma`` lowering for :class:`~minitriton.backend.codegen.Codegen`."""

    b: ir.IRBuilder
    #: True once a kernel uses ``wgmma`` (it then needs the ``sm_90a`` target).
    uses_wgmma: bool = False
    #: Bytes of ring buffers before the scratch area (while a pipelined loop runs).
    scratch_base: int = 0

    # ------------------------------------------------------------ small helpers
    def asm(self, text: str, cons: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
        """Inline PTX with side effects."""
        fnty = ir.FunctionType(ret, [a.type for a in args])
        return self.b.call(ir.InlineAsm(fnty, text, cons, side_effect=True), args)

    def fence_proxy_async(self) -> None:
        """Make this thread's shared-memory stores visible to the tensor cores."""
        self.asm("fence.proxy.async.shared::cta;", "", VOID, [])

    def smem_global(self) -> ir.Value:
        """The dynamic shared buffer itself (``self.smem`` may point past the ring buffers)."""
        if not hasattr(self, "_smem_global"):
            self._smem_global = self.smem
        return self._smem_global

    def smem_addr(self) -> ir.Value:
        """The shared-window address of the dynamic shared buffer (i32)."""

        def make(b: ir.IRBuilder) -> ir.Value:
            return b.trunc(b.ptrtoint(self.smem_global(), I64), I32)

        return self.cached("smem_addr", make)

    def reserve(self, nbytes: int) -> None:
        """Reserve ``nbytes`` of scratch (which starts after any ring buffers)."""
        super().reserve(nbytes + self.scratch_base)

    def _i32(self, v: int) -> ir.Constant:
        return ir.Constant(I32, v)

    def tile_linear(self, tile: SharedTile, row: ir.Value, col: ir.Value) -> ir.Value:
        """Unswizzled byte offset of (row, col) in ``tile`` (runtime indices)."""
        b = self.b
        e = tile.row_elems
        block = b.mul(
            b.lshr(col, self._i32(e.bit_length() - 1)), self._i32(tile.rows * tile.swizzle)
        )
        inner = b.mul(b.and_(col, self._i32(e - 1)), self._i32(tile.eb))
        return b.add(b.add(block, b.mul(row, self._i32(tile.swizzle))), inner)

    def tile_physical(self, tile: SharedTile, row: ir.Value, col: ir.Value) -> ir.Value:
        """Byte offset where (row, col) is stored (swizzled)."""
        b = self.b
        o = self.tile_linear(tile, row, col)
        chunk = b.and_(b.lshr(o, self._i32(7)), self._i32(tile.mask))
        return b.xor(o, b.shl(chunk, self._i32(4)))

    # ------------------------------------------------------------ staging
    def stage_tile(self, t: RegTile, st: object, tile: SharedTile, base: int) -> None:
        """Store every register of ``t`` into ``tile`` at byte ``base`` of shared memory."""
        layout = t.layout
        dim, run = layout.contiguous_run()
        vec = min(run, 16 // tile.eb) if dim == tile.contig else 1
        toff = self.thread_offsets(layout)
        coords = layout.reg_coords()
        mt = mem_type(st)
        for r in range(0, layout.num_regs, vec):
            c = coords[r]
            row = self.b.add(toff[1 - tile.contig], self._i32(c[1 - tile.contig]))
            col = self.b.add(toff[tile.contig], self._i32(c[tile.contig]))
            off = self.b.add(self.tile_physical(tile, row, col), self._i32(base))
            self.store_shared_vector(off, t.vals[r : r + vec], mt)

    def store_shared_vector(self, off: ir.Value, vals: list[ir.Value], mt: ir.Type) -> None:
        """One ``st.shared`` of ``len(vals)`` elements at byte ``off``."""
        ptr = self.b.gep(self.smem, [off], source_etype=ir.IntType(8))
        align = len(vals) * _bytes(mt)
        if len(vals) == 1:
            self.b.store(vals[0], ptr, align=align)
            return
        vec = ir.Constant(ir.VectorType(mt, len(vals)), None)
        for i, v in enumerate(vals):
            vec = self.b.insert_element(vec, v, self._i32(i))
        self.b.store(vec, ptr, align=align)

    def load_shared_vector(self, off: ir.Value, n: int, mt: ir.Type) -> list[ir.Value]:
        """One ``ld.shared`` of ``n`` elements at byte ``off``."""
        ptr = self.b.gep(self.smem, [off], source_etype=ir.IntType(8))
        align = n * _bytes(mt)
        if n == 1:
            return [self.b.load(ptr, typ=mt, align=align)]
        v = self.b.load(ptr, typ=ir.VectorType(mt, n), align=align)
        return [self.b.extract_element(v, self._i32(i)) for i in range(n)]

    # ------------------------------------------------------------ the dot
    def op_tt_dot(self, op: Operation) -> RegTile:
        if dot_path(op, self.arch, self.num_warps) is not DotPath.WGMMA:
            return super().op_tt_dot(op)
        shape = wgmma_shape(op, self.num_warps)
        assert shape is not None
        a, bm, c = (self.tensor(v) for v in op.operands)
        st = element_type(op.operands[0].type)
        a_regs = register_a_operand(shape, a.layout, self.num_warps)
        a_tile, b_tile = shape.a_tile(), shape.b_tile(_contig_dim(bm.layout))
        off_b = 0 if a_regs is not None else align_tile(a_tile.nbytes)
        self.reserve_tiles(off_b + b_tile.nbytes)
        self.barrier()
        if str(st) == "f32":  # tf32: round as the mma.sync path and the emulator do
            a, bm = self._tf32_rounded(a), self._tf32_rounded(bm)
        if a_regs is None:
            self.stage_tile(a, st, a_tile, 0)
        self.stage_tile(bm, st, b_tile, off_b)
        self.fence_proxy_async()
        self.barrier()
        base = self.scratch_base
        a_arg = (a_tile, base) if a_regs is None else (a_regs, a.vals)
        acc = self.wgmma(shape, c.vals, a_arg, (b_tile, base + off_b))
        return RegTile(c.layout, self.wgmma_wait(acc, 0))

    def _tf32_rounded(self, t: RegTile) -> RegTile:
        """``t`` rounded to TF32 with ``cvt.rna`` (the tensor cores would truncate)."""
        return RegTile(t.layout, [self.b.bitcast(to_tf32(self.b, v), F32_T) for v in t.vals])

    def reserve_tiles(self, nbytes: int) -> None:
        """Reserve ``nbytes`` of tiles; ``wgmma`` tiles need a 1024-byte aligned buffer."""
        self.uses_wgmma = True
        self.smem_global().align = 1024
        self.reserve(nbytes)

    # ------------------------------------------------------------ pipelined loops
    def op_ttg_local_alloc(self, op: Operation) -> None:
        rings = self.__dict__.setdefault("rings", {})
        shape = tuple(op.attrs["shape"])
        eb = byte_size(ScalarType(op.attrs["dtype"]))
        tile = SharedTile.make(shape, op.attrs.get("contig", 1), eb)
        assert tile is not None
        stage_bytes = align_tile(tile.nbytes)
        offset = self.__dict__.get("ring_end", 0)
        stages = op.attrs["stages"]
        rings[op.attrs["buffer"]] = (offset, tile, stage_bytes if stages > 1 else 0)
        self.ring_end = offset + stages * stage_bytes
        self.scratch_base = 0
        self.reserve_tiles(self.ring_end)
        self.scratch_base = align_tile(self.ring_end)
        glob, base = self.smem_global(), self.scratch_base
        self.smem = self.cached(
            ("scratch", base), lambda b: b.gep(glob, [self._i32(base)], source_etype=ir.IntType(8))
        )

    def op_ttg_local_dealloc(self, op: Operation) -> None:
        self.scratch_base = 0
        self.ring_end = 0
        self.smem = self.smem_global()

    def _slot_base(self, buffer: int, slot: ir.Value) -> tuple[SharedTile, ir.Value]:
        offset, tile, stage_bytes = self.rings[buffer]
        if stage_bytes == 0:  # a one-stage buffer
            return tile, self._i32(offset)
        if slot.type != I32:
            slot = self.b.trunc(slot, I32)
        return tile, self.b.add(self._i32(offset), self.b.mul(slot, self._i32(stage_bytes)))

    def op_ttg_async_copy_global_to_local(self, op: Operation) -> None:
        ptr_v = op.operands[0]
        mask_v = op.operands[3] if len(op.operands) > 3 else None
        ptrs = self.tensor(ptr_v)
        masks = self.tensor(mask_v).vals if mask_v is not None else None
        pred = self.get(op.operands[1])
        tile, base = self._slot_base(op.attrs["buffer"], self.get(op.operands[2]))
        base = self.b.add(base, self.smem_addr())
        layout = ptrs.layout
        vec = self.vector_width(ptr_v, mask_v, layout)
        nbytes = vec * tile.eb
        if nbytes not in (4, 8, 16):
            raise ValueError(f"cp.async of {nbytes} bytes")
        cache = "cg" if nbytes == 16 else "ca"
        text = f"cp.async.{cache}.shared.global [$0], [$1], {nbytes}, $2;"
        toff = self.thread_offsets(layout)
        coords = layout.reg_coords()
        contig = getattr(tile, "contig", 1)  # an mma.sync ring tile is row-major
        rd, cd = 1 - contig, contig
        for r in range(0, layout.num_regs, vec):
            c = coords[r]
            row = self.b.add(toff[rd], self._i32(c[rd]))
            col = self.b.add(toff[cd], self._i32(c[cd]))
            dst = self.b.add(base, self.ring_offset(tile, row, col))
            ok = pred if masks is None else self.b.and_(pred, masks[r])
            ok = self.check_access(op, layout, ptrs.vals, r, vec, ok)
            size = self.b.select(ok, self._i32(nbytes), self._i32(0))
            self.asm(text, "r,l,r", VOID, [dst, ptrs.vals[r], size])

    def ring_offset(self, tile, row: ir.Value, col: ir.Value) -> ir.Value:  # noqa: ANN001
        """Byte offset of (row, col) in a ring tile: ``wgmma``'s, or an ``MmaTile``."""
        if isinstance(tile, SharedTile):
            return self.tile_physical(tile, row, col)
        return tile.emit_offset(self.b, row, col)

    def op_ttg_async_commit_group(self, op: Operation) -> None:
        self.asm("cp.async.commit_group;", "", VOID, [])

    def op_ttg_async_wait(self, op: Operation) -> None:
        self.asm(f"cp.async.wait_group {op.attrs['num']};", "", VOID, [])
        if self.arch.startswith("sm_90"):
            # wgmma reads through the async proxy: make the copied bytes visible to it.
            self.fence_proxy_async()

    def op_ttng_warp_group_dot(self, op: Operation) -> RegTile:
        acc = self.tensor(op.operands[0])
        slot = self.get(op.operands[1])
        shape = shape_of_async_dot(op, self.num_warps)
        b = self._slot_base(op.attrs["b"], slot)
        if op.attrs["a"] >= 0:
            a = self._slot_base(op.attrs["a"], slot)
        else:
            a = self._a_from_registers(shape, op.operands[2])
        return RegTile(acc.layout, self.wgmma(shape, acc.vals, a, b))

    def _a_from_registers(self, shape: WgmmaShape, v) -> tuple:
        """A computed in the loop: used in place if its layout allows, else staged to scratch."""
        t = self.tensor(v)
        regs = register_a_operand(shape, t.layout, self.num_warps)
        if regs is not None:
            return (regs, t.vals)
        tile = shape.a_tile()
        self.reserve_tiles(tile.nbytes)
        self.barrier()
        self.stage_tile(t, element_type(v.type), tile, 0)
        self.fence_proxy_async()
        self.barrier()
        return (tile, self.scratch_base)

    def op_ttg_local_store(self, op: Operation) -> None:
        t = self.tensor(op.operands[0])
        offset, tile, _ = self.rings[op.attrs["buffer"]]
        st = element_type(op.operands[0].type)
        scratch, self.smem = self.smem, self.smem_global()
        self.stage_tile(t, st, tile, offset)
        self.smem = scratch
        self.fence_proxy_async()

    def op_ttng_warp_group_dot_wait(self, op: Operation) -> RegTile:
        acc = self.tensor(op.operands[0])
        return RegTile(acc.layout, self.wgmma_wait(acc.vals, op.attrs["pendings"]))

    def wgmma(
        self,
        shape: WgmmaShape,
        acc: list[ir.Value],
        a: tuple[SharedTile, int | ir.Value] | tuple[RegisterA, list[ir.Value]],
        b: tuple[SharedTile, int | ir.Value],
    ) -> list[ir.Value]:
        """Issue and commit the instructions of one dot.

        ``b`` and a shared ``a`` are (tile, byte base); a register ``a`` is
        (:class:`RegisterA`, its registers).
        """
        self.asm("wgmma.fence.sync.aligned;", "", VOID, [])
        g = self.b.lshr(self.warp, self._i32(2))
        g_m = self.b.and_(g, self._i32(shape.wg_m - 1))
        g_n = self.b.lshr(g, self._i32(shape.wg_m.bit_length() - 1))
        out = list(acc)
        per = shape.instr_n // 2
        for mi in range(shape.m_reps):
            row0 = self.b.mul(self.b.add(g_m, self._i32(shape.wg_m * mi)), self._i32(64))
            for ni in range(shape.n_reps):
                n0 = self.b.add(
                    self.b.mul(g_n, self._i32(shape.n_per_wg)), self._i32(shape.instr_n * ni)
                )
                lo = per * (ni + shape.n_reps * mi)
                chunk = out[lo : lo + per]
                for kk in range(shape.k // shape.k_step):
                    k0 = self._i32(kk * shape.k_step)
                    if isinstance(a[0], RegisterA):
                        da = self._pack_a(a[0], a[1], mi, kk)
                    else:
                        da = [self._descriptor(a, row0, k0)]
                    b_k_major = b[0].contig == 0
                    db = self._descriptor(b, n0, k0) if b_k_major else self._descriptor(b, k0, n0)
                    chunk = self._wgmma_instr(shape, chunk, da, db, b_k_major)
                out[lo : lo + per] = chunk
        self.asm("wgmma.commit_group.sync.aligned;", "", VOID, [])
        return out

    def _descriptor(
        self, tile_base: tuple[SharedTile, int | ir.Value], row: ir.Value, col: ir.Value
    ) -> ir.Value:
        tile, base = tile_base
        b = self.b
        base_v = base if isinstance(base, ir.Value) else self._i32(base)
        addr = b.add(b.add(self.smem_addr(), base_v), self.tile_linear(tile, row, col))
        start = b.and_(b.lshr(addr, self._i32(4)), self._i32(0x3FFF))
        return b.or_(b.zext(start, I64), ir.Constant(I64, tile.descriptor_bits()))

    def _wgmma_instr(
        self,
        shape: WgmmaShape,
        chunk: list[ir.Value],
        da: list[ir.Value],
        db: ir.Value,
        b_k_major: bool,
    ) -> list[ir.Value]:
        """One ``wgmma.mma_async``; ``da`` is A's descriptor, or its 4 registers."""
        n = len(chunk)
        regs = ", ".join(f"${i}" for i in range(n))
        nb = 2 * n + len(da)  # operand number of B's descriptor
        if len(da) == 1:
            a_text, a_cons = f"${2 * n}", ["l"]
        else:
            a_text = "{" + ", ".join(f"${2 * n + i}" for i in range(len(da))) + "}"
            a_cons = ["r"] * len(da)
        tnsp_b = "0" if b_k_major else "1"
        trans = ", 1, 1" + ("" if len(da) > 1 else ", 0") + f", {tnsp_b}"
        tail = {"f16": trans, "bf16": trans, "tf32": ", 1, 1", "s8": "", "e4m3": ", 1, 1"}
        tail["e5m2"] = tail["e4m3"]
        text = (
            "{\n.reg .pred p;\n"
            f"setp.ne.b32 p, ${nb + 1}, 0;\n"
            f"wgmma.mma_async.sync.aligned.m64n{shape.instr_n}k{shape.k_step}."
            f"{shape.ptx_types()} {{{regs}}}, {a_text}, ${nb}, p{tail[shape.kind]};\n}}"
        )
        con = "r" if shape.kind == "s8" else "f"
        cons = ",".join([f"={con}"] * n + [str(i) for i in range(n)] + a_cons + ["l", "r"])
        ret = ir.LiteralStructType([chunk[0].type] * n)
        res = self.asm(text, cons, ret, [*chunk, *da, db, self._i32(1)])
        return [self.b.extract_value(res, i) for i in range(n)]

    def _pack_a(self, ra: RegisterA, vals: list[ir.Value], mi: int, kk: int) -> list[ir.Value]:
        """A's four 32-bit fragment registers of instruction row block ``mi``, K step ``kk``."""
        start = ra.first_register(mi, kk)
        out = []
        for i in range(4):
            pair = vals[start + 2 * i : start + 2 * i + 2]
            vec = ir.Constant(ir.VectorType(pair[0].type, 2), None)
            for j, v in enumerate(pair):
                vec = self.b.insert_element(vec, v, self._i32(j))
            out.append(self.b.bitcast(vec, I32))
        return out

    def wgmma_wait(self, acc: list[ir.Value], pending: int) -> list[ir.Value]:
        """``wgmma.wait_group pending``; the accumulator registers pass through it."""
        n = len(acc)
        con = "r" if isinstance(acc[0].type, ir.IntType) else "f"
        cons = ",".join([f"={con}"] * n + [str(i) for i in range(n)])
        ret = ir.LiteralStructType([acc[0].type] * n)
        res = self.asm(f"wgmma.wait_group.sync.aligned {pending};", cons, ret, list(acc))
        return [self.b.extract_value(res, i) for i in range(n)]

    # ------------------------------------------------------------ epilogue
    def op_ttg_convert_layout(self, op: Operation) -> RegTile:
        src = self.tensor(op.operands[0])
        st = element_type(op.result.type)
        # Masks (i1, a byte in memory) take the element-wise path, which converts them.
        bool_mask = isinstance(st, ScalarType) and st.is_bool()
        if not is_mma_layout(src.layout) or src.layout.rank != 2 or bool_mask:
            return super().op_ttg_convert_layout(op)
        return self.convert_accumulator(src, st, self.layout(op.result))

    def convert_accumulator(self, src: RegTile, st: object, dst: Layout) -> RegTile:
        """Accumulator -> ``dst`` through a padded row-major buffer, with vector accesses."""
        mt = mem_type(st)
        eb = byte_size(st)
        m, n = src.layout.shape
        _, w_run = src.layout.contiguous_run()
        w_vec = max(1, min(w_run, 16 // eb))
        pad = max(16, 4 * w_vec * eb) // eb
        stride = n + pad
        self.reserve(m * stride * eb)
        self.barrier()
        self._vector_pass(
            src.layout,
            w_vec,
            stride,
            eb,
            lambda off, r: self.store_shared_vector(off, src.vals[r : r + w_vec], mt),
        )
        self.barrier()
        dim, run = dst.contiguous_run()
        r_vec = max(1, min(run, 16 // eb)) if dim == 1 else 1
        vals: list[ir.Value] = []
        self._vector_pass(
            dst,
            r_vec,
            stride,
            eb,
            lambda off, r: vals.extend(self.load_shared_vector(off, r_vec, mt)),
        )
        return RegTile(dst, vals)

    def _vector_pass(self, layout: Layout, vec: int, stride: int, eb: int, access) -> None:
        toff = self.thread_offsets(layout)
        base = self.b.add(self.b.mul(toff[0], self._i32(stride)), toff[1])
        coords = layout.reg_coords()
        for r in range(0, layout.num_regs, vec):
            c = coords[r]
            lin = self.b.add(base, self._i32(c[0] * stride + c[1]))
            access(self.b.mul(lin, self._i32(eb)), r)


class RegisterA:
    """Where the A fragments of a ``wgmma`` with A in registers sit in A's registers.

    A block in an accumulator layout (attention's ``P``, computed by the
    previous dot) already holds, in each thread, the A fragment of
    ``wgmma``: the eight registers of columns ``16 kk .. 16 kk + 15`` of
    row block ``mi`` are ``a0..a3`` in order (pairs of columns, rows
    ``l/4`` and ``l/4 + 8``), so no data moves.
    """

    def __init__(self, layout_shape: WgmmaShape) -> None:
        self.src = layout_shape

    def first_register(self, mi: int, kk: int) -> int:
        """Index of the first of the eight registers of (mi, kk)."""
        src = self.src
        col = 16 * kk
        ni, within = divmod(col, src.instr_n)
        return src.instr_n // 2 * (ni + src.n_reps * mi) + 8 * (within // 16)


def register_a_operand(shape: WgmmaShape, layout: Layout, num_warps: int) -> RegisterA | None:
    """A :class:`RegisterA` if A (in ``layout``) can feed ``wgmma`` from registers."""
    if shape.kind not in ("f16", "bf16") or not is_mma_layout(layout):
        return None
    src = shape_for(shape.m, shape.k, 16, shape.kind, num_warps)
    if src is None or src.wg_n != 1 or src.wg_m != shape.wg_m or src.m_reps != shape.m_reps:
        return None
    return RegisterA(src) if accumulator_layout(src) == layout else None


def _contig_dim(layout: Layout) -> int:
    dim, run = layout.contiguous_run()
    return dim if run > 1 else 1


def _bytes(mt: ir.Type) -> int:
    if isinstance(mt, ir.IntType):
        return max(1, mt.width // 8)
    if isinstance(mt, ir.HalfType):
        return 2
    if isinstance(mt, ir.FloatType):
        return 4
    return 8
