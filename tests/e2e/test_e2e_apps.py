"""Application kernels: training, clustering, sequences, sparse, images, statistics."""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
from tests.kernels.data_kernels import (
    augment_kernel,
    csr_spmv_kernel,
    histogram_kernel,
    kmeans_assign_kernel,
    kmeans_update_kernel,
    moving_average_kernel,
    sort_rows_kernel,
)
from tests.kernels.nn_layers import (
    batch_norm_fwd_kernel,
    linreg_grad_kernel,
    lstm_cell_kernel,
    rnn_fwd_kernel,
    sgd_momentum_kernel,
)

# ---------------------------------------------------------------- SGD


def test_sgd_linear_regression(backend: str, rng: np.random.Generator) -> None:
    """Three momentum-SGD steps; the gradient is accumulated across programs with atomics."""
    B, D, BLOCK_B, BLOCK_D = 100, 37, 16, 64
    lr, momentum = 0.05, 0.9
    x = rng.standard_normal((B, D), dtype=np.float32)
    y = rng.standard_normal(B, dtype=np.float32)
    w = rng.standard_normal(D, dtype=np.float32) * 0.1
    v = np.zeros(D, dtype=np.float32)
    grad = np.zeros(D, dtype=np.float32)
    w_ref, v_ref = w.astype(np.float64), v.astype(np.float64)
    for _ in range(3):
        linreg_grad_kernel[(triton.cdiv(B, BLOCK_B),)](
            x, y, w, grad, B, D, BLOCK_B=BLOCK_B, BLOCK_D=BLOCK_D, backend=backend
        )
        g_ref = (x @ w_ref - y) @ x
        np.testing.assert_allclose(grad, g_ref, rtol=1e-4, atol=1e-4)
        sgd_momentum_kernel[(triton.cdiv(D, 16),)](
            w, v, grad, D, lr, momentum, 1.0 / B, BLOCK=16, backend=backend
        )
        v_ref = momentum * v_ref + g_ref / B
        w_ref = w_ref - lr * v_ref
        np.testing.assert_allclose(w, w_ref, rtol=1e-4, atol=1e-5)
        assert np.all(grad == 0), "the update kernel clears the gradient"


# ---------------------------------------------------------------- batch norm


def test_batch_norm_training_forward(backend: str, rng: np.random.Generator) -> None:
    N, C, eps, momentum = 50, 20, 1e-5, 0.1
    x = (rng.standard_normal((N, C)) * 2 + 1).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, C).astype(np.float32)
    beta = rng.standard_normal(C, dtype=np.float32)
    y = np.zeros_like(x)
    mean = np.zeros(C, dtype=np.float32)
    var = np.zeros(C, dtype=np.float32)
    run_mean = np.zeros(C, dtype=np.float32)
    run_var = np.ones(C, dtype=np.float32)
    batch_norm_fwd_kernel[(triton.cdiv(C, 8),)](
        x, y, gamma, beta, mean, var, run_mean, run_var, N, C, eps, momentum,
        BLOCK_N=16, BLOCK_C=8, backend=backend,
    )  # fmt: skip
    x64 = x.astype(np.float64)
    mean_ref, var_ref = x64.mean(axis=0), x64.var(axis=0)
    y_ref = (x64 - mean_ref) / np.sqrt(var_ref + eps) * gamma + beta
    np.testing.assert_allclose(mean, mean_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var, var_ref, rtol=1e-5)
    np.testing.assert_allclose(y, y_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(run_mean, momentum * mean_ref, rtol=1e-5, atol=1e-7)
    unbiased = x64.var(axis=0, ddof=1)
    np.testing.assert_allclose(run_var, (1 - momentum) + momentum * unbiased, rtol=1e-5)


# ---------------------------------------------------------------- RNN and LSTM


def test_rnn_forward(backend: str, rng: np.random.Generator) -> None:
    T, B, D_IN, H = 6, 40, 24, 20
    x = rng.standard_normal((T, B, D_IN), dtype=np.float32)
    h0 = rng.standard_normal((B, H), dtype=np.float32) * 0.5
    wx = (rng.standard_normal((D_IN, H)) / np.sqrt(D_IN)).astype(np.float32)
    wh = (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32)
    b = rng.standard_normal(H, dtype=np.float32) * 0.1
    out = np.zeros((T, B, H), dtype=np.float32)
    rnn_fwd_kernel[(triton.cdiv(B, 16),)](
        x, h0, wx, wh, b, out, T, B, D_IN, H,
        BLOCK_B=16, BLOCK_I=32, BLOCK_H=32, backend=backend,
    )  # fmt: skip
    h = h0.astype(np.float64)
    for t in range(T):
        h = np.tanh(x[t] @ wx.astype(np.float64) + h @ wh + b)
        np.testing.assert_allclose(out[t], h, rtol=1e-4, atol=1e-5, err_msg=f"step {t}")


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-z))


def test_lstm_cell(backend: str, rng: np.random.Generator) -> None:
    B, D_IN, H = 30, 24, 20
    x = rng.standard_normal((B, D_IN), dtype=np.float32)
    h = rng.standard_normal((B, H), dtype=np.float32) * 0.5
    c = rng.standard_normal((B, H), dtype=np.float32) * 0.5
    wx = (rng.standard_normal((D_IN, 4 * H)) / np.sqrt(D_IN)).astype(np.float32)
    wh = (rng.standard_normal((H, 4 * H)) / np.sqrt(H)).astype(np.float32)
    b = rng.standard_normal(4 * H, dtype=np.float32) * 0.1
    h_out = np.zeros_like(h)
    c_out = np.zeros_like(c)
    lstm_cell_kernel[(triton.cdiv(B, 16),)](
        x, h, c, wx, wh, b, h_out, c_out, B, D_IN, H,
        BLOCK_B=16, BLOCK_I=32, BLOCK_H=32, backend=backend,
    )  # fmt: skip
    gates = x.astype(np.float64) @ wx + h.astype(np.float64) @ wh + b
    i, f, g, o = (gates[:, k * H : (k + 1) * H] for k in range(4))
    c_ref = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    h_ref = sigmoid(o) * np.tanh(c_ref)
    np.testing.assert_allclose(c_out, c_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h_out, h_ref, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- k-means


def kmeans_step_ref(points: np.ndarray, centroids: np.ndarray):  # noqa: ANN201
    """Assignment (fp32 distances summed over d in order, as the kernel does) and new centroids."""
    dist = np.zeros((points.shape[0], centroids.shape[0]), dtype=np.float32)
    for d in range(points.shape[1]):
        diff = points[:, d, None] - centroids[None, :, d]
        dist += diff * diff
    assign = dist.argmin(axis=1)
    new = centroids.astype(np.float64).copy()
    counts = np.bincount(assign, minlength=centroids.shape[0])
    for k in np.nonzero(counts)[0]:
        new[k] = points[assign == k].astype(np.float64).mean(axis=0)
    return assign, new, counts


def test_kmeans(backend: str, rng: np.random.Generator) -> None:
    N, K, D, BLOCK_N, BLOCK_K = 300, 5, 3, 64, 8
    centers = rng.uniform(-5, 5, (K, D))
    points = (centers[rng.integers(0, K, N)] + rng.standard_normal((N, D))).astype(np.float32)
    centroids = points[:K].copy()
    centroids[K - 1] = 100.0  # far from every point: its cluster stays empty
    assign = np.full(N, -1, dtype=np.int32)
    sums = np.zeros((K, D), dtype=np.float32)
    counts = np.zeros(K, dtype=np.int32)
    for step in range(2):
        assign_ref, centroids_ref, counts_ref = kmeans_step_ref(points, centroids)
        kmeans_assign_kernel[(triton.cdiv(N, BLOCK_N),)](
            points, centroids, assign, sums, counts, N, K,
            D=D, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, backend=backend,
        )  # fmt: skip
        np.testing.assert_array_equal(assign, assign_ref, err_msg=f"step {step}")
        np.testing.assert_array_equal(counts, counts_ref, err_msg=f"step {step}")
        kmeans_update_kernel[(1,)](
            centroids, sums, counts, K, D=D, BLOCK_K=BLOCK_K, backend=backend
        )
        np.testing.assert_allclose(centroids, centroids_ref, rtol=1e-5, atol=1e-5)
        assert np.all(counts == 0) and np.all(sums == 0)
    assert centroids[K - 1, 0] == 100.0, "an empty cluster keeps its centroid"


# ---------------------------------------------------------------- moving average


@pytest.mark.parametrize(("T", "window", "block"), [(300, 8, 128), (50, 5, 64)])
def test_moving_average(
    backend: str, rng: np.random.Generator, T: int, window: int, block: int
) -> None:
    rows = 5
    x = rng.standard_normal((rows, T), dtype=np.float32)
    out = np.zeros_like(x)
    moving_average_kernel[(rows,)](x, out, T, WINDOW=window, BLOCK=block, backend=backend)
    cs = np.concatenate([np.zeros((rows, 1)), np.cumsum(x.astype(np.float64), axis=1)], axis=1)
    t = np.arange(T)
    start = np.maximum(t + 1 - window, 0)
    expected = (cs[:, t + 1] - cs[:, start]) / (t + 1 - start)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- CSR SpMV


def test_csr_spmv(backend: str, rng: np.random.Generator) -> None:
    rows, cols = 50, 70
    dense = rng.standard_normal((rows, cols)).astype(np.float32)
    dense[rng.random((rows, cols)) > 0.15] = 0
    dense[7] = 0  # an empty row
    dense[11, :] = rng.standard_normal(cols)  # a full row, longer than one block
    indptr = np.zeros(rows + 1, dtype=np.int32)
    indptr[1:] = np.cumsum((dense != 0).sum(axis=1))
    indices = np.nonzero(dense)[1].astype(np.int32)
    data = dense[dense != 0].astype(np.float32)
    x = rng.standard_normal(cols, dtype=np.float32)
    y = np.full(rows, np.nan, dtype=np.float32)
    csr_spmv_kernel[(rows,)](indptr, indices, data, x, y, BLOCK=16, backend=backend)
    np.testing.assert_allclose(y, dense.astype(np.float64) @ x, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- image augmentation


def test_image_augmentation(backend: str, rng: np.random.Generator) -> None:
    N, H, W, C = 3, 21, 19, 3
    top, left, OH, OW = 2, 3, 17, 13
    img = rng.integers(0, 256, (N, H, W, C), dtype=np.uint8)
    flip = np.array([0, 1, 1], dtype=np.int32)
    mean = np.array([0.485, 0.456, 0.406], dtype=np.float32)
    std = np.array([0.229, 0.224, 0.225], dtype=np.float32)
    out = np.full((N, C, OH, OW), np.nan, dtype=np.float32)
    grid = (N * C, triton.cdiv(OH, 8))
    augment_kernel[grid](
        img, flip, mean, std, out, H, W, top, left, OH, OW,
        C=C, BLOCK_H=8, BLOCK_W=16, backend=backend,
    )  # fmt: skip
    crop = img[:, top : top + OH, left : left + OW, :].astype(np.float64)
    crop[flip == 1] = crop[flip == 1, :, ::-1, :]
    expected = ((crop / 255.0 - mean) / std).transpose(0, 3, 1, 2)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- histogram


def test_histogram(backend: str, rng: np.random.Generator) -> None:
    n, num_bins = 5000, 37
    # Many duplicates inside each block, plus values outside the range.
    x = rng.integers(-3, num_bins + 3, n).astype(np.int32)
    x[:600] = 5
    hist = np.zeros(num_bins, dtype=np.int32)
    histogram_kernel[(triton.cdiv(n, 512),)](x, hist, n, num_bins, BLOCK=512, backend=backend)
    expected = np.bincount(x[(x >= 0) & (x < num_bins)], minlength=num_bins)
    np.testing.assert_array_equal(hist, expected)


# ---------------------------------------------------------------- row sort


@pytest.mark.parametrize("descending", [False, True])
def test_sort_rows(backend: str, rng: np.random.Generator, descending: bool) -> None:
    rows, n_cols = 7, 50
    x = rng.standard_normal((rows, n_cols), dtype=np.float32)
    x[0, :10] = 1.5  # ties
    out = np.zeros_like(x)
    sort_rows_kernel[(rows,)](x, out, n_cols, DESCENDING=descending, BLOCK=64, backend=backend)
    expected = np.sort(x, axis=1)
    if descending:
        expected = expected[:, ::-1]
    np.testing.assert_array_equal(out, expected)
