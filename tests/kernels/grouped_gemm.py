"""Grouped GEMM, as in Triton's tutorial 08: one launch computes several matrix products.

The host passes tables of *addresses* (``A.data_ptr()`` of each matrix), and
the kernel casts each loaded address to a pointer with
``tl.pointer_type(tl.float16)``. A fixed number of programs (``NUM_SM``)
walks over the tiles of all the problems, one problem after another.
"""

# fmt: off
from __future__ import annotations

from typing import Any

import numpy as np

import minitriton as triton
import minitriton.language as tl


@triton.jit
def grouped_matmul_kernel(
    # int64 tables of addresses, one entry per problem
    group_a_ptrs, group_b_ptrs, group_c_ptrs,
    # int32 (group_size, 3) tables: <M, N, K> and the leading dimensions <lda, ldb, ldc>
    group_gemm_sizes, g_lds,
    group_size,
    NUM_SM: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
):
    """C_g = A_g @ B_g for every problem g; the sizes are multiples of the blocks."""
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        gm = tl.load(group_gemm_sizes + g * 3)
        gn = tl.load(group_gemm_sizes + g * 3 + 1)
        gk = tl.load(group_gemm_sizes + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_SIZE_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_SIZE_N)
        num_tiles = num_m_tiles * num_n_tiles
        # this program's tiles of problem g: tile_idx, tile_idx + NUM_SM, ...
        while tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles:
            k = gk
            lda = tl.load(g_lds + g * 3)
            ldb = tl.load(g_lds + g * 3 + 1)
            ldc = tl.load(g_lds + g * 3 + 2)
            a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))
            tile_idx_in_gemm = tile_idx - last_problem_end
            tile_m_idx = tile_idx_in_gemm // num_n_tiles
            tile_n_idx = tile_idx_in_gemm % num_n_tiles

            offs_am = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_bn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            offs_k = tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + offs_am[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_bn[None, :]
            accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for _ in range(0, tl.cdiv(k, BLOCK_SIZE_K)):
                tl.multiple_of(a_ptrs, [16, 16])
                tl.multiple_of(b_ptrs, [16, 16])
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs)
                accumulator += tl.dot(a, b)
                a_ptrs += BLOCK_SIZE_K
                b_ptrs += BLOCK_SIZE_K * ldb
            c = accumulator.to(tl.float16)

            offs_cm = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_cn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            c_ptrs = c_ptr + ldc * offs_cm[:, None] + offs_cn[None, :]
            tl.store(c_ptrs, c)

            tile_idx += NUM_SM

        last_problem_end = last_problem_end + num_tiles
# fmt: on


def _address(x: Any) -> int:
    """The address of ``x``'s first element: ``data_ptr()`` of a tensor, else NumPy's."""
    return int(x.data_ptr()) if hasattr(x, "data_ptr") else int(x.ctypes.data)


def group_gemm(
    group_a: list[Any],
    group_b: list[Any],
    *,
    num_sm: int = 4,
    block: tuple[int, int, int] = (32, 32, 32),
    backend: str | None = None,
) -> list[Any]:
    """The products ``group_a[i] @ group_b[i]`` in one launch (the tutorial's host code).

    The matrices are fp16 NumPy arrays or torch tensors, all on one device;
    only the address tables are passed to the kernel, as in the tutorial.
    """
    group_c: list[Any] = []
    a_addrs, b_addrs, c_addrs, sizes, lds = [], [], [], [], []
    for a, b in zip(group_a, group_b, strict=True):
        (m, k), (_, n) = a.shape, b.shape
        c = a.new_empty((m, n)) if hasattr(a, "new_empty") else np.empty((m, n), a.dtype)
        group_c.append(c)
        a_addrs.append(_address(a))
        b_addrs.append(_address(b))
        c_addrs.append(_address(c))
        sizes += [m, n, k]
        lds += [k, n, n]  # contiguous row-major matrices
    tables = [np.array(t, np.int64) for t in (a_addrs, b_addrs, c_addrs)]
    tables += [np.array(t, np.int32) for t in (sizes, lds)]
    if hasattr(group_a[0], "data_ptr"):  # torch tensors: the tables go to their device
        import torch

        tables = [torch.from_numpy(t).to(group_a[0].device) for t in tables]
    bm, bn, bk = block
    grouped_matmul_kernel[(num_sm,)](
        *tables,
        len(group_a),
        NUM_SM=num_sm,
        BLOCK_SIZE_M=bm,
        BLOCK_SIZE_N=bn,
        BLOCK_SIZE_K=bk,
        backend=backend,
    )
    return group_c
