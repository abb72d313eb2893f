"""``triton.AsyncCompileMode``: warm-ups inside it compile in an executor and return futures."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.compiler import CompiledKernel
from minitriton.runtime._async_compile import active_mode


@triton.jit
def scale(x_ptr, out_ptr, FACTOR: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * FACTOR)


@triton.jit
def broken(x_ptr, N: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, N), undefined_name)  # noqa: F821


def test_warmups_compile_in_the_executor_and_launches_find_them() -> None:
    x = np.arange(16, dtype=np.float32)
    threads: set[str] = set()
    with ThreadPoolExecutor(2, thread_name_prefix="compile") as pool:
        with triton.AsyncCompileMode(pool) as mode:
            assert active_mode.get() is mode
            futures = [scale.warmup(x, x, FACTOR=f, N=16, grid=(1,)) for f in (2, 3, 2)]
            assert all(isinstance(f, triton.FutureKernel) for f in futures)
            assert futures[0] is futures[2]  # one compile per specialization
            threads.update(t.name for t in threading.enumerate())
        assert active_mode.get() is None
    kernels = [f.result() for f in futures]
    assert all(isinstance(k, CompiledKernel) for k in kernels)
    assert kernels[0] is not kernels[1] and "ir-opt" in futures[1].asm  # attributes pass through
    assert any(name.startswith("compile") for name in threads)
    out = np.zeros(16, np.float32)
    scale[(1,)](x, out, FACTOR=3, N=16)
    np.testing.assert_array_equal(out, x * 3)
    assert scale.warmup(x, x, FACTOR=3, N=16, grid=(1,)) is kernels[1]  # from the cache


def test_leaving_the_block_raises_a_compile_error_unless_ignored() -> None:
    x = np.zeros(8, np.float32)
    with ThreadPoolExecutor(1) as pool:
        with (
            pytest.raises(triton.CompilationError, match="undefined_name"),
            triton.AsyncCompileMode(pool),
        ):
            broken.warmup(x, N=8, grid=(1,))
        with triton.AsyncCompileMode(pool, ignore_errors=True):
            future = broken.warmup(x, N=8, grid=(1,))
        assert future.result(ignore_errors=True) is None
        with pytest.raises(triton.CompilationError) as info:
            future.result()
        assert "test_async_compile.py:" in str(info.value) and "^" in str(info.value)


def test_one_block_at_a_time() -> None:
    with (
        ThreadPoolExecutor(1) as pool,
        triton.AsyncCompileMode(pool),
        pytest.raises(RuntimeError, match="already active"),
    ):
        triton.AsyncCompileMode(pool).__enter__()


def test_a_launch_inside_the_block_runs_at_once() -> None:
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    with ThreadPoolExecutor(1) as pool, triton.AsyncCompileMode(pool):
        scale[(1,)](x, out, FACTOR=5, N=8)
        np.testing.assert_array_equal(out, x * 5)
