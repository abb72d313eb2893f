"""``tl.math``: Triton's core math functions, and libdevice's (as in Triton 2.x).

In Triton 3.x ``tl.math`` holds the core functions (``tl.math.exp2`` is
``tl.exp2``); in Triton 2.x it was libdevice (``tl.math.tanh``). Both kinds
of kernel run unchanged: this module holds both.
"""

from minitriton.language.core import (  # noqa: F401
    abs,
    cdiv,
    ceil,
    clamp,
    cos,
    div_rn,
    erf,
    exp,
    exp2,
    fdiv,
    floor,
    fma,
    log,
    log2,
    maximum,
    minimum,
    rsqrt,
    sigmoid,
    sin,
    softmax,
    sqrt,
    sqrt_rn,
    umulhi,
)
from minitriton.language.libdevice import *  # noqa: F403
