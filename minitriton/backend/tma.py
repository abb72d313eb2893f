"""Bulk tensor copies (TMA) for pipelined loops on Hopper: ``cp.async.bulk.tensor`` + ``mbarrier``.

On sm_90a the software pipeliner (:mod:`~minitriton.backend.passes.software_pipeline`) copies
a ring operand of a ``wgmma`` loop with the *Tensor Memory Accelerator*
instead of per-thread ``cp.async`` where the tile is a box of a 2-D tensor
that the host can describe: one thread issues
``cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes``
per 128-byte column block of the swizzled tile
(:class:`~minitriton.backend.shared_layout.SharedTile`), and the copy engine
writes the tile already swizzled the way ``wgmma`` reads it. Each ring stage
has an ``mbarrier``: the issuing thread announces the stage's bytes
(``mbarrier.arrive.expect_tx``), the copies complete them, and every thread
waits for the stage with ``mbarrier.try_wait.parity`` on the phase bit
``(k_i / num_stages) & 1`` of iteration ``k_i``.

**When.** A pipelined load of the fp16/bf16 ``wgmma`` form whose pointers
and mask are those of a descriptor or block-pointer load:

* the pointers are ``base + (o0 + i0) * s0 + (o1 + i1) * s1`` with ``base`` a
  pointer argument of the kernel, the stride of the contiguous dimension the
  constant 1 and the other stride a kernel argument or a constant
  (``i0``, ``i1``: ``tl.arange`` along each dimension; ``o0``, ``o1``: scalars,
  the tile's coordinates);
* ``base`` may be moved on by scalar products ``b * s_b`` with ``s_b`` a
  kernel argument or a constant (tutorial 06's ``Q + off_z * stride_qz +
  off_h * stride_qh``): each becomes one more dimension of the map, of stride
  ``s_b``, at coordinate ``b`` (an i32), up to TMA's five;
* the mask, if any, is ``(o_d + i_d < n_d)`` for a dimension (and optionally
  ``o_d + i_d >= 0``), with ``n_d`` kernel arguments or constants, and the
  load has no ``other`` or a zero one: out-of-bounds elements of a TMA box
  read as zeros, which is what such a load returns. A dimension that the
  mask leaves unchecked (an unmasked block-pointer load's, or a batch one)
  gets the size ``UNBOUNDED``, so that every copy the kernel makes lies
  inside it;
* the base and the byte stride are known multiples of 16 (the ``divisibility
  = 16`` specialization of pointers and integers, or the constant), and the
  box (the tile's swizzle width by its rows) is within the hardware's 256
  elements a side.

This covers host ``TensorDescriptor`` arguments (flattened into base, shape
and strides), in-kernel ``tl.make_tensor_descriptor`` and ``tl.make_block_ptr``
over kernel arguments (with or without ``boundary_check``), tutorial 06's
attention (``K`` and ``V`` through block pointers over one head of a
``(Z, H, N, D)`` tensor: 4-D maps), and ``b.T`` of a descriptor load
(:mod:`~minitriton.backend.passes.sink_transposes` turns it into a K-major
load). By default a loop gets TMA only where every ring load qualifies
(tutorial 09's matmul, attention's two rings);
``MINITRITON_TMA_FORMS=all`` also lets loops mix TMA and ``cp.async`` rings.
Any other load keeps ``cp.async``; so does every load in debug mode (the
checked variant checks each ``cp.async`` address), on other arches, and
everywhere with ``MINITRITON_TMA=0``.

One difference from a load: TMA reads a negative coordinate as outside the
tensor (zeros), where an unchecked load would read the memory before the
tile's base. A block pointer or descriptor whose offsets stay non-negative,
as every Triton tutorial's do, reads the same either way.

**Who issues.** One elected lane (``elect.sync``) of warp 0 (of the
producer's first warp under warp specialization) arrives on a stage's
barrier and issues its copies: ``ptxas`` then gives the copies uniform
operands directly, where a thread-index test made it loop over the lanes
that might issue, around every copy.

**Tensor maps.** The kernel gets one extra ``.param .align 64 .b8 [128]``
parameter per map (LLVM's ``byval`` + ``"nvvm.grid_constant"``: the copy
engine reads the map straight from the parameter space, through
``cvta.param``). The compiled kernel records how each map is made (its
*recipe*: which argument is the base, which arguments or constants are the
sizes and the stride, the box and the swizzle), and the launcher
(:mod:`~minitriton.backend.tensormap`) encodes the maps with
``cuTensorMapEncodeTiled`` from the launch's arguments, cached by the values
that define them.

**In the** ``ttgir`` **dump** (tutorial 09's loop, ``S = 3``)::

    ttng.init_barrier() {count = 3}
    ttng.barrier_expect(%pred, %slot0) {bytes = 32768}
    ttng.async_tma_copy_global_to_local(%k0, %offs_am, %pred, %slot0) {buffer = 0, map = 0}
    ttng.async_tma_copy_global_to_local(%k0, %offs_bn, %pred, %slot0) {buffer = 1, map = 1}
    ...
    scf.for(...) {
      ttng.wait_barrier(%slot, %phase)          // this iteration's tiles have landed
      %d = ttng.warp_group_dot(%acc, %slot) {a = 0, b = 1, ...}
      ...
      ttng.barrier_expect(%pred_n, %slot_n) {bytes = 32768}
      ttng.async_tma_copy_global_to_local(...) {buffer = 0, map = 0}
    }
    ttng.inval_barrier() {count = 3}
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from minitriton.backend.irutil import terminator
from minitriton.backend.shared_layout import SharedTile
from minitriton.ir.core import BlockArgument, Operation, Value
from minitriton.ir.ops import (
    AddOp,
    AddPtrOp,
    AndOp,
    BroadcastOp,
    CastOp,
    CmpOp,
    ConstantOp,
    ExpandDimsOp,
    FuncOp,
    MakeRangeOp,
    MulOp,
    SplatOp,
)
from minitriton.ir.types import BlockType, PointerType, ScalarType, element_type

#: ``MINITRITON_TMA=0`` keeps every pipelined load on ``cp.async``.
TMA_ENV = "MINITRITON_TMA"
#: Element types the copies are made for (the ``wgmma`` fp16/bf16 form).
_DTYPES = ("f16", "bf16")
#: The largest box side, in elements.
_BOX_LIMIT = 256
#: Bytes of one ``mbarrier``.
BARRIER_BYTES = 8
#: The most dimensions a tensor map has.
_RANK_LIMIT = 5
#: The size of a dimension that no mask bounds (an unchecked block-pointer
#: dimension, or a batch offset such as ``off_h * stride_h``): every
#: non-negative coordinate a copy can name (a signed 32-bit integer) lies
#: inside it. (2**32, which the encoder accepts, makes the H200's copies fault
#: with an illegal instruction.)
UNBOUNDED = ["const", 1 << 31]


#: Which loops get TMA: ``"whole"`` (default) — a loop whose every ring TMA
#: fills (tutorial 09's matmul, a block-pointer matmul's, attention's K and V),
#: the forms run on the H200 —, or ``"all"``: also loops mixing TMA and
#: ``cp.async`` rings, which compile and assemble but have not run on a GPU yet.
TMA_FORMS_ENV = "MINITRITON_TMA_FORMS"


def tma_forms() -> str:
    """``"all"`` or ``"whole"`` (see :data:`TMA_FORMS_ENV`)."""
    return "all" if os.environ.get(TMA_FORMS_ENV, "").strip().lower() == "all" else "whole"


def tma_enabled() -> bool:
    """Whether TMA copies may be used (``MINITRITON_TMA`` is not ``0``)."""
    return os.environ.get(TMA_ENV, "1").strip().lower() not in ("0", "off", "false", "no")


#: ``MINITRITON_TMA_STORES=1`` lets tile stores become TMA stores (see
#: :mod:`~minitriton.backend.passes.tma_stores`); off by default until the
#: stores have been measured on a GPU, every store stays an ``st.global``.
TMA_STORES_ENV = "MINITRITON_TMA_STORES"


def tma_stores_enabled() -> bool:
    """Whether stores may become TMA stores (``MINITRITON_TMA_STORES`` is set, not ``0``)."""
    value = os.environ.get(TMA_STORES_ENV, "0").strip().lower()
    return value not in ("", "0", "off", "false", "no")


#: ``MINITRITON_WARP_SPECIALIZE=1`` lets the ``warp-specialize`` pass split the TMA loops
#: that ask for it (``tl.range(..., warp_specialize=True)``); off by default until the
#: form has run on a GPU (:mod:`~minitriton.backend.passes.warp_specialize`).
WARP_SPECIALIZE_ENV = "MINITRITON_WARP_SPECIALIZE"


def warp_specialize_enabled() -> bool:
    """Whether ``MINITRITON_WARP_SPECIALIZE`` is set, and not ``0``."""
    value = os.environ.get(WARP_SPECIALIZE_ENV, "").strip().lower()
    return value not in ("", "0", "off", "false", "no")


def tma_tag() -> str:
    """The TMA settings (stores and warp specialization too), for cache keys."""
    tag = f"tma-{tma_forms()}" if tma_enabled() else "no-tma"
    tag += "-stores" if tma_enabled() and tma_stores_enabled() else ""
    return tag + "-ws" if warp_specialize_enabled() else tag


# ------------------------------------------------------------------ the recipe


@dataclass
class TmaMap:
    """How the launcher builds one tensor map (stored in the compiled kernel as JSON).

    ``dims`` (innermost first) and ``strides`` (one per dimension after the
    first, in elements) are ``["arg", i]`` (kernel argument ``i``) or
    ``["const", n]``; ``box`` has one size per dimension (1 for a batch one).
    """

    base: int
    dtype: str
    dims: list[list[Any]]
    strides: list[list[Any]]
    box: list[int]
    swizzle: int

    def to_json(self) -> dict[str, Any]:
        """The recipe as a JSON object."""
        return {"base": self.base, "dtype": self.dtype, "dims": self.dims,
                "strides": self.strides, "box": self.box, "swizzle": self.swizzle}  # fmt: skip


@dataclass
class TmaLoad:
    """A pipelined load copied with TMA: its map and its tile coordinates.

    ``coords`` (innermost first) are lists of scalar pieces (IR values or
    ints) whose sum is the coordinate.
    """

    map: TmaMap
    coords: list[list[Any]]
    #: Column blocks of the swizzled tile (one copy each) and their width in elements.
    blocks: int
    block_elems: int
    nbytes: int
    tile: SharedTile = field(repr=False)
    #: The map's kernel parameter number (set when the loop is rewritten).
    map_index: int = -1


# ------------------------------------------------------------------ analysis
#
# Block values are read as sums of *terms* ``(o + i_d) * s``: ``_Idx`` is
# ``o + i_d`` (the pieces of ``o``, and ``d``), ``_Uni`` a scalar splat, ``_Lin``
# a sum of terms and ``_Ptr`` a base pointer plus terms.


@dataclass(frozen=True)
class _Idx:
    dim: int
    pieces: tuple


@dataclass(frozen=True)
class _Uni:
    pieces: tuple


@dataclass(frozen=True)
class _Lin:
    terms: tuple  # ((_Idx, stride piece), ...)


@dataclass(frozen=True)
class _Ptr:
    base: Value
    terms: tuple
    #: Scalar offsets of the base, ``x * y`` each: ``((x, y), ...)`` (see :func:`_base`).
    batch: tuple = ()


def _scalar_pieces(v: Value) -> tuple:
    op = getattr(v, "owner", None)
    while isinstance(op, CastOp) and _widens(op):  # a block pointer's offset, widened to i64
        v = op.operands[0]
        op = getattr(v, "owner", None)
    if isinstance(op, ConstantOp) and type(op.attrs["value"]) is int:
        return (op.attrs["value"],)
    return (v,)


def _remap(f: Any, axis: int) -> Any:
    """``f`` after ``expand_dims(axis)`` of a 1-D block."""
    if isinstance(f, _Idx):
        return _Idx(f.dim + (1 if axis <= f.dim else 0), f.pieces)
    if isinstance(f, _Lin):
        return _Lin(tuple((_remap(i, axis), s) for i, s in f.terms))
    if isinstance(f, _Ptr):
        return _Ptr(f.base, tuple((_remap(i, axis), s) for i, s in f.terms), f.batch)
    return f


def _terms(f: Any) -> tuple | None:
    if isinstance(f, _Idx):
        return ((f, 1),)
    if isinstance(f, _Lin):
        return f.terms
    if (
        isinstance(f, _Uni)
        and all(p == 0 for p in f.pieces if isinstance(p, int))
        and all(isinstance(p, int) for p in f.pieces)
    ):
        return ()
    return None


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, _Uni) and isinstance(b, _Uni):
        return _Uni(a.pieces + b.pieces)
    if isinstance(a, _Idx) and isinstance(b, _Uni):
        return _Idx(a.dim, a.pieces + b.pieces)
    if isinstance(a, _Uni) and isinstance(b, _Idx):
        return _Idx(b.dim, b.pieces + a.pieces)
    ta, tb = _terms(a), _terms(b)
    return None if ta is None or tb is None else _Lin(ta + tb)


def _mul(a: Any, b: Any) -> Any:
    if isinstance(b, _Idx):
        a, b = b, a
    if isinstance(a, _Idx) and isinstance(b, _Uni) and len(b.pieces) == 1:
        return _Lin(((a, b.pieces[0]),))
    return None


def _form(v: Value) -> Any:
    """The term form of ``v``, or None where it is something else."""
    op = getattr(v, "owner", None)
    if not isinstance(v.type, BlockType):
        return _Uni(_scalar_pieces(v))
    if op is None:
        return None
    if isinstance(op, MakeRangeOp):
        start = op.attrs.get("start", 0)
        return _Idx(0, (start,) if start else ())
    if isinstance(op, SplatOp):
        x = op.operands[0]
        return _base(x) if isinstance(x.type, PointerType) else _Uni(_scalar_pieces(x))
    if isinstance(op, ConstantOp):
        value = op.attrs.get("value")
        return _Uni((value,)) if type(value) is int else None
    if isinstance(op, ExpandDimsOp):
        f = _form(op.operands[0])
        return None if f is None else _remap(f, op.attrs["axis"])
    if isinstance(op, BroadcastOp):
        return _form(op.operands[0])
    if isinstance(op, CastOp):
        return _form(op.operands[0]) if _widens(op) else None
    if isinstance(op, (AddOp, MulOp)):
        a, b = (_form(x) for x in op.operands)
        if a is None or b is None:
            return None
        return _add(a, b) if isinstance(op, AddOp) else _mul(a, b)
    if isinstance(op, AddPtrOp):
        p, off = _form(op.operands[0]), _form(op.operands[1])
        terms = _terms(off) if off is not None else None
        if not isinstance(p, _Ptr) or terms is None:
            return None
        return _Ptr(p.base, p.terms + terms, p.batch)
    return None


def _base(ptr: Value) -> _Ptr:
    """A scalar pointer as a kernel argument plus products ``x * y`` (tutorial 06's
    ``Q + off_z * stride_qz + off_h * stride_qh``), or as itself where it is something else."""
    batch: tuple = ()
    p = ptr
    while isinstance(op := getattr(p, "owner", None), AddPtrOp):
        products = _products(op.operands[1])
        if products is None:
            return _Ptr(ptr, ())
        batch += products
        p = op.operands[0]
    return _Ptr(p, (), batch)


def _narrowest(v: Value) -> Value:
    """``v`` before its integer widenings."""
    while isinstance(op := getattr(v, "owner", None), CastOp) and _widens(op):
        v = op.operands[0]
    return v


def _products(v: Value) -> tuple | None:
    """A scalar integer as a sum of products of two values, ``((x, y), ...)``, or None."""
    op = getattr(_narrowest(v), "owner", None)
    if isinstance(op, AddOp):
        a, b = (_products(x) for x in op.operands)
        return None if a is None or b is None else a + b
    if isinstance(op, MulOp):
        x, y = (_narrowest(x) for x in op.operands)
        return ((x, y),)
    return None


def dim_strides(ptrs: Value) -> dict[int, Any] | None:
    """Per dimension, the stride (an int or a scalar value) of a block of pointers, or None.

    Where :func:`_form` reads ``ptrs`` as a base plus one ``(o_d + i_d) * s_d``
    per dimension, the pointers one element apart along ``d`` are ``s_d``
    elements apart: the copies of a thread are then its first one's pointer
    plus steps (see :func:`~minitriton.backend.lower.wgmma.lower_async_copy`).
    """
    form = _form(ptrs)
    if not isinstance(form, _Ptr) or not isinstance(ptrs.type, BlockType):
        return None
    by_dim = _by_dim(form)
    if by_dim is None or len(by_dim) != len(ptrs.type.shape):
        return None
    return {d: stride for d, (_, stride) in by_dim.items()}


def _by_dim(ptr: _Ptr) -> dict[int, tuple[_Idx, Any]] | None:
    """``ptr``'s terms by dimension, ``{d: (index, stride)}``; None if a dimension has two."""
    by_dim: dict[int, tuple[_Idx, Any]] = {}
    for idx, stride in ptr.terms:
        if idx.dim in by_dim:
            return None
        by_dim[idx.dim] = (idx, stride)
    return by_dim


def _widens(op: Operation) -> bool:
    """Whether cast ``op`` is an integer widening (it keeps every value)."""
    src = element_type(op.operands[0].type)
    dst = element_type(op.result.type)
    return (
        isinstance(src, ScalarType) and isinstance(dst, ScalarType)
        and src.is_int() and dst.is_int() and src.bitwidth <= dst.bitwidth
    )  # fmt: skip


def _bounds(v: Value, out: dict) -> bool:
    """Collect the leaves of a bounds mask into ``out[(pred, dim)] = (pieces, bound)``."""
    op = getattr(v, "owner", None)
    if op is None:
        return False
    if isinstance(op, AndOp):
        return all(_bounds(x, out) for x in op.operands)
    if isinstance(op, (BroadcastOp, ExpandDimsOp)):
        inner: dict = {}
        if not _bounds(op.operands[0], inner):
            return False
        axis = op.attrs.get("axis") if isinstance(op, ExpandDimsOp) else None
        for (pred, dim), (pieces, bound) in inner.items():
            d = dim + (1 if axis is not None and axis <= dim else 0)
            out[(pred, d)] = (pieces, bound)
        return True
    if not isinstance(op, CmpOp) or op.attrs.get("pred") not in ("lt", "ge"):
        return False
    idx, rhs = _form(op.operands[0]), _form(op.operands[1])
    if not isinstance(idx, _Idx) or not isinstance(rhs, _Uni) or len(rhs.pieces) != 1:
        return False
    pred = op.attrs["pred"]
    if pred == "ge" and rhs.pieces != (0,):
        return False
    key = (pred, idx.dim)
    if key in out and _key(out[key][0]) != _key(idx.pieces):
        return False
    out[key] = (idx.pieces, rhs.pieces[0])
    return True


def _key(pieces: tuple) -> tuple:
    """Pieces as a comparable multiset (values by identity, ints summed)."""
    ints = sum(p for p in pieces if isinstance(p, int))
    return (ints, tuple(sorted(id(p) for p in pieces if not isinstance(p, int))))


def _host_value(piece: Any, func: FuncOp) -> list[Any] | None:
    """``["arg", i]`` for kernel argument ``i`` (through integer casts), ``["const", n]``."""
    if isinstance(piece, int):
        return ["const", piece]
    v = piece
    while isinstance(getattr(v, "owner", None), CastOp):
        v = v.owner.operands[0]
    if isinstance(v, BlockArgument) and v in func.body.args:
        t = v.type
        if isinstance(t, ScalarType) and t.is_int() and not t.is_bool():
            return ["arg", func.body.args.index(v)]
    owner = getattr(v, "owner", None)
    if isinstance(owner, ConstantOp) and type(owner.attrs["value"]) is int:
        return ["const", owner.attrs["value"]]
    return None


def _divisibility(func: FuncOp, index: int) -> int:
    """What kernel argument ``index`` is known to be a multiple of (1: nothing known)."""
    attrs = func.attrs.get("arg_attrs") or []
    a = attrs[index] if index < len(attrs) else {}
    return int(a.get("divisibility", 1)) if isinstance(a, dict) else 1


def _divisible_16(func: FuncOp, index: int) -> bool:
    return _divisibility(func, index) % 16 == 0


def match_tma_load(load: Operation, contig: int, func: FuncOp) -> TmaLoad | None:
    """A :class:`TmaLoad` for the ring load ``load`` (``contig``: its tile's layout), or None."""
    v = load.result
    dtype = str(element_type(v.type))
    if dtype not in _DTYPES or len(v.shape) != 2:
        return None
    rows, cols = v.shape
    tile = SharedTile.make((rows, cols), contig, 2)
    if tile is None:
        return None
    mask = load.operands[1] if len(load.operands) > 1 else None
    box = match_box(load.operands[0], mask, tile, func)
    if box is None:
        return None
    sizes = [tile.row_elems, tile.rows] + [1] * (len(box.dims) - 2)
    tmap = TmaMap(box.base, dtype, box.dims, box.strides, sizes, tile.swizzle)
    blocks = v.shape[contig] // tile.row_elems
    return TmaLoad(tmap, box.coords, blocks, tile.row_elems, tile.nbytes, tile)


@dataclass
class Box:
    """A tile of a 2-D tensor the host can describe: what :func:`match_box` finds.

    ``base`` is the base pointer's argument number; ``dims`` (innermost first:
    the tile's two, then one per batch offset) and ``strides`` are recipe
    entries (see :class:`TmaMap`); ``coords`` (innermost first) are lists of
    scalar pieces whose sum is the coordinate.
    """

    base: int
    dims: list[list[Any]]
    strides: list[list[Any]]
    coords: list[list[Any]]


def match_box(ptrs: Value, mask: Value | None, tile: SharedTile, func: FuncOp) -> Box | None:
    """The :class:`Box` that pointers ``ptrs`` under bounds mask ``mask`` address, or None.

    ``tile`` is the shared tile the box is copied to or from: its
    ``contig`` dimension must have unit stride, and its swizzled rows must
    fit the hardware's box (256 elements a side). A tile dimension that
    ``mask`` does not bound (or every one, without a mask) is
    ``UNBOUNDED``; so is each batch offset of the base.
    """
    if tile.rows > _BOX_LIMIT or tile.row_elems > _BOX_LIMIT:
        return None
    ptr = _form(ptrs)
    if not isinstance(ptr, _Ptr) or not isinstance(ptr.base, BlockArgument):
        return None
    if ptr.base not in func.body.args or not _divisible_16(func, func.body.args.index(ptr.base)):
        return None
    by_dim = _by_dim(ptr)
    if by_dim is None or set(by_dim) != {0, 1}:
        return None
    bounds: dict = {}
    if mask is not None and not _bounds(mask, bounds):
        return None
    inner, outer = tile.contig, 1 - tile.contig
    if by_dim[inner][1] != 1:
        return None
    stride = _host_value(by_dim[outer][1], func)
    if stride is None or not _stride_ok(stride, func, tile.eb):
        return None
    dims, coords = [], []
    for d in (inner, outer):
        idx = by_dim[d][0]
        dim = _tile_dim(idx, d, bounds, func)
        if dim is None or not all(_is_i32(p) for p in idx.pieces):
            return None
        dims.append(dim)
        coords.append(list(idx.pieces))
    batch = _batch_dims(ptr.batch, func, tile.eb)
    if batch is None or len(dims) + len(batch) > _RANK_LIMIT:
        return None
    strides = [stride] + [s for s, _ in batch]
    coords += [[x] for _, x in batch]
    base = func.body.args.index(ptr.base)
    return Box(base, dims + [UNBOUNDED] * len(batch), strides, coords)


def _tile_dim(idx: _Idx, d: int, bounds: dict, func: FuncOp) -> list[Any] | None:
    """The size of tile dimension ``d`` (index ``idx``): its mask bound, or unbounded."""
    for pred in ("lt", "ge"):
        if (pred, d) in bounds and _key(bounds[(pred, d)][0]) != _key(idx.pieces):
            return None  # the mask bounds another index than the pointers'
    if ("lt", d) not in bounds:
        return UNBOUNDED
    return _host_value(bounds[("lt", d)][1], func)


def _batch_dims(products: tuple, func: FuncOp, eb: int) -> list[tuple] | None:
    """One ``(stride entry, coordinate)`` per product ``x * y`` of a base, or None.

    The stride is the factor the host knows (a kernel argument or a constant,
    a multiple of 16 bytes); the coordinate, the other factor, is an i32.
    """
    out = []
    for pair in products:
        for stride_v, coord in (pair[::-1], pair):
            stride = _host_value(stride_v, func)
            if stride is not None and _stride_ok(stride, func, eb) and _is_i32(coord):
                out.append((stride, coord))
                break
        else:
            return None
    return out


def forward_unchanged_loop_args(loop: Operation) -> int:
    """Use a loop's initial value where the body carries it unchanged; returns how many.

    A block pointer carried through a loop carries its base, sizes and
    strides unchanged: read from the loop's operands instead, they are the
    kernel arguments (and the constant 1 stride) the host and the axis
    analysis can see.
    """
    body = loop.regions[0].block
    count = 0
    for j, y in enumerate(terminator(body).operands):
        arg = body.args[1 + j]
        if y is not arg:
            continue
        init = loop.operands[3 + j]
        for op in body.ops:
            for inner in op.walk():
                if arg in inner.operands:
                    inner.operands = [init if x is arg else x for x in inner.operands]
                    count += 1
    return count


def _stride_ok(stride: list[Any], func: FuncOp, eb: int) -> bool:
    if stride[0] == "const":
        return stride[1] > 0 and stride[1] * eb % 16 == 0
    # In bytes: a host descriptor's fp16 stride is known to be a multiple of 8 elements.
    return _divisibility(func, stride[1]) * eb % 16 == 0


def _is_i32(piece: Any) -> bool:
    return isinstance(piece, int) or str(piece.type) == "i32"


# ------------------------------------------------------------------ LLVM side

_MAP_PARAM = "tma_map_"


def mark_grid_constants(text: str, name: str) -> str:
    """``text`` (LLVM IR) with kernel ``name``'s map parameters made ``byval`` grid constants."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("define") and (f'@"{name}"(' in line or f"@{name}(" in line):
            lines[i] = re.sub(
                rf'ptr %"?({_MAP_PARAM}\d+)"?',
                r'ptr byval([128 x i8]) align 64 "nvvm.grid_constant" %"\1"',
                line,
            )
            break
    return "\n".join(lines)


__all__ = [
    "TMA_ENV",
    "TMA_STORES_ENV",
    "Box",
    "TmaLoad",
    "TmaMap",
    "forward_unchanged_loop_args",
    "match_box",
    "dim_strides",
    "match_tma_load",
    "mark_grid_constants",
    "tma_enabled",
    "tma_forms",
    "tma_stores_enabled",
    "tma_tag",
    "warp_specialize_enabled",
]
