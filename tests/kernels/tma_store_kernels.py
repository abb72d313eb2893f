"""Tile copies whose stores ``tma-stores`` rewrites, or must leave alone.

``tile_scale`` reads a tile of a row-major ``M x N`` matrix and stores twice
its values through the same bounds mask: the plain form of a TMA store.
The others break one rule each: ``tile_scale_filtered`` also masks by the
values, ``tile_scale_unmasked`` has no mask, ``tile_scale_strided`` writes
every other column.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def tile_scale(x_ptr, y_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    offs = rows[:, None] * stride + cols[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * 2, mask=mask)


@triton.jit
def tile_scale_filtered(x_ptr, y_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    offs = rows[:, None] * stride + cols[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * 2, mask=mask & (x > 0))


@triton.jit
def tile_scale_unmasked(x_ptr, y_ptr, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    offs = rows[:, None] * stride + cols[None, :]
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2)


@triton.jit
def tile_scale_strided(x_ptr, y_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    offs = rows[:, None] * stride + cols[None, :] * 2
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)
