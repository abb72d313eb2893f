"""Evaluate kernel expressions in the debugger: ``x``, ``offs[:8]``, ``tl.max(x, 0)``.

The expression is parsed by the frontend (``parse_expression``, so the
syntax is the kernel language's) and evaluated by a small NumPy evaluator
over the current values of one program. Why not compile it? The values
exist only at run time, for one program, and the debugger should answer
even about half-computed state; NumPy does that robustly.

What it understands: names of kernel variables and constexprs, numbers,
``+ - * / // % ** & | ^ << >> ~ not and or``, comparisons, ``a if c else b``,
indexing and slicing (``x[3]``, ``x[:, None]``), attributes ``.shape``,
``.dtype``, ``.T``, methods ``.sum() .max() .min() .mean() .any() .all()
.argmax() .argmin() .to(tl.float16)``, the ``tl`` functions listed in
:data:`TL_FUNCS` (``tl.load`` reads memory), and ``min max abs len int
float bool``. Integer ``//`` and ``%`` on blocks truncate toward zero as in
Triton; types otherwise follow NumPy's promotion, not Triton's.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from minitriton.diagnostics import CompileError, UserError
from minitriton.emulator.memory import Memory
from minitriton.emulator.ops.arith import truncating_div, truncating_rem
from minitriton.frontend import ast
from minitriton.frontend.parser import parse_expression


class ExprError(UserError, Exception):
    """An expression the debugger cannot evaluate (the message says why)."""


@dataclass(frozen=True)
class Pointer:
    """A pointer (or block of pointers): element offsets into one buffer."""

    memory: Memory
    buffer: int
    offsets: np.ndarray

    @property
    def name(self) -> str:
        """The parameter the buffer belongs to."""
        return self.memory[self.buffer].name

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the block of pointers."""
        return tuple(self.offsets.shape)

    def moved(self, offsets: Any) -> Pointer:
        """The pointer advanced to ``offsets``."""
        return Pointer(self.memory, self.buffer, np.asarray(offsets, dtype=np.int64))

    def load(self, mask: Any = None, other: Any = None) -> np.ndarray:
        """The values at these offsets (masked lanes give ``other`` or 0)."""
        buf = self.memory[self.buffer]
        offs = self.offsets
        enabled = (
            np.ones(offs.shape, dtype=bool) if mask is None else np.broadcast_to(mask, offs.shape)
        )
        bad = enabled & ((offs < 0) | (offs >= buf.size))
        if bad.any():
            first = int(offs[bad].reshape(-1)[0])
            raise ExprError(
                f"out-of-bounds load from '{buf.name}' ({buf.size} elements) at offset {first}"
            )
        from minitriton.emulator.values import to_compute

        values = to_compute(buf.flat[np.where(enabled, offs, 0)], buf.dtype)
        fill = 0 if other is None else other
        return np.where(enabled, values, fill).astype(values.dtype)


@dataclass
class Scope:
    """What names mean in an expression: variables, constexprs and the program id."""

    values: dict[str, Any]
    pid: tuple[int, int, int]
    grid: tuple[int, int, int]
    memory: Memory


def evaluate(text: str, scope: Scope) -> Any:
    """The value of the kernel expression ``text`` in ``scope``."""
    try:
        node = parse_expression(text, "<debugger>")
    except CompileError as err:
        raise ExprError(err.diagnostics[0].message) from None
    return _Eval(scope).eval(node)


def check_syntax(text: str) -> None:
    """Raise :class:`ExprError` if ``text`` is not an expression."""
    try:
        parse_expression(text, "<debugger>")
    except CompileError as err:
        raise ExprError(err.diagnostics[0].message) from None


# ---------------------------------------------------------------- operators

_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "**": operator.pow, "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "<<": operator.lshift, ">>": operator.rshift, "@": operator.matmul,
}  # fmt: skip
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
}  # fmt: skip


def _is_block(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.ndim > 0


def _integer_blocks(a: Any, b: Any) -> bool:
    # Triton: integer // and % on tensors truncate toward zero; Python scalars floor.
    if not (_is_block(a) or _is_block(b)):
        return False
    return np.asarray(a).dtype.kind in "iu" and np.asarray(b).dtype.kind in "iu"


def _floordiv(a: Any, b: Any) -> Any:
    if _integer_blocks(a, b):
        a2, b2 = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        return truncating_div(a2, b2.astype(a2.dtype))
    return a // b


def _mod(a: Any, b: Any) -> Any:
    if _integer_blocks(a, b):
        a2, b2 = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        return truncating_rem(a2, b2.astype(a2.dtype))
    return a % b


_BINARY["//"] = _floordiv
_BINARY["%"] = _mod


# ---------------------------------------------------------------- tl functions

_DTYPES = {
    "int1": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "float16": np.float16, "bfloat16": np.float32, "float32": np.float32, "float64": np.float64,
    "fp16": np.float16, "bf16": np.float32, "fp32": np.float32, "fp64": np.float64,
}  # fmt: skip


def _reduce(fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(x: Any, axis: Any = None, keep_dims: bool = False, **_: Any) -> Any:
        return fn(np.asarray(x), axis=axis, keepdims=keep_dims)

    return run


def _arg_reduce(fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(x: Any, axis: Any = None, **_: Any) -> Any:
        return fn(np.asarray(x), axis=axis)

    return run


def _load(ptr: Any, mask: Any = None, other: Any = None, **_: Any) -> Any:
    if not isinstance(ptr, Pointer):
        raise ExprError("tl.load needs a pointer")
    return ptr.load(mask, other)


def _cdiv(x: Any, y: Any) -> Any:
    return _floordiv(x + y - 1, y)


#: The ``tl`` functions an expression may call, as NumPy functions.
TL_FUNCS: dict[str, Callable[..., Any]] = {
    "sum": _reduce(np.sum), "max": _reduce(np.max), "min": _reduce(np.min),
    "argmax": _arg_reduce(np.argmax), "argmin": _arg_reduce(np.argmin),
    "cumsum": lambda x, axis=0, **_: np.cumsum(x, axis=axis),
    "cumprod": lambda x, axis=0, **_: np.cumprod(x, axis=axis),
    "where": lambda c, x, y: np.where(c, x, y),
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "abs": np.abs, "sin": np.sin, "cos": np.cos,
    "floor": np.floor, "ceil": np.ceil,
    "maximum": lambda x, y, **_: np.maximum(x, y), "minimum": lambda x, y, **_: np.minimum(x, y),
    "clamp": lambda x, lo, hi, **_: np.clip(x, lo, hi),
    "sigmoid": lambda x: 1 / (1 + np.exp(-np.asarray(x))),
    "fdiv": lambda x, y, **_: np.true_divide(x, y), "div_rn": np.true_divide, "cdiv": _cdiv,
    "arange": lambda start, end: np.arange(start, end, dtype=np.int32),
    "zeros": lambda shape, dtype: np.zeros(shape, dtype=dtype),
    "full": lambda shape, value, dtype: np.full(shape, value, dtype=dtype),
    "zeros_like": np.zeros_like,
    "trans": lambda x, *dims: np.transpose(x, dims or None),
    "reshape": lambda x, *shape, **_: np.reshape(x, shape[0] if len(shape) == 1 else shape),
    "broadcast_to": lambda x, *shape: np.broadcast_to(x, shape[0] if len(shape) == 1 else shape),
    "expand_dims": lambda x, axis: np.expand_dims(x, axis),
    "ravel": np.ravel, "dot": lambda a, b, **_: np.matmul(a, b), "load": _load,
}  # fmt: skip
_BUILTINS: dict[str, Callable[..., Any]] = {
    "min": min, "max": max, "abs": abs, "len": len, "int": int, "float": float, "bool": bool,
}  # fmt: skip
_METHODS = {"sum", "max", "min", "mean", "any", "all", "argmax", "argmin", "std", "reshape",
            "ravel", "flatten", "tolist", "item", "nonzero", "cumsum", "astype"}  # fmt: skip


class _DType:
    """``tl.float16`` and friends, usable with ``.to()``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.numpy = np.dtype(_DTYPES[name])

    def __repr__(self) -> str:
        return f"tl.{self.name}"


class _TL:
    """The ``tl`` namespace inside expressions."""


# ---------------------------------------------------------------- the evaluator


class _Eval:
    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    def eval(self, node: ast.Expr) -> Any:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise ExprError(f"the debugger cannot evaluate {type(node).__name__} expressions")
        return method(node)

    def _Name(self, node: ast.Name) -> Any:  # noqa: N802 - dispatch on AST class names
        values = self.scope.values
        if node.id in values:
            return values[node.id]
        if node.id in ("tl", "triton"):
            return _TL()
        if node.id in _BUILTINS:
            return _BUILTINS[node.id]
        known = ", ".join(sorted(values)) or "none yet"
        raise ExprError(f"name '{node.id}' is not defined here (variables: {known})")

    def _Constant(self, node: ast.Constant) -> Any:  # noqa: N802
        return node.value

    def _Tuple(self, node: ast.Tuple) -> Any:  # noqa: N802
        return tuple(self.eval(e) for e in node.elts)

    def _List(self, node: ast.List) -> Any:  # noqa: N802
        return [self.eval(e) for e in node.elts]

    def _Attribute(self, node: ast.Attribute) -> Any:  # noqa: N802
        base = self.eval(node.value)
        if isinstance(base, _TL):
            return self._tl_attr(node.attr)
        if isinstance(base, Pointer) and node.attr in ("shape", "dtype"):
            return (
                base.shape
                if node.attr == "shape"
                else f"pointer<{base.memory[base.buffer].dtype!r}>"
            )
        if isinstance(base, np.ndarray) and node.attr in ("shape", "dtype", "T", "ndim", "size"):
            return getattr(base, node.attr)
        if isinstance(base, (np.ndarray, np.generic)) and node.attr in _METHODS | {"to"}:
            return _Method(base, node.attr)
        raise ExprError(f"no attribute '{node.attr}' here")

    def _tl_attr(self, name: str) -> Any:
        if name in _DTYPES:
            return _DType(name)
        if name == "program_id":
            return lambda axis: np.int32(self.scope.pid[int(axis)])
        if name == "num_programs":
            return lambda axis: np.int32(self.scope.grid[int(axis)])
        if name in TL_FUNCS:
            return TL_FUNCS[name]
        raise ExprError(f"tl.{name} is not available in debugger expressions")

    def _Call(self, node: ast.Call) -> Any:  # noqa: N802
        fn = self.eval(node.func)
        args = [self.eval(a) for a in node.args]
        kwargs = {k.name: self.eval(k.value) for k in node.keywords}
        if not callable(fn):
            raise ExprError("that is not a function")
        try:
            return fn(*args, **kwargs)
        except ExprError:
            raise
        except Exception as exc:
            raise ExprError(f"{type(exc).__name__}: {exc}") from None

    def _BinOp(self, node: ast.BinOp) -> Any:  # noqa: N802
        a, b = self.eval(node.left), self.eval(node.right)
        if isinstance(a, Pointer) or isinstance(b, Pointer):
            return _pointer_arith(node.op, a, b)
        _check_result_size(node.op, a, b)
        return _apply(_BINARY[node.op], a, b)

    def _UnaryOp(self, node: ast.UnaryOp) -> Any:  # noqa: N802
        x = self.eval(node.operand)
        if node.op == "not":
            return np.logical_not(x) if _is_block(x) else not x
        unary: dict[str, Callable[[Any], Any]] = {
            "-": operator.neg,
            "+": operator.pos,
            "~": operator.invert,
        }
        return _apply(unary[node.op], x)

    def _BoolOp(self, node: ast.BoolOp) -> Any:  # noqa: N802
        values = [self.eval(v) for v in node.values]
        if any(_is_block(v) for v in values):
            fn = np.logical_and if node.op == "and" else np.logical_or
            out = values[0]
            for v in values[1:]:
                out = fn(out, v)
            return out
        out = values[0]
        for v in values[1:]:
            out = (out and v) if node.op == "and" else (out or v)
        return out

    def _Compare(self, node: ast.Compare) -> Any:  # noqa: N802
        left = self.eval(node.left)
        result: Any = True
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp)
            value = _apply(_COMPARE[op], left, right)
            result = value if result is True else np.logical_and(result, value)
            left = right
        return result

    def _IfExp(self, node: ast.IfExp) -> Any:  # noqa: N802
        test = self.eval(node.test)
        if _is_block(test):
            return np.where(test, self.eval(node.body), self.eval(node.orelse))
        return self.eval(node.body) if test else self.eval(node.orelse)

    def _Subscript(self, node: ast.Subscript) -> Any:  # noqa: N802
        base = self.eval(node.value)
        index = tuple(self._index(i) for i in node.index)
        key = index[0] if len(index) == 1 else index
        try:
            if isinstance(base, Pointer):
                return base.moved(base.offsets[key])
            return base[key]
        except (IndexError, TypeError) as exc:
            raise ExprError(str(exc)) from None

    def _index(self, node: ast.Expr) -> Any:
        if isinstance(node, ast.Slice):
            parts = (node.lower, node.upper, node.step)
            return slice(*(None if p is None else int(self.eval(p)) for p in parts))
        value = self.eval(node)
        if isinstance(value, np.ndarray) and value.ndim > 0:
            return value
        return None if value is None else int(value)


class _Method:
    """A bound method of a NumPy value, with Triton's ``.to(dtype)``."""

    def __init__(self, value: Any, name: str) -> None:
        self.value = np.asarray(value)
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.name == "to":
            dtype = args[0] if args else kwargs.get("dtype")
            if not isinstance(dtype, _DType):
                raise ExprError(".to() takes a tl dtype, e.g. x.to(tl.float32)")
            return self.value.astype(dtype.numpy)
        kwargs = {("axis" if k == "dim" else k): v for k, v in kwargs.items()}
        return getattr(self.value, self.name)(*args, **kwargs)


#: The largest results the debugger computes: integers of this many bits,
#: strings, tuples and blocks of this many elements (``p 2**2**40`` or
#: ``p 'a' * 10**9`` would otherwise hang or flood the terminal).
MAX_INT_BITS = 4096
MAX_ELEMENTS = 2**22


def _check_result_size(op: str, a: Any, b: Any) -> None:
    """Refuse an operation whose result would be too large to compute or show."""
    if type(a) is int and type(b) is int:
        _check_int_size(op, a, b)
    for seq, n in ((a, b), (b, a)):
        repeated = op == "*" and isinstance(seq, (str, tuple, list)) and type(n) is int
        if repeated and len(seq) * n > MAX_ELEMENTS:
            raise ExprError(f"the result would have {len(seq) * n} elements; "
                            f"the debugger shows at most {MAX_ELEMENTS}")  # fmt: skip
    if _is_block(a) or _is_block(b):
        try:
            shape = np.broadcast_shapes(np.shape(a), np.shape(b))
        except ValueError:
            return  # NumPy's own error says why
        if int(np.prod(shape, dtype=object)) > MAX_ELEMENTS:
            raise ExprError(f"the result would be a block of shape {list(shape)}; "
                            f"the debugger computes at most {MAX_ELEMENTS} elements")  # fmt: skip


def _check_int_size(op: str, a: int, b: int) -> None:
    bits = 0
    if op == "**" and b > 0 and abs(a) > 1:
        bits = b * (abs(a).bit_length() - 1)
    elif op == "<<" and b > 0:
        bits = a.bit_length() + b
    if bits > MAX_INT_BITS:
        raise ExprError(f"the result would have about {bits} bits; "
                        f"the debugger computes integers up to {MAX_INT_BITS} bits")  # fmt: skip


def _apply(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        with np.errstate(all="ignore"):
            return fn(*args)
    except Exception as exc:
        raise ExprError(f"{type(exc).__name__}: {exc}") from None


def _pointer_arith(op: str, a: Any, b: Any) -> Any:
    if op == "+" and isinstance(a, Pointer) and not isinstance(b, Pointer):
        return a.moved(a.offsets + np.asarray(b, dtype=np.int64))
    if op == "+" and isinstance(b, Pointer) and not isinstance(a, Pointer):
        return b.moved(b.offsets + np.asarray(a, dtype=np.int64))
    if op == "-" and isinstance(a, Pointer) and not isinstance(b, Pointer):
        return a.moved(a.offsets - np.asarray(b, dtype=np.int64))
    if op == "-" and isinstance(a, Pointer) and isinstance(b, Pointer):
        return a.offsets - b.offsets
    raise ExprError(f"pointers do not support '{op}' here")
