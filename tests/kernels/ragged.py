"""Kernels over ragged descriptors (``triton.tools.ragged_tma``) and descriptor atomics."""

from __future__ import annotations

import minitriton as triton
import minitriton.language as tl
from minitriton.tools.ragged_tma import atomic_add_ragged, load_ragged, store_ragged


@triton.jit
def ragged_copy_kernel(src_desc, dst_desc, acc_desc, offs_ptr, sizes_ptr, BM: tl.constexpr):
    """Per slice: dst = 2 * src and acc += src, block by block; rows past a slice untouched."""
    e = tl.program_id(0)
    off = tl.load(offs_ptr + e)
    size = tl.load(sizes_ptr + e)
    for r in range(0, tl.cdiv(size, BM)):
        tile = load_ragged(src_desc, off, size, [r * BM, 0])
        store_ragged(dst_desc, off, size, [r * BM, 0], tile * 2)
        atomic_add_ragged(acc_desc, off, size, [r * BM, 0], tile)


@triton.jit
def descriptor_atomics_kernel(desc, x_ptr, KIND: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """Every program combines one block into the same corner, with atomics."""
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + tl.program_id(0) * BM * BN + offs)
    if KIND == "add":
        desc.atomic_add([2, 4], x)
    elif KIND == "max":
        desc.atomic_max([2, 4], x)
    else:
        desc.atomic_xor([2, 4], x)
