"""Exercise 13, reference solution: one k-means step (assign, then accumulate)."""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def assign_kernel(
    points_ptr, centroids_ptr, labels_ptr, n, D: tl.constexpr, K: tl.constexpr,
    BLOCK: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ks = tl.arange(0, K)
    dist = tl.zeros((BLOCK, K), dtype=tl.float32)
    for d in tl.static_range(D):
        p = tl.load(points_ptr + offs * D + d, mask=mask, other=0.0)
        c = tl.load(centroids_ptr + ks * D + d)
        diff = p[:, None] - c[None, :]
        dist += diff * diff
    labels = tl.argmin(dist, axis=1)
    tl.store(labels_ptr + offs, labels, mask=mask)


@triton.jit
def accumulate_kernel(
    points_ptr, labels_ptr, sums_ptr, counts_ptr, n, D: tl.constexpr, BLOCK: tl.constexpr
):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    labels = tl.load(labels_ptr + offs, mask=mask, other=0)
    for d in tl.static_range(D):
        p = tl.load(points_ptr + offs * D + d, mask=mask, other=0.0)
        tl.atomic_add(sums_ptr + labels * D + d, p, mask=mask)
    ones = tl.full((BLOCK,), 1.0, tl.float32)
    tl.atomic_add(counts_ptr + labels, ones, mask=mask)
