"""Semantics of the ``arith.*`` ops: constants, integer and float arithmetic, casts.

Every op computes in the exact NumPy dtype of its IR type, so integers wrap
around as on the GPU (overflow warnings are silenced by the interpreter).
bf16 operands are decoded to fp32 and the result rounded back to nearest
even after each op; ``math.*`` functions on f16 also compute in fp32 and
round once. Differences from Triton on a GPU are listed in the package
docstring.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from minitriton.emulator import ptx
from minitriton.emulator.interpreter import NeedSerial, ProgramState
from minitriton.emulator.memory import RAW_ADDRESSES, Memory
from minitriton.emulator.registry import semantics
from minitriton.emulator.values import (
    RVal,
    cast_toward_zero,
    cast_values,
    from_compute,
    scalar_constant,
    to_compute,
)
from minitriton.ir.core import Operation, Value
from minitriton.ir.ops import (
    AddOp,
    AndOp,
    BitcastOp,
    CastOp,
    CmpOp,
    ConstantOp,
    DivOp,
    InlineAsmOp,
    MaxOp,
    MinOp,
    MulOp,
    NegOp,
    NotOp,
    OrOp,
    RemOp,
    SelectOp,
    ShlOp,
    ShrOp,
    SubOp,
    UmulhiOp,
    XorOp,
)
from minitriton.ir.types import PointerType, ScalarType, element_type

ArrayFn = Callable[..., np.ndarray]


def elementwise(
    op_class: type[Operation],
    *,
    math_precision: bool = False,
    home: str = __name__,
    fp8_bits: ArrayFn | None = None,
) -> Callable[[ArrayFn], ArrayFn]:
    """Register ``fn(*arrays)`` as the semantics of the elementwise op ``op_class``.

    ``home`` is the module that registers it, where the semantics table
    says the op's meaning is (the wrapper itself is made here).

    The wrapper decodes bf16 operands to fp32 (and f16 too when
    ``math_precision``), calls ``fn`` on whole arrays and stores the result in
    the op's result type, always in a new array. ``fp8_bits``, if given,
    computes an fp8 result from the operands' bits instead (``math.abs``
    clears the sign bit there, as the GPU does, so ``-inf`` stays
    infinite where a conversion from fp32 would saturate). (The fast paths of
    :mod:`minitriton.emulator.ops.speed` compute some of these ops into an
    operand's block, or lazily.)
    """

    def register(fn: ArrayFn) -> ArrayFn:
        ELEMENTWISE.add(op_class)

        @semantics(op_class)
        def run(op: Operation, state: ProgramState, *args: RVal) -> RVal:
            batched = any(a.batched for a in args)
            out_type = element_type(op.results[0].type)
            assert isinstance(out_type, ScalarType)
            if fp8_bits is not None and out_type.is_fp8():
                return RVal(np.asarray(fp8_bits(*(np.asarray(a.data) for a in args))), batched)
            arrays = [
                _decode(a.data, element_type(v.type), math_precision)
                for a, v in zip(args, op.operands)
            ]
            data = from_compute(fn(*arrays), out_type)
            return RVal(np.asarray(data), batched)

        run.__doc__ = fn.__doc__
        run.__module__ = home
        return fn

    return register


#: The ops registered by :func:`elementwise`: their results are new arrays.
ELEMENTWISE: set[type[Operation]] = set()


def _decode(data: np.ndarray, t: object, math_precision: bool) -> np.ndarray:
    if not isinstance(t, ScalarType):
        return data
    if math_precision and t.name == "f16":
        return data.astype(np.float32)
    return to_compute(data, t)


def _is_int(a: np.ndarray) -> bool:
    return a.dtype.kind in "iub"


def _bool_safe(fn: ArrayFn) -> ArrayFn:
    """i1 arithmetic wraps modulo 2 (NumPy's bool ``+`` would saturate)."""

    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.dtype == np.bool_:
            return (fn(a.astype(np.uint8), b.astype(np.uint8)) & 1).astype(bool)
        return fn(a, b)

    return run


# ---------------------------------------------------------------- arithmetic


@elementwise(AddOp)
@_bool_safe
def _add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b (integers wrap)."""
    return a + b


@elementwise(SubOp)
@_bool_safe
def _sub(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a - b (integers wrap)."""
    return a - b


@elementwise(MulOp)
@_bool_safe
def _mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a * b (integers wrap)."""
    return a * b


def truncating_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C integer division: rounds toward zero; ``x / 0`` is defined as 0."""
    zero = b == 0
    safe = np.where(zero, 1, b).astype(b.dtype)
    exact = a - np.fmod(a, safe)  # a multiple of safe, so floor == trunc below
    return np.where(zero, 0, exact // safe).astype(a.dtype)


def truncating_rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C ``%``: the sign of the dividend; ``x % 0`` is defined as 0."""
    zero = b == 0
    safe = np.where(zero, 1, b).astype(b.dtype)
    return np.where(zero, 0, np.fmod(a, safe)).astype(a.dtype)


@elementwise(DivOp)
def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Truncating for integers, IEEE for floats (the GPU's fp32 ``/`` is ~2 ULP)."""
    return truncating_div(a, b) if _is_int(a) else a / b


@elementwise(RemOp)
def _rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C remainder (``fmod`` for floats)."""
    return truncating_rem(a, b) if _is_int(a) else np.fmod(a, b)


@elementwise(MaxOp)
def _max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Maximum; on floats NaN-ignoring (IEEE ``maxNum``), as Triton's default."""
    return np.maximum(a, b) if _is_int(a) else np.fmax(a, b)


@elementwise(MinOp)
def _min(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Minimum; on floats NaN-ignoring (IEEE ``minNum``)."""
    return np.minimum(a, b) if _is_int(a) else np.fmin(a, b)


# ---------------------------------------------------------------- bits


@elementwise(AndOp)
def _and(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bitwise and."""
    return a & b


@elementwise(OrOp)
def _or(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bitwise or."""
    return a | b


@elementwise(XorOp)
def _xor(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bitwise xor."""
    return a ^ b


@elementwise(ShlOp)
def _shl(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Shift left; shifting by the bit width or more gives 0 (as PTX ``shl``)."""
    return np.left_shift(a, b)


@elementwise(ShrOp)
def _shr(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Arithmetic shift for signed dtypes, logical for unsigned (NumPy does the same)."""
    return np.right_shift(a, b)


@elementwise(UmulhiOp)
def _umulhi(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The high half of the double-width product of the operands' unsigned bit patterns.

    Unsigned for signed types too, as Triton's ``tl.umulhi`` (and the GPU's
    ``mul.hi.u32``); the result keeps the operands' type (its bits).
    """
    bits = a.dtype.itemsize * 8
    unsigned = np.dtype(f"u{a.dtype.itemsize}")
    ua, ub = a.view(unsigned), b.view(unsigned)
    if bits <= 32:
        high = (ua.astype(np.uint64) * ub.astype(np.uint64)) >> np.uint64(bits)
        return high.astype(unsigned).view(a.dtype)
    return _mulhi64(ua, ub).view(a.dtype)


def _mulhi64(ua: np.ndarray, ub: np.ndarray) -> np.ndarray:
    """The high 64 bits of the 128-bit product of two uint64 arrays, from 32-bit halves."""
    lo32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a_lo, a_hi, b_lo, b_hi = ua & lo32, ua >> s32, ub & lo32, ub >> s32
    mid = (a_lo * b_lo >> s32) + (a_hi * b_lo & lo32) + (a_lo * b_hi & lo32)
    return a_hi * b_hi + (a_hi * b_lo >> s32) + (a_lo * b_hi >> s32) + (mid >> s32)


# ---------------------------------------------------------------- unary


@elementwise(NegOp)
def _neg(a: np.ndarray) -> np.ndarray:
    """-a (wraps for integers)."""
    return np.negative(a) if a.dtype != np.bool_ else a


@elementwise(NotOp)
def _not(a: np.ndarray) -> np.ndarray:
    """Bitwise not."""
    return np.invert(a)


# ---------------------------------------------------------------- compare, select

_CMP: dict[str, ArrayFn] = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


@semantics(CmpOp)
def _cmp(op: Operation, state: ProgramState, a: RVal, b: RVal) -> RVal:
    """Compare; signedness comes from the dtype; NaN compares unequal to everything."""
    t = element_type(op.operands[0].type)
    fn = _CMP[op.attrs["pred"]]
    batched = a.batched or b.batched
    if isinstance(t, ScalarType):
        return RVal(np.asarray(fn(to_compute(a.data, t), to_compute(b.data, t))), batched)
    # pointers: order within one buffer; pointers into different buffers are unequal
    if a.buffer != b.buffer and RAW_ADDRESSES in (a.buffer, b.buffer):
        a, b = (_raw(state, v, op.operands[0]) for v in (a, b))
    if a.buffer == b.buffer:
        return RVal(np.asarray(fn(a.data, b.data)), batched)
    if op.attrs["pred"] in ("eq", "ne"):
        shape = np.broadcast_shapes(a.data.shape, b.data.shape)
        return RVal(np.full(shape, op.attrs["pred"] == "ne"), batched)
    raise state.interp.error(op, state, "cannot order pointers into different buffers")


@semantics(SelectOp)
def _select(op: Operation, state: ProgramState, cond: RVal, a: RVal, b: RVal) -> RVal:
    """``tl.where``; a scalar condition picks whole values."""
    batched = cond.batched or a.batched or b.batched
    if a.buffer != b.buffer and RAW_ADDRESSES in (a.buffer, b.buffer):
        a, b = (_raw(state, v, op.results[0]) for v in (a, b))
    if a.buffer != b.buffer:
        return _select_buffers(op, state, cond, a, b)
    c = cond.data
    if cond.batched and not op.operands[0].shape:  # a batched scalar (P,) broadcasts
        c = c.reshape(c.shape + (1,) * len(op.results[0].shape))
    return RVal(np.where(c, a.data, b.data), batched, a.buffer)


def _raw(state: ProgramState, ptr: RVal, value: Value) -> RVal:
    """``ptr`` as raw host byte addresses (:data:`RAW_ADDRESSES`), to meet a raw pointer."""
    if ptr.buffer == RAW_ADDRESSES:
        return ptr
    memory = state.interp.memory
    pointee = element_type(value.type)
    assert isinstance(pointee, PointerType)
    root = memory[ptr.buffer or 0].root
    nbytes = np.multiply(ptr.data, pointee.pointee.numpy.itemsize, dtype=np.int64)
    return RVal(memory.host_address(root) + nbytes, ptr.batched, RAW_ADDRESSES)


def _select_buffers(op: Operation, state: ProgramState, cond: RVal, a: RVal, b: RVal) -> RVal:
    if not cond.batched and cond.data.ndim == 0:
        return a if bool(cond.data) else b
    if cond.data.ndim == 1 and op.operands[0].shape == ():
        raise NeedSerial  # programs pick different buffers: fine one program at a time
    memory = state.interp.memory
    assert a.buffer is not None and b.buffer is not None  # both are pointers
    names = f"'{memory[a.buffer].name}' and '{memory[b.buffer].name}'"
    msg = f"select mixes pointers into different buffers ({names}) lane by lane"
    raise state.interp.error(op, state, msg)


# ---------------------------------------------------------------- casts


@semantics(BitcastOp)
def _bitcast(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """Reinterpret the bits (bf16 is stored as uint16, so it just works)."""
    dst = element_type(op.results[0].type)
    assert isinstance(dst, ScalarType)
    return RVal(np.asarray(x.data).view(dst.numpy), x.batched)


# ---------------------------------------------------------------- constants


@semantics(ConstantOp)
def _constant(op: Operation, state: ProgramState) -> RVal:
    """A scalar, or a block filled with one value (cached: values are immutable)."""
    cached = state.interp.cache.get(op)
    if cached is not None:
        return cached
    t = op.results[0].type
    elem = element_type(t)
    assert isinstance(elem, ScalarType)
    value = scalar_constant(op.attrs["value"], elem)
    rval = RVal(np.full(op.results[0].shape, value, dtype=value.dtype), False)
    state.interp.cache[op] = rval
    return rval


# ---------------------------------------------------------------- casts, pointers


@semantics(CastOp)
def _cast(op: Operation, state: ProgramState, x: RVal) -> RVal:
    """Value conversion (see :func:`~minitriton.emulator.values.cast_values`)."""
    src = element_type(op.operands[0].type)
    dst = element_type(op.results[0].type)
    if isinstance(src, PointerType) and isinstance(dst, PointerType):
        return _cast_ptr(state, x, src, dst)
    if isinstance(src, PointerType):
        assert isinstance(dst, ScalarType)
        if x.buffer == RAW_ADDRESSES:
            return RVal(np.asarray(cast_values(x.data, ScalarType("i64"), dst)), x.batched)
        buf = state.interp.memory[x.buffer or 0]
        nbytes = np.multiply(x.data, src.pointee.numpy.itemsize, dtype=np.int64)
        address = buf.base_address + nbytes
        return RVal(cast_values(address, ScalarType("i64"), dst), x.batched)
    if isinstance(dst, PointerType):
        assert isinstance(src, ScalarType)
        return _int_to_ptr(op, state, x, src, dst)
    if op.attrs.get("rounding") == "rtz":
        return RVal(cast_toward_zero(np.asarray(x.data), src, dst), x.batched)
    return RVal(np.asarray(cast_values(x.data, src, dst)), x.batched)


def _cast_ptr(state: ProgramState, x: RVal, src: PointerType, dst: PointerType) -> RVal:
    # Same memory seen through another element type: offsets scale by the size ratio.
    if x.buffer == RAW_ADDRESSES:
        return x  # raw byte addresses do not depend on the element type
    memory = state.interp.memory
    buffer = memory.view(x.buffer or 0, dst.pointee)
    nbytes = np.multiply(x.data, src.pointee.numpy.itemsize, dtype=np.int64)
    return RVal(nbytes // dst.pointee.numpy.itemsize, x.batched, buffer)


def _int_to_ptr(
    op: Operation, state: ProgramState, x: RVal, src: ScalarType, dst: PointerType
) -> RVal:
    """An integer address as a pointer into the array that holds it (see ``Memory.resolve``).

    An address no array holds keeps its raw value (:data:`RAW_ADDRESSES`) until a
    memory op uses it: kernels cast integers to pointers they never dereference.
    """
    memory = state.interp.memory
    address = np.asarray(cast_values(x.data, src, ScalarType("i64")))
    if address.size == 0:
        return RVal(address, x.batched, memory.view(0, dst.pointee) if memory.buffers else None)
    return resolve_addresses(op, state, RVal(address, x.batched), dst.pointee, None, lazy=True)


def resolve_addresses(
    op: Operation,
    state: ProgramState,
    addresses: RVal,
    pointee: ScalarType,
    enabled: RVal | None,
    lazy: bool = False,
) -> RVal:
    """Byte addresses as offsets into the one array that holds them (on the enabled lanes).

    ``lazy`` (a cast) keeps the raw addresses when no single array holds them;
    otherwise (a load, store or atomic about to use them) that is a located error.
    """
    memory = state.interp.memory
    address, on = addresses.data, None
    batched = addresses.batched
    if enabled is not None:
        shape = np.broadcast_shapes(address.shape, enabled.data.shape)
        address, on = np.broadcast_to(address, shape), np.broadcast_to(enabled.data, shape)
        batched = batched or enabled.batched
    used = address if on is None else address[on]
    if used.size == 0:  # no lane is enabled: any offset will do
        buffer = memory.view(0, pointee) if memory.buffers else None
        return RVal(np.zeros(address.shape, np.int64), batched, buffer)
    found = memory.resolve(int(used.flat[0]))
    problem = _address_problem(memory, used, found, pointee)
    if problem is not None:
        if lazy:
            state.interp.raw_pointers = True  # memory ops resolve pointers from now on
            return RVal(address, batched, RAW_ADDRESSES)
        message, details, spans_arrays = problem
        if batched and spans_arrays:
            raise NeedSerial  # programs point into different arrays: one program at a time
        raise state.interp.error(op, state, message, details)
    assert found is not None
    root, start = found
    offsets = (address - start) // pointee.numpy.itemsize
    if on is not None:
        offsets = np.where(on, offsets, 0)
    return RVal(offsets, batched, memory.view(root, pointee))


def _address_problem(
    memory: Memory, used: np.ndarray, found: tuple[int, int] | None, pointee: ScalarType
) -> tuple[str, list[str], bool] | None:
    """Why the addresses ``used`` are not elements of one array (and whether they span
    several), or None."""
    first = int(used.flat[0])
    if found is None:
        return (
            f"the address {first:#x} cast to a pointer is not inside any array the emulator "
            "can see",
            ["an address must lie inside an array argument of the launch, or inside a NumPy "
             "array or torch CPU tensor that is still alive",
             "keep the arrays whose data_ptr() you pass alive (in a variable) until the "
             "launch returns"],
            False,
        )  # fmt: skip
    root, start = found
    inside = (used >= start) & (used < start + memory[root].flat.nbytes)
    if not np.all(inside):
        other = int(used[~inside].flat[0])
        return (
            f"a block of addresses cast to pointers points into more than one array "
            f"({first:#x} is in '{memory[root].name}', {other:#x} is not)",
            ["a block of pointers must point into one array; cast each array's address apart"],
            True,
        )
    itemsize = pointee.numpy.itemsize
    if np.any((used - start) % itemsize):
        return (
            f"an address cast to a pointer to {pointee!r} is not a multiple of {itemsize} "
            f"bytes from the start of '{memory[root].name}'",
            [],
            False,
        )
    return None


@semantics(InlineAsmOp)
def _inline_asm(op: Operation, state: ProgramState, *xs: RVal) -> list[RVal]:
    """Inline PTX, run by the emulator's PTX evaluator (:mod:`minitriton.emulator.ptx`).

    Triton's interpreter cannot run it; an instruction the evaluator does not
    know is a located error that names it.
    """
    batched = any(x.batched for x in xs)
    types = [element_type(v.type) for v in [*op.operands, *op.results]]
    if not all(isinstance(t, ScalarType) for t in types):
        raise state.interp.error(
            op, state, "the emulator cannot run inline PTX on pointers",
            help="load and store with tl.load / tl.store around tl.inline_asm_elementwise",
        )  # fmt: skip
    args = [(x.rows(state.size) if batched else x.data, t) for x, t in zip(xs, types)]
    try:
        blocks = ptx.run_elementwise(
            op.attrs["asm"], op.attrs["constraints"], int(op.attrs.get("pack", 1)),
            args, types[len(xs):], rows=state.size if batched else 1,  # type: ignore[arg-type]
        )  # fmt: skip
    except ptx.PtxError as e:
        raise state.interp.error(op, state, f"inline PTX: {e.message}", help=e.help) from None
    return [RVal(b, batched) for b in blocks]
