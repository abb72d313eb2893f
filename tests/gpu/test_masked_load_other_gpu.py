"""Masked loads with ``other``, on both backends, against NumPy.

On the GPU a masked vector load starts its destination words as ``other`` and
the predicated ``ld.global`` overwrites them, so no select follows the load.
These kernels cover each way ``other`` reaches those words: a constant, a
run-time scalar, a block that differs per element (packed two to a word for
fp16), 1-byte elements (a guarded load, not inline PTX) and booleans. The
emulator runs the same kernels, so both backends are held to one reference.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl

N, BLOCK = 1000, 256  # a partial last block: its tail takes `other`


@triton.jit
def constant_other(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=float("-inf"))
    tl.store(out_ptr + offs, x)


@triton.jit
def scalar_other(x_ptr, out_ptr, n, fill, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=fill)
    tl.store(out_ptr + offs, x)


@triton.jit
def block_other(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    fill = (-offs).to(x_ptr.dtype.element_ty)  # a different value in each lane
    x = tl.load(x_ptr + offs, mask=offs < n, other=fill)
    tl.store(out_ptr + offs, x)


@triton.jit
def bool_other(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=True)
    tl.store(out_ptr + offs, x.to(tl.int32))


def launch(kernel, backend: str, *args) -> None:
    kernel[(triton.cdiv(args[1].size, BLOCK),)](*args, BLOCK=BLOCK, backend=backend)


@pytest.fixture
def x() -> np.ndarray:
    return np.random.default_rng(7).standard_normal(N).astype(np.float32)


def padded(x: np.ndarray, tail: np.ndarray | float) -> np.ndarray:
    """``x`` followed by the values its masked-off tail must read."""
    size = triton.cdiv(N, BLOCK) * BLOCK
    out = np.empty(size, dtype=x.dtype)
    out[:N] = x
    out[N:] = tail if np.isscalar(tail) else np.asarray(tail)[N:size]
    return out


def test_a_constant_other(backend, x):
    out = np.zeros(triton.cdiv(N, BLOCK) * BLOCK, np.float32)
    launch(constant_other, backend, x, out, N)
    np.testing.assert_array_equal(out, padded(x, -np.inf))


def test_a_run_time_scalar_other(backend, x):
    out = np.zeros(triton.cdiv(N, BLOCK) * BLOCK, np.float32)
    launch(scalar_other, backend, x, out, N, 2.25)
    np.testing.assert_array_equal(out, padded(x, 2.25))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8])
def test_an_other_that_differs_per_element(backend, x, dtype):
    # fp16 packs two lanes' `other` into one word; int8 takes the guarded load
    src = (x * 50).astype(dtype)
    out = np.zeros(triton.cdiv(N, BLOCK) * BLOCK, dtype)
    launch(block_other, backend, src, out, N)
    lanes = np.arange(out.size)
    np.testing.assert_array_equal(out, padded(src, (-lanes).astype(dtype)))


def test_a_boolean_other(backend):
    flags = np.random.default_rng(3).random(N) < 0.5
    out = np.zeros(triton.cdiv(N, BLOCK) * BLOCK, np.int32)
    launch(bool_other, backend, flags, out, N)
    np.testing.assert_array_equal(out, padded(flags.astype(np.int32), 1))
