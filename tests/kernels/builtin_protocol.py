"""Library code in Triton's builtin protocol: ``@core.extern`` functions built on
``core.extern_elementwise``, builtins that pass ``_semantic`` on, and aggregates whose
Python ``__init__`` calls builtins or ``constexpr_function`` methods.
"""

from __future__ import annotations

from typing import Any

import minitriton as triton
import minitriton.language as tl
from minitriton.language import core


@core.extern
def fast_tanh(arg0: Any, _semantic: Any = None) -> Any:
    """A libdevice wrapper as libraries write them (Triton 3.3 and later)."""
    return core.extern_elementwise(
        "", "", [arg0],
        {(core.dtype("fp32"),): ("__nv_tanhf", core.dtype("fp32")),
         (core.dtype("fp64"),): ("__nv_tanh", core.dtype("fp64"))},
        is_pure=True, _semantic=_semantic,
    )  # fmt: skip


@core.extern
def divide_rn(arg0: Any, arg1: Any, _builder: Any = None) -> Any:
    """The same before Triton 3.3, with ``_builder``."""
    return core.extern_elementwise(
        "", "", [arg0, arg1],
        {(core.dtype("fp32"), core.dtype("fp32")): ("__nv_fdiv_rn", core.dtype("fp32"))},
        is_pure=True, _builder=_builder,
    )  # fmt: skip


@core.extern
def count_bits(arg0: Any, _semantic: Any = None) -> Any:
    return core.extern_elementwise(
        "", "", [arg0],
        {(core.dtype("int32"),): ("__nv_popc", core.dtype("int32")),
         (core.dtype("int64"),): ("__nv_popcll", core.dtype("int32"))},
        is_pure=True, _semantic=_semantic,
    )  # fmt: skip


@core.extern
def other_library(arg0: Any, _semantic: Any = None) -> Any:
    return core.extern_elementwise(
        "mylib", "/opt/mylib.bc", [arg0],
        {(core.dtype("fp32"),): ("mylib_fast_exp", core.dtype("fp32"))},
        is_pure=True, _semantic=_semantic,
    )  # fmt: skip


@core.extern
def twice_plus_index(x: Any, _semantic: Any = None) -> Any:
    """A library builtin that calls ``tl`` builtins with the ``_semantic`` it was given."""
    n = x.shape[0]
    return tl.add(tl.mul(x, 2, _semantic=_semantic), tl.arange(0, n, _semantic=_semantic),
                  _semantic=_semantic)  # fmt: skip


@triton.jit
def extern_kernel(x_ptr, y_ptr, t_ptr, d_ptr, c_ptr, w_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(t_ptr + offs, fast_tanh(x))
    tl.store(d_ptr + offs, divide_rn(x, tl.load(y_ptr + offs)))
    tl.store(c_ptr + offs, count_bits(offs * 37))
    tl.store(w_ptr + offs, twice_plus_index(offs))


@triton.jit
def other_library_kernel(x_ptr):
    tl.store(x_ptr, other_library(tl.load(x_ptr)))


@triton.jit
def wrong_type_kernel(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, fast_tanh(x.to(tl.float16)).to(tl.float32))


@triton.aggregate
class Ramp:
    """An aggregate whose ``__init__`` builds a block with a builtin, as Triton's own do."""

    values: tl.tensor

    def __init__(self, _semantic: Any = None) -> None:
        self.values = tl.arange(0, 8, _semantic=_semantic)


@triton.aggregate
class Square:
    """An aggregate whose ``__init__`` calls a ``constexpr_function`` method."""

    side: tl.constexpr
    area: tl.constexpr

    def __init__(self, side: Any) -> None:
        self.side = tl.constexpr(side)
        self.area = tl.constexpr(self.squared())

    @triton.constexpr_function
    def squared(self) -> Any:
        return self.side * self.side


@triton.jit
def aggregate_kernel(out_ptr, SIDE: tl.constexpr):
    ramp = Ramp()
    square = Square(SIDE)
    tl.store(out_ptr + ramp.values, ramp.values + square.area)


@triton.aggregate
class Scaled:
    """An aggregate without ``__init__``: fields by position or keyword, and a default."""

    x: tl.tensor
    scale: tl.constexpr = tl.constexpr(3)


@triton.jit
def replace_kernel(out_ptr):
    first = Scaled(x=tl.arange(0, 4))
    second = tl.aggregate_replace(first, scale=5)
    third = Scaled(tl.arange(0, 4) * 10, 7)
    tl.store(
        out_ptr + tl.arange(0, 4), first.x * first.scale + second.scale + third.x + third.scale
    )


@triton.jit
def replace_unknown_kernel(out_ptr):
    first = Scaled(x=tl.arange(0, 4))
    second = tl.aggregate_replace(first, size=5)
    tl.store(out_ptr + tl.arange(0, 4), second.x)
