"""Kernels that use the parts of Triton's surface that libraries reach for (vLLM's
``triton_kernels``, flash-linear-attention): ``tl.extra.cuda``'s helpers, ``tl.core.CONSTEXPR_0``,
``tl.standard._log2``, ``target_info``, list shapes and 32-bit patterns stored as literals."""

from __future__ import annotations

import minitriton as triton
import minitriton.language as tl
from minitriton.language.target_info import cuda_capability_geq


@triton.jit
def threads_kernel(y_ptr):
    n: tl.constexpr = tl.extra.cuda.num_threads()
    tl.store(y_ptr + tl.arange(0, n), tl.full([n], tl.extra.cuda.num_warps(), tl.int32))


@triton.jit
def dependent_launch_kernel(x_ptr, y_ptr, N: tl.constexpr, PDL: tl.constexpr):
    offs = tl.arange(0, N)
    if PDL:
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2)


@triton.jit
def defaults_kernel(x_ptr, y_ptr, N: tl.constexpr, DESC: tl.constexpr = tl.core.CONSTEXPR_0):
    offs = tl.arange(0, N)
    bits: tl.constexpr = tl.standard._log2(N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) + DESC + bits)


@triton.jit
def list_shape_kernel(x_ptr, y_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 4)[:, None] * N + tl.arange(0, N)[None, :])
    flat = tl.reshape(x, [1, 1] + x.shape[:-1] + [N])
    tl.store(y_ptr + tl.arange(0, 4 * N), tl.reshape(flat, [4 * N]))


@triton.jit
def pattern_store_kernel(y_ptr, N: tl.constexpr):
    tl.store(y_ptr + tl.arange(0, N), 0xFFFFFFFF)


@triton.jit
def capability_kernel(y_ptr):
    if cuda_capability_geq(9, 0):
        tl.store(y_ptr, 90)
    else:
        tl.store(y_ptr, 80)


@triton.jit
def condition_kernel(x_ptr: tl.const, y_ptr, n):
    """A ``while`` on ``tl.condition`` (with its hint), reading through a ``tl.const`` pointer."""
    i = 0
    acc = 0.0
    while tl.condition(i < n, disable_licm=True):
        acc += tl.load(x_ptr + i)
        i += 1
    tl.store(y_ptr, acc)


@triton.jit
def optional_output_kernel(x_ptr, dw_ptr, n, BLOCK: tl.constexpr):
    """``if dw_ptr:`` on a pointer argument, as FlagGems' layer norm backward writes it."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if dw_ptr:
        tl.store(dw_ptr + offs, x * 2, mask=offs < n)


def passthrough(f):  # noqa: ANN001, ANN201 - a decorator above @jit, as libraries stack them
    return f


@passthrough
@triton.jit(do_not_specialize=["n"])
def decorated_kernel(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), n)
