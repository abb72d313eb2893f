"""A small kernel library written for Triton, the way training libraries write them.

Nothing here names MiniTriton: ``test_library_patterns`` imports this module
after ``minitriton.compat.alias_triton()``, so ``import triton`` is
MiniTriton. It uses what such libraries use: ``triton.language.math`` and
both libdevice import paths, the SM count from
``triton.runtime.driver.active`` to size a persistent grid,
``torch.cuda.device_count()`` in host code, and kernels launched inside a
``torch.autograd.Function``.
"""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl
import triton.language.math  # noqa: F401  (libraries import it by this path)
from triton.language.extra import libdevice
from triton.language.extra.cuda import libdevice as cuda_libdevice

BLOCK = 64
INV_SQRT2 = tl.constexpr(0.7071067811865476)  # a global kernels read: a constexpr, as in Triton
INV_SQRT_2PI = tl.constexpr(0.3989422804014327)


def num_sms(device: Any) -> int:
    """The SM count, as persistent kernels size their grid."""
    if device.type == "cuda" and torch.cuda.device_count() > 0:
        index = device.index if device.index is not None else torch.cuda.current_device()
    else:
        index = triton.runtime.driver.active.get_current_device()
    props = triton.runtime.driver.active.utils.get_device_properties(index)
    return int(props["multiprocessor_count"])


@triton.jit
def gelu_fwd_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """A persistent kernel: each program walks the tiles ``pid, pid + programs, ...``."""
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        y = 0.5 * x * (1 + libdevice.erf(x * INV_SQRT2))
        tl.store(y_ptr + offs, y, mask=offs < n)


@triton.jit
def gelu_bwd_kernel(x_ptr, dy_ptr, dx_ptr, n, BLOCK: tl.constexpr):
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        cdf = 0.5 * (1 + cuda_libdevice.erf(x * INV_SQRT2))
        pdf = tl.math.exp(-0.5 * x * x) * INV_SQRT_2PI
        dy = tl.load(dy_ptr + offs, mask=offs < n)
        tl.store(dx_ptr + offs, dy * (cdf + x * pdf), mask=offs < n)


def _grid(x: Any) -> tuple[int]:
    return (max(1, min(num_sms(x.device), triton.cdiv(x.numel(), BLOCK))),)


class GELU(torch.autograd.Function):
    """Exact GELU with a forward and a backward kernel."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        x = x.contiguous()
        y = torch.empty_like(x)
        gelu_fwd_kernel[_grid(x)](x, y, x.numel(), BLOCK=BLOCK)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx: Any, dy: Any) -> Any:
        (x,) = ctx.saved_tensors
        dx = torch.empty_like(x)
        gelu_bwd_kernel[_grid(x)](x, dy.contiguous(), dx, x.numel(), BLOCK=BLOCK)
        return dx


def gelu(x: Any) -> Any:
    """``torch.nn.functional.gelu(x)`` (exact), differentiable."""
    return GELU.apply(x)
