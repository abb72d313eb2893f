"""Exercise 13: one step of k-means (see README.md).

Run ``minitriton exercises check 13``.
"""

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
    # TODO 1: dist[i, k] = squared distance from point i to centroid k.
    #         Loop over the D coordinates (tl.static_range(D) unrolls it):
    #         load coordinate d of the BLOCK points and of the K centroids,
    #         and accumulate the squared differences of every pair.
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
    # TODO 2: add every point into the running sum of its cluster
    #         (sums is K x D, row-major) and 1.0 into its cluster's count.
