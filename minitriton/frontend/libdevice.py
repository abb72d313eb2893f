"""Lowering of libdevice's functions (:mod:`minitriton.language.libdevice`).

Most become one ``math.*`` op of the same name (``libdevice.tanh(x)`` ->
``math.tanh``), which the emulator computes with NumPy and the GPU backend
lowers to the libdevice call. The rest are built from existing ops, so they
need no new semantics: ``isnan(x)`` is ``x != x``, ``fdim`` is
``max(x - y, 0)``, ``saturatef`` is a clamp to ``[0, 1]``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from minitriton.frontend import semantic as S
from minitriton.frontend.builtins import _FP32_64, IMPLS, _float_input, _math, _runtime_x, impl
from minitriton.frontend.semantic import Tensor
from minitriton.ir import ops
from minitriton.ir.core import OP_REGISTRY, Operation
from minitriton.ir.ops import MATH_BINARY, MATH_UNARY
from minitriton.ir.types import I32

if TYPE_CHECKING:
    from minitriton.frontend.lower import FunctionLowerer

# libdevice names that are one math.* op of another name.
_RENAMED = {"nearbyint": "rint", "fast_expf": "exp", "fast_logf": "log"}
# Two-argument libdevice functions that are one op of the IR's own.
_BINARY_AS: dict[str, type[Operation]] = {
    "pow": ops.PowOp,
    "fmod": ops.RemOp,
    "div_rn": ops.DivRnOp,
    "fast_dividef": ops.DivOp,
}


def _unary_op(name: str, op_name: str) -> Any:
    def lower(ctx: FunctionLowerer, arg0: Any) -> Tensor:
        x = _float_input(ctx, arg0, f"libdevice.{name}", _FP32_64)
        if op_name == "math.abs":
            return Tensor(ctx.b.value(ops.AbsOp, [x.handle], x.type))
        return _math(ctx.b, op_name, x)

    return lower


def _binary_op(name: str, op: type[Operation]) -> Any:
    def lower(ctx: FunctionLowerer, arg0: Any, arg1: Any) -> Tensor:
        a, c = _float_args(ctx, arg0, arg1, name)
        return Tensor(ctx.b.value(op, [a.handle, c.handle], a.type))

    return lower


def _float_args(ctx: FunctionLowerer, arg0: Any, arg1: Any, name: str) -> tuple[Tensor, Tensor]:
    """Both arguments as one fp32 or fp64 type (a Python scalar takes the other's type)."""
    a, c = S.promote_pair(ctx.b, _runtime_x(ctx, arg0, arg1), arg1)
    _float_input(ctx, a, f"libdevice.{name}", _FP32_64)
    return a, c


for _name in MATH_UNARY:
    IMPLS[f"libdevice.{_name}"] = _unary_op(_name, f"math.{_name}")
for _name, _target in _RENAMED.items():
    IMPLS[f"libdevice.{_name}"] = _unary_op(_name, f"math.{_target}")
for _name in MATH_BINARY:
    IMPLS[f"libdevice.{_name}"] = _binary_op(_name, OP_REGISTRY[f"math.{_name}"])
for _name, _op in _BINARY_AS.items():
    IMPLS[f"libdevice.{_name}"] = _binary_op(_name, _op)


@impl("libdevice.fdim")
def _fdim(ctx: FunctionLowerer, arg0: Any, arg1: Any) -> Tensor:
    a, c = _float_args(ctx, arg0, arg1, "fdim")
    return S.minmax(ctx.b, "max", S.binary(ctx.b, "-", a, c), 0.0)


@impl("libdevice.rcp_rn")
def _rcp_rn(ctx: FunctionLowerer, arg0: Any) -> Tensor:
    x = _float_input(ctx, arg0, "libdevice.rcp_rn", _FP32_64)
    one = S.to_tensor(ctx.b, 1.0)
    one = S.cast(ctx.b, one, x.dtype)
    return IMPLS["div_rn"](ctx, one, x)


@impl("libdevice.saturatef")
def _saturatef(ctx: FunctionLowerer, arg0: Any) -> Tensor:
    x = _float_input(ctx, arg0, "libdevice.saturatef", _FP32_64)
    return S.minmax(ctx.b, "min", S.minmax(ctx.b, "max", x, 0.0), 1.0)


# ---------------------------------------------------------------- predicates (int32)


def _predicate(name: str, build: Any) -> None:
    @impl(f"libdevice.{name}")
    def lower(ctx: FunctionLowerer, arg0: Any) -> Tensor:
        x = _float_input(ctx, arg0, f"libdevice.{name}", _FP32_64)
        return S.cast(ctx.b, build(ctx.b, x), I32)


def _abs(b: Any, x: Tensor) -> Tensor:
    return Tensor(b.value(ops.AbsOp, [x.handle], x.type))


def _negative_sign(b: Any, x: Tensor) -> Tensor:
    """The sign bit, as ``copysign(1, x) < 0`` (true for -0.0 and negative NaNs too)."""
    one = S.cast(b, S.to_tensor(b, 1.0), x.dtype)
    one = S.broadcast_to(b, one, x.shape) if x.is_block else one
    signed = Tensor(b.value(OP_REGISTRY["math.copysign"], [one.handle, x.handle], x.type))
    return S.compare(b, "<", signed, 0.0)


_predicate("isnan", lambda b, x: S.compare(b, "!=", x, x))
_predicate("isinf", lambda b, x: S.compare(b, "==", _abs(b, x), math.inf))
_predicate("isfinited", lambda b, x: S.compare(b, "<", _abs(b, x), math.inf))
_predicate("finitef", lambda b, x: S.compare(b, "<", _abs(b, x), math.inf))
_predicate("signbit", _negative_sign)
