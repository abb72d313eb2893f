"""The implementations of the ``tl`` builtins, registered by name.

Every stub in :mod:`minitriton.language.core` has an implementation here.
The lowerer binds the call's arguments with the stub's signature (so each
implementation receives every parameter by name, defaults applied) and calls
``IMPLS[name](ctx, **arguments)``. ``ctx`` is the
:class:`~minitriton.frontend.lower.FunctionLowerer`; ``ctx.b`` is the
builder, located at the call, so ops and diagnostics point at it.

Builtins that Triton writes in Triton itself (``sigmoid``, ``softmax``,
``cdiv``, ``rand`` ...) expand here into primitive ops, so the emulator and
the GPU backend need no special op for them.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from minitriton.diagnostics import CompileError, CompileTimeAssertionFailure, Location, error, warn
from minitriton.frontend import blockptr as BP
from minitriton.frontend import promotion as P
from minitriton.frontend import semantic as S
from minitriton.frontend import tensordesc as TD
from minitriton.frontend.builder import new_region
from minitriton.frontend.capture import compiling_for_gpu
from minitriton.frontend.semantic import Tensor
from minitriton.frontend.source import F32_PRECISIONS, f32_default_precision
from minitriton.ir import ops
from minitriton.ir.core import OP_REGISTRY, Block, Value
from minitriton.ir.types import (
    BF16,
    F8E4B15,
    F16,
    F32,
    F64,
    I1,
    I8,
    I32,
    I64,
    U32,
    U64,
    BlockType,
    PointerType,
    ScalarType,
    with_element,
    with_shape,
)
from minitriton.language.core import PropagateNan, get_int_dtype

if TYPE_CHECKING:
    # Only for annotations: lower.py imports this module when it lowers a call.
    from minitriton.frontend.lower import FunctionLowerer

Impl = Callable[..., Any]
IMPLS: dict[str, Impl] = {}


def impl(*names: str) -> Callable[[Impl], Impl]:
    """Register the decorated function as the implementation of ``tl.<name>``."""

    def register(fn: Impl) -> Impl:
        for name in names:
            IMPLS[name] = fn
        return fn

    return register


# ---------------------------------------------------------------- argument checks


def _tensor(ctx: FunctionLowerer, x: Any, what: str) -> Tensor:
    """A run-time value for argument ``what`` (Python scalars become constants)."""
    if isinstance(x, Tensor):
        return x
    if P.is_py_scalar(x):
        return S.to_tensor(ctx.b, x)
    raise error(ctx.b.loc, f"{what} must be a block or scalar value, got {S.describe(x)}")


def _block(ctx: FunctionLowerer, x: Any, what: str) -> Tensor:
    t = _tensor(ctx, x, what)
    if not t.is_block:
        raise error(ctx.b.loc, f"{what} must be a block, got {t.type}")
    return t


def _values(ctx: FunctionLowerer, x: Any, what: str) -> Tensor:
    """A block of values (reductions, scans and sorts do not apply to pointers)."""
    t = _block(ctx, x, what)
    if t.dtype.is_ptr():
        message = f"{what} must be a block of values, not of pointers ({t.type})"
        raise error(ctx.b.loc, message, help="load the values first: tl.load(pointers)")
    return t


def _compile_time(ctx: FunctionLowerer, x: Any, ok: bool, what: str, expected: str) -> Any:
    """``x`` if ``ok``; otherwise the error "WHAT must be EXPECTED, got ..." about it."""
    if not ok:
        raise error(ctx.b.loc, f"{what} must be {expected}, got {S.describe(x)}")
    return x


def _const_int(ctx: FunctionLowerer, x: Any, what: str) -> int:
    ok = isinstance(x, int) and not isinstance(x, bool)
    return _compile_time(ctx, x, ok, what, "a compile-time integer")


def _const_str(ctx: FunctionLowerer, x: Any, what: str) -> str:
    return _compile_time(ctx, x, isinstance(x, str), what, "a compile-time string")


def _dtype(ctx: FunctionLowerer, x: Any, what: str = "dtype") -> ScalarType:
    ok = isinstance(x, ScalarType)
    return _compile_time(ctx, x, ok, what, "a tl dtype such as tl.float32")


def _shape(ctx: FunctionLowerer, shape: Any) -> tuple[int, ...]:
    """A compile-time shape from an int, a tuple or a list (each dim checked)."""
    if isinstance(shape, (list, tuple)) and len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = shape[0]
    dims = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
    out = tuple(_const_int(ctx, d, "a shape dimension") for d in dims)
    S.check_block_shape(ctx.b, out)
    return out


def _axis(ctx: FunctionLowerer, axis: Any, rank: int) -> int:
    axis = _const_int(ctx, axis, "axis")
    if not -rank <= axis < rank:
        raise error(  # Triton's words first, which tests written for Triton match
            ctx.b.loc,
            f"invalid axis {axis}. Expected {-rank} <= axis < {rank} (a block of rank {rank})",
        )
    return axis % rank


def _dims(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``f(x, 1, 0)`` and ``f(x, (1, 0))`` both give ``(1, 0)``."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return tuple(args[0])
    return tuple(args)


def _runtime_x(ctx: FunctionLowerer, x: Any, y: Any) -> Any:
    """``x``, made a run-time value when ``y`` is compile-time, so the pair has one."""
    if isinstance(y, Tensor):
        return x
    return _tensor(ctx, x, "x")


def _float_input(
    ctx: FunctionLowerer, x: Any, name: str, allowed: tuple[ScalarType, ...]
) -> Tensor:
    t = _tensor(ctx, x, "x")
    if t.dtype not in allowed:
        names = [repr(a) for a in allowed]
        message = f"tl.{name}: Expected dtype {names} but got {t.dtype!r}"  # Triton's words
        raise error(ctx.b.loc, message, help="convert with .to(tl.float32) first")
    return t


# ---------------------------------------------------------------- creation


def _axis_op(ctx: FunctionLowerer, axis: Any, op: type) -> Tensor:
    axis = _const_int(ctx, axis, "axis")
    if axis not in (0, 1, 2):
        name = "program_id" if op is ops.ProgramIdOp else "num_programs"
        raise error(ctx.b.loc, f"{name} axis must be 0, 1, or 2 but got {axis}")
    return Tensor(ctx.b.value(op, [], I32, {"axis": axis}))


@impl("program_id")
def _program_id(ctx: FunctionLowerer, axis: Any) -> Tensor:
    return _axis_op(ctx, axis, ops.ProgramIdOp)


@impl("num_programs")
def _num_programs(ctx: FunctionLowerer, axis: Any) -> Tensor:
    return _axis_op(ctx, axis, ops.NumProgramsOp)


@impl("arange")
def _arange(ctx: FunctionLowerer, start: Any, end: Any) -> Tensor:
    if isinstance(start, Tensor) or isinstance(end, Tensor):
        raise error(ctx.b.loc, "arange's arguments must be compile-time constants (tl.constexpr)")
    start = _const_int(ctx, start, "start")
    end = _const_int(ctx, end, "end")
    if not (-(2**31) <= start < 2**31 and -(2**31) <= end < 2**31):
        raise error(ctx.b.loc, "arange's bounds must fit in int32")
    if end <= start:
        raise error(ctx.b.loc, f"arange's end ({end}) must be greater than its start ({start})")
    n = end - start
    if n & (n - 1):
        raise _arange_not_power_of_2(ctx.b.loc, start, end)
    S.check_block_shape(ctx.b, (n,))
    t = BlockType((n,), I32)
    return Tensor(ctx.b.value(ops.MakeRangeOp, [], t, {"start": start, "end": end}))


def _arange_not_power_of_2(loc: Location, start: int, end: int) -> CompileError:
    """A block's length must be a power of 2: round it up and mask the extra lanes."""
    n = end - start
    p = 1 << (n - 1).bit_length()
    end_p2 = f"triton.next_power_of_2({n})" if start == 0 else f"{start} + {p}"
    message = f"tl.arange's length must be a power of 2, got {n} (tl.arange({start}, {end}))"
    return error(
        loc,
        message,
        help=f"use tl.arange({start}, {end_p2}), i.e. tl.arange({start}, {start + p}), and "
        f"mask the {p - n} extra lanes: offs = tl.arange({start}, {start + p}); "
        f"mask = offs < {end}; tl.load(ptr + offs, mask=mask)",
        triton="arange's range must be a power of 2",
    )


def _full(ctx: FunctionLowerer, shape: tuple[int, ...], value: Any, dtype: ScalarType) -> Tensor:
    if isinstance(value, Tensor):
        if value.is_block:
            raise error(ctx.b.loc, f"the fill value must be a scalar, got {value.type}")
        return S.broadcast_to(ctx.b, S.cast(ctx.b, value, dtype), shape)
    if not P.is_py_scalar(value):
        raise error(ctx.b.loc, f"the fill value must be a number, got {S.describe(value)}")
    return S.constant(ctx.b, value, with_shape(dtype, shape))


@impl("zeros")
def _zeros(ctx: FunctionLowerer, shape: Any, dtype: Any) -> Tensor:
    return _full(ctx, _shape(ctx, shape), 0, _dtype(ctx, dtype))


@impl("full")
def _full_builtin(ctx: FunctionLowerer, shape: Any, value: Any, dtype: Any) -> Tensor:
    return _full(ctx, _shape(ctx, shape), value, _dtype(ctx, dtype))


@impl("zeros_like")
def _zeros_like(ctx: FunctionLowerer, input: Any) -> Tensor:
    t = _tensor(ctx, input, "input")
    return _full(ctx, t.shape, 0, _dtype(ctx, t.dtype, "input's dtype"))


@impl("full_like")
def _full_like(ctx: FunctionLowerer, input: Any, value: Any, dtype: Any) -> Tensor:
    t = _tensor(ctx, input, "input")
    dtype = t.dtype if dtype is None else dtype
    return _full(ctx, t.shape, value, _dtype(ctx, dtype))


# ---------------------------------------------------------------- shapes and casts


@impl("cast")
def _cast(
    ctx: FunctionLowerer, input: Any, dtype: Any, fp_downcast_rounding: Any, bitcast: Any
) -> Tensor:
    if isinstance(dtype, BlockType):
        dtype = dtype.element  # Triton casts to a block type's element type
    if not isinstance(dtype, (ScalarType, PointerType)):
        if dtype is None:
            raise error(ctx.b.loc, "this dtype (fp8) is not supported by MiniTriton")
        raise error(ctx.b.loc, f"dtype must be a tl dtype, got {S.describe(dtype)}")
    x = _tensor(ctx, input, "input")
    if bitcast:  # Triton ignores fp_downcast_rounding here
        return S.bitcast(ctx.b, x, dtype)
    if _downcast_rounding(ctx, fp_downcast_rounding, x.dtype, dtype) == "rtz":
        attrs = {"rounding": "rtz"}
        return Tensor(ctx.b.value(ops.CastOp, [x.handle], with_element(x.type, dtype), attrs))
    return S.cast(ctx.b, x, dtype)


def _downcast_rounding(
    ctx: FunctionLowerer,
    rounding: Any,
    src: ScalarType | PointerType,
    dst: ScalarType | PointerType,
) -> str | None:
    """``fp_downcast_rounding`` checked as Triton checks it: ``"rtz"``, or None (to nearest)."""
    if rounding is None or src == dst:  # Triton returns an unchanged value unchecked
        return None
    if rounding not in ("rtne", "rtz"):
        raise error(
            ctx.b.loc,
            f"fp_downcast_rounding={rounding!r} is not a rounding mode",
            help="use 'rtne' (to nearest, ties to even: the default) or 'rtz' (toward zero)",
            triton=f"Invalid rounding mode: {rounding}. Supported rounding modes are 'rtne' "
            "and 'rtz'.",
        )
    if not (isinstance(src, ScalarType) and isinstance(dst, ScalarType)) or not (
        src.is_float() and dst.is_float() and dst.bitwidth < src.bitwidth
    ):
        raise error(
            ctx.b.loc,
            f"fp_downcast_rounding applies only to a narrowing float cast, not {src!r} to {dst!r}",
            help=f"drop fp_downcast_rounding: x.to({_dtype_name(dst)})",
            triton="fp_downcast_rounding should be set only for truncating fp conversions. "
            f"Source scalar type is {src!r} and destination type is {dst!r}",
        )
    if rounding == "rtz" and not ops.is_rtz_cast(src, dst):
        raise error(
            ctx.b.loc,
            f"fp_downcast_rounding='rtz' is not supported for a cast to {_dtype_name(dst)}: "
            "MiniTriton rounds toward zero only to tl.float32, tl.float16, tl.bfloat16, "
            "tl.float8e5 and tl.float8e4nv",
            help=f"round to nearest even: x.to({_dtype_name(dst)})",
        )
    return rounding if rounding == "rtz" else None


def _dtype_name(t: ScalarType | PointerType) -> str:
    """How a kernel spells ``t``: ``tl.float16``, ``tl.int32`` (a pointer type: its repr).

    Triton's short names (``fp16``, ``bf16``, ``fp8e4nv``) are ``tl``'s long ones
    with ``float`` for ``fp`` (``bfloat16`` for ``bf16``); integers are the same.
    """
    if not isinstance(t, ScalarType):
        return repr(t)
    short = t.triton_name
    return "tl." + ("bfloat16" if short == "bf16" else re.sub(r"^fp", "float", short))


@impl("trans")
def _trans(ctx: FunctionLowerer, input: Any, dims: tuple[Any, ...]) -> Tensor:
    x = _block(ctx, input, "input")
    order = _dims(dims)
    if not order:  # Triton swaps the last two dims: a (batched) 2-D transpose
        rank = len(x.shape)
        if rank < 2:
            raise error(ctx.b.loc, f"tl.trans without dims needs a block of 2 or more dims, "
                        f"got {x.type}")  # fmt: skip
        order = (*range(rank - 2), rank - 1, rank - 2)
    return S.permute(ctx.b, x, tuple(_const_int(ctx, d, "a dimension") for d in order))


@impl("permute")
def _permute(ctx: FunctionLowerer, input: Any, dims: tuple[Any, ...]) -> Tensor:
    x = _block(ctx, input, "input")
    order = tuple(_const_int(ctx, d, "a dimension") for d in _dims(dims))
    return S.permute(ctx.b, x, order)


@impl("reshape", "view")
def _reshape(
    ctx: FunctionLowerer, input: Any, shape: tuple[Any, ...], can_reorder: Any = False
) -> Tensor:
    x = _tensor(ctx, input, "input")
    return S.reshape(ctx.b, x, _shape(ctx, _dims(shape)))


@impl("expand_dims")
def _expand_dims(ctx: FunctionLowerer, input: Any, axis: Any) -> Tensor:
    x = _tensor(ctx, input, "input")
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    rank = len(x.shape) + len(axes)
    norm = sorted(_axis(ctx, a, rank) for a in axes)
    if len(set(norm)) != len(norm):  # Triton's words
        raise error(ctx.b.loc, f"expand_dims received duplicate axes, normalized axes = {norm}")
    for a in norm:
        x = S.expand_dims(ctx.b, x, a)
    return x


def _pair_index(ctx: FunctionLowerer, shape: tuple[int, ...]) -> Tensor:
    """A block of ``shape + (2,)`` holding the index 0 or 1 along the last dimension."""
    index = IMPLS["arange"](ctx, 0, 2)
    for axis in range(len(shape)):
        index = S.expand_dims(ctx.b, index, axis)
    return S.broadcast_to(ctx.b, index, (*shape, 2))


@impl("join")
def _join(ctx: FunctionLowerer, a: Any, b: Any) -> Tensor:
    x, y = S.promote_pair(ctx.b, _tensor(ctx, a, "a"), _tensor(ctx, b, "b"))
    shape = (*x.shape, 2)
    wide = [S.broadcast_to(ctx.b, S.expand_dims(ctx.b, t, len(t.shape)), shape) for t in (x, y)]
    first = S.compare(ctx.b, "==", _pair_index(ctx, x.shape), 0)
    return S.where(ctx.b, first, wide[0], wide[1])


@impl("split")
def _split(ctx: FunctionLowerer, a: Any) -> tuple[Tensor, Tensor]:
    x = _block(ctx, a, "a")
    if x.shape[-1] != 2:
        raise error(ctx.b.loc, f"tl.split needs a last dimension of size 2, got {x.type}")
    # Each half is a reduction of the pair that keeps its left (or right) operand: the
    # bits come through as they are (-0.0, NaN payloads, pointers) and no arithmetic is left.
    halves = []
    for keep in (0, 1):
        picked = reduce_blocks(ctx, [x], len(x.shape) - 1, _keep_operand(keep), False)
        halves.append(picked[0])
    return halves[0], halves[1]


def _keep_operand(side: int) -> Combine:
    """A combine function that returns its left (0) or right (1) operand."""

    def combine(lhs: list[Tensor], rhs: list[Tensor]) -> list[Any]:
        return list(rhs if side else lhs)

    return combine


@impl("interleave")
def _interleave(ctx: FunctionLowerer, a: Any, b: Any) -> Tensor:
    joined = _join(ctx, a, b)
    if len(joined.shape) == 1:
        return joined  # two scalars: the pair is the result, as in Triton
    *outer, n, _ = joined.shape
    return S.reshape(ctx.b, joined, (*outer, 2 * n))


@impl("cat")
def _cat(ctx: FunctionLowerer, input: Any, other: Any, can_reorder: Any, dim: Any) -> Tensor:
    """``join`` the two, move the pair's axis in front of ``dim``, and merge the two."""
    a, b = _block(ctx, input, "input"), _block(ctx, other, "other")
    if a.shape != b.shape:
        raise error(
            ctx.b.loc, f"tl.cat requires tensors of the same shape, got {a.type} and {b.type}"
        )
    rank = len(a.shape)
    d = _axis(ctx, dim, rank)
    joined = _join(ctx, a, b)
    order = (*range(d), rank, *range(d, rank))
    pairs = S.permute(ctx.b, joined, order)
    shape = (*a.shape[:d], 2 * a.shape[d], *a.shape[d + 1 :])
    return S.reshape(ctx.b, pairs, shape)


@impl("item")
def _item(ctx: FunctionLowerer, input: Any) -> Tensor:
    """A reduction over every axis: with one element there is nothing to combine."""
    x = _tensor(ctx, input, "input")
    if not x.is_block:
        return x
    if math.prod(x.shape) != 1:  # Triton's words
        raise error(ctx.b.loc, f"can only unsplat single-element tensors, got {x.type}")
    first: Combine = lambda lhs, rhs: [lhs[0]]  # noqa: E731
    return reduce_blocks(ctx, [x], None, first, keep_dims=False)[0]


@impl("squeeze")
def _squeeze(ctx: FunctionLowerer, x: Any, dim: Any) -> Tensor:
    t = _block(ctx, x, "x")
    d = _axis(ctx, dim, len(t.shape))
    if t.shape[d] != 1:
        raise error(ctx.b.loc, f"tl.squeeze: dimension {d} of {t.type} has size {t.shape[d]}, "
                    "not 1")  # fmt: skip
    return S.reshape(ctx.b, t, (*t.shape[:d], *t.shape[d + 1 :]))


@impl("unsqueeze")
def _unsqueeze(ctx: FunctionLowerer, x: Any, dim: Any) -> Tensor:
    t = _tensor(ctx, x, "x")
    return S.expand_dims(ctx.b, t, _axis(ctx, dim, len(t.shape) + 1))


@impl("to_tensor")
def _to_tensor(ctx: FunctionLowerer, x: Any) -> Tensor:
    return _tensor(ctx, x, "x")


def _arithmetic(name: str, op: str) -> None:
    @impl(name)
    def lower(ctx: FunctionLowerer, x: Any, y: Any, sanitize_overflow: Any) -> Tensor:
        return S.binary(ctx.b, op, x, y)


for _name, _op in (("add", "+"), ("sub", "-"), ("mul", "*")):
    _arithmetic(_name, _op)


@impl("ravel")
def _ravel(ctx: FunctionLowerer, x: Any, can_reorder: Any) -> Tensor:
    t = _block(ctx, x, "x")
    return S.reshape(ctx.b, t, (math.prod(t.shape),))


def _as_bits(ctx: FunctionLowerer, t: Tensor) -> Tensor:
    """``t``'s bits as a signed integer block of its width (booleans widen to ``int8``)."""
    dtype = S.scalar_dtype(t)
    if dtype == I1:
        return S.cast(ctx.b, t, I8)
    return S.bitcast(ctx.b, t, get_int_dtype(dtype.bitwidth, signed=True))


def _from_bits(ctx: FunctionLowerer, bits: Tensor, dtype: ScalarType) -> Tensor:
    """The inverse of :func:`_as_bits`."""
    return S.cast(ctx.b, bits, I1) if dtype == I1 else S.bitcast(ctx.b, bits, dtype)


@impl("flip")
def _flip(ctx: FunctionLowerer, x: Any, dim: Any) -> Tensor:
    """Triton's xor swap: split ``dim`` into 2 x 2 x ... and swap each pair's halves.

    ``y ^ xor_sum(pair)`` turns ``(u, v)`` into ``(v, u)``; doing it at every
    level of the power-of-two split reverses the dimension.
    """
    t = _values(ctx, x, "x")
    rank = len(t.shape)
    d = rank - 1 if dim is None else _axis(ctx, dim, rank)
    size = t.shape[d]
    if size & (size - 1):
        raise error(ctx.b.loc, f"tl.flip needs a power-of-two size along dim {d}, got {t.type}")
    steps = size.bit_length() - 1
    y = S.reshape(ctx.b, _as_bits(ctx, t), (*t.shape[:d], *([2] * steps), *t.shape[d + 1 :]))
    for i in range(steps):
        y = S.binary(ctx.b, "^", y, _xor_sum(ctx, y, d + i, True))
    return _from_bits(ctx, S.reshape(ctx.b, y, t.shape), S.scalar_dtype(t))


@impl("gather")
def _gather(ctx: FunctionLowerer, src: Any, index: Any, axis: Any) -> Tensor:
    """One ``tt.gather``; sizes of 1 beyond ``axis`` broadcast first."""
    s = _values(ctx, src, "src")
    idx = _values(ctx, index, "index")
    rank = len(s.shape)
    if len(idx.shape) != rank or not S.scalar_dtype(idx).is_int():
        raise error(ctx.b.loc, f"tl.gather needs an integer index of src's rank, got {idx.type}")
    a = _axis(ctx, axis, rank)
    out_shape = tuple(i if k == a else max(i, j)
                      for k, (i, j) in enumerate(zip(idx.shape, s.shape)))  # fmt: skip
    src_shape = tuple(s.shape[a] if k == a else n for k, n in enumerate(out_shape))
    for shape, which in ((s.shape, "src"), (idx.shape, "index")):
        if any(n not in (1, m) for k, (n, m) in enumerate(zip(shape, out_shape)) if k != a):
            raise error(ctx.b.loc, f"tl.gather: {which}'s sizes beyond axis {a} must match: "
                                   f"{list(s.shape)} and {list(idx.shape)}")  # fmt: skip
    s = S.broadcast_to(ctx.b, s, src_shape)
    idx = S.broadcast_to(ctx.b, idx, out_shape)
    result = BlockType(out_shape, S.scalar_dtype(s))
    return Tensor(ctx.b.value(ops.GatherOp, [s.handle, idx.handle], result, {"axis": a}))


@impl("broadcast_to")
def _broadcast_to(ctx: FunctionLowerer, input: Any, shape: tuple[Any, ...]) -> Tensor:
    x = _tensor(ctx, input, "input")
    return S.broadcast_to(ctx.b, x, _shape(ctx, _dims(shape)))


@impl("broadcast")
def _broadcast(ctx: FunctionLowerer, input: Any, other: Any) -> tuple[Tensor, Tensor]:
    return S.broadcast_pair(ctx.b, _tensor(ctx, input, "input"), _tensor(ctx, other, "other"))


# ---------------------------------------------------------------- memory


def _pointer(ctx: FunctionLowerer, pointer: Any) -> Tensor:
    if not isinstance(pointer, Tensor) or not isinstance(pointer.dtype, PointerType):
        is_int = isinstance(pointer, Tensor) and pointer.dtype.is_int()
        raise error(
            ctx.b.loc,
            f"pointer must be a pointer or a block of pointers, got {S.describe(pointer)}",
            help=(
                "an integer is not a pointer: pass the tensor or array itself to the "
                "kernel, not its address (x.data_ptr())"
                if is_int
                else None
            ),
        )
    return pointer


def _writable(ctx: FunctionLowerer, ptr: Tensor, what: str) -> None:
    """A store or an atomic through a ``tl.const`` pointer is an error (Triton's words)."""
    elem = ptr.dtype
    if isinstance(elem, PointerType) and elem.const:
        raise error(
            ctx.b.loc,
            f"Cannot store to a constant pointer: {what} writes through {ptr.type}, "
            "a pointer to read-only data",
            help="drop the tl.const annotation of the parameter this pointer comes from, "
            "or store through another (non-const) pointer",
        )


def _mask(ctx: FunctionLowerer, mask: Any, shape: tuple[int, ...]) -> Tensor:
    m = _tensor(ctx, mask, "mask")
    if m.dtype != I1:
        raise error(ctx.b.loc, f"mask must be a boolean (int1) value, got {m.type}")
    return S.broadcast_to(ctx.b, m, shape)


def _value_for(ctx: FunctionLowerer, value: Any, ptr: Tensor, what: str) -> Tensor:
    """``value`` cast to the pointee type and broadcast to the pointer's shape."""
    pointee = S.pointee_of(ptr)
    if isinstance(value, Tensor):
        if value.is_block and not ptr.is_block:
            raise error(ctx.b.loc, f"{what} is a block ({value.type}) but the pointer is a scalar")
        return S.broadcast_to(ctx.b, S.cast(ctx.b, value, pointee), ptr.shape)
    if not P.is_py_scalar(value):
        help_ = (
            "a @jit helper that reaches its end without `return` gives None; "
            "return a value on every path"
            if value is None
            else None
        )
        raise error(
            ctx.b.loc, f"{what} must be a tensor or a number, got {S.describe(value)}", help_
        )
    _check_fits(ctx, value, pointee, what)
    if pointee.is_int() and not pointee.is_bool() and not isinstance(value, bool):
        value = _wrapped(int(value), pointee)
    return S.constant(ctx.b, value, with_shape(pointee, ptr.shape))


def _wrapped(value: int, dtype: ScalarType) -> int:
    """``value`` as ``dtype`` holds its low bits: 0xFFFFFFFF is -1 in int32."""
    bits = dtype.bitwidth
    value &= (1 << bits) - 1
    return value - (1 << bits) if dtype.is_signed() and value >> (bits - 1) else value


#: The largest finite value of each float type.
_FLOAT_MAX = {
    "f16": 65504.0,
    "bf16": 3.3895313892515355e38,
    "f32": 3.4028234663852886e38,
    "f8e5": 57344.0,  # the largest finite fp8 values
    "f8e4nv": 448.0,
    "f64": 1.7976931348623157e308,
}


def _check_fits(ctx: FunctionLowerer, value: int | float, pointee: ScalarType, what: str) -> None:
    """A Python scalar stored or padded into ``pointee`` memory must be a value of that type."""
    if isinstance(value, bool) or pointee.is_bool():
        return
    shown = _scalar_text(value)
    if pointee.is_float():
        if isinstance(value, float) and not math.isfinite(value):
            return  # inf and nan are values of every float type
        if abs(value) > _FLOAT_MAX[pointee.name]:
            raise error(
                ctx.b.loc,
                f"{what}={shown} does not fit in {pointee!r} (largest finite "
                f"value {_FLOAT_MAX[pointee.name]:g})",
                help="use float('inf') if you mean infinity",
            )
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise error(
            ctx.b.loc,
            f"{what}={shown} is not a value of the integer type {pointee!r}",
            help=f"use an integer, such as the smallest {pointee!r}",
        )
    # Triton types a literal from 2**31 to 2**32 - 1 as uint32 (and so on for 64 bits), and
    # the store casts it: any bit pattern of the width fits, 0xFFFFFFFF into int32 is -1.
    low = -(2 ** (pointee.bitwidth - 1))
    high = 2**pointee.bitwidth - 1
    if not low <= int(value) <= high:
        span = f"{low} to {high}" if pointee.is_unsigned() else f"{low} to {-low - 1}"
        raise error(
            ctx.b.loc, f"{what}={shown} does not fit in {pointee!r} ({span})",
            help=None if pointee.is_unsigned() else
            f"a {pointee.bitwidth}-bit pattern up to {high} is taken as its bits, as in Triton",
        )  # fmt: skip


def _scalar_text(value: int | float) -> str:
    """A Python scalar as a diagnostic shows it (huge ints by their size only)."""
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float('{value}')"
    if abs(value) >= 10**30:
        return f"an integer of {len(str(abs(value)))} digits"
    return str(value)


def _ptr_and_mask(ctx: FunctionLowerer, pointer: Any, mask: Any) -> tuple[Tensor, Tensor | None]:
    ptr = _pointer(ctx, pointer)
    if mask is None:
        return ptr, None
    if isinstance(mask, Tensor) and mask.is_block and not ptr.is_block:
        ptr = S.broadcast_to(ctx.b, ptr, mask.shape)
    return ptr, _mask(ctx, mask, ptr.shape)


def _widen_to_value(
    ctx: FunctionLowerer, ptr: Tensor, m: Tensor | None, value: Any
) -> tuple[Tensor, Tensor | None]:
    """A scalar pointer (and its mask) broadcast to the shape of a block ``value``."""
    if not (isinstance(value, Tensor) and value.is_block and not ptr.is_block):
        return ptr, m
    ptr = S.broadcast_to(ctx.b, ptr, value.shape)
    return ptr, _mask(ctx, m, ptr.shape) if m is not None else None


def _no_block_pointer_options(
    ctx: FunctionLowerer, boundary_check: Any, padding_option: Any
) -> None:
    if boundary_check not in ((), None):
        raise error(
            ctx.b.loc,
            "boundary_check needs a block pointer (tl.make_block_ptr)",
            help="mask a tensor of pointers with mask= instead",
        )
    if padding_option not in ("", None):
        raise error(
            ctx.b.loc,
            "padding_option needs a block pointer (tl.make_block_ptr)",
            help="give a masked load its padding with other= instead",
        )


@impl("load")
def _load(
    ctx: FunctionLowerer,
    pointer: Any,
    mask: Any,
    other: Any,
    boundary_check: Any,
    padding_option: Any,
    cache_modifier: Any,
    eviction_policy: Any,
    volatile: Any,
) -> Tensor:
    if BP.is_block_pointer(pointer):
        return _load_block(ctx, pointer, mask, other, boundary_check, padding_option)
    _no_block_pointer_options(ctx, boundary_check, padding_option)
    if other is not None and mask is None:
        raise error(
            ctx.b.loc,
            "`other` cannot be provided without `mask`",
            help="pass mask= too, or drop other=",
        )
    attrs = _cache_attrs(ctx, cache_modifier, eviction_policy, _LOAD_CACHE)
    if volatile is not None and _compile_time(ctx, volatile, isinstance(volatile, bool),
                                              "volatile", "True or False"):  # fmt: skip
        attrs["volatile"] = True
    ptr, m = _ptr_and_mask(ctx, _load_pointer(ctx, pointer, mask, other), mask)
    return _emit_load(ctx, ptr, m, other, attrs)


#: Triton's cache modifiers of loads and of stores (PTX's ``ld.global.cg`` ...).
_LOAD_CACHE = (".ca", ".cg", ".cs", ".cv")
_STORE_CACHE = (".wb", ".cg", ".cs", ".wt")
#: Triton's eviction policies (PTX's ``L1::evict_first`` ...).
_EVICTION = ("evict_first", "evict_last")


def _cache_attrs(
    ctx: FunctionLowerer, cache_modifier: Any, eviction_policy: Any, allowed: tuple[str, ...]
) -> dict[str, Any]:
    """A load's or store's cache hints as op attributes, checked with Triton's words.

    They change no value: the GPU backend writes them into the PTX access; the emulator
    ignores them.
    """
    attrs: dict[str, Any] = {}
    for value, key, known, what in (
        (cache_modifier, "cache", allowed, "Cache modifier"),
        (eviction_policy, "evict", _EVICTION, "Eviction policy"),
    ):
        if value in (None, ""):
            continue
        text = _const_str(ctx, value, key)
        if text not in known:
            raise error(ctx.b.loc, f"{what} {text} not supported",
                        help="use one of " + ", ".join(repr(k) for k in known))  # fmt: skip
        attrs[key] = text
    return attrs


def _load_pointer(ctx: FunctionLowerer, pointer: Any, mask: Any, other: Any) -> Tensor:
    """A load's block of pointers, widened to the shape it makes with ``mask`` and ``other``.

    Triton broadcasts a load's pointer, mask and other together: a row of
    pointers loaded under a 2-D mask gives a 2-D block (one row read for
    every row of the mask). A store's pointer keeps its shape.
    """
    ptr = _pointer(ctx, pointer)
    if not ptr.is_block:
        return ptr
    for x in (mask, other):
        if isinstance(x, Tensor) and x.is_block:
            ptr = S.broadcast_to(ctx.b, ptr, S.broadcast_shapes(ctx.b, ptr.shape, x.shape))
    return ptr


def _emit_load(
    ctx: FunctionLowerer, ptr: Tensor, m: Tensor | None, other: Any, attrs: Any = None
) -> Tensor:
    operands = [ptr.handle]
    if m is not None:
        operands.append(m.handle)
    if other is not None:
        operands.append(_value_for(ctx, other, ptr, "other").handle)
    result = with_element(ptr.type, S.pointee_of(ptr))
    return Tensor(ctx.b.value(ops.LoadOp, operands, result, attrs or None))


def _load_block(
    ctx: FunctionLowerer, bp: Any, mask: Any, other: Any, boundary_check: Any, padding_option: Any
) -> Tensor:
    """A load through a block pointer: pointer arithmetic and a bounds mask (blockptr.py)."""
    if mask is not None or other is not None:
        raise error(
            ctx.b.loc,
            "mask and other cannot be used with a block pointer",
            help="use boundary_check= and padding_option= instead",
        )
    padding = BP.padding_value(ctx.b, bp, padding_option)
    ptrs, m = BP.pointers_and_mask(ctx.b, bp, BP.boundary_dims(ctx.b, bp, boundary_check))
    return _emit_load(ctx, ptrs, m, padding if m is not None else None)


@impl("store")
def _store(
    ctx: FunctionLowerer,
    pointer: Any,
    value: Any,
    mask: Any,
    boundary_check: Any,
    cache_modifier: Any,
    eviction_policy: Any,
) -> None:
    if BP.is_block_pointer(pointer):
        return _store_block(ctx, pointer, value, mask, boundary_check)
    _no_block_pointer_options(ctx, boundary_check, "")
    ptr, m = _ptr_and_mask(ctx, pointer, mask)
    _writable(ctx, ptr, "tl.store")
    if isinstance(value, Tensor) and value.is_block and not ptr.is_block:  # Triton's words
        raise error(
            ctx.b.loc,
            "Value argument cannot be block type if pointer argument is not a block",
            help="store through a block of pointers: tl.store(ptr + tl.arange(0, N), value)",
        )
    _emit_store(
        ctx, ptr, value, m, _cache_attrs(ctx, cache_modifier, eviction_policy, _STORE_CACHE)
    )
    return None


def _emit_store(
    ctx: FunctionLowerer, ptr: Tensor, value: Any, m: Tensor | None, attrs: Any = None
) -> None:
    operands = [ptr.handle, _value_for(ctx, value, ptr, "value").handle]
    if m is not None:
        operands.append(m.handle)
    ctx.b.create(ops.StoreOp, operands, attrs=attrs or None)


def _store_block(ctx: FunctionLowerer, bp: Any, value: Any, mask: Any, boundary_check: Any) -> None:
    """A store through a block pointer: pointer arithmetic and a bounds mask (blockptr.py)."""
    if mask is not None:
        raise error(
            ctx.b.loc,
            "mask cannot be used with a block pointer",
            help="use boundary_check= instead",
        )
    if isinstance(value, Tensor) and value.is_block and value.shape != bp.block_shape:
        raise error(
            ctx.b.loc,
            f"the value's shape {list(value.shape)} does not match the block pointer's "
            f"block shape {list(bp.block_shape)}",
        )
    ptrs, m = BP.pointers_and_mask(ctx.b, bp, BP.boundary_dims(ctx.b, bp, boundary_check))
    _emit_store(ctx, ptrs, value, m)


@impl("make_block_ptr")
def _make_block_ptr(
    ctx: FunctionLowerer,
    base: Any,
    shape: Any,
    strides: Any,
    offsets: Any,
    block_shape: Any,
    order: Any,
) -> Any:
    return BP.make_block_ptr(ctx.b, base, shape, strides, offsets, block_shape, order)


@impl("advance")
def _advance(ctx: FunctionLowerer, base: Any, offsets: Any) -> Any:
    return BP.advance(ctx.b, base, offsets)


@impl("make_tensor_descriptor")
def _make_tensor_descriptor(
    ctx: FunctionLowerer, base: Any, shape: Any, strides: Any, block_shape: Any, padding_option: Any
) -> Any:
    if padding_option not in ("zero", "nan", None):
        raise error(
            ctx.b.loc,
            f"padding_option must be 'zero' or 'nan', got {padding_option!r}",
            help="out-of-bounds elements read as 0 (padding_option='zero') or NaN ('nan')",
        )
    desc = TD.make_tensor_descriptor(ctx.b, base, shape, strides, block_shape)
    if padding_option == "nan":
        if S.pointee_of(desc.base).is_int():
            raise error(
                ctx.b.loc,
                "Padding option `nan` is not supported for integer blocks",
                help="use padding_option='zero', or a floating-point tensor",
            )
        desc.padding = "nan"
    elem = max(1, S.pointee_of(desc.base).bitwidth // 8)
    last = desc.block_shape[-1]
    if last * elem < 16:  # TMA's rule, in Triton's words
        raise error(
            ctx.b.loc,
            "Descriptor block shape must have at least 16 bytes in the last dimension, but got "
            f"{last} * {elem} = {last * elem} bytes",
            help=f"make the block's last dimension at least {-(-16 // elem)} elements long",
        )
    return desc


@impl("load_tensor_descriptor")
def _load_tensor_descriptor(ctx: FunctionLowerer, desc: Any, offsets: Any) -> Tensor:
    ptrs, m = TD.tile_pointers(ctx.b, desc, offsets, "desc.load")
    return _emit_load(ctx, ptrs, m, TD.padding_value(desc))


@impl("store_tensor_descriptor")
def _store_tensor_descriptor(ctx: FunctionLowerer, desc: Any, offsets: Any, value: Any) -> None:
    ptrs, m = TD.tile_pointers(ctx.b, desc, offsets, "desc.store")
    _store_tile(ctx, ptrs, m, value, "the descriptor's block shape")


def _store_tile(ctx: FunctionLowerer, ptrs: Tensor, m: Any, value: Any, what: str) -> None:
    """A descriptor's masked store of ``value``, whose shape must be the pointers'."""
    if isinstance(value, Tensor) and value.is_block and value.shape != ptrs.shape:
        raise error(
            ctx.b.loc,
            f"the value's shape {list(value.shape)} does not match {what} {list(ptrs.shape)}",
        )
    _emit_store(ctx, ptrs, value, m)


def _descriptor_atomic(kind: str) -> None:
    @impl(f"atomic_{kind}_tensor_descriptor")
    def lower(ctx: FunctionLowerer, desc: Any, offsets: Any, value: Any) -> None:
        """Relaxed atomics on the tile's in-bounds elements (TMA's reductions do not return)."""
        ptrs, m = TD.tile_pointers(ctx.b, desc, offsets, f"desc.atomic_{kind}")
        if isinstance(value, Tensor) and value.is_block and value.shape != ptrs.shape:
            raise error(ctx.b.loc, f"the value's shape {list(value.shape)} does not match the "
                        f"descriptor's block shape {list(ptrs.shape)}")  # fmt: skip
        arch = getattr(COMPILING_OPTIONS.get(), "arch", None)
        TD.check_reduce_type(ctx.b, kind, S.pointee_of(ptrs), arch)
        _atomic_rmw(ctx, kind, ptrs, value, m, "relaxed", "gpu", typed=True)


for _kind in ("add", "min", "max", "and", "or", "xor"):
    _descriptor_atomic(_kind)


@impl("gather_tensor_descriptor")
def _gather_tensor_descriptor(
    ctx: FunctionLowerer, desc: Any, x_offsets: Any, y_offset: Any
) -> Tensor:
    ptrs, m = TD.row_pointers(ctx.b, desc, x_offsets, y_offset, "gather")
    return _emit_load(ctx, ptrs, m, TD.padding_value(desc))


@impl("scatter_tensor_descriptor")
def _scatter_tensor_descriptor(
    ctx: FunctionLowerer, desc: Any, value: Any, x_offsets: Any, y_offset: Any
) -> None:
    ptrs, m = TD.row_pointers(ctx.b, desc, x_offsets, y_offset, "scatter")
    _store_tile(ctx, ptrs, m, value, "the rows scattered")


@impl("where")
def _where(ctx: FunctionLowerer, condition: Any, x: Any, y: Any) -> Any:
    if isinstance(condition, Tensor) and condition.dtype != I1:
        # Triton's deprecation: a non-zero test still works, with a warning.
        dtype = condition.dtype  # a pointer too: its test is ``!= 0``
        shown = dtype.triton_name if isinstance(dtype, ScalarType) else repr(dtype)
        warn(
            ctx.b.loc,
            "tl.where with a non-boolean condition is deprecated and will error out in a "
            f"future triton release. Got {shown}",
        )
    return S.where(ctx.b, condition, x, y)


_SEMANTICS = ("relaxed", "acquire", "release", "acq_rel")
_SCOPES = ("gpu", "cta", "sys")


def _sem_scope(ctx: FunctionLowerer, sem: Any, scope: Any) -> dict[str, str]:
    sem = "acq_rel" if sem is None else _const_str(ctx, sem, "sem")
    scope = "gpu" if scope is None else _const_str(ctx, scope, "scope")
    if sem not in _SEMANTICS:
        raise error(ctx.b.loc, f"sem must be one of {', '.join(_SEMANTICS)}, got {sem!r}")
    if scope not in _SCOPES:
        raise error(ctx.b.loc, f"scope must be one of {', '.join(_SCOPES)}, got {scope!r}")
    return {"sem": sem, "scope": scope}


def _atomic_rmw(
    ctx: FunctionLowerer,
    kind: str,
    pointer: Any,
    val: Any,
    mask: Any,
    sem: Any,
    scope: Any,
    typed: bool = False,
) -> Tensor:
    """``tl.atomic_<kind>``; ``typed``: the caller checked the element type (descriptors)."""
    _check_atomic_mask(ctx, kind, mask)
    ptr, m = _ptr_and_mask(ctx, pointer, mask)
    _writable(ctx, ptr, f"tl.atomic_{kind}")
    ptr, m = _widen_to_value(ctx, ptr, m, val)
    pointee = S.pointee_of(ptr)
    if kind in ("and", "or", "xor") and not pointee.is_int():
        raise error(ctx.b.loc, f"tl.atomic_{kind} needs integer pointers, got {ptr.type}")
    if not typed:
        _check_atomic_type(ctx, kind, pointee)
    value = _value_for(ctx, val, ptr, "val")
    operands = [ptr.handle, value.handle] + ([m.handle] if m is not None else [])
    attrs = {"kind": kind, **_sem_scope(ctx, sem, scope)}
    return Tensor(ctx.b.value(ops.AtomicRMWOp, operands, value.type, attrs))


def _make_atomic(kind: str) -> Impl:
    def lower(
        ctx: FunctionLowerer, pointer: Any, val: Any, mask: Any, sem: Any, scope: Any
    ) -> Tensor:
        return _atomic_rmw(ctx, kind, pointer, val, mask, sem, scope)

    return lower


for _kind in ("add", "max", "min", "and", "or", "xor", "xchg"):
    IMPLS[f"atomic_{_kind}"] = _make_atomic(_kind)


def _check_atomic_type(ctx: FunctionLowerer, kind: str, pointee: ScalarType) -> None:
    """Triton's element types for atomics: 32 and 64 bits, and fp16 and bf16 for ``add``."""
    half = pointee.is_float() and pointee.bitwidth == 16
    if pointee.bitwidth >= 32 or (half and kind == "add"):
        return
    name = {"f16": "fp16", "bf16": "bf16"}.get(pointee.name, repr(pointee))
    raise error(
        ctx.b.loc, f"atomic_{kind} does not support {name}",
        help="use a 32-bit element type (fp16 and bf16 only with tl.atomic_add)",
    )  # fmt: skip


def _check_atomic_mask(ctx: FunctionLowerer, kind: str, mask: Any) -> None:
    """``tl.atomic_add(w, i, v)`` (NumPy's ``np.add.at`` order) passes ``v`` as the mask."""
    if mask is None or isinstance(mask, bool):
        return
    dtype = mask.dtype if isinstance(mask, Tensor) else None
    if isinstance(dtype, ScalarType) and dtype.is_bool():
        return
    raise error(
        ctx.b.loc,
        f"the third argument of tl.atomic_{kind} is the mask, got {S.describe(mask)}",
        help=f"to update element i of w, offset the pointer: tl.atomic_{kind}(w + i, v)",
    )


@impl("atomic_cas")
def _atomic_cas(
    ctx: FunctionLowerer, pointer: Any, cmp: Any, val: Any, sem: Any, scope: Any
) -> Tensor:
    ptr = _pointer(ctx, pointer)
    _writable(ctx, ptr, "tl.atomic_cas")
    if S.pointee_of(ptr).bitwidth not in (16, 32, 64):  # Triton's words
        raise error(ctx.b.loc, "atomic_cas only supports elements with width {16, 32, 64}")
    for v in (cmp, val):
        if isinstance(v, Tensor) and v.is_block and not ptr.is_block:
            ptr = S.broadcast_to(ctx.b, ptr, v.shape)
    c = _value_for(ctx, cmp, ptr, "cmp")
    v = _value_for(ctx, val, ptr, "val")
    attrs = _sem_scope(ctx, sem, scope)
    return Tensor(ctx.b.value(ops.AtomicCASOp, [ptr.handle, c.handle, v.handle], c.type, attrs))


@impl("atomic_poll")
def _atomic_poll(
    ctx: FunctionLowerer, pointer: Any, expected_value: Any, sem: Any, scope: Any, timeout_ns: Any
) -> Tensor:
    """Triton 3.8's poll; the checks and their words are Triton's."""
    ptr = _pointer(ctx, pointer)
    if ptr.is_block:
        raise error(ctx.b.loc, "atomic_poll only supports a pointer to a scalar",
                    help="poll one flag: tl.atomic_poll(flags + i, value)")  # fmt: skip
    pointee = S.pointee_of(ptr)
    if not pointee.is_int() or pointee.bitwidth not in (16, 32, 64):
        raise error(ctx.b.loc, "atomic_poll only supports integer elements with width {16, 32, 64}")
    expected = _tensor(ctx, expected_value, "expected_value")
    if expected.is_block:
        raise error(ctx.b.loc, "Expected value argument cannot be block type")
    attrs = _sem_scope(ctx, "acquire" if sem is None else sem, scope)
    if attrs["sem"] not in ("acquire", "relaxed"):
        raise error(ctx.b.loc, "atomic_poll only supports acquire and relaxed semantics")
    operands = [ptr.handle, S.cast(ctx.b, expected, pointee).handle]
    if timeout_ns is not None:
        operands.append(_poll_timeout(ctx, timeout_ns).handle)
    return Tensor(ctx.b.value(ops.AtomicPollOp, operands, I1, attrs))


def _poll_timeout(ctx: FunctionLowerer, timeout_ns: Any) -> Tensor:
    """The timeout as a ``u64`` scalar: a whole number of nanoseconds, at least 0."""
    if isinstance(timeout_ns, int) and not isinstance(timeout_ns, bool) and timeout_ns < 0:
        raise error(ctx.b.loc, "atomic_poll timeout_ns must be non-negative")
    t = _tensor(ctx, timeout_ns, "timeout_ns")
    if t.is_block or not t.dtype.is_int():
        raise error(ctx.b.loc, "atomic_poll timeout_ns must be a scalar integer")
    return S.cast(ctx.b, t, U64)


# ---------------------------------------------------------------- dot

_PRECISIONS = F32_PRECISIONS


#: The compile options' ``default_dot_input_precision`` while a kernel is lowered.
COMPILING_PRECISION: ContextVar[str | None] = ContextVar("compiling_precision", default=None)
#: The compile options while a kernel is lowered (``tl.extra.cuda.num_warps()`` reads them).
COMPILING_OPTIONS: ContextVar[Any] = ContextVar("compiling_options", default=None)


def default_input_precision() -> str:
    """The ``input_precision`` of an fp32 ``tl.dot`` that names none.

    While a kernel compiles, its options' ``default_dot_input_precision``
    (:data:`COMPILING_PRECISION`); otherwise ``TRITON_F32_DEFAULT``, else
    ``"tf32"``, which is how the options get their default at each launch.
    """
    return COMPILING_PRECISION.get() or f32_default_precision()


@impl("dot")
def _dot(
    ctx: FunctionLowerer,
    input: Any,
    other: Any,
    acc: Any,
    input_precision: Any,
    allow_tf32: Any,
    max_num_imprecise_acc: Any,
    out_dtype: Any,
) -> Tensor:
    a, c = _block(ctx, input, "input"), _block(ctx, other, "other")
    rank = len(a.shape)
    if rank < 2 or len(c.shape) != rank:
        raise error(
            ctx.b.loc,
            f"tl.dot needs two blocks of the same rank, 2-D or more, got {a.type} and {c.type}",
        )
    if a.dtype != c.dtype:
        raise error(
            ctx.b.loc, f"tl.dot operands must have the same dtype, got {a.dtype!r} and {c.dtype!r}"
        )
    if a.dtype == F8E4B15:
        a, c = _e4b15_as_f16(ctx, a, c)
    *batch, m, k = a.shape
    *batch2, k2, n = c.shape
    if k != k2 or batch != batch2:
        raise error(
            ctx.b.loc,
            f"tl.dot shapes {list(a.shape)} and {list(c.shape)} are not compatible",
        )
    precision = _precision(ctx, input_precision, allow_tf32)
    limit = _check_imprecise_acc(ctx, max_num_imprecise_acc, a.dtype, k)
    out = I32 if a.dtype.is_int() else _dot_out_dtype(ctx, out_dtype, acc)
    result = BlockType((*batch, m, n), out)
    acc_t = _dot_acc(ctx, acc, result)
    attrs: dict[str, Any] = {"input_precision": precision}
    if limit is not None and isinstance(a.dtype, ScalarType) and a.dtype.is_fp8() and out == F32:
        attrs["max_num_imprecise_acc"] = limit
    if len(batch) > 1:  # as Triton: fold the batch dims into one, a 3-D dot, and unfold
        a, c, acc_t = (_fold_batch(ctx, t) for t in (a, c, acc_t))
        return S.reshape(ctx.b, _dot_value(ctx, a, c, acc_t, attrs), result.shape)
    return _dot_value(ctx, a, c, acc_t, attrs)


#: Triton's warning for an fp8e4b15 dot compiled for sm_90 or newer.
E4B15_DEPRECATED = (
    "the use of fp8e4b15 is deprecated on Hopper and later architectures and can cause "
    "significant slow down. It will be removed in a future triton release"
)


def _e4b15_as_f16(ctx: FunctionLowerer, a: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    """fp8e4b15 dot operands as fp16, as Triton does: no tensor core takes them.

    Every fp8e4b15 value is an fp16 value (the same exponent bias, 3 of fp16's
    10 mantissa bits), so the dot's result is unchanged. A GPU compile for
    sm_90 or newer warns, as Triton's does; the emulator, like Triton's
    interpreter, does not.
    """
    if compiling_for_gpu() and TD.sm90_or_newer(getattr(COMPILING_OPTIONS.get(), "arch", None)):
        warn(ctx.b.loc, E4B15_DEPRECATED)
    return S.cast(ctx.b, a, F16), S.cast(ctx.b, c, F16)


def _fold_batch(ctx: FunctionLowerer, x: Tensor) -> Tensor:
    """``(*batch, r, s)`` as ``(prod(batch), r, s)``, the same elements in the same order."""
    *batch, r, s = x.shape
    return S.reshape(ctx.b, x, (math.prod(batch), r, s))


def _dot_value(
    ctx: FunctionLowerer, a: Tensor, c: Tensor, acc: Tensor, attrs: dict[str, Any]
) -> Tensor:
    """The ``tt.dot`` of checked 2-D or 3-D operands; fp32 ``bf16x3``/``bf16x6`` split."""
    precision = attrs["input_precision"]
    if precision in _BF16_PARTS and a.dtype == F32:
        return _bf16_split_dot(ctx, a, c, acc, precision)
    operands = [a.handle, c.handle, acc.handle]
    return Tensor(ctx.b.value(ops.DotOp, operands, acc.type, attrs))


#: How many bf16 parts each fp32 operand is split into, by precision.
_BF16_PARTS = {"bf16x3": 2, "bf16x6": 3}
#: The (lhs part, rhs part) products each precision sums, in Triton's order
#: (its ``F32DotTC`` pass): smallest terms first, from a zero accumulator.
_BF16_PRODUCTS = {
    "bf16x3": ((1, 0), (0, 1)),
    "bf16x6": ((1, 1), (2, 0), (0, 2), (1, 0), (0, 1)),
}


def _bf16_split_dot(
    ctx: FunctionLowerer, a: Tensor, c: Tensor, acc: Tensor, precision: str
) -> Tensor:
    """An fp32 dot as bf16 tensor-core dots of the inputs split into bf16 parts.

    Triton's ``F32DotTC`` decomposition, written out here so both backends get
    it: each input is ``hi + mid (+ lo)`` in bf16 (each part rounds what the
    earlier ones left); the cross products are summed from zero, NaNs there
    become 0 (an infinite input times a zero part must not poison the sum),
    then ``hi @ hi`` is added and finally ``acc``.
    """
    lhs = _bf16_parts(ctx, a, _BF16_PARTS[precision])
    rhs = _bf16_parts(ctx, c, _BF16_PARTS[precision])

    def dot(x: Tensor, y: Tensor, into: Tensor) -> Tensor:
        operands = [x.handle, y.handle, into.handle]
        return Tensor(ctx.b.value(ops.DotOp, operands, acc.type, {"input_precision": "ieee"}))

    total = S.constant(ctx.b, 0, acc.type)
    for i, j in _BF16_PRODUCTS[precision]:
        total = dot(lhs[i], rhs[j], total)
    total = S.where(ctx.b, S.compare(ctx.b, "!=", total, total), 0.0, total)
    total = dot(lhs[0], rhs[0], total)
    return S.binary(ctx.b, "+", total, acc)


def _bf16_parts(ctx: FunctionLowerer, x: Tensor, n: int) -> list[Tensor]:
    """``n`` bf16 blocks: ``x`` rounded to bf16, then each time what is left of it."""
    parts = []
    for i in range(n):
        part = S.cast(ctx.b, x, BF16)
        if i != n - 1:
            x = S.binary(ctx.b, "-", x, S.cast(ctx.b, part, F32))
        parts.append(part)
    return parts


def _check_imprecise_acc(ctx: FunctionLowerer, limit: Any, dtype: Any, k: int) -> int | None:
    """``max_num_imprecise_acc``: a whole number, and for fp8 at most K (Triton's rule).

    The emulator models the tensor cores' fp8 accumulation as a whole (see the
    differences page), so the value changes none of its results; on ``wgmma``
    (sm_90a) an fp8 dot with an fp32 result adds its partial sums into fp32
    registers every ``limit`` products along K (``None``: never, Triton's
    default there).
    """
    if limit is None:
        return None
    limit = _const_int(ctx, limit, "max_num_imprecise_acc")
    if dtype.is_fp8() and limit > k:
        raise error(ctx.b.loc, f"max_num_imprecise_acc ({limit}) must be <= K ({k})",
                    help=f"pass at most {k}, the reduction length of this tl.dot")  # fmt: skip
    return limit


def _dot_out_dtype(ctx: FunctionLowerer, out_dtype: Any, acc: Any) -> Any:
    """``out_dtype``, else the accumulator's dtype (Triton 3.8), else fp32."""
    if out_dtype is not None:
        return _dtype(ctx, out_dtype, "out_dtype")
    if isinstance(acc, Tensor) and acc.dtype in (F16, F32, F64):
        return acc.dtype
    return F32


def _dot_acc(ctx: FunctionLowerer, acc: Any, result: BlockType) -> Tensor:
    """The accumulator: ``acc`` checked against the result type, or zeros."""
    if acc is None:
        return S.constant(ctx.b, 0, result)
    acc_t = _block(ctx, acc, "acc")
    if acc_t.type != result:
        raise error(ctx.b.loc, f"tl.dot accumulator has type {acc_t.type}, expected {result}")
    return acc_t


def _precision(ctx: FunctionLowerer, input_precision: Any, allow_tf32: Any) -> str:
    if input_precision is not None and allow_tf32 is not None:
        raise error(ctx.b.loc, "only one of input_precision and allow_tf32 can be given")
    if allow_tf32 is not None:
        return "tf32" if allow_tf32 else "ieee"
    precision = default_input_precision() if input_precision is None else input_precision
    if precision not in _PRECISIONS:
        raise error(
            ctx.b.loc, f"input_precision must be one of {', '.join(_PRECISIONS)}, got {precision!r}"
        )
    return precision


# ---------------------------------------------------------------- reductions

Combine = Callable[[list[Tensor], list[Tensor]], list[Any]]


def _prepare_axis(
    ctx: FunctionLowerer, inputs: list[Tensor], axis: Any
) -> tuple[list[Tensor], int]:
    """Axis ``None`` flattens the inputs; other axes are normalized."""
    for t in inputs:
        if not t.is_block:
            raise error(ctx.b.loc, f"reductions need a block, got {t.type}")
        if t.shape != inputs[0].shape:
            raise error(ctx.b.loc, "all inputs of a reduction must have the same shape")
    if axis is None:
        numel = math.prod(inputs[0].shape)
        return [S.reshape(ctx.b, t, (numel,)) for t in inputs], 0
    return inputs, _axis(ctx, axis, len(inputs[0].shape))


def _combiner_region(ctx: FunctionLowerer, elems: list[Any], combine: Combine, ret: type) -> Any:
    region = new_region(elems + elems)
    n = len(elems)
    with ctx.b.at(region.block):
        args = [Tensor(a) for a in region.args]
        outs = combine(args[:n], args[n:])
        if len(outs) != n:
            raise error(ctx.b.loc, f"combine_fn must return {n} value(s), got {len(outs)}")
        outs = [S.cast(ctx.b, o, e) for o, e in zip(outs, elems)]
        if any(o.is_block for o in outs):
            raise error(ctx.b.loc, "combine_fn must return scalars")
        ctx.b.create(ret, [o.handle for o in outs])
    return region


def reduce_blocks(
    ctx: FunctionLowerer, inputs: list[Tensor], axis: Any, combine: Combine, keep_dims: bool
) -> list[Tensor]:
    """``tt.reduce`` of ``inputs`` along ``axis`` with ``combine`` as the combiner."""
    original_rank = len(inputs[0].shape) if inputs and inputs[0].is_block else 0
    flat = axis is None
    inputs, ax = _prepare_axis(ctx, inputs, axis)
    elems = [t.dtype for t in inputs]
    region = _combiner_region(ctx, elems, combine, ops.ReduceReturnOp)
    shape = inputs[0].shape[:ax] + inputs[0].shape[ax + 1 :]
    result_types = [with_shape(e, shape) for e in elems]
    op = ctx.b.create(
        ops.ReduceOp, [t.handle for t in inputs], result_types, {"axis": ax}, regions=[region]
    )
    results = [Tensor(r) for r in op.results]
    if keep_dims and flat:
        return [S.broadcast_to(ctx.b, r, (1,) * original_rank) for r in results]
    if keep_dims:
        return [S.expand_dims(ctx.b, r, ax) for r in results]
    return results


@impl("condition")
def _condition(ctx: FunctionLowerer, arg1: Any, disable_licm: Any) -> Any:
    """The condition itself: ``disable_licm`` is a scheduling hint (the result is the same)."""
    return arg1


@impl("map_elementwise")
def _map_elementwise(ctx: FunctionLowerer, scalar_fn: Any, args: Any, pack: Any) -> Any:
    """``tt.map_elementwise``: the function inlined once into a region of scalars."""
    pack = _const_int(ctx, pack, "pack")
    if pack < 1 or pack & (pack - 1):
        raise error(ctx.b.loc, f"pack must be a power of two >= 1, got {pack}")
    if not args:
        raise error(ctx.b.loc, "map_elementwise must have at least 1 input tensor")
    blocks = _broadcast_all(ctx, [_tensor(ctx, a, "an argument") for a in args])
    shape = blocks[0].shape
    if not shape or shape[-1] % pack:
        raise error(ctx.b.loc, f"pack={pack} must divide the last dimension of {blocks[0].type}")
    parts = [p for t in blocks for p in _unpack(ctx, t, pack)]
    region = new_region([t.dtype for t in parts])
    with ctx.b.at(region.block):
        outs = ctx.call_combine(scalar_fn, [Tensor(a) for a in region.args])
        outs = [_tensor(ctx, o, "a result") for o in (outs if isinstance(outs, tuple) else [outs])]
        if any(o.is_block for o in outs) or len(outs) % pack:
            raise error(ctx.b.loc, f"the function must return scalars, {pack} per result")
        ctx.b.create(ops.MapElementwiseReturnOp, [o.handle for o in outs])
    types = [with_shape(o.dtype, parts[0].shape) for o in outs]
    op = ctx.b.create(ops.MapElementwiseOp, [p.handle for p in parts], types, regions=[region])
    results = [Tensor(r) for r in op.results]
    packed = [_repack(ctx, results[i : i + pack], shape) for i in range(0, len(results), pack)]
    return packed[0] if len(packed) == 1 else tuple(packed)


def _broadcast_all(ctx: FunctionLowerer, values: list[Tensor]) -> list[Tensor]:
    """The arguments broadcast to one block shape."""
    shape: tuple[int, ...] = ()
    for v in values:
        shape = S.broadcast_shapes(ctx.b, shape, v.shape)
    if not shape:
        raise error(ctx.b.loc, "map_elementwise needs a block argument")
    return [S.broadcast_to(ctx.b, v, shape) for v in values]


def _unpack(ctx: FunctionLowerer, t: Tensor, pack: int) -> list[Tensor]:
    """``t`` as ``pack`` blocks: part ``j`` holds element ``j`` of each group of the last axis."""
    if pack == 1:
        return [t]
    groups = S.reshape(ctx.b, t, (*t.shape[:-1], t.shape[-1] // pack, pack))
    return _columns(ctx, groups, pack)


def _columns(ctx: FunctionLowerer, t: Tensor, n: int) -> list[Tensor]:
    """The ``n`` columns of ``t`` (last axis of size ``n``, a power of two), in order."""
    if n == 1:
        return [S.reshape(ctx.b, t, t.shape[:-1])]
    pairs = S.reshape(ctx.b, t, (*t.shape[:-1], n // 2, 2))  # column j = 2 * a + b
    even, odd = IMPLS["split"](ctx, pairs)
    evens, odds = _columns(ctx, even, n // 2), _columns(ctx, odd, n // 2)
    return [c for pair in zip(evens, odds) for c in pair]


def _repack(ctx: FunctionLowerer, parts: list[Tensor], shape: tuple[int, ...]) -> Tensor:
    """Inverse of :func:`_unpack`: the blocks of ``parts`` interleaved back into ``shape``."""
    if len(parts) == 1:
        return parts[0]
    return S.reshape(ctx.b, _stack(ctx, parts), shape)


def _stack(ctx: FunctionLowerer, parts: list[Tensor]) -> Tensor:
    """``parts`` as the columns of a new last axis (a power of two of them)."""
    if len(parts) == 1:
        return S.expand_dims(ctx.b, parts[0], len(parts[0].shape))
    evens, odds = _stack(ctx, parts[0::2]), _stack(ctx, parts[1::2])
    pairs = IMPLS["join"](ctx, evens, odds)  # (..., n/2, 2): column 2 * a + b
    return S.reshape(ctx.b, pairs, (*evens.shape[:-1], 2 * evens.shape[-1]))


def _combine_with(ctx: FunctionLowerer, op: str) -> Combine:
    def combine(lhs: list[Tensor], rhs: list[Tensor]) -> list[Any]:
        if op in ("max", "min"):
            return [S.minmax(ctx.b, op, lhs[0], rhs[0])]
        return [S.binary(ctx.b, op, lhs[0], rhs[0])]

    return combine


def _sum_dtype(t: ScalarType) -> ScalarType | None:
    """Triton's ``_pick_sum_dtype``: small integers accumulate in 32 bits."""
    if t.is_int() and t.bitwidth < 32:
        return U32 if t.kind == "uint" else I32
    return None


@impl("sum")
def _sum(ctx: FunctionLowerer, input: Any, axis: Any, keep_dims: Any, dtype: Any) -> Tensor:
    x = _values(ctx, input, "input")
    target = _dtype(ctx, dtype) if dtype is not None else _sum_dtype(S.scalar_dtype(x))
    if target is not None:
        x = S.cast(ctx.b, x, target)
    return reduce_blocks(ctx, [x], axis, _combine_with(ctx, "+"), bool(keep_dims))[0]


@impl("xor_sum")
def _xor_sum(ctx: FunctionLowerer, input: Any, axis: Any, keep_dims: Any) -> Tensor:
    x = _values(ctx, input, "input")
    if not x.dtype.is_int():
        raise error(ctx.b.loc, f"tl.xor_sum needs integers, got {x.dtype!r}")
    return reduce_blocks(ctx, [x], axis, _combine_with(ctx, "^"), bool(keep_dims))[0]


@impl("reduce_or")
def _reduce_or(ctx: FunctionLowerer, input: Any, axis: Any, keep_dims: Any) -> Tensor:
    x = _values(ctx, input, "input")
    if not x.dtype.is_int():
        raise error(ctx.b.loc, f"tl.reduce_or needs integers, got {x.dtype!r}")
    return reduce_blocks(ctx, [x], axis, _combine_with(ctx, "|"), bool(keep_dims))[0]


@impl("histogram")
def _histogram(ctx: FunctionLowerer, input: Any, num_bins: Any, mask: Any) -> Tensor:
    """One ``tt.histogram``: how many values equal each of ``0 .. num_bins - 1``.

    Masked lanes and values outside ``[0, num_bins)`` are left out.
    """
    x = _values(ctx, input, "input")
    bins = _const_int(ctx, num_bins, "num_bins")
    if len(x.shape) != 1 or not S.scalar_dtype(x).is_int():
        raise error(ctx.b.loc, f"tl.histogram needs a 1-D block of integers, got {x.type}")
    if S.scalar_dtype(x).bitwidth != 32:
        # Triton's rule: its GPU lowering counts 32-bit values only.
        dtype = S.scalar_dtype(x).triton_name
        raise error(
            ctx.b.loc,
            f"tl.histogram takes 32-bit integers, got {dtype}",
            help="cast first: tl.histogram(x.to(tl.int32), num_bins)",
            triton=f"histogram only supports 32-bit integer input, but got {dtype}",
        )
    if bins < 1:
        raise error(ctx.b.loc, f"tl.histogram needs at least one bin, got {bins}")
    operands = [x.handle]
    if mask is not None:
        lanes = S.broadcast_to(ctx.b, _tensor(ctx, mask, "mask"), x.shape)
        operands.append(S.cast(ctx.b, lanes, I1).handle)
    return Tensor(ctx.b.value(ops.HistogramOp, operands, BlockType((bins,), I32), {}))


def _upcast_for_minmax(ctx: FunctionLowerer, x: Tensor) -> Tensor:
    """Triton's max/min reduce in at least 32 bits (bf16/fp16 -> fp32, small ints -> int32)."""
    if S.scalar_dtype(x).bitwidth >= 32 or x.dtype == I1:
        return x
    return S.cast(ctx.b, x, F32 if x.dtype.is_float() else I32)


def _minmax_reduce(
    ctx: FunctionLowerer,
    kind: str,
    input: Any,
    axis: Any,
    return_indices: Any,
    tie_break_left: Any,
    keep_dims: Any,
) -> Any:
    x = _values(ctx, input, "input")
    if return_indices:
        return _reduce_with_indices(ctx, kind, x, axis, bool(tie_break_left), bool(keep_dims))
    x = _upcast_for_minmax(ctx, x)
    return reduce_blocks(ctx, [x], axis, _combine_with(ctx, kind), bool(keep_dims))[0]


def _make_minmax(kind: str) -> Impl:
    """``tl.max`` or ``tl.min``: the argument names are the stub's (Triton's)."""

    def lower(
        ctx: FunctionLowerer,
        input: Any,
        axis: Any,
        return_indices: Any,
        return_indices_tie_break_left: Any,
        keep_dims: Any,
    ) -> Any:
        return _minmax_reduce(
            ctx, kind, input, axis, return_indices, return_indices_tie_break_left, keep_dims
        )

    return lower


for _kind in ("max", "min"):
    IMPLS[_kind] = _make_minmax(_kind)


@impl("argmax")
def _argmax(
    ctx: FunctionLowerer, input: Any, axis: Any, tie_break_left: Any, keep_dims: Any
) -> Tensor:
    x = _values(ctx, input, "input")
    return _reduce_with_indices(ctx, "max", x, axis, bool(tie_break_left), bool(keep_dims))[1]


@impl("argmin")
def _argmin(
    ctx: FunctionLowerer, input: Any, axis: Any, tie_break_left: Any, keep_dims: Any
) -> Tensor:
    x = _values(ctx, input, "input")
    return _reduce_with_indices(ctx, "min", x, axis, bool(tie_break_left), bool(keep_dims))[1]


def _reduce_with_indices(
    ctx: FunctionLowerer, kind: str, x: Tensor, axis: Any, tie_break_left: bool, keep_dims: bool
) -> tuple[Tensor, Tensor]:
    """Reduce (value, index) pairs; on ties the first index wins (semantics item 20)."""
    if x.dtype == ScalarType("bf16"):
        x = S.cast(ctx.b, x, F32)
    if axis is None:
        x = S.reshape(ctx.b, x, (math.prod(x.shape),))
        axis = 0
    ax = _axis(ctx, axis, len(x.shape))
    n = x.shape[ax]
    index = Tensor(ctx.b.value(ops.MakeRangeOp, [], BlockType((n,), I32), {"start": 0, "end": n}))
    for d in range(len(x.shape)):
        if d != ax:
            index = S.expand_dims(ctx.b, index, d)
    index = S.broadcast_to(ctx.b, index, x.shape)
    pred = ">" if kind == "max" else "<"

    def combine(lhs: list[Tensor], rhs: list[Tensor]) -> list[Any]:
        b = ctx.b
        (v1, i1), (v2, i2) = lhs, rhs
        better = S.compare(b, pred, v1, v2)
        if tie_break_left:
            tie = S.logical(b, "and", S.compare(b, "==", v1, v2), S.compare(b, "<", i1, i2))
            better = S.logical(b, "or", better, tie)
        if v1.dtype.is_float():
            # NaN is a missing value, as for tl.max/tl.min: a number beats a NaN on either
            # side, so the answer does not hang on the order the backend combines in
            nan_right = S.logical(b, "and", S.compare(b, "!=", v2, v2), S.compare(b, "==", v1, v1))
            better = S.logical(b, "or", better, nan_right)
        return [S.where(b, better, v1, v2), S.where(b, better, i1, i2)]

    values, indices = reduce_blocks(ctx, [x, index], ax, combine, keep_dims)
    return values, indices


def _inputs_tuple(ctx: FunctionLowerer, input: Any) -> tuple[list[Tensor], bool]:
    if isinstance(input, (tuple, list)):
        return [_values(ctx, t, "input") for t in input], True
    return [_values(ctx, input, "input")], False


def _user_combine(ctx: FunctionLowerer, combine_fn: Any) -> Combine:
    def combine(lhs: list[Tensor], rhs: list[Tensor]) -> list[Any]:
        out = ctx.call_combine(combine_fn, [*lhs, *rhs])
        return list(out) if isinstance(out, tuple) else [out]

    return combine


@impl("reduce")
def _reduce(ctx: FunctionLowerer, input: Any, axis: Any, combine_fn: Any, keep_dims: Any) -> Any:
    inputs, is_tuple = _inputs_tuple(ctx, input)
    results = reduce_blocks(ctx, inputs, axis, _user_combine(ctx, combine_fn), bool(keep_dims))
    return tuple(results) if is_tuple else results[0]


def scan_blocks(
    ctx: FunctionLowerer, inputs: list[Tensor], axis: Any, combine: Combine, reverse: bool
) -> list[Tensor]:
    """``tt.scan`` (inclusive) of ``inputs`` along ``axis``."""
    for t in inputs:
        if not t.is_block:
            raise error(ctx.b.loc, f"scans need a block, got {t.type}")
    ax = _axis(ctx, axis, len(inputs[0].shape))
    elems = [t.dtype for t in inputs]
    region = _combiner_region(ctx, elems, combine, ops.ScanReturnOp)
    attrs = {"axis": ax, "reverse": bool(reverse)}
    op = ctx.b.create(
        ops.ScanOp, [t.handle for t in inputs], [t.type for t in inputs], attrs, regions=[region]
    )
    return [Tensor(r) for r in op.results]


@impl("associative_scan")
def _associative_scan(
    ctx: FunctionLowerer, input: Any, axis: Any, combine_fn: Any, reverse: Any
) -> Any:
    inputs, is_tuple = _inputs_tuple(ctx, input)
    results = scan_blocks(ctx, inputs, axis, _user_combine(ctx, combine_fn), bool(reverse))
    return tuple(results) if is_tuple else results[0]


def _scan_input(ctx: FunctionLowerer, input: Any, small_ints: bool) -> Tensor:
    x = _values(ctx, input, "input")
    if x.dtype == ScalarType("bf16"):
        x = S.cast(ctx.b, x, F32)
    target = _sum_dtype(S.scalar_dtype(x)) if small_ints else None
    return S.cast(ctx.b, x, target) if target is not None else x


@impl("cumsum")
def _cumsum(ctx: FunctionLowerer, input: Any, axis: Any, reverse: Any) -> Tensor:
    x = _scan_input(ctx, input, small_ints=True)
    return scan_blocks(ctx, [x], axis, _combine_with(ctx, "+"), bool(reverse))[0]


@impl("cumprod")
def _cumprod(ctx: FunctionLowerer, input: Any, axis: Any, reverse: Any) -> Tensor:
    x = _scan_input(ctx, input, small_ints=False)
    return scan_blocks(ctx, [x], axis, _combine_with(ctx, "*"), bool(reverse))[0]


@impl("bitonic_merge")
def _bitonic_merge(ctx: FunctionLowerer, x: Any, dim: Any, descending: Any) -> Tensor:
    """Triton's merge network, one round per distance, from pairs of half-blocks."""
    t = _values(ctx, x, "x")
    rank = len(t.shape)
    if (rank - 1 if dim is None else _axis(ctx, dim, rank)) != rank - 1:
        raise error(ctx.b.loc, "only minor dimension is currently supported")  # Triton's words
    n = t.shape[-1]
    if n & (n - 1):
        raise error(ctx.b.loc, f"bitonic_merge needs a power-of-two last dimension, got {t.type}")
    down = bool(descending)
    distance = n // 2
    while distance:
        t = _merge_round(ctx, t, distance, down)
        distance //= 2
    return t


def _merge_round(ctx: FunctionLowerer, t: Tensor, distance: int, down: bool) -> Tensor:
    """Compare-and-swap each element with the one ``distance`` away in its group."""
    b = ctx.b
    *lead, n = t.shape
    groups = S.reshape(b, t, (*lead, n // (2 * distance), 2, distance))
    k = len(groups.shape)
    swap = (*range(k - 2), k - 1, k - 2)  # the two halves of each group on the last axis
    left, right = IMPLS["split"](ctx, S.permute(b, groups, swap))
    # Triton's rule: a lane takes its partner where (x > partner) != (descending ^ is_right).
    take_left = S.compare(b, ">", left, right)
    take_right = S.compare(b, ">", right, left)
    if down:
        take_left = S.compare(b, "==", take_left, False)
    else:
        take_right = S.compare(b, "==", take_right, False)
    merged = IMPLS["join"](
        ctx, S.where(b, take_left, right, left), S.where(b, take_right, left, right)
    )
    return S.reshape(b, S.permute(b, merged, swap), t.shape)


@impl("sort")
def _sort(ctx: FunctionLowerer, x: Any, dim: Any, descending: Any) -> Tensor:
    t = _values(ctx, x, "x")
    rank = len(t.shape)
    d = rank - 1 if dim is None else _axis(ctx, dim, rank)
    if d != rank - 1:
        raise error(ctx.b.loc, "tl.sort only sorts along the last dimension")
    attrs = {"dim": d, "descending": bool(descending)}
    return Tensor(ctx.b.value(ops.SortOp, [t.handle], t.type, attrs))


@impl("topk")
def _topk(ctx: FunctionLowerer, x: Any, k: Any, dim: Any, descending: Any) -> Tensor:
    """Sort, split the last dim into ``(n // k, k)`` rows and gather the first row."""
    ordered = _sort(ctx, x, dim, descending)
    *outer, n = ordered.shape
    count = _const_int(ctx, k, "k")
    # Triton's library checks k with static_asserts: the same failures, in its words.
    for bad, triton in (
        (count <= 0, "topk: k must be greater than 0"),
        (count & (count - 1), "topk: k must be a power of two"),
        (count > n, "topk: k must not exceed the size of the selected dimension"),
    ):
        if bad:
            failed = error(ctx.b.loc, f"tl.topk needs k a power of two up to {n}, got {count}",
                           triton=triton)  # fmt: skip
            raise CompileTimeAssertionFailure(failed.diagnostics)
    rows = S.reshape(ctx.b, ordered, (*outer, n // count, count))
    first = _full(ctx, (*[1] * len(outer), 1, count), 0, I32)
    picked = _gather(ctx, rows, first, len(outer))
    return S.reshape(ctx.b, picked, (*outer, count))


# ---------------------------------------------------------------- math

_FP32_64 = (F32, F64)
_MATH = {
    "exp": "math.exp",
    "exp2": "math.exp2",
    "log": "math.log",
    "log2": "math.log2",
    "sqrt": "math.sqrt",
    "sqrt_rn": "math.sqrt",
    "rsqrt": "math.rsqrt",
    "sin": "math.sin",
    "cos": "math.cos",
    "floor": "math.floor",
    "ceil": "math.ceil",
    "erf": "math.erf",
}


def _math(b: Any, op_name: str, t: Tensor) -> Tensor:
    return Tensor(b.value(OP_REGISTRY[op_name], [t.handle], t.type))


def _make_math(name: str, op_name: str) -> Impl:
    def lower(ctx: FunctionLowerer, x: Any) -> Tensor:
        return _math(ctx.b, op_name, _float_input(ctx, x, name, _FP32_64))

    return lower


for _name, _op in _MATH.items():
    IMPLS[_name] = _make_math(_name, _op)


@impl("abs")
def _abs(ctx: FunctionLowerer, x: Any) -> Tensor:
    t = _tensor(ctx, x, "x")
    S.computation_type(ctx.b, t, t, P.ARITH)
    if S.scalar_dtype(t).kind in ("uint", "bool"):
        return t
    return Tensor(ctx.b.value(ops.AbsOp, [t.handle], t.type))


@impl("fma")
def _fma(ctx: FunctionLowerer, x: Any, y: Any, z: Any) -> Tensor:
    a, c = S.promote_pair(ctx.b, x, y)
    a, d = S.promote_pair(ctx.b, a, z)
    a, c = S.promote_pair(ctx.b, a, c)
    if not a.dtype.is_float():
        raise error(ctx.b.loc, f"tl.fma needs floating-point values, got {a.dtype!r}")
    return Tensor(ctx.b.value(ops.FmaOp, [a.handle, c.handle, d.handle], a.type))


def _nan_minmax(ctx: FunctionLowerer, kind: str, x: Any, y: Any, propagate_nan: Any) -> Tensor:
    """``maximum``/``minimum``; with ``PropagateNan.ALL`` a NaN operand gives NaN."""
    a, c = S.promote_pair(ctx.b, _runtime_x(ctx, x, y), y)
    result = S.minmax(ctx.b, kind, a, c)
    if propagate_nan != PropagateNan.ALL or not a.dtype.is_float():
        return result
    b = ctx.b
    any_nan = S.logical(b, "or", S.compare(b, "!=", a, a), S.compare(b, "!=", c, c))
    return S.where(b, any_nan, S.binary(b, "+", a, c), result)  # NaN + anything is NaN


@impl("maximum")
def _maximum(ctx: FunctionLowerer, x: Any, y: Any, propagate_nan: Any) -> Tensor:
    return _nan_minmax(ctx, "max", x, y, propagate_nan)


@impl("minimum")
def _minimum(ctx: FunctionLowerer, x: Any, y: Any, propagate_nan: Any) -> Tensor:
    return _nan_minmax(ctx, "min", x, y, propagate_nan)


@impl("clamp")
def _clamp(ctx: FunctionLowerer, x: Any, min: Any, max: Any, propagate_nan: Any) -> Tensor:  # noqa: A002
    low = _nan_minmax(ctx, "max", _tensor(ctx, x, "x"), min, propagate_nan)
    return _nan_minmax(ctx, "min", low, max, propagate_nan)


@impl("umulhi")
def _umulhi(ctx: FunctionLowerer, x: Any, y: Any) -> Tensor:
    a, c = S.promote_pair(ctx.b, _runtime_x(ctx, x, y), y, P.BITWISE)
    return Tensor(ctx.b.value(ops.UmulhiOp, [a.handle, c.handle], a.type))


def _float_pair(ctx: FunctionLowerer, x: Any, y: Any, name: str) -> tuple[Tensor, Tensor]:
    a, c = S.promote_pair(ctx.b, _runtime_x(ctx, x, y), y)
    if not a.dtype.is_float():
        raise error(ctx.b.loc, f"tl.{name} needs floating-point values, got {a.dtype!r}")
    return a, c


@impl("div_rn")
def _div_rn(ctx: FunctionLowerer, x: Any, y: Any) -> Tensor:
    a, c = _float_pair(ctx, x, y, "div_rn")
    return Tensor(ctx.b.value(ops.DivRnOp, [a.handle, c.handle], a.type))


@impl("fdiv")
def _fdiv(ctx: FunctionLowerer, x: Any, y: Any, ieee_rounding: Any) -> Tensor:
    a, c = _float_pair(ctx, x, y, "fdiv")
    op = ops.DivRnOp if ieee_rounding else ops.DivOp
    return Tensor(ctx.b.value(op, [a.handle, c.handle], a.type))


@impl("cdiv")
def _cdiv(ctx: FunctionLowerer, x: Any, div: Any) -> Any:
    loc = ctx.b.loc
    return ctx.binop("//", ctx.binop("-", ctx.binop("+", x, div, loc), 1, loc), div, loc)


@impl("swizzle2d")
def _swizzle2d(ctx: FunctionLowerer, i: Any, j: Any, size_i: Any, size_j: Any, size_g: Any) -> Any:
    """Triton's ``swizzle2d``, step by step (compile-time operands fold)."""
    loc = ctx.b.loc
    ij = ctx.binop("+", ctx.binop("*", i, size_j, loc), j, loc)
    size_gj = ctx.binop("*", size_g, size_j, loc)
    group_id = ctx.binop("//", ij, size_gj, loc)
    off_i = ctx.binop("*", group_id, size_g, loc)
    rows_left = ctx.binop("-", size_i, off_i, loc)
    if isinstance(rows_left, Tensor) or isinstance(size_g, Tensor):
        size_g = _minimum(ctx, rows_left, size_g, PropagateNan.NONE)
    else:
        size_g = min(rows_left, size_g)  # the last group may have fewer rows
    ij = ctx.binop("%", ij, size_gj, loc)
    return ctx.binop("+", off_i, ctx.binop("%", ij, size_g, loc), loc), ctx.binop(
        "//", ij, size_g, loc
    )


@impl("sigmoid")
def _sigmoid(ctx: FunctionLowerer, x: Any) -> Tensor:
    t = _float_input(ctx, x, "sigmoid", _FP32_64)
    e = IMPLS["exp"](ctx, S.negate(ctx.b, t))
    return S.truediv(ctx.b, 1, S.binary(ctx.b, "+", 1, e))


@impl("softmax")
def _softmax(ctx: FunctionLowerer, x: Any, dim: Any, keep_dims: Any, ieee_rounding: Any) -> Tensor:
    t = _values(ctx, x, "x")
    axis = 0 if dim is None else dim  # Triton's default
    m = IMPLS["max"](ctx, t, axis, False, True, True)
    z = S.binary(ctx.b, "-", t, m)
    num = IMPLS["exp"](ctx, z)
    den = _sum(ctx, num, axis, True, None)
    return _fdiv(ctx, num, den, ieee_rounding)


# ---------------------------------------------------------------- random numbers

PHILOX_KEY_A = 0x9E3779B9
PHILOX_KEY_B = 0xBB67AE85
PHILOX_ROUND_A = 0xD2511F53
PHILOX_ROUND_B = 0xCD9E8D57


def _philox(ctx: FunctionLowerer, seed: Any, offset: Any, n_rounds: Any) -> tuple[Tensor, ...]:
    """Triton's ``randint4x``: Philox-4x32 with counter (offset_lo, offset_hi, 0, 0).

    As in ``triton/language/random.py``: ``offset_lo = offset.to(tl.uint32)``
    (the low 32 bits), ``offset_hi = (offset >> 32).to(tl.uint32)`` for
    offsets wider than 32 bits and 0 otherwise; the key is
    ``(seed_lo, seed_hi)`` of ``seed.to(tl.uint64)``.
    """
    b = ctx.b
    rounds = _const_int(ctx, n_rounds, "n_rounds")
    seed_t = _tensor(ctx, seed, "seed")
    offset_t = _tensor(ctx, offset, "offset")
    if not isinstance(seed_t.dtype, ScalarType) or not seed_t.dtype.is_int():
        # A block of seeds broadcasts with the offsets (one stream per seed).
        raise error(b.loc, f"seed must be an integer scalar or block, got {seed_t.type}")
    if not isinstance(offset_t.dtype, ScalarType) or not offset_t.dtype.is_int():
        raise error(b.loc, f"offset must be an integer block or scalar, got {offset_t.type}")
    seed64 = S.cast(b, seed_t, U64)
    k1 = S.cast(b, S.binary(b, "&", S.binary(b, ">>", seed64, 32), 0xFFFFFFFF), U32)
    k0 = S.cast(b, S.binary(b, "&", seed64, 0xFFFFFFFF), U32)
    width = offset_t.dtype.bitwidth
    # For 32-bit offsets `.to(tl.uint32)` only reinterprets the bits.
    c0 = S.bitcast(b, offset_t, U32) if width == 32 else S.cast(b, offset_t, U32)
    zero = S.constant(b, 0, c0.type)
    c1 = S.cast(b, S.binary(b, ">>", offset_t, 32), U32) if width > 32 else zero
    c2 = c3 = zero
    return _philox_rounds(ctx, (c0, c1, c2, c3), (k0, k1), rounds)


#: Philox's constants for 64-bit words (key increments, then round multipliers).
_PHILOX_64 = (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B, 0xD2E7470EE14C6C93, 0xCA5A826395121157)
_PHILOX_32 = (PHILOX_KEY_A, PHILOX_KEY_B, PHILOX_ROUND_A, PHILOX_ROUND_B)


def _philox_rounds(
    ctx: FunctionLowerer, c: tuple[Tensor, ...], k: tuple[Tensor, Tensor], rounds: int
) -> tuple[Tensor, ...]:
    """``rounds`` rounds of Philox on counter ``c`` (4 words) with key ``k`` (2 words),
    as Triton's ``philox_impl``: 32- or 64-bit words, by the counter's type."""
    b = ctx.b
    key_a, key_b, round_a, round_b = _PHILOX_64 if S.scalar_dtype(c[0]) == U64 else _PHILOX_32
    c0, c1, c2, c3 = c
    k0, k1 = k
    for _ in range(rounds):
        _c0, _c2 = c0, c2
        c0 = S.binary(b, "^", S.binary(b, "^", _umulhi(ctx, round_b, _c2), c1), k0)
        c2 = S.binary(b, "^", S.binary(b, "^", _umulhi(ctx, round_a, _c0), c3), k1)
        c1 = S.binary(b, "*", round_b, _c2)
        c3 = S.binary(b, "*", round_a, _c0)
        k0 = S.binary(b, "+", k0, key_a)
        k1 = S.binary(b, "+", k1, key_b)
    return c0, c1, c2, c3


@impl("philox_impl")
def _philox_impl(
    ctx: FunctionLowerer, c0: Any, c1: Any, c2: Any, c3: Any, k0: Any, k1: Any, n_rounds: Any
) -> tuple[Tensor, ...]:
    """Triton's ``philox_impl``: the rounds on a ``uint32`` or ``uint64`` state and key."""
    c = tuple(_tensor(ctx, v, f"c{i}") for i, v in enumerate((c0, c1, c2, c3)))
    if S.scalar_dtype(c[0]) not in (U32, U64):
        raise error(ctx.b.loc, f"philox_impl needs uint32 or uint64 words, got {c[0].type}")
    key = (_tensor(ctx, k0, "k0"), _tensor(ctx, k1, "k1"))
    return _philox_rounds(ctx, c, key, _const_int(ctx, n_rounds, "n_rounds"))


@impl("philox")
def _philox_counter(
    ctx: FunctionLowerer, seed: Any, c0: Any, c1: Any, c2: Any, c3: Any, n_rounds: Any
) -> tuple[Tensor, ...]:
    """Triton's ``philox``: a counter of four 32-bit (or 64-bit) words, keyed by ``seed``."""
    b = ctx.b
    seed64 = S.cast(b, _tensor(ctx, seed, "seed"), U64)
    c = [_tensor(ctx, v, f"c{i}") for i, v in enumerate((c0, c1, c2, c3))]
    width = S.scalar_dtype(c[0]).bitwidth
    if width not in (32, 64):
        raise error(b.loc, f"philox needs 32- or 64-bit counters, got {c[0].type}")
    if width == 32:
        key = (S.cast(b, S.binary(b, "&", seed64, 0xFFFFFFFF), U32),
               S.cast(b, S.binary(b, ">>", seed64, 32), U32))  # fmt: skip
    else:
        key = (seed64, S.constant(b, 0, U64))
    word = U32 if width == 32 else U64
    words = tuple(S.bitcast(b, S.cast(b, v, S.scalar_dtype(c[0])), word) for v in c)
    return _philox_rounds(ctx, words, key, _const_int(ctx, n_rounds, "n_rounds"))


#: ``uint_to_uniform_float``'s scale by word width: the largest with MAX_INT * scale < 1.
_UNIFORM_SCALE = {32: 4.6566127342e-10, 64: 1.0842020432385337e-19}


def _uniform(ctx: FunctionLowerer, x: Tensor) -> Tensor:
    """Triton's ``uint_to_uniform_float`` for 32- or 64-bit words: fold the sign, then scale."""
    b = ctx.b
    width = S.scalar_dtype(x).bitwidth
    i = S.bitcast(b, x, I32 if width == 32 else I64)
    neg = S.compare(b, "<", i, 0)
    i = S.where(b, neg, S.binary(b, "-", S.negate(b, i), 1), i)
    return S.binary(b, "*", i, _UNIFORM_SCALE[width])


@impl("randint")
def _randint(ctx: FunctionLowerer, seed: Any, offset: Any, n_rounds: Any) -> Tensor:
    return _philox(ctx, seed, offset, n_rounds)[0]


@impl("randint4x")
def _randint4x(ctx: FunctionLowerer, seed: Any, offset: Any, n_rounds: Any) -> tuple[Tensor, ...]:
    return _philox(ctx, seed, offset, n_rounds)


@impl("rand")
def _rand(ctx: FunctionLowerer, seed: Any, offset: Any, n_rounds: Any) -> Tensor:
    return _uniform(ctx, _philox(ctx, seed, offset, n_rounds)[0])


@impl("randn")
def _randn(ctx: FunctionLowerer, seed: Any, offset: Any, n_rounds: Any) -> Tensor:
    """Box-Muller on the first two Philox outputs, as Triton's ``randn``."""
    b = ctx.b
    i1, i2, _, _ = _philox(ctx, seed, offset, n_rounds)
    r, th = _polar(ctx, _uniform(ctx, i1), _uniform(ctx, i2))
    return S.binary(b, "*", r, _math(b, "math.cos", th))


@impl("rand4x")
def _rand4x(ctx: FunctionLowerer, seed: Any, offsets: Any, n_rounds: Any) -> tuple[Tensor, ...]:
    return tuple(_uniform(ctx, i) for i in _philox(ctx, seed, offsets, n_rounds))


@impl("uint_to_uniform_float")
def _uint_to_uniform_float(ctx: FunctionLowerer, x: Any) -> Tensor:
    t = _tensor(ctx, x, "x")
    width = S.scalar_dtype(t).bitwidth
    if not S.scalar_dtype(t).is_int() or width not in (32, 64):
        raise error(
            ctx.b.loc, f"tl.uint_to_uniform_float needs 32- or 64-bit integers, got {t.type}"
        )
    return _uniform(ctx, t)


def _polar(ctx: FunctionLowerer, u1: Tensor, u2: Tensor) -> tuple[Tensor, Tensor]:
    """Box-Muller's radius and angle for two uniforms, as Triton's ``pair_uniform_to_normal``."""
    b = ctx.b
    u1 = S.minmax(b, "max", u1, 1.0e-7)
    th = S.binary(b, "*", 6.283185307179586, u2)
    r = _math(b, "math.sqrt", S.binary(b, "*", -2.0, _math(b, "math.log", u1)))
    return r, th


def _box_muller(ctx: FunctionLowerer, u1: Tensor, u2: Tensor) -> tuple[Tensor, Tensor]:
    r, th = _polar(ctx, u1, u2)
    b = ctx.b
    return S.binary(b, "*", r, _math(b, "math.cos", th)), S.binary(
        b, "*", r, _math(b, "math.sin", th)
    )


@impl("pair_uniform_to_normal")
def _pair_uniform_to_normal(ctx: FunctionLowerer, u1: Any, u2: Any) -> tuple[Tensor, Tensor]:
    return _box_muller(ctx, _tensor(ctx, u1, "u1"), _tensor(ctx, u2, "u2"))


@impl("randn4x")
def _randn4x(ctx: FunctionLowerer, seed: Any, offset: Any, n_rounds: Any) -> tuple[Tensor, ...]:
    u1, u2, u3, u4 = _rand4x(ctx, seed, offset, n_rounds)
    return (*_box_muller(ctx, u1, u2), *_box_muller(ctx, u3, u4))


# ---------------------------------------------------------------- hints and debugging


def _make_hint(attr: str) -> Impl:
    def lower(ctx: FunctionLowerer, input: Any, values: Any) -> Any:
        vals = list(values) if isinstance(values, (list, tuple)) else [values]
        vals = [_const_int(ctx, v, "values") for v in vals]
        if not isinstance(input, Tensor):
            return input
        if len(vals) != max(len(input.shape), 1):
            raise error(ctx.b.loc, f"tl.{attr} needs one value per dimension of {input.type}")
        hinted = ctx.b.value(ops.HintOp, [input.handle], input.type, {attr: vals})
        if _defined_in(input.handle, ctx.b.block):
            # Triton marks the value itself, so a hint whose result is dropped
            # (`tl.multiple_of(offs, 16)` as a statement) still holds for
            # `offs`. Here the variable's tensor takes the hinted value; only
            # in the block that defines it, where every later use sees it.
            input.handle = hinted
            return input
        return Tensor(hinted)

    return lower


def _defined_in(v: Value, block: Block) -> bool:
    """Whether ``v`` is an argument of ``block`` or the result of an op in it."""
    owner = getattr(v, "owner", None)
    return owner.parent is block if owner is not None else any(a is v for a in block.args)


for _hint in ("multiple_of", "max_contiguous", "max_constancy"):
    IMPLS[_hint] = _make_hint(_hint)


@impl("static_assert")
def _static_assert(ctx: FunctionLowerer, cond: Any, msg: Any) -> None:
    if isinstance(cond, Tensor):
        raise error(
            ctx.b.loc,
            "static_assert needs a compile-time condition",
            help="use tl.device_assert for run-time checks",
        )
    if not cond:
        failed = error(ctx.b.loc, "static_assert failed" + (f": {msg}" if msg else ""))
        raise CompileTimeAssertionFailure(failed.diagnostics)


@impl("inline_asm_elementwise")
def _inline_asm(
    ctx: FunctionLowerer, asm: Any, constraints: Any, args: Any, dtype: Any, is_pure: Any,
    pack: Any,
) -> Tensor | tuple[Tensor, ...]:  # fmt: skip
    """``tl.inline_asm_elementwise``: one ``tt.elementwise_inline_asm`` op, blocks broadcast."""
    b = ctx.b
    if not isinstance(asm, str) or not isinstance(constraints, str):
        raise error(b.loc, "inline_asm_elementwise takes the asm and constraints as strings")
    pack = _const_int(ctx, pack, "pack")
    if pack < 1 or pack & (pack - 1):
        raise error(b.loc, f"inline_asm_elementwise: pack must be a power of two, got {pack}")
    values = [
        _tensor(ctx, a, "args") for a in (args if isinstance(args, (tuple, list)) else [args])
    ]
    shape: tuple[int, ...] = ()
    for v in values:
        shape = S.broadcast_shapes(b, shape, v.shape)
    values = [S.broadcast_to(b, v, shape) if shape else v for v in values]
    dtypes = list(dtype) if isinstance(dtype, (tuple, list)) else [dtype]
    types = [with_shape(_dtype(ctx, d), shape) for d in dtypes]
    attrs: dict[str, Any] = {"asm": asm, "constraints": constraints, "pure": bool(is_pure)}
    if pack > 1:
        attrs["pack"] = pack
    op = b.create(ops.InlineAsmOp, [v.handle for v in values], types, attrs)
    results = tuple(Tensor(r) for r in op.results)
    return results if isinstance(dtype, (tuple, list)) else results[0]


@impl("tuple")
def _tuple(ctx: FunctionLowerer, iterable: Any = ()) -> tuple[Any, ...]:
    """``tl.tuple(items)``: a compile-time tuple whose items may be run-time values."""
    if not isinstance(iterable, (tuple, list)):
        raise error(
            ctx.b.loc,
            f"tl.tuple takes a tuple or a list, got {S.describe(iterable)}",
            help="write tl.tuple([a, b]), or tl.tuple([v + 1 for v in values]) over a tuple",
        )
    return tuple(iterable)


@impl("static_print")
def _static_print(
    ctx: FunctionLowerer, values: Any, sep: Any, end: Any, file: Any, flush: Any
) -> None:
    text = sep.join(str(v.type) if isinstance(v, Tensor) else str(v) for v in values)
    sys.stdout.write(text + end)
    if flush:
        sys.stdout.flush()


@impl("device_print")
def _device_print(ctx: FunctionLowerer, prefix: Any, args: Any, hex: Any) -> None:  # noqa: A002
    prefix = _const_str(ctx, prefix, "prefix")
    values = [_tensor(ctx, a, "a printed value") for a in args]
    attrs = {"prefix": prefix, "hex": bool(hex)}
    ctx.b.create(ops.PrintOp, [v.handle for v in values], [], attrs)


@impl("device_assert")
def _device_assert(ctx: FunctionLowerer, cond: Any, msg: Any, mask: Any = None) -> None:
    flag = S.to_bool(ctx.b, _tensor(ctx, cond, "cond"))
    msg = _const_str(ctx, msg, "msg")
    options = COMPILING_OPTIONS.get()
    if options is not None and not options.keeps_asserts():
        return  # as in Triton: without debug mode, no check on either backend
    if mask is not None and not isinstance(mask, Tensor):
        if not mask:
            return  # no lane is checked
        mask = None
    if mask is not None:  # a lane the mask leaves out holds
        enabled = S.to_bool(ctx.b, mask)
        flag = S.to_bool(ctx.b, S.binary(ctx.b, "|", flag, S.logical_not(ctx.b, enabled)))
        ctx.b.create(ops.AssertOp, [flag.handle], [], {"message": msg})
        return
    attrs: dict[str, Any] = {"message": msg}
    owner = getattr(flag.handle, "owner", None)
    if isinstance(owner, ops.CmpOp):
        # The names now, while they are the user's: passes may merge values (see AssertOp).
        names = [v.name_hint or "" for v in owner.operands]
        if any(names):
            attrs["compared"] = names
    ctx.b.create(ops.AssertOp, [flag.handle], [], attrs)


@impl("expect_zero")
def _expect_zero(ctx: FunctionLowerer, x: Any, mask: Any) -> Any:
    """``x``; in debug mode an assertion that ``x == 0`` where ``mask`` holds."""
    value = _tensor(ctx, x, "x")
    options = COMPILING_OPTIONS.get()
    if options is not None and not options.keeps_asserts():
        return x  # as Triton: no check, and no op in the IR, outside debug mode
    enabled = S.to_bool(ctx.b, _tensor(ctx, mask, "mask"))
    zero = S.compare(ctx.b, "==", value, 0)
    holds = S.binary(ctx.b, "|", zero, S.logical_not(ctx.b, enabled))
    attrs = {"message": "expect_zero expected x == 0 where mask is true"}
    ctx.b.create(ops.AssertOp, [S.to_bool(ctx.b, holds).handle], [], attrs)
    return x


@impl("assume")
def _assume(ctx: FunctionLowerer, cond: Any) -> None:
    # A compile-time condition needs no op: true is no information, false is
    # a mistake Triton would only notice as undefined behaviour.
    if not isinstance(cond, Tensor):
        if not cond:
            raise error(ctx.b.loc, "tl.assume() of a condition that is false at compile time")
        return
    flag = S.to_bool(ctx.b, cond)
    attrs = {"message": ops.ASSUME_MESSAGE, "assume": True}
    ctx.b.create(ops.AssertOp, [flag.handle], [], attrs)


@impl("debug_barrier")
def _debug_barrier(ctx: FunctionLowerer) -> None:
    ctx.b.create(ops.BarrierOp)


@impl("range", "static_range")
def _range(ctx: FunctionLowerer, arg1: Any, arg2: Any, step: Any, **_: Any) -> None:
    raise error(ctx.b.loc, "tl.range and tl.static_range can only be the iterable of a for loop")
