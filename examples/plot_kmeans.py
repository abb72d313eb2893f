"""
k-means clustering
==================

Lloyd's algorithm with two kernels per iteration:

* ``assign_kernel`` gives each point the index of its nearest centroid
  (``tl.argmin`` over a ``BLOCK x K`` block of squared distances);
* ``accumulate_kernel`` adds each point into its cluster's coordinate sums and
  count with ``tl.atomic_add``; the host divides to get the new centroids.
"""

import matplotlib.pyplot as plt
import numpy as np

import minitriton as triton
import minitriton.language as tl


@triton.jit
def assign_kernel(
    points_ptr, centroids_ptr, labels_ptr, n, D: tl.constexpr, K: tl.constexpr, BLOCK: tl.constexpr
):
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


def kmeans_step(points, centroids, BLOCK=128):
    """One iteration: the labels and the new centroids."""
    n, D = points.shape
    K = centroids.shape[0]
    grid = (triton.cdiv(n, BLOCK),)
    labels = np.empty(n, dtype=np.int32)
    assign_kernel[grid](points, centroids, labels, n, D=D, K=K, BLOCK=BLOCK)
    sums = np.zeros_like(centroids)
    counts = np.zeros(K, dtype=np.float32)
    accumulate_kernel[grid](points, labels, sums, counts, n, D=D, BLOCK=BLOCK)
    return labels, sums / np.maximum(counts, 1)[:, None]


# %%
# Four blobs of 2-D points. Each iteration is checked against NumPy.

rng = np.random.default_rng(1)
K, D = 4, 2
centers = np.array([[0, 0], [4, 4], [0, 5], [5, 0]], dtype=np.float32)
points = np.concatenate([c + rng.standard_normal((150, D)) for c in centers]).astype(np.float32)
centroids = points[rng.choice(len(points), K, replace=False)].copy()

max_err = 0.0
for _ in range(8):
    labels, new_centroids = kmeans_step(points, centroids)
    dists = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
    assert np.array_equal(labels, dists.argmin(axis=1))
    expected = np.stack([points[labels == k].mean(axis=0) for k in range(K)])
    np.testing.assert_allclose(new_centroids, expected, rtol=1e-4, atol=1e-4)
    max_err = max(max_err, float(np.abs(new_centroids - expected).max()))
    centroids = new_centroids
print("max error:", max_err)

# %%
# The clusters found, and their centroids.

fig, ax = plt.subplots(figsize=(5, 5))
ax.scatter(points[:, 0], points[:, 1], c=labels, s=8, cmap="tab10")
ax.scatter(centroids[:, 0], centroids[:, 1], c="black", marker="x", s=120, linewidths=3)
ax.set_title("k-means: clusters and centroids")
plt.show()
