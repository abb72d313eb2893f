"""libdevice's functions with an explicit rounding mode: ``add_rd``, ``float2int_ru`` ..."""

from __future__ import annotations

import minitriton as triton
import minitriton.language as tl
from minitriton.language.extra import libdevice


@triton.jit
def rounded_arithmetic(x_ptr, y_ptr, z_ptr, out_ptr, N: tl.constexpr, NAME: tl.constexpr,
                       ARITY: tl.constexpr):  # fmt: skip
    """``out = libdevice.<NAME>(x[, y[, z]])``."""
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    fn = getattr(libdevice, NAME)
    if ARITY == 1:
        r = fn(x)
    elif ARITY == 2:
        r = fn(x, tl.load(y_ptr + offs))
    else:
        r = fn(x, tl.load(y_ptr + offs), tl.load(z_ptr + offs))
    tl.store(out_ptr + offs, r)


@triton.jit
def rounded_conversion(x_ptr, out_ptr, N: tl.constexpr, NAME: tl.constexpr):
    """``out = libdevice.<NAME>(x)``: a conversion such as ``float2int_rd``."""
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, getattr(libdevice, NAME)(tl.load(x_ptr + offs)))
