"""TMA stores: a tile store of a 2-D tensor goes out through shared memory on Hopper.

On sm_90a a ``tt.store`` of a whole tile of a 2-D tensor that the host can
describe (a descriptor's ``desc.store``, or the same pointers written by
hand) becomes a *bulk tensor store*: every thread writes its registers into
a swizzled shared tile, fences them for the async proxy
(``fence.proxy.async.shared::cta``), a barrier, and one thread issues
``cp.async.bulk.tensor.2d.global.shared::cta.bulk_group`` per 128-byte
column block of the tile and commits the bulk group. The copy engine clips
the box at the tensor's edges itself, so ragged tiles store only what lies
inside. The store is asynchronous: the kernel goes on (in a persistent
kernel, to the next tile's loop) while the copy engine reads the tile.

**When.** The store's pointers and mask have the form
:func:`~minitriton.backend.tma.match_box` recognizes (the pipeliner's TMA
loads use it too): pointers ``base + (o0 + i0) * s0 + (o1 + i1)`` with a
16-byte aligned base (a pointer argument), the row stride a kernel argument
or a constant whose bytes are a multiple of 16, and the mask exactly the
in-bounds test ``o_d + i_d < n_d`` (optionally ``>= 0``) of both dimensions,
``n_d`` kernel arguments or constants. The element type is fp16, bf16 or
fp32, a tile row is at least 32 bytes wide (the narrowest swizzle) and the
tile has a multiple of 8 rows (the swizzle's period).
The tiles of all TMA stores must fit in shared memory next to what the
kernel already uses (its rings and barriers, or its largest floating-point
block for layout conversions, whichever is larger; 227 KB per block on
Hopper): stores that would not fit stay ordinary stores.

**Switch.** The pass runs only with ``MINITRITON_TMA_STORES=1``: TMA stores
are off by default until they have been measured on a GPU. It never runs on
other arches, with ``MINITRITON_TMA=0``, or in debug mode
(``MINITRITON_DEBUG=1``): the rewrite is skipped there, so debug mode's
out-of-bounds checks still see every ``tt.store``.

**Shared memory.** Each TMA store has its own tile, 1024-byte aligned, at the
start of shared memory for the whole kernel (``ttng.tma_store_buffers``, the
kernel's first op); the rings of pipelined loops and the scratch space of
conversions start after them. So the second tile of a persistent kernel can
run its loop while the first tile's stores are still reading their tiles.
Before a tile is written again, ``ttng.async_tma_store_wait {pendings = 0}``
makes the issuing thread wait until every earlier bulk store has read its
tile (``cp.async.bulk.wait_group.read 0``), then a barrier. One wait serves
consecutive stores of one block (an epilogue stored in subtiles: each half
has its own tile), and one before ``tt.return`` keeps the shared memory
alive until the last store has read it.

**Before** (tutorial 09's persistent epilogue with ``EPILOGUE_SUBTILE``,
128 x 128 tiles; most of the address and mask arithmetic is left out)::

    scf.for(%start_pid, %num_tiles, %17) {
      ...
      %148 = arith.cast(%acc0) : tensor<128x64xf16>
      ...
      %165 = tt.addptr(%43, %158) : tensor<128x64xptr<f16>>
      tt.store(%165, %148, %164)           // acc0: columns offs_bn ..
      %166 = arith.add(%offs_bn, %13) : i32
      %167 = arith.cast(%acc1) : tensor<128x64xf16>
      ...
      tt.store(%179, %167, %178)           // acc1: columns offs_bn + 64 ..
      scf.yield()
    }
    tt.return()

**After** (the golden ``tests/backend/goldens/gpu_passes/tma-stores``)::

    ttng.tma_store_buffers() {bytes = 32768}    // two 16 KB tiles
    ...
    scf.for(%start_pid, %num_tiles, %17) {
      ...
      ttng.async_tma_store_wait() {pendings = 0}   // the last tile's stores have read
      ttng.async_tma_copy_local_to_global(%offs_bn, %offs_am, %148) {map = 2, offset = 0}
      %166 = arith.add(%offs_bn, %13) : i32
      %167 = arith.cast(%acc1) : tensor<128x64xf16>
      ...
      ttng.async_tma_copy_local_to_global(%166, %offs_am, %167) {map = 3, offset = 16384}
      scf.yield()
    }
    ttng.async_tma_store_wait() {pendings = 0}
    tt.return()

The coordinates are the box's column and row (innermost first). Each
store's tensor map (its recipe) joins the kernel's list after the pipelined
loads' maps; the launcher builds it as it builds theirs
(:mod:`~minitriton.backend.tensormap`). The code generator
(:mod:`~minitriton.backend.lower.tma`) writes the block into its tile from
whatever layout it has (the accumulator's own ``wgmma`` layout for a whole
epilogue: no layout conversion), one 16-byte ``st.shared`` per run where the
layout allows, swizzled as the map says.

Preconditions: inlined kernel after ``software-pipeline``, before the layout
plan. Postconditions: verified IR; each rewritten ``tt.store`` is gone (its
address and mask computations are left for LLVM to drop).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import ClassVar

import minitriton.backend.ops  # noqa: F401  (registers the ttng. ops made by name)
from minitriton.backend.irutil import parent_block, terminator
from minitriton.backend.ops import (
    AsyncTmaCopyOp,
    InitBarrierOp,
    LocalAllocOp,
)
from minitriton.backend.passes.gpu_pipeline import GpuPass, GpuState
from minitriton.backend.shared_layout import SharedTile, align_tile
from minitriton.backend.tma import (
    BARRIER_BYTES,
    Box,
    TmaMap,
    match_box,
)
from minitriton.ir.core import OP_REGISTRY, Block, Operation, Value
from minitriton.ir.ops import FuncOp, StoreOp
from minitriton.ir.types import I32, BlockType, ScalarType, element_type
from minitriton.passes.base import register_pass

#: Element types a TMA store is made for, and their bytes.
_DTYPES = {"f16": 2, "bf16": 2, "f32": 4}
#: Shared memory one block may use on Hopper (bytes).
_SHARED_LIMIT = 227 << 10


@dataclass
class _Store:
    """One ``tt.store`` that becomes a TMA store: its tile, its box and where its tile sits."""

    op: Operation
    tile: SharedTile
    box: Box
    dtype: str
    offset: int = 0


def _match(op: Operation, func: FuncOp) -> _Store | None:
    """The :class:`_Store` for ``op`` if it is a tile store TMA can make (module docstring)."""
    if not isinstance(op, StoreOp) or len(op.operands) != 3:
        return None
    value = op.operands[1]
    dtype = str(element_type(value.type))
    if dtype not in _DTYPES or len(value.shape) != 2:
        return None
    tile = SharedTile.make((value.shape[0], value.shape[1]), 1, _DTYPES[dtype])
    # Rows narrower than 32 bytes have no swizzle; a column block of fewer than 8 rows
    # would start the next one off the 1024-byte pattern the copy engine swizzles by.
    if tile is None or tile.rows % 8:
        return None
    box = match_box(op.operands[0], op.operands[2], tile, func)
    if box is None or len(box.dims) != 2:  # the store is a 2-D copy
        return None
    return _Store(op, tile, box, dtype)


def _used_shared(func: FuncOp) -> int:
    """Shared memory the kernel needs besides the stores' tiles (an upper estimate).

    Every ring and barrier of its pipelined loops, or its largest block of
    floating-point values (a layout conversion's scratch), whichever is
    larger. Index and mask blocks are left out: the layout plan recomputes
    them in the layout wanted rather than moving them, and the rewritten
    stores' own addresses and masks go dead.
    """
    rings = 0
    largest = 0
    for op in func.walk():
        if isinstance(op, LocalAllocOp):
            eb = ScalarType(op.attrs["dtype"]).bitwidth // 8
            rings += align_tile(prod(op.attrs["shape"]) * eb) * op.attrs["stages"]
        elif isinstance(op, InitBarrierOp):
            rings += align_tile(BARRIER_BYTES * op.attrs["count"])
        for r in op.results:
            st = element_type(r.type)
            if isinstance(r.type, BlockType) and isinstance(st, ScalarType) and st.is_float():
                largest = max(largest, prod(r.shape) * st.bitwidth // 8)
    return max(rings, largest)


def _next_map(func: FuncOp) -> int:
    """The first tensor-map number not taken by the pipeliner's TMA loads."""
    taken = [op.attrs["map"] for op in func.walk() if isinstance(op, AsyncTmaCopyOp)]
    return max(taken, default=-1) + 1


def _emit(block: Block, before: Operation, name: str, operands: list[Value],
          types: list, attrs: dict) -> Operation:  # fmt: skip
    op = OP_REGISTRY[name](operands, types, attrs, (), before.loc)
    block.insert(block.ops.index(before), op)
    return op


def _coordinate(pieces: list, before: Operation) -> Value:
    """The sum of a coordinate's pieces (i32 values and ints), computed before ``before``."""
    block = parent_block(before)
    values = [p for p in pieces if not isinstance(p, int)]
    total = sum(p for p in pieces if isinstance(p, int))
    out = None
    if total or not values:
        out = _emit(block, before, "arith.constant", [], [I32], {"value": total}).result
    for p in values:
        out = p if out is None else _emit(block, before, "arith.add", [out, p], [I32], {}).result
    assert out is not None
    return out


def _needs_wait(store: Operation, previous: Operation | None) -> bool:
    """Whether ``store`` needs its own wait: it is not right after ``previous`` in its block.

    Between two stores of one block with no loop or branch between them, the
    first store's wait covers both (their tiles differ).
    """
    if previous is None or previous.parent is not store.parent:
        return True
    ops = parent_block(store).ops
    between = ops[ops.index(previous) + 1 : ops.index(store)]
    return any(op.regions for op in between)


def rewrite_tma_stores(func: FuncOp) -> int:
    """Turn the kernel's TMA-able tile stores into TMA stores; returns how many."""
    room = _SHARED_LIMIT - _used_shared(func)
    stores: list[_Store] = []
    used = 0
    for op in func.walk():
        found = _match(op, func)
        if found is not None and used + align_tile(found.tile.nbytes) <= room:
            found.offset = used
            used += align_tile(found.tile.nbytes)
            stores.append(found)
    if not stores:
        return 0
    body = func.body.block
    _emit(body, body.ops[0], "ttng.tma_store_buffers", [], [], {"bytes": used})
    maps: list[TmaMap] = func.__dict__.setdefault("tma_maps", [])
    first = _next_map(func)
    waits = [_needs_wait(s.op, stores[i - 1].op if i else None) for i, s in enumerate(stores)]
    for i, s in enumerate(stores):
        tmap = TmaMap(s.box.base, s.dtype, s.box.dims, s.box.strides,
                      [s.tile.row_elems, s.tile.rows], s.tile.swizzle)  # fmt: skip
        if len(maps) == first + i:  # (a module parsed from text has no recipes to extend)
            maps.append(tmap)
        _rewrite(s, first + i, waits[i])
    ret = terminator(body)
    _emit(body, ret, "ttng.async_tma_store_wait", [], [], {"pendings": 0})
    return len(stores)


def _rewrite(s: _Store, map_index: int, wait: bool) -> None:
    """Replace the ``tt.store`` of ``s`` by its TMA store (after a wait where needed)."""
    block = parent_block(s.op)
    if wait:
        _emit(block, s.op, "ttng.async_tma_store_wait", [], [], {"pendings": 0})
    x, y = (_coordinate(pieces, s.op) for pieces in s.box.coords)
    attrs = {"map": map_index, "offset": s.offset}
    _emit(block, s.op, "ttng.async_tma_copy_local_to_global", [x, y, s.op.operands[1]], [], attrs)
    block.remove(s.op)


@register_pass
@dataclass(frozen=True)
class TmaStoresPass(GpuPass):
    """Make tile stores TMA stores through shared memory (see the module docstring)."""

    name: ClassVar[str] = "tma-stores"
    condition: ClassVar[str] = "sm_90a, MINITRITON_TMA_STORES=1 (and TMA on), not debug mode"

    def applies(self, state: GpuState) -> bool:
        return state.tma and state.tma_stores and state.arch_number == 90

    def run(self, state: GpuState) -> None:
        rewrite_tma_stores(state.kernel)


__all__ = ["TmaStoresPass", "rewrite_tma_stores"]
