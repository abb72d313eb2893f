"""Ops that move data between threads: through warp shuffles and shared memory.

* layout conversions, ``reshape`` and ``trans``: every thread writes its
  registers to shared memory at the element's row-major position, a barrier,
  every thread reads the positions its new layout holds;
* ``tt.reduce``: combine in-thread (in index order), then across lanes with
  butterfly shuffles (``shfl.sync.bfly``; the lower lane's value stays the
  left operand), then across warps through shared memory;
* ``tt.scan``: Hillis–Steele rounds through shared memory (log2(n) rounds,
  earlier elements always the left operand);
* ``tt.sort``: a bitonic network through shared memory;
* ``tt.dot`` on the FMA path (sm_75, ``input_precision="ieee"`` or
  ``"tf32x3"``, fp16 accumulators, shapes that fit no tensor-core
  instruction; see :mod:`~minitriton.backend.accelerate_matmul`): operands
  staged in shared memory, each thread accumulating its own results with
  FMAs in a loop over K (exact fp32 products). The tensor-core path is in
  :mod:`~minitriton.backend.lower_mma`;
* ``tt.print``: the block is gathered in shared memory and thread 0 prints
  every element with ``vprintf`` — once per program, unlike Triton, which
  prints once per thread holding a value;
* ``tt.assert``: any thread with a false element calls ``__assertfail``,
  which stops the kernel (the CUDA context is unusable afterwards).

Every use of shared memory starts with a barrier, so consecutive uses of the
one dynamic buffer never race.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod

from llvmlite import ir

from minitriton.backend.accelerate_matmul import arch_number
from minitriton.backend.bitpack import pack_bits
from minitriton.backend.layouts import Layout, slice_layout
from minitriton.backend.lltypes import (
    F32_T,
    F64_T,
    GENERIC_PTR,
    I1,
    I8,
    I32,
    I64,
    VOID,
    RegTile,
    byte_size,
    mem_type,
    to_tf32,
)
from minitriton.ir.core import Operation, Region
from minitriton.ir.types import F32, BlockType, PointerType, ScalarType, element_type

Vals = tuple[ir.Value, ...]


def row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides of ``shape``."""
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


def _align16(n: int) -> int:
    return (n + 15) // 16 * 16


class CollectiveMixin:
    """Lowering of cross-thread ops for :class:`~minitriton.backend.codegen.Codegen`."""

    b: ir.IRBuilder

    # ------------------------------------------------------------ shared memory
    def barrier(self) -> None:
        """``bar.sync 0``: all threads of the CTA."""
        self.b.call(self.declare("llvm.nvvm.barrier0", VOID, []), [])

    def reserve(self, nbytes: int) -> None:
        """Make the dynamic shared memory at least ``nbytes`` large."""
        self.smem_bytes = max(self.smem_bytes, nbytes)

    def smem_store(self, byte_off: ir.Value, v: ir.Value, st: object) -> None:
        """Store one element at ``byte_off`` of shared memory."""
        if isinstance(st, ScalarType) and st.is_bool():
            v = self.b.zext(v, I8)
        ptr = self.b.gep(self.smem, [byte_off], source_etype=I8)
        self.b.store(v, ptr, align=byte_size(st))

    def smem_load(self, byte_off: ir.Value, st: object) -> ir.Value:
        """Load one element from ``byte_off`` of shared memory."""
        ptr = self.b.gep(self.smem, [byte_off], source_etype=I8)
        v = self.b.load(ptr, typ=mem_type(st), align=byte_size(st))
        if isinstance(st, ScalarType) and st.is_bool():
            return self.b.icmp_unsigned("!=", v, ir.Constant(I8, 0))
        return v

    def lin_index(self, layout: Layout, strides: tuple[int, ...]) -> tuple[ir.Value, list[int]]:
        """Linear position of each register: runtime thread part, constant register parts."""

        def make(b: ir.IRBuilder) -> ir.Value:
            total: ir.Value = ir.Constant(I32, 0)
            for off, stride in zip(self.thread_offsets(layout), strides):
                total = b.add(total, b.mul(off, ir.Constant(I32, stride)))
            return total

        base = self.cached(("lin", layout, strides), make)
        consts = [sum(c * s for c, s in zip(coord, strides)) for coord in layout.reg_coords()]
        return base, consts

    def _offset(self, lin: ir.Value, eb: int, base: int) -> ir.Value:
        return self.b.add(self.b.mul(lin, ir.Constant(I32, eb)), ir.Constant(I32, base))

    def write_tensor(
        self, t: RegTile, st: object, strides: tuple[int, ...], base: int = 0, pred=None
    ) -> None:
        """Write every register of ``t`` to its position (``pred``: only where it holds)."""
        lin, consts = self.lin_index(t.layout, strides)
        eb = byte_size(st)
        for v, c in zip(t.vals, consts):
            off = self._offset(self.b.add(lin, ir.Constant(I32, c)), eb, base)
            if pred is None:
                self.smem_store(off, v, st)
            else:
                self._store_if(pred, off, v, st)

    def _store_if(self, pred: ir.Value, off: ir.Value, v: ir.Value, st: object) -> None:
        def store() -> list[ir.Value]:
            self.smem_store(off, v, st)
            return []

        self.guarded(pred, store, [])

    def read_tensor(self, layout: Layout, st: object, strides: tuple[int, ...], base: int = 0):
        """Read every register of ``layout`` from its position."""
        lin, consts = self.lin_index(layout, strides)
        eb = byte_size(st)
        out = []
        for c in consts:
            off = self._offset(self.b.add(lin, ir.Constant(I32, c)), eb, base)
            out.append(self.smem_load(off, st))
        return out

    def relayout(
        self,
        src: RegTile,
        st: object,
        dst: Layout,
        src_strides: tuple[int, ...],
        dst_strides: tuple[int, ...],
    ) -> RegTile:
        """Move ``src`` to layout ``dst`` through shared memory."""
        self.reserve(prod(src.layout.shape) * byte_size(st))
        self.barrier()
        self.write_tensor(src, st, src_strides)
        self.barrier()
        return RegTile(dst, self.read_tensor(dst, st, dst_strides))

    def op_ttg_convert_layout(self, op: Operation) -> RegTile:
        src = self.tensor(op.operands[0])
        strides = row_major(src.layout.shape)
        st = element_type(op.result.type)
        return self.relayout(src, st, self.layout(op.result), strides, strides)

    def op_tt_reshape(self, op: Operation) -> RegTile:
        src = self.tensor(op.operands[0])
        dst = self.layout(op.result)
        st = element_type(op.result.type)
        return self.relayout(src, st, dst, row_major(src.layout.shape), row_major(dst.shape))

    def op_tt_trans(self, op: Operation) -> RegTile:
        src = self.tensor(op.operands[0])
        strides = row_major(src.layout.shape)
        dst_strides = tuple(strides[o] for o in op.attrs["order"])
        st = element_type(op.result.type)
        return self.relayout(src, st, self.layout(op.result), strides, dst_strides)

    def share_from_owners(self, t: RegTile, st: object) -> RegTile:
        """Give every copy-holding thread the value its owner thread computed."""
        strides = row_major(t.layout.shape)
        self.reserve(prod(t.layout.shape) * byte_size(st))
        self.barrier()
        self.write_tensor(t, st, strides, pred=self.owner_pred(t.layout))
        self.barrier()
        return RegTile(t.layout, self.read_tensor(t.layout, st, strides))

    def broadcast_from_thread0(self, v: ir.Value, st: object) -> ir.Value:
        """Give every thread thread 0's value of ``v``."""
        self.reserve(byte_size(st))
        self.barrier()
        self._store_if(self.is_thread0(), ir.Constant(I32, 0), v, st)
        self.barrier()
        return self.smem_load(ir.Constant(I32, 0), st)

    # ------------------------------------------------------------ shuffles
    def shfl_xor(self, v: ir.Value, mask: int) -> ir.Value:
        """``v`` of the lane whose id differs from ours by ``mask``."""
        b = self.b
        ty = v.type
        if isinstance(ty, ir.PointerType):
            return b.inttoptr(self.shfl_xor(b.ptrtoint(v, I64), mask), ty)
        bits = _bits(ty)
        as_int = v if isinstance(ty, ir.IntType) else b.bitcast(v, ir.IntType(bits))
        if bits == 64:
            halves = b.bitcast(as_int, ir.VectorType(I32, 2))
            parts = [
                self._shfl32(b.extract_element(halves, ir.Constant(I32, i)), mask) for i in (0, 1)
            ]
            vec = ir.Constant(ir.VectorType(I32, 2), None)
            for i, p in enumerate(parts):
                vec = b.insert_element(vec, p, ir.Constant(I32, i))
            out = b.bitcast(vec, I64)
        elif bits < 32:
            out = b.trunc(self._shfl32(b.zext(as_int, I32), mask), ir.IntType(bits))
        else:
            out = self._shfl32(as_int, mask)
        return out if isinstance(ty, ir.IntType) else b.bitcast(out, ty)

    def _shfl32(self, v: ir.Value, mask: int) -> ir.Value:
        args = [ir.Constant(I32, -1), v, ir.Constant(I32, mask), ir.Constant(I32, 31)]
        return self.call_intrinsic("llvm.nvvm.shfl.sync.bfly.i32", I32, args)

    def combine(self, region: Region, x: Vals, y: Vals) -> Vals:
        """Apply a reduce/scan combiner region to two tuples of scalars."""
        saved = self.b.debug_metadata
        out = tuple(self.lower_region(region, [*x, *y]))
        self.b.debug_metadata = saved
        return out

    def _bit_set(self, src: ir.Value, bit: int) -> ir.Value:
        masked = self.b.and_(src, ir.Constant(I32, 1 << bit))
        return self.b.icmp_unsigned("!=", masked, ir.Constant(I32, 0))

    # ------------------------------------------------------------ reduce
    def op_tt_reduce(self, op: Operation) -> list:
        axis = op.attrs["axis"]
        srcs = [self.tensor(v) for v in op.operands]
        layout = srcs[0].layout
        sts = [element_type(v.type) for v in op.operands]
        region = op.regions[0]
        acc = self._reduce_in_thread(srcs, layout, axis, region)
        for bit in layout.lane_bits_along(axis):
            acc = self._reduce_lanes(acc, bit, region)
        wbits = layout.warp_bits_along(axis)
        if wbits:
            acc = self._reduce_warps(acc, layout, axis, wbits, sts, region)
        if not isinstance(op.results[0].type, BlockType):
            return list(acc[()])
        out = self.layout(op.results[0])
        coords = out.reg_coords()
        return [RegTile(out, [acc[c][i] for c in coords]) for i in range(len(srcs))]

    def _reduce_in_thread(self, srcs: list[RegTile], layout: Layout, axis: int, region: Region):
        coords = layout.reg_coords()
        acc: dict[tuple[int, ...], Vals] = {}
        for r in sorted(range(len(coords)), key=lambda r: coords[r][axis]):
            key = coords[r][:axis] + coords[r][axis + 1 :]
            val = tuple(s.vals[r] for s in srcs)
            acc[key] = val if key not in acc else self.combine(region, acc[key], val)
        return acc

    def _reduce_lanes(self, acc: dict, bit: int, region: Region) -> dict:
        upper = self._bit_set(self.lane, bit)
        out = {}
        for key, mine in acc.items():
            other = tuple(self.shfl_xor(v, 1 << bit) for v in mine)
            first = tuple(self.b.select(upper, o, m) for m, o in zip(mine, other))
            second = tuple(self.b.select(upper, m, o) for m, o in zip(mine, other))
            out[key] = self.combine(region, first, second)
        return out

    def _reduce_warps(self, acc, layout, axis, wbits, sts, region) -> dict:
        nw = 1 << len(wbits)
        widx = pack_bits(self.b, self.warp, [(bit, 1 << j) for j, bit in enumerate(wbits)])
        out_layout = slice_layout(layout, axis)
        strides = row_major(out_layout.shape)
        lin, consts = self.lin_index(out_layout, strides)
        const_of = dict(zip(out_layout.reg_coords(), consts))
        slots = prod(out_layout.shape) * nw
        bases, total = [], 0
        for st in sts:
            bases.append(total)
            total = _align16(total + slots * byte_size(st))
        self.reserve(total)
        self.barrier()
        for key, vals in acc.items():
            row = self.b.add(lin, ir.Constant(I32, const_of[key]))
            slot = self.b.add(self.b.mul(row, ir.Constant(I32, nw)), widx)
            for v, st, base in zip(vals, sts, bases):
                self.smem_store(self._offset(slot, byte_size(st), base), v, st)
        self.barrier()
        out = {}
        for key in acc:
            row = self.b.mul(self.b.add(lin, ir.Constant(I32, const_of[key])), ir.Constant(I32, nw))
            result = None
            for w in range(nw):
                slot = self.b.add(row, ir.Constant(I32, w))
                vals = tuple(
                    self.smem_load(self._offset(slot, byte_size(st), base), st)
                    for st, base in zip(sts, bases)
                )
                result = vals if result is None else self.combine(region, result, vals)
            out[key] = result
        return out

    # ------------------------------------------------------------ scan
    def op_tt_scan(self, op: Operation) -> list:
        axis = op.attrs["axis"]
        reverse = bool(op.attrs.get("reverse", False))
        srcs = [self.tensor(v) for v in op.operands]
        layout = srcs[0].layout
        sts = [element_type(v.type) for v in op.operands]
        n = layout.shape[axis]
        strides = row_major(layout.shape)
        bases, total = [], 0
        for st in sts:
            bases.append(total)
            total = _align16(total + prod(layout.shape) * byte_size(st))
        self.reserve(total)
        positions = self._positions(layout, axis)
        lin, consts = self.lin_index(layout, strides)
        vals = [tuple(s.vals[r] for s in srcs) for r in range(layout.num_regs)]
        step = 1
        while step < n:
            vals = self._scan_round(
                op, vals, sts, bases, positions, lin, consts, step, strides[axis], n, reverse
            )
            step *= 2
        return [RegTile(layout, [v[i] for v in vals]) for i in range(len(srcs))]

    def _positions(self, layout: Layout, axis: int) -> list[ir.Value]:
        toff = self.thread_offsets(layout)[axis]
        return [self.b.add(toff, ir.Constant(I32, c[axis])) for c in layout.reg_coords()]

    def _scan_round(self, op, vals, sts, bases, positions, lin, consts, step, stride, n, reverse):
        b = self.b
        self.barrier()
        for r, tup in enumerate(vals):
            idx = b.add(lin, ir.Constant(I32, consts[r]))
            for v, st, base in zip(tup, sts, bases):
                self.smem_store(self._offset(idx, byte_size(st), base), v, st)
        self.barrier()
        out = []
        for r, mine in enumerate(vals):
            idx = b.add(lin, ir.Constant(I32, consts[r]))
            if reverse:
                valid = b.icmp_signed("<", positions[r], ir.Constant(I32, n - step))
                src = b.add(idx, ir.Constant(I32, step * stride))
            else:
                valid = b.icmp_signed(">=", positions[r], ir.Constant(I32, step))
                src = b.sub(idx, ir.Constant(I32, step * stride))
            src = b.select(valid, src, idx)
            other = tuple(
                self.smem_load(self._offset(src, byte_size(st), base), st)
                for st, base in zip(sts, bases)
            )
            combined = self.combine(op.regions[0], other, mine)
            out.append(tuple(b.select(valid, c, m) for c, m in zip(combined, mine)))
        return out

    # ------------------------------------------------------------ sort
    def op_tt_sort(self, op: Operation) -> RegTile:
        dim = op.attrs["dim"]
        descending = bool(op.attrs["descending"])
        src = self.tensor(op.operands[0])
        layout = src.layout
        st = element_type(op.result.type)
        strides = row_major(layout.shape)
        n = layout.shape[dim]
        self.reserve(prod(layout.shape) * byte_size(st))
        positions = self._positions(layout, dim)
        lin, consts = self.lin_index(layout, strides)
        vals = list(src.vals)
        k = 2
        while k <= n:
            j = k // 2
            while j >= 1:
                vals = self._sort_step(
                    vals, st, positions, lin, consts, k, j, strides[dim], descending
                )
                j //= 2
            k *= 2
        return RegTile(layout, vals)

    def _sort_step(self, vals, st, positions, lin, consts, k, j, stride, descending):
        b = self.b
        eb = byte_size(st)
        self.barrier()
        for r, v in enumerate(vals):
            self.smem_store(self._offset(b.add(lin, ir.Constant(I32, consts[r])), eb, 0), v, st)
        self.barrier()
        out = []
        for r, mine in enumerate(vals):
            pos = positions[r]
            idx = b.add(lin, ir.Constant(I32, consts[r]))
            lower = b.not_(self._bit_set(pos, j.bit_length() - 1))
            delta = b.select(lower, ir.Constant(I32, j * stride), ir.Constant(I32, -j * stride))
            other = self.smem_load(self._offset(b.add(idx, delta), eb, 0), st)
            up = (
                b.not_(self._bit_set(pos, k.bit_length() - 1))
                if k < (1 << 31)
                else ir.Constant(I1, 1)
            )
            want_min = b.icmp_unsigned("==", lower, up)
            if descending:
                want_min = b.not_(want_min)
            less = self.compare("lt", st, other, mine)
            lo = b.select(less, other, mine)
            hi = b.select(less, mine, other)
            out.append(b.select(want_min, lo, hi))
        return out

    # ------------------------------------------------------------ dot
    def op_tt_dot(self, op: Operation) -> RegTile:
        """The FMA dot: A and B through shared memory, one FMA per k and output element.

        A batched (3-D) dot ``[B, M, K] @ [B, K, N]`` is the same loop, each
        output element reading the A row and B column of its own batch. Its
        fp32 inputs are rounded to TF32 for ``input_precision="tf32"`` on
        sm_80 and later, as the tensor-core paths and the emulator do.
        """
        a_v, b_v, _ = op.operands
        a, bm, c = (self.tensor(v) for v in op.operands)
        sta, stb, stc = (element_type(v.type) for v in op.operands)
        *batch, m, k = a_v.shape
        n = b_v.shape[-1]
        nb = batch[0] if batch else 1
        rank = len(a_v.shape)
        off_b = _align16(nb * m * k * byte_size(sta))
        self.reserve(off_b + nb * k * n * byte_size(stb))
        self.barrier()
        self.write_tensor(a, sta, (m * k, k, 1)[-rank:])
        self.write_tensor(bm, stb, (k * n, n, 1)[-rank:], base=off_b)
        self.barrier()
        tf32 = (rank == 3 and sta == stb == F32 and arch_number(self.arch) >= 80
                and op.attrs.get("input_precision", "tf32") == "tf32")  # fmt: skip
        return RegTile(c.layout, self._dot_loop(c, (sta, stb, stc), (m, k, n), off_b, tf32))

    def _dot_loop(self, c: RegTile, types, mkn, off_b: int, tf32: bool) -> list[ir.Value]:
        sta, stb, stc = types
        m, k, n = mkn
        bld = self.b
        coords = c.layout.reg_coords()
        toff = self.thread_offsets(c.layout)

        def at(dim: int, v: int) -> ir.Value:
            return bld.add(toff[dim], ir.Constant(I32, v))

        def batch(x: tuple[int, ...]) -> ir.Value:
            return at(0, x[0]) if len(x) == 3 else ir.Constant(I32, 0)

        # Element offsets in the tiles, less the k term: (b M + i) K for A, b K N + j for B.
        rows, cols = {}, {}
        for x in coords:
            if (x[:-2], x[-2]) not in rows:
                row = bld.add(bld.mul(batch(x), ir.Constant(I32, m)), at(-2, x[-2]))
                rows[(x[:-2], x[-2])] = bld.mul(row, ir.Constant(I32, k))
            if (x[:-2], x[-1]) not in cols:
                first = bld.mul(batch(x), ir.Constant(I32, k * n))
                cols[(x[:-2], x[-1])] = bld.add(first, at(-1, x[-1]))
        entry = bld.block
        header = bld.append_basic_block("dot.header")
        body = bld.append_basic_block("dot.body")
        exit_ = bld.append_basic_block("dot.exit")
        bld.branch(header)
        bld.position_at_end(header)
        kk = bld.phi(I32)
        kk.add_incoming(ir.Constant(I32, 0), entry)
        accs = [bld.phi(v.type) for v in c.vals]
        for phi, v in zip(accs, c.vals):
            phi.add_incoming(v, entry)
        bld.cbranch(bld.icmp_signed("<", kk, ir.Constant(I32, k)), body, exit_)
        bld.position_at_end(body)
        a_vals = {r: self._dot_operand(bld.add(i, kk), sta, stc, 0, tf32) for r, i in rows.items()}
        k_n = bld.mul(kk, ir.Constant(I32, n))
        b_vals = {
            q: self._dot_operand(bld.add(k_n, j), stb, stc, off_b, tf32) for q, j in cols.items()
        }
        new = [
            self._mac(stc, a_vals[(x[:-2], x[-2])], b_vals[(x[:-2], x[-1])], acc)
            for x, acc in zip(coords, accs)
        ]
        nxt = bld.add(kk, ir.Constant(I32, 1))
        latch = bld.block
        bld.branch(header)
        kk.add_incoming(nxt, latch)
        for phi, v in zip(accs, new):
            phi.add_incoming(v, latch)
        bld.position_at_end(exit_)
        return list(accs)

    def _dot_operand(self, lin: ir.Value, st, stc, base: int, tf32: bool) -> ir.Value:
        v = self.smem_load(self._offset(lin, byte_size(st), base), st)
        if tf32:
            v = self.b.bitcast(to_tf32(self.b, v), F32_T)
        return self.cast(st, stc, v)

    def _mac(self, st: ScalarType, a: ir.Value, b: ir.Value, acc: ir.Value) -> ir.Value:
        if st.is_float():
            return self.fma(st, a, b, acc)
        return self.b.add(self.b.mul(a, b), acc)

    # ------------------------------------------------------------ print, assert
    def op_tt_print(self, op: Operation) -> None:
        prefix = str(op.attrs.get("prefix", ""))
        hex_ = bool(op.attrs.get("hex", False))
        if not op.operands:
            self._printf_thread0(f"pid (%d, %d, %d) {prefix}\n", self._pids())
        for i, v in enumerate(op.operands):
            label = prefix if len(op.operands) == 1 else f"{prefix}(operand {i}) "
            if isinstance(v.type, BlockType):
                self._print_block(v, label, hex_)
            else:
                fmt, val = self._format(element_type(v.type), self.get(v), hex_)
                self._printf_thread0(f"pid (%d, %d, %d) {label}{fmt}\n", [*self._pids(), val])

    def _pids(self) -> list[ir.Value]:
        return [self.sreg(f"ctaid.{a}") for a in "xyz"]

    def _printf_thread0(self, fmt: str, args: list[ir.Value]) -> None:
        def emit() -> list[ir.Value]:
            self.vprintf(fmt, args)
            return []

        self.guarded(self.is_thread0(), emit, [])

    def vprintf(self, fmt: str, args: list[ir.Value]) -> None:
        """Call CUDA's ``vprintf`` with a packed argument buffer."""
        struct = ir.LiteralStructType([a.type for a in args])
        buf = self.cached(("printf_buf", str(struct)), lambda b: _opaque(b.alloca(struct)))
        for i, a in enumerate(args):
            field = self.b.gep(buf, [ir.Constant(I32, 0), ir.Constant(I32, i)], source_etype=struct)
            self.b.store(a, field)
        fn = self.declare("vprintf", I32, [GENERIC_PTR, GENERIC_PTR])
        self.b.call(fn, [self.string(fmt), buf])

    def _format(self, st: object, v: ir.Value, hex_: bool) -> tuple[str, ir.Value]:
        b = self.b
        if isinstance(st, PointerType):
            return "0x%llx", b.ptrtoint(v, I64)
        if hex_:
            bits = st.bitwidth
            as_int = v if isinstance(v.type, ir.IntType) else b.bitcast(v, ir.IntType(bits))
            if bits == 64:
                return "0x%llx", as_int
            return "0x%x", b.zext(as_int, I32) if bits < 32 else as_int
        if st.is_float():
            wide = self.to_f32(v, st) if st.bitwidth <= 32 else v
            return "%f", b.fpext(wide, F64_T) if wide.type != F64_T else wide
        if st.bitwidth == 64:
            return ("%lld" if st.is_signed() else "%llu"), v
        if st.bitwidth < 32:
            v = b.sext(v, I32) if st.is_signed() else b.zext(v, I32)
        return ("%d" if st.is_signed() or st.is_bool() else "%u"), v

    def _print_block(self, v, label: str, hex_: bool) -> None:
        t = self.tensor(v)
        st = element_type(v.type)
        shape = t.layout.shape
        self.reserve(prod(shape) * byte_size(st))
        self.barrier()
        self.write_tensor(t, st, row_major(shape))
        self.barrier()
        idx_fmt = ", ".join(["%d"] * len(shape))

        def body(i: ir.Value) -> None:
            val = self.smem_load(self.b.mul(i, ir.Constant(I32, byte_size(st))), st)
            fmt, pval = self._format(st, val, hex_)
            idx = self._unravel(i, shape)
            self.vprintf(
                f"pid (%d, %d, %d) idx ({idx_fmt}) {label}{fmt}\n", [*self._pids(), *idx, pval]
            )

        def loop() -> list[ir.Value]:
            self.counted_loop(prod(shape), body)
            return []

        self.guarded(self.is_thread0(), loop, [])

    def _unravel(self, i: ir.Value, shape: tuple[int, ...]) -> list[ir.Value]:
        out = []
        for stride, size in zip(row_major(shape), shape):
            q = self.b.udiv(i, ir.Constant(I32, stride))
            out.append(self.b.urem(q, ir.Constant(I32, size)))
        return out

    def counted_loop(self, count: int, body: Callable[[ir.Value], None]) -> None:
        """Emit ``for i in range(count): body(i)`` as a real loop."""
        bld = self.b
        entry = bld.block
        header = bld.append_basic_block("loop.header")
        inner = bld.append_basic_block("loop.body")
        exit_ = bld.append_basic_block("loop.exit")
        bld.branch(header)
        bld.position_at_end(header)
        i = bld.phi(I32)
        i.add_incoming(ir.Constant(I32, 0), entry)
        bld.cbranch(bld.icmp_unsigned("<", i, ir.Constant(I32, count)), inner, exit_)
        bld.position_at_end(inner)
        body(i)
        nxt = bld.add(i, ir.Constant(I32, 1))
        i.add_incoming(nxt, bld.block)
        bld.branch(header)
        bld.position_at_end(exit_)

    def op_tt_assert(self, op: Operation) -> None:
        cond = self.get(op.operands[0])
        vals = cond.vals if isinstance(cond, RegTile) else [cond]
        bad = self.b.not_(vals[0])
        for v in vals[1:]:
            bad = self.b.or_(bad, self.b.not_(v))
        loc = op.loc
        msg = self.string(str(op.attrs.get("message", "assertion failed")))
        file = self.string(loc.file)
        func = self.string(self.kernel.sym_name)
        fail = self.declare("__assertfail", VOID, [GENERIC_PTR, GENERIC_PTR, I32, GENERIC_PTR, I64])

        def emit() -> list[ir.Value]:
            self.b.call(fail, [msg, file, ir.Constant(I32, loc.line), func, ir.Constant(I64, 1)])
            return []

        self.guarded(bad, emit, [])


def _opaque(v: ir.Instruction) -> ir.Instruction:
    # llvmlite types allocas as typed pointers; GEPs with an explicit element type need opaque ones.
    v.type = GENERIC_PTR
    return v


def _bits(ty: ir.Type) -> int:
    if isinstance(ty, ir.IntType):
        return ty.width
    if isinstance(ty, ir.HalfType):
        return 16
    if isinstance(ty, ir.FloatType):
        return 32
    return 64
