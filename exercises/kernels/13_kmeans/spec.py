"""Exercise 13 spec: one k-means iteration: labels and new centroids."""

import numpy as np

import minitriton as triton
from minitriton.course import Case

TITLE = "k-means"
KERNELS = ("assign_kernel", "accumulate_kernel")
MINUTES = 40
REQUIRES = ("04", "10")
OUTCOMES = ("all-pairs distances by broadcasting", "tl.argmin", "scatter-add with atomics")
BLOCK = 128

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "two equal centroids": 2,
}


def _distances(points: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    # fp32, coordinate by coordinate: the kernel's order, so near-ties agree.
    dist = np.zeros((len(points), len(centroids)), np.float32)
    for d in range(points.shape[1]):
        diff = points[:, d, None] - centroids[None, :, d]
        dist += diff * diff
    return dist


def reference(points: np.ndarray, centroids: np.ndarray) -> dict:
    """Nearest-centroid labels and the mean of each cluster (old centroid if empty)."""
    labels = _distances(points, centroids).argmin(axis=1).astype(np.int32)
    new = centroids.astype(np.float64).copy()
    for k in range(len(centroids)):
        if (labels == k).any():
            new[k] = points[labels == k].astype(np.float64).mean(axis=0)
    return {"labels": labels, "centroids": new.astype(np.float32)}


def launch(kernels, points: np.ndarray, centroids: np.ndarray) -> dict:
    """Assign (one program per BLOCK points), accumulate, then divide on the host."""
    n, D = points.shape
    K = centroids.shape[0]
    grid = (triton.cdiv(n, BLOCK),)
    labels = np.full(n, -1, np.int32)
    kernels.assign_kernel[grid](points, centroids, labels, n, D=D, K=K, BLOCK=BLOCK)
    sums = np.zeros_like(centroids)
    counts = np.zeros(K, np.float32)
    kernels.accumulate_kernel[grid](points, labels, sums, counts, n, D=D, BLOCK=BLOCK)
    safe = np.maximum(counts, 1)[:, None]
    new = np.where(counts[:, None] > 0, sums / safe, centroids)
    return {"labels": labels, "centroids": new.astype(np.float32)}


def _with_duplicate(args: tuple) -> tuple:
    """``args`` with centroid 2 a copy of centroid 1: every distance to them ties."""
    points, centroids = args
    centroids = centroids.copy()
    centroids[2] = centroids[1]
    return points, centroids


def cases() -> list[Case]:
    """Blobs in 2D and 4D; sizes that leave a partial block."""
    rng = np.random.default_rng(13)

    def blobs(n_per: int, d: int, k: int) -> tuple:
        centers = rng.uniform(-6, 6, (k, d)).astype(np.float32)
        pts = np.concatenate([c + rng.standard_normal((n_per, d)) for c in centers])
        pts = pts.astype(np.float32)
        return pts, pts[rng.choice(len(pts), k, replace=False)].copy()

    return [
        Case("128 points, D = 2, K = 4", blobs(32, 2, 4), atol=1e-4, rtol=1e-4),
        Case("600 points, D = 2, K = 4: a partial block", blobs(150, 2, 4), atol=1e-4, rtol=1e-4),
        Case("304 points, D = 4, K = 8", blobs(38, 4, 8), atol=1e-4, rtol=1e-4),
        Case(
            "two equal centroids: a tie goes to the lower index, as in np.argmin",
            _with_duplicate(blobs(40, 2, 4)),
            atol=1e-4,
            rtol=1e-4,
        ),
    ]
