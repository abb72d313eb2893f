"""``tl.map_elementwise`` on both backends against NumPy, its PTX, and its errors.

Triton's interpreter does not run it; the emulator runs the function's
region on every element at once, and the GPU backend inlines it per
register.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from minitriton.diagnostics import CompileError
from tests.e2e.ptxas_check import assemble, needs_ptxas
from tests.kernels import map_elementwise as K


def test_a_function_with_branches(backend: str, rng: np.random.Generator) -> None:
    x = rng.integers(-5, 5, 128).astype(np.int32)
    y = rng.integers(-5, 5, 128).astype(np.int32)
    z = np.full(128, 7, np.int32)
    K.compare_kernel[(1,)](x, y, z, BLOCK=128, backend=backend)
    np.testing.assert_array_equal(z, (x > y).astype(int) - (y > x).astype(int))


@pytest.mark.parametrize("kernel", ["divmod_kernel", "divmod_pack_kernel"])
def test_two_results_with_and_without_pack(
    backend: str, rng: np.random.Generator, kernel: str
) -> None:
    a = rng.integers(0, 2**31, 512).astype(np.uint32)
    b = rng.integers(1, 1000, 512).astype(np.uint32)
    c, d = np.zeros_like(a), np.zeros_like(a)
    getattr(K, kernel)[(1,)](a, b, c, d, BLOCK=512, backend=backend)
    np.testing.assert_array_equal(c, a // b)
    np.testing.assert_array_equal(d, a % b)


def test_pack_groups_consecutive_elements_of_the_last_axis(backend: str) -> None:
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    y = np.zeros_like(x)
    K.reverse_groups_kernel[(1,)](x, y, ROWS=8, COLS=16, backend=backend)
    np.testing.assert_array_equal(y, x.reshape(8, 4, 4)[:, :, ::-1].reshape(8, 16))


def _collatz(n: int, limit: int) -> int:
    steps = 0
    while n != 1 and steps < limit:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_a_loop_whose_trip_count_differs_per_element(backend: str) -> None:
    n = np.arange(1, 257, dtype=np.int32)
    s = np.zeros_like(n)
    K.collatz_kernel[(4,)](n, s, BLOCK=64, backend=backend)
    np.testing.assert_array_equal(s, [_collatz(int(v), 500) for v in n])


@pytest.mark.parametrize(
    ("kernel", "message"),
    [("pack_three_kernel", "pack must be a power of two >= 1, got 3"),
     ("block_result_kernel", "must return scalars")],
)  # fmt: skip
def test_mistakes_are_located_errors(kernel: str, message: str) -> None:
    with pytest.raises(CompileError) as info:
        getattr(K, kernel)[(1,)](np.zeros(8, np.int32), BLOCK=8)
    assert message in str(info.value) and "map_elementwise.py:" in str(info.value)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_ptx_assembles(arch: str, tmp_path: Path) -> None:
    assemble(K.compare_kernel, "*i32, *i32, *i32, 128", arch, tmp_path)
    assemble(K.divmod_pack_kernel, "*u32, *u32, *u32, *u32, 512", arch, tmp_path)
    ptx = assemble(K.collatz_kernel, "*i32, *i32, 64", arch, tmp_path).ptx
    assert ptx.count("bra") >= 2  # the per-element loop is a real loop
