"""Loads and stores of column-major memory get the layout of their memory (no GPU for most).

A tile whose consecutive addresses run along dim 0 (``a.T`` passed to a
kernel, ``offs_m[:, None] + offs_n[None, :] * stride``) is loaded with a
blocked layout of order ``[0, 1]``: 16-byte vectors along dim 0, lanes
along dim 0. The default (last dim fastest) would load single elements
with the lanes of a warp on 32 different rows. Row-major tiles keep the
default layout. The GPU runs check the numbers on both backends.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from minitriton.backend.coalesce import column_major, memory_order
from minitriton.compiler import CompileOptions, compile_kernel

SOURCE = """
import minitriton as triton
import minitriton.language as tl


@triton.jit
def copy2d(x_ptr, y_ptr, sxm, sxn, sym, syn, M: tl.constexpr, N: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    x = tl.load(x_ptr + m[:, None] * sxm + n[None, :] * sxn)
    tl.store(y_ptr + m[:, None] * sym + n[None, :] * syn, x * 2.0)


@triton.jit
def copy2d_direct(x_ptr, y_ptr, sxm, sxn, sym, syn, M: tl.constexpr, N: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    x = tl.load(x_ptr + m[:, None] * sxm + n[None, :] * sxn)
    tl.store(y_ptr + m[:, None] * sym + n[None, :] * syn, x)


@triton.jit
def dot_cols(a_ptr, b_ptr, c_ptr, sam, sak, sbk, sbn,
             M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * sam + k[None, :] * sak)
    b = tl.load(b_ptr + k[:, None] * sbk + n[None, :] * sbn)
    tl.store(c_ptr + m[:, None] * N + n[None, :], tl.dot(a, b))
"""


@pytest.fixture(scope="module")
def kernels(module_from_source: Callable[[str, str], ModuleType]) -> ModuleType:
    return module_from_source("coalesce_kernels", SOURCE)


def compiled(fn: Any, args: tuple, consts: dict, arch: str = "sm_90a", warps: int = 4) -> Any:
    specs = fn.specialize(fn.bind(args, consts))
    options = CompileOptions(arch=arch, num_warps=warps)
    return compile_kernel(fn.source, specs, options, stop_after="ptx").asm


def load_orders(ttgir: str) -> list[str]:
    """The ``order`` of each ``tt.load``'s result layout (``"blocked<..., order=[0, 1]>"``)."""
    return re.findall(r"= tt\.load\(.*order=(\[[\d, ]+\])>\"", ttgir)


# ------------------------------------------------------------------ the order rule


@pytest.mark.parametrize(
    ("contig", "shape", "order", "cols"),
    [
        ((4, 1), (8, 8), (0, 1), True),  # column-major: dim 0 first
        ((1, 4), (8, 8), (1, 0), False),  # row-major
        ((1, 1), (8, 8), None, False),  # nothing contiguous (a gather)
        ((8, 2), (8, 8), (0, 1), True),  # the most contiguous dim first
        ((1, 8, 1), (8, 8, 8), (1, 2, 0), True),  # the middle dim first, then last to first
        ((4, 4, 1), (8, 8, 8), (1, 2, 0), True),  # a tie goes to the higher dim
        ((4, 1), (4, 1), (0, 1), False),  # a [4, 1] block: its one long dim is the last
        ((1, 4, 1), (1, 4, 1), (1, 2, 0), False),
        ((16,), (16,), None, False),  # 1-D blocks keep the default
    ],
)
def test_memory_order(
    contig: tuple[int, ...], shape: tuple[int, ...], order: tuple[int, ...] | None, cols: bool
) -> None:
    assert memory_order(contig, shape) == order
    assert order is None or column_major(order, shape) == cols


# ------------------------------------------------------------------ the PTX


def test_a_column_major_copy_loads_and_stores_16_byte_vectors(kernels: Any) -> None:
    x = np.zeros((64, 64), np.float32)
    col = compiled(kernels.copy2d, (x, x, 1, 64, 1, 64), {"M": 64, "N": 64})
    assert load_orders(col["ttgir"]) == ["[0, 1]"]
    assert "ttg.convert_layout" not in col["ttgir"]
    assert len(re.findall(r"ld\.global(\.\w+)*\.v4", col["ptx"])) == 8
    assert len(re.findall(r"st\.global(\.\w+)*\.v4", col["ptx"])) == 8
    row = compiled(kernels.copy2d, (x, x, 64, 1, 64, 1), {"M": 64, "N": 64})
    assert load_orders(row["ttgir"]) == ["[1, 0]"]
    assert len(re.findall(r"ld\.global(\.\w+)*\.v4", row["ptx"])) == 8


@pytest.mark.parametrize("name", ["copy2d", "copy2d_direct"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_a_transposing_copy_converts_once_between_two_vectorized_accesses(
    kernels: Any, name: str, dtype: type
) -> None:
    x = np.zeros((64, 64), dtype)
    vectors = 64 * 64 * x.itemsize // 16 // 128  # 16-byte accesses a thread
    for strides, order in [((1, 64, 64, 1), "[0, 1]"), ((64, 1, 1, 64), "[1, 0]")]:
        asm = compiled(getattr(kernels, name), (x, x, *strides), {"M": 64, "N": 64})
        assert load_orders(asm["ttgir"]) == [order]
        assert asm["ttgir"].count("ttg.convert_layout") == 1
        assert len(re.findall(r"ld\.global(\.\w+)*\.v4", asm["ptx"])) == vectors
        assert len(re.findall(r"st\.global(\.\w+)*\.v4", asm["ptx"])) == vectors


@pytest.mark.parametrize(("arch", "warps"), [("sm_90a", 4), ("sm_80", 4), ("sm_90a", 2)])
@pytest.mark.parametrize("col_a", [False, True])
@pytest.mark.parametrize("col_b", [False, True])
def test_dot_operands_from_column_major_memory_load_vectors(
    kernels: Any, arch: str, warps: int, col_a: bool, col_b: bool
) -> None:
    a = np.zeros((64, 64), np.float16)
    sa = (1, 64) if col_a else (64, 1)
    sb = (1, 64) if col_b else (64, 1)
    asm = compiled(kernels.dot_cols, (a, a, a, *sa, *sb), {"M": 64, "N": 64, "K": 64}, arch, warps)
    loads = re.findall(r"ld\.global(?:\.\w+)*?(\.v\d)?\.\w+ ", asm["ptx"])
    # 2 tiles of 64 x 64 halves, 16 bytes a load: 2 * 4096 / 8 / (32 * warps) loads a thread.
    assert loads == [".v4"] * (1024 // (32 * warps))


# ------------------------------------------------------------------ the numbers


@pytest.mark.parametrize("strides", [(1, 64, 1, 64), (1, 64, 64, 1), (64, 1, 1, 64)])
def test_copies_through_each_layout_give_the_same_numbers(
    kernels: Any, backend: str, strides: tuple[int, int, int, int]
) -> None:
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    y = np.zeros_like(x)
    src = np.lib.stride_tricks.as_strided(x, (64, 64), (strides[0] * 4, strides[1] * 4))
    dst = np.lib.stride_tricks.as_strided(y, (64, 64), (strides[2] * 4, strides[3] * 4))
    kernels.copy2d[(1,)](x, y, *strides, M=64, N=64, backend=backend)
    np.testing.assert_array_equal(dst, 2 * src)
    kernels.copy2d_direct[(1,)](x, y, *strides, M=64, N=64, backend=backend)
    np.testing.assert_array_equal(dst, src)


@pytest.mark.parametrize("col_a", [False, True])
@pytest.mark.parametrize("col_b", [False, True])
def test_dots_of_column_major_operands_match_numpy(
    kernels: Any, backend: str, col_a: bool, col_b: bool
) -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    a_mem = np.ascontiguousarray(a.T) if col_a else a
    b_mem = np.ascontiguousarray(b.T) if col_b else b
    c = np.zeros((64, 64), np.float32)
    sa = (1, 64) if col_a else (64, 1)
    sb = (1, 64) if col_b else (64, 1)
    kernels.dot_cols[(1,)](a_mem, b_mem, c, *sa, *sb, M=64, N=64, K=64, backend=backend)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c, ref, rtol=1e-2, atol=1e-2)
