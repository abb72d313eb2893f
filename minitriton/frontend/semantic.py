"""Semantic operations on frontend values: casts, broadcasting, arithmetic.

The frontend has two kinds of values. *Compile-time* values are plain
Python objects (``int``, ``float``, ``bool``, ``None``, ``str``, dtypes,
tuples). *Run-time* values are :class:`Tensor` objects wrapping an IR
:class:`~minitriton.ir.core.Value` (a scalar or a block). The functions here
take a :class:`~minitriton.frontend.builder.Builder` (whose ``loc`` locates
both the ops they create and their diagnostics), make types explicit with
``arith.cast``, ``tt.splat``, ``tt.expand_dims`` and ``tt.broadcast``, and
follow the numbered promotion rules of :mod:`minitriton.frontend.promotion`.
"""

from __future__ import annotations

from typing import Any

from minitriton.diagnostics import error
from minitriton.frontend import promotion as P
from minitriton.frontend.builder import Builder
from minitriton.ir import ops
from minitriton.ir import types as T
from minitriton.ir.core import Value

MAX_NUMEL = 2**20  # tl.TRITON_MAX_TENSOR_NUMEL


class Tensor:
    """A run-time value: an IR value and its type (scalar, pointer or block)."""

    def __init__(self, handle: Value) -> None:
        self.handle = handle

    @property
    def type(self) -> T.Type:
        """The IR type."""
        return self.handle.type

    @property
    def dtype(self) -> T.ScalarType | T.PointerType:
        """The element type (``tl.float32``, a pointer type ...)."""
        return T.element_type(self.type)

    @property
    def shape(self) -> tuple[int, ...]:
        """The block shape, ``()`` for scalars."""
        return T.shape_of(self.type)

    @property
    def is_block(self) -> bool:
        """True for blocks."""
        return isinstance(self.type, T.BlockType)

    def __repr__(self) -> str:
        return f"Tensor({self.type})"


class Shape(tuple):
    """A block's shape as a kernel reads it (``x.shape``).

    A tuple of ints that also equals the list of the same sizes, since
    Triton's shapes are lists: ``tl.static_assert(x.shape == [N])`` and
    ``x.shape == (N,)`` both hold.
    """

    def __eq__(self, other: object) -> bool:
        return tuple.__eq__(self, tuple(other) if isinstance(other, list) else other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = tuple.__hash__


def scalar_dtype(x: Tensor) -> T.ScalarType:
    """``x``'s element type, where the caller has checked that ``x`` is no pointer."""
    dtype = x.dtype
    assert isinstance(dtype, T.ScalarType), dtype
    return dtype


def pointee_of(x: Tensor) -> T.ScalarType:
    """The type ``x`` points to, where the caller has checked that ``x`` is a pointer."""
    dtype = x.dtype
    assert isinstance(dtype, T.PointerType), dtype
    return dtype.pointee


class Aggregate:
    """A compile-time structure whose fields are run-time values (a block pointer).

    The lowerer carries an aggregate through ``scf.for``/``scf.while`` iter
    args, ``scf.if`` results and helper calls by *flattening* it to its
    run-time fields (:meth:`fields`, always :class:`Tensor` values) and
    *rebuilding* it from the corresponding block arguments or op results
    (:meth:`with_fields`); everything else about it is compile-time and
    must be the same on both sides (:meth:`static_key`).
    """

    #: What a diagnostic calls this kind of value.
    kind = "aggregate"

    def fields(self) -> list[Tensor]:
        """The run-time fields, in a fixed order."""
        raise NotImplementedError

    def field_names(self) -> list[str]:
        """A name for each field (suffixes for the IR's value names)."""
        return [str(i) for i in range(len(self.fields()))]

    def with_fields(self, fields: list[Tensor]) -> Aggregate:
        """A copy of this aggregate whose run-time fields are ``fields``."""
        raise NotImplementedError

    def static_key(self) -> tuple[Any, ...]:
        """The compile-time part: equal keys and field types mean the same type."""
        raise NotImplementedError

    def mangle(self) -> str:
        """The aggregate's type in a specialized helper's name."""
        raise NotImplementedError

    def describe(self) -> str:
        """How the value reads in a diagnostic."""
        return self.kind


def describe(x: object) -> str:
    """How a value reads in a diagnostic: in the kernel's terms, never a Python repr."""
    if isinstance(x, Tensor):
        return str(x.type)
    if isinstance(x, Aggregate):
        return x.describe()
    if isinstance(x, T.ScalarType):
        return f"dtype {x!r}"
    if isinstance(x, (T.PointerType, T.BlockType)):
        return f"the type {x!r}"
    if x is None or isinstance(x, (bool, int, float, str)):
        return _describe_literal(x)
    if isinstance(x, (tuple, list)):
        return _describe_sequence(x)
    return _describe_object(x)


def _describe_literal(x: object) -> str:
    if x is None:
        return "None"
    if isinstance(x, int) and not isinstance(x, bool) and abs(x) >= 10**30:
        return f"int with {len(str(abs(x)))} digits"
    text = repr(x)
    if len(text) > 40:
        text = text[:30] + "..." + text[-5:]
    return f"{type(x).__name__} {text}"


def _describe_sequence(x: tuple[Any, ...] | list[Any]) -> str:
    kind = type(x).__name__ if type(x) in (tuple, list) else "tuple"
    plain = all(v is None or type(v) in (bool, int, float, str) for v in x)
    if plain and len(repr(tuple(x))) <= 40:
        return f"{kind} {tuple(x) if kind == 'tuple' else list(x)!r}"
    if len(x) > 4:
        return f"a {kind} of {len(x)} values"
    return f"a {kind} ({', '.join(describe(v) for v in x)})"


def _describe_object(x: object) -> str:
    """Modules, functions and the frontend's own objects, by name."""
    import types

    from minitriton.frontend.source import JITBase
    from minitriton.language.core import builtin_name

    own = getattr(type(x), "describe", None)
    if own is not None and type(x).__module__.startswith("minitriton."):
        return str(own(x))
    if isinstance(x, types.ModuleType):
        return (
            "the module 'tl'"
            if x.__name__.startswith("minitriton.language")
            else f"the module '{x.__name__}'"
        )
    name = builtin_name(x)
    if name is not None:
        return f"the function tl.{name}"
    if isinstance(x, JITBase):
        return f"the @jit function '{x.source.name}'"
    if isinstance(x, type):
        return f"the class '{x.__name__}'"
    if callable(x):
        return f"the Python function '{getattr(x, '__name__', type(x).__name__)}'"
    return f"a Python value of type '{type(x).__name__}'"


# ---------------------------------------------------------------- shapes


def check_block_shape(b: Builder, shape: tuple[int, ...]) -> None:
    """Triton's rule: every dimension a power of two, at most 2^20 elements."""
    numel = 1
    for i, d in enumerate(shape):
        if not isinstance(d, int) or d <= 0 or d & (d - 1):
            raise error(
                b.loc,
                f"block shape {list(shape)}: dimension {d} is not a power of two",
                triton=f"Shape element {i} must be a power of 2",
            )
        numel *= d
    if numel > MAX_NUMEL:
        raise error(b.loc, f"block shape {list(shape)} has {numel} elements, more than 2^20")


def broadcast_shapes(b: Builder, a: tuple[int, ...], c: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's broadcasting of two shapes (a located error if incompatible)."""
    rank = max(len(a), len(c))
    a2 = (1,) * (rank - len(a)) + a
    c2 = (1,) * (rank - len(c)) + c
    out = []
    for x, y in zip(a2, c2):
        if x != y and 1 not in (x, y):
            raise error(b.loc, f"shapes {list(a)} and {list(c)} cannot be broadcast together")
        out.append(max(x, y))
    numel = 1
    for d in out:
        numel *= d
    if numel > MAX_NUMEL:
        raise error(
            b.loc,
            f"broadcasting shapes {list(a)} and {list(c)} makes a block of {numel} elements;"
            " a block has at most 2^20 (1048576)",
            help="use smaller blocks and loop over the rest",
        )
    return tuple(out)


def broadcast_to(b: Builder, x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Splat or broadcast ``x`` to ``shape`` (one-way NumPy rules)."""
    if x.shape == shape:
        return x
    if not x.is_block:
        return Tensor(b.value(ops.SplatOp, [x.handle], T.BlockType(shape, x.dtype)))
    if broadcast_shapes(b, x.shape, shape) != shape:
        raise error(b.loc, f"cannot broadcast {x.type} to shape {list(shape)}")
    while len(x.shape) < len(shape):
        x = expand_dims(b, x, 0)
    if x.shape == shape:
        return x
    return Tensor(b.value(ops.BroadcastOp, [x.handle], T.BlockType(shape, x.dtype)))


def broadcast_pair(b: Builder, x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """Broadcast two values to their common shape."""
    shape = broadcast_shapes(b, x.shape, y.shape)
    return broadcast_to(b, x, shape), broadcast_to(b, y, shape)


def expand_dims(b: Builder, x: Tensor, axis: int) -> Tensor:
    """Insert a dimension of size 1 at ``axis``."""
    if not x.is_block:
        return Tensor(b.value(ops.SplatOp, [x.handle], T.BlockType((1,), x.dtype)))
    rank = len(x.shape) + 1
    if not -rank <= axis < rank:
        raise error(b.loc, f"invalid axis {axis}. Expected {-rank} <= axis < {rank} (expand_dims "
                           f"of {x.type})")  # fmt: skip
    axis %= rank
    shape = x.shape[:axis] + (1,) + x.shape[axis:]
    result_type = T.BlockType(shape, x.dtype)
    return Tensor(b.value(ops.ExpandDimsOp, [x.handle], result_type, {"axis": axis}))


def reshape(b: Builder, x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Reshape keeping the row-major order."""
    numel = 1
    for d in shape:
        numel *= d
    if numel != (x.type.numel if isinstance(x.type, T.BlockType) else 1):
        raise error(b.loc, f"cannot reshape {x.type} to shape {list(shape)}")
    if x.shape == shape:
        return x
    if not shape:
        raise error(b.loc, "reshaping a block to a scalar is not supported; use tl.sum")
    check_block_shape(b, shape)
    if not x.is_block:
        return broadcast_to(b, x, shape)
    return Tensor(b.value(ops.ReshapeOp, [x.handle], T.BlockType(shape, x.dtype)))


def permute(b: Builder, x: Tensor, order: tuple[int, ...]) -> Tensor:
    """Permute the dimensions of a block."""
    if sorted(order) != list(range(len(x.shape))):
        raise error(b.loc, f"{list(order)} is not a permutation of the dimensions of {x.type}")
    if list(order) == sorted(order):
        return x
    shape = tuple(x.shape[i] for i in order)
    attrs = {"order": list(order)}
    return Tensor(b.value(ops.TransOp, [x.handle], T.BlockType(shape, x.dtype), attrs))


# ---------------------------------------------------------------- conversion


def constant(b: Builder, value: Any, t: T.Type) -> Tensor:
    """A constant of type ``t`` holding the Python scalar ``value``."""
    if not P.is_py_scalar(value):
        raise error(b.loc, f"cannot use {describe(value)} as a run-time value")
    if isinstance(T.element_type(t), T.PointerType):
        raise error(b.loc, "cannot make a pointer constant")
    return Tensor(b.constant(value, t))


def to_tensor(b: Builder, x: Any) -> Tensor:
    """A run-time value for ``x`` (Python scalars get their rule-3 type)."""
    if isinstance(x, Tensor):
        return x
    if not P.is_py_scalar(x):
        raise error(b.loc, f"cannot use {describe(x)} as a run-time value")
    return constant(b, x, _literal_type(b, x))


def _literal_type(b: Builder, x: Any) -> T.ScalarType:
    try:
        return P.literal_type(x)
    except P.PromotionError as e:
        raise error(b.loc, str(e)) from None


def cast(b: Builder, x: Any, dtype: T.ScalarType | T.PointerType) -> Tensor:
    """Convert ``x`` to element type ``dtype`` (``x.to(dtype)``)."""
    if not isinstance(x, Tensor):
        return constant(b, x, dtype) if isinstance(dtype, T.ScalarType) else to_tensor(b, x)
    if x.dtype == dtype:
        return x
    if isinstance(x.dtype, T.PointerType) and isinstance(dtype, T.ScalarType) and dtype.is_int():
        return _pointer_to_int(b, x, dtype)
    if dtype == T.I1:
        # Triton casts to bool with `!= 0`, not by truncation.
        return compare(b, "!=", x, 0)
    ptr_change = isinstance(x.dtype, T.PointerType) != isinstance(dtype, T.PointerType)
    if ptr_change and not (dtype.is_int() or x.dtype.is_int()):
        raise error(
            b.loc,
            f"cannot cast {x.type} to {dtype!r}",
            help="only integers (addresses) cast to pointers, and pointers to integers",
        )
    return Tensor(b.value(ops.CastOp, [x.handle], T.with_element(x.type, dtype)))


def _pointer_to_int(b: Builder, x: Tensor, dtype: T.ScalarType) -> Tensor:
    """Triton's pointer -> integer casts: the address as a 64-bit integer, or ``!= 0``."""
    if dtype.bitwidth == 64:
        return Tensor(b.value(ops.CastOp, [x.handle], T.with_element(x.type, dtype)))
    if dtype == T.I1:
        return compare(b, "!=", cast(b, x, T.I64), 0)
    raise error(
        b.loc,
        f"cannot cast {x.type} to {dtype!r}: a pointer casts to a 64-bit integer (or to int1)",
        help="cast to tl.int64, then to the type you need",
    )


def _is_pointer_or_64_bit_int(t: T.ScalarType | T.PointerType) -> bool:
    return isinstance(t, T.PointerType) or (t.is_int() and t.bitwidth == 64)


def bitcast(b: Builder, x: Any, dtype: T.ScalarType | T.PointerType) -> Tensor:
    """Reinterpret the bits of ``x`` as ``dtype`` (same width)."""
    x = to_tensor(b, x)
    if x.dtype == dtype:
        return x
    src = x.dtype
    if isinstance(src, T.PointerType) or isinstance(dtype, T.PointerType):
        # A pointer is 64 bits: its bits are an int64's (Triton's bitcast=True to a pointer).
        if all(_is_pointer_or_64_bit_int(t) for t in (src, dtype)):
            return cast(b, x, dtype)
        raise error(b.loc, f"cannot bitcast {src!r} to {dtype!r}: a pointer has 64 bits")
    if not (isinstance(src, T.ScalarType) and isinstance(dtype, T.ScalarType)):
        raise error(b.loc, f"cannot bitcast {src!r} to {dtype!r}: the widths differ")
    if src.bitwidth != dtype.bitwidth:
        raise error(b.loc, f"cannot bitcast {src!r} to {dtype!r}: the widths differ")
    return Tensor(b.value(ops.BitcastOp, [x.handle], T.with_element(x.type, dtype)))


def to_bool(b: Builder, x: Any) -> Tensor:
    """``x`` as int1: ``x != 0`` for numbers and pointers."""
    x = to_tensor(b, x)
    if x.dtype == T.I1:
        return x
    if isinstance(x.dtype, T.PointerType):
        return cast(b, x, T.I1)  # as in Triton: ``ptr != 0`` (``if dW:`` on an optional output)
    return compare(b, "!=", x, 0)


# ---------------------------------------------------------------- binary ops

_ARITH_OPS = {
    "+": ops.AddOp,
    "-": ops.SubOp,
    "*": ops.MulOp,
    "%": ops.RemOp,
    "&": ops.AndOp,
    "|": ops.OrOp,
    "^": ops.XorOp,
    "<<": ops.ShlOp,
    ">>": ops.ShrOp,
}
_CATEGORY = {"%": P.MOD, "&": P.BITWISE, "|": P.BITWISE, "^": P.BITWISE}
_CATEGORY |= {"<<": P.BITWISE, ">>": P.BITWISE, "/": P.TRUEDIV, "//": P.FLOORDIV}
CMP_PREDICATES = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


def _operand_type(b: Builder, x: Any) -> P.Operand:
    if isinstance(x, Tensor):
        if isinstance(x.dtype, T.PointerType):
            raise error(b.loc, f"this operation does not apply to pointers ({x.type})")
        return x.dtype
    if P.is_py_scalar(x):
        return x
    raise error(b.loc, f"cannot use {describe(x)} in an arithmetic expression")


def computation_type(b: Builder, x: Any, y: Any, category: str) -> T.ScalarType:
    """The promotion rules' type for ``x op y``, with a located error."""
    try:
        return P.computation_type(_operand_type(b, x), _operand_type(b, y), category)
    except P.PromotionError as e:
        raise error(b.loc, str(e)) from None


def promote_pair(b: Builder, x: Any, y: Any, category: str = P.ARITH) -> tuple[Tensor, Tensor]:
    """Cast both operands to their computation type and broadcast them."""
    t = computation_type(b, x, y, category)
    shape = broadcast_shapes(b, shape_of(x), shape_of(y))
    return convert(b, x, t, shape), convert(b, y, t, shape)


def shape_of(x: Any) -> tuple[int, ...]:
    """The shape of a block, () for a scalar or a Python number."""
    return x.shape if isinstance(x, Tensor) else ()


def convert(b: Builder, x: Any, t: T.ScalarType, shape: tuple[int, ...]) -> Tensor:
    """``x`` cast to ``t`` and broadcast to ``shape``; scalars become constants."""
    if not isinstance(x, Tensor):
        return constant(b, x, T.with_shape(t, shape))
    return broadcast_to(b, cast(b, x, t), shape)


def binary(b: Builder, op: str, x: Any, y: Any) -> Tensor:
    """``x op y`` for the arithmetic and bitwise operators (at least one run-time)."""
    if op in ("+", "-") and (_is_ptr(x) or _is_ptr(y)):
        return pointer_arith(b, op, x, y)
    if op == "/":
        return truediv(b, x, y)
    if op == "//":
        return floordiv(b, x, y)
    if op == "**":
        return power(b, x, y)
    if op not in _ARITH_OPS:
        raise error(b.loc, f"operator '{op}' is not supported on blocks")
    a, c = promote_pair(b, x, y, _CATEGORY.get(op, P.ARITH))
    if op == ">>" and _signed_shifted_as_unsigned(x, a):
        return shift_right_arithmetic(b, a, c)
    return Tensor(b.value(_ARITH_OPS[op], [a.handle, c.handle], a.type))


def _signed_shifted_as_unsigned(x: Any, promoted: Tensor) -> bool:
    """True when ``x >> y`` shifts a signed ``x`` in an unsigned promoted type (int8 >> uint8).

    Triton picks the shift by the left operand's own type, before promotion:
    arithmetic for a signed one. Only this case differs from shifting in the
    promoted type (an unsigned ``x`` promoted to a signed type is widened,
    so it is non-negative and both shifts agree).
    """
    return (
        isinstance(x, Tensor)
        and scalar_dtype(x).kind == "int"
        and scalar_dtype(promoted).kind == "uint"
    )


def shift_right_arithmetic(b: Builder, x: Tensor, n: Tensor) -> Tensor:
    """``x >> n`` copying the sign bit, for an unsigned ``x``: the shift on its bits as signed."""
    signed = T.ScalarType("i" + scalar_dtype(x).name[1:])
    shifted = binary(b, ">>", bitcast(b, x, signed), bitcast(b, n, signed))
    return bitcast(b, shifted, scalar_dtype(x))


def truediv(b: Builder, x: Any, y: Any) -> Tensor:
    """Rule 10: ``/`` computes in fp32 (fp64 if an operand is fp64)."""
    a, c = promote_pair(b, x, y, P.TRUEDIV)
    return Tensor(b.value(ops.DivOp, [a.handle, c.handle], a.type))


def floordiv(b: Builder, x: Any, y: Any) -> Tensor:
    """Rule 11: integer ``//`` (truncating, like C); floats are rejected."""
    a, c = promote_pair(b, x, y, P.FLOORDIV)
    return Tensor(b.value(ops.DivOp, [a.handle, c.handle], a.type))


def power(b: Builder, x: Any, y: Any) -> Tensor:
    """``x ** y`` on floats (``math.pow``)."""
    a, c = promote_pair(b, x, y)
    if not a.dtype.is_float():
        raise error(b.loc, f"'**' needs floating-point operands, got {a.dtype!r}")
    return Tensor(b.value(ops.PowOp, [a.handle, c.handle], a.type))


def minmax(b: Builder, kind: str, x: Any, y: Any) -> Tensor:
    """Rule 15: elementwise ``maximum``/``minimum``."""
    a, c = promote_pair(b, x, y)
    op = ops.MaxOp if kind == "max" else ops.MinOp
    return Tensor(b.value(op, [a.handle, c.handle], a.type))


def compare(b: Builder, op: str, x: Any, y: Any) -> Tensor:
    """Rule 13: compare in the promoted type; the result is int1."""
    if _is_ptr(x) or _is_ptr(y):
        a, c = _pointer_pair(b, x, y)
    else:
        a, c = promote_pair(b, x, y, P.COMPARE)
    pred = {"pred": CMP_PREDICATES[op]}
    return Tensor(b.value(ops.CmpOp, [a.handle, c.handle], T.with_element(a.type, T.I1), pred))


def _pointer_pair(b: Builder, x: Any, y: Any) -> tuple[Tensor, Tensor]:
    if not (isinstance(x, Tensor) and isinstance(y, Tensor)) or x.dtype != y.dtype:
        raise error(b.loc, f"cannot compare {describe(x)} with {describe(y)}")
    return broadcast_pair(b, x, y)


def _is_ptr(x: Any) -> bool:
    return isinstance(x, Tensor) and isinstance(x.dtype, T.PointerType)


def pointer_arith(b: Builder, op: str, x: Any, y: Any) -> Tensor:
    """Rule 14: ``ptr + int`` and ``ptr - int`` give ``tt.addptr``."""
    if _is_ptr(y) and op == "+":
        x, y = y, x
    if not _is_ptr(x) or _is_ptr(y):
        raise error(b.loc, f"unsupported pointer arithmetic: {describe(x)} {op} {describe(y)}")
    offset = to_tensor(b, y)
    if not isinstance(offset.dtype, T.ScalarType) or not offset.dtype.is_int():
        raise error(b.loc, f"pointer offsets must be integers, got {offset.type}")
    if op == "-":
        offset = Tensor(b.value(ops.NegOp, [offset.handle], offset.type))
    ptr, offset = broadcast_pair(b, x, offset)
    return Tensor(b.value(ops.AddPtrOp, [ptr.handle, offset.handle], ptr.type))


# ---------------------------------------------------------------- unary ops


def negate(b: Builder, x: Tensor) -> Tensor:
    """``-x``."""
    _operand_type(b, x)
    return Tensor(b.value(ops.NegOp, [x.handle], x.type))


def invert(b: Builder, x: Tensor) -> Tensor:
    """``~x`` (bitwise not, integers only)."""
    t = _operand_type(b, x)
    if not (isinstance(t, T.ScalarType) and t.is_int()):
        raise error(b.loc, f"'~' needs an integer operand, got {x.type}")
    return Tensor(b.value(ops.NotOp, [x.handle], x.type))


def logical_not(b: Builder, x: Tensor) -> Tensor:
    """``not x``: ``x == 0`` as int1."""
    flag = to_bool(b, x)
    return Tensor(b.value(ops.NotOp, [flag.handle], flag.type))


def logical(b: Builder, op: str, x: Any, y: Any) -> Tensor:
    """``x and y`` / ``x or y`` on run-time values: bitwise on int1."""
    a, c = broadcast_pair(b, to_bool(b, x), to_bool(b, y))
    cls = ops.AndOp if op == "and" else ops.OrOp
    return Tensor(b.value(cls, [a.handle, c.handle], a.type))


def where(b: Builder, cond: Any, x: Any, y: Any) -> Tensor:
    """Rule 15: ``x if cond else y`` elementwise, broadcasting all three."""
    c = to_bool(b, cond)
    if P.is_py_scalar(x) and P.is_py_scalar(y):
        # Two Python scalars: rule 3 types both, then the usual rules pick one.
        t = P.computation_type(_literal_type(b, x), _literal_type(b, y), P.ARITH)
        x = constant(b, x, t)
    if _is_ptr(x) or _is_ptr(y):
        a, d = _pointer_pair(b, x, y)
    else:
        a, d = promote_pair(b, x, y)
    shape = broadcast_shapes(b, c.shape, a.shape)
    c, a, d = (broadcast_to(b, v, shape) for v in (c, a, d))
    return Tensor(b.value(ops.SelectOp, [c.handle, a.handle, d.handle], a.type))
