"""Data-processing kernels: k-means, moving average, CSR SpMV, image augmentation,
histogram and row sort. Written as for real Triton; sizes need not fill the blocks.
"""

# fmt: off
import minitriton as triton
import minitriton.language as tl


@triton.jit
def kmeans_assign_kernel(
    points_ptr, centroids_ptr, assign_ptr, sums_ptr, counts_ptr,
    N, K,
    D: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """Assign each point (N, D) to its nearest centroid (K, D), then add the point to
    its centroid's running sum and count with atomics.
    """
    offs = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask = offs < N
    k_mask = offs_k < K
    dist = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    for d in tl.static_range(D):
        p = tl.load(points_ptr + offs * D + d, mask=mask, other=0.0)
        c = tl.load(centroids_ptr + offs_k * D + d, mask=k_mask, other=0.0)
        diff = p[:, None] - c[None, :]
        dist += diff * diff
    dist = tl.where(k_mask[None, :], dist, float("inf"))
    assign = tl.argmin(dist, axis=1)
    tl.store(assign_ptr + offs, assign, mask=mask)
    for d in tl.static_range(D):
        p = tl.load(points_ptr + offs * D + d, mask=mask, other=0.0)
        tl.atomic_add(sums_ptr + assign * D + d, p, mask=mask)
    tl.atomic_add(counts_ptr + assign, tl.full((BLOCK_N,), 1, tl.int32), mask=mask)


@triton.jit
def kmeans_update_kernel(
    centroids_ptr, sums_ptr, counts_ptr, K, D: tl.constexpr, BLOCK_K: tl.constexpr
):
    """``centroid = sum / count`` where the count is positive; clear sums and counts."""
    offs_k = tl.arange(0, BLOCK_K)
    k_mask = offs_k < K
    count = tl.load(counts_ptr + offs_k, mask=k_mask, other=0)
    for d in tl.static_range(D):
        s = tl.load(sums_ptr + offs_k * D + d, mask=k_mask, other=0.0)
        old = tl.load(centroids_ptr + offs_k * D + d, mask=k_mask, other=0.0)
        new = tl.where(count > 0, s / tl.maximum(count, 1).to(tl.float32), old)
        tl.store(centroids_ptr + offs_k * D + d, new, mask=k_mask)
        tl.store(sums_ptr + offs_k * D + d, tl.zeros_like(s), mask=k_mask)
    tl.store(counts_ptr + offs_k, tl.zeros_like(count), mask=k_mask)


@triton.jit
def moving_average_kernel(x_ptr, out_ptr, T, WINDOW: tl.constexpr, BLOCK: tl.constexpr):
    """Trailing moving average of each row of x (rows, T) over WINDOW samples.

    ``sum(x[t-W+1..t]) = cumsum(x[s] - x[s-W])[t]``; a carry links the blocks.
    Early samples average over the ``t + 1`` values available.
    """
    row = tl.program_id(0)
    x_row = x_ptr + row * T
    carry = 0.0
    for start in range(0, T, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < T
        x = tl.load(x_row + offs, mask=mask, other=0.0)
        old = tl.load(x_row + offs - WINDOW, mask=mask & (offs >= WINDOW), other=0.0)
        delta = x - old
        window_sum = tl.cumsum(delta, axis=0) + carry
        carry += tl.sum(delta, axis=0)
        count = tl.minimum(offs + 1, WINDOW).to(tl.float32)
        tl.store(out_ptr + row * T + offs, window_sum / count, mask=mask)


@triton.jit
def csr_spmv_kernel(indptr_ptr, indices_ptr, data_ptr, x_ptr, y_ptr, BLOCK: tl.constexpr):
    """``y = A @ x`` for A in CSR form, one row per program, looping over the row's nonzeros."""
    row = tl.program_id(0)
    start = tl.load(indptr_ptr + row)
    end = tl.load(indptr_ptr + row + 1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(start, end, BLOCK):
        offs = k + tl.arange(0, BLOCK)
        mask = offs < end
        cols = tl.load(indices_ptr + offs, mask=mask, other=0)
        vals = tl.load(data_ptr + offs, mask=mask, other=0.0)
        acc += vals * tl.load(x_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def augment_kernel(
    img_ptr, flip_ptr, mean_ptr, std_ptr, out_ptr,
    H, W, top, left, OH, OW,
    C: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr,
):
    """Crop, optionally flip horizontally, and normalize uint8 HWC images into fp32 CHW.

    img is (N, H, W, C) uint8; out is (N, C, OH, OW). ``flip[n] != 0`` mirrors
    image n. Program (n * C + c, i) writes a BLOCK_H-row band of one plane.
    """
    pid = tl.program_id(0)
    n = pid // C
    c = pid % C
    oh = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    ow = tl.arange(0, BLOCK_W)
    mask = (oh[:, None] < OH) & (ow[None, :] < OW)
    flip = tl.load(flip_ptr + n)
    src_w = tl.where(flip != 0, left + OW - 1 - ow, left + ow)
    src_h = top + oh
    src = img_ptr + ((n * H + src_h[:, None]) * W + src_w[None, :]) * C + c
    pixel = tl.load(src, mask=mask, other=0)
    mean = tl.load(mean_ptr + c)
    std = tl.load(std_ptr + c)
    value = (pixel.to(tl.float32) / 255.0 - mean) / std
    tl.store(out_ptr + (pid * OH + oh[:, None]) * OW + ow[None, :], value, mask=mask)


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n, NUM_BINS, BLOCK: tl.constexpr):
    """Count integer values in ``[0, NUM_BINS)``; others are ignored."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    valid = mask & (x >= 0) & (x < NUM_BINS)
    tl.atomic_add(hist_ptr + x, tl.full((BLOCK,), 1, tl.int32), mask=valid)


@triton.jit
def sort_rows_kernel(x_ptr, out_ptr, n_cols, DESCENDING: tl.constexpr, BLOCK: tl.constexpr):
    """Sort each row of x (rows, n_cols); padding sorts to the end of the row."""
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    pad = -float("inf") if DESCENDING else float("inf")
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=pad)
    y = tl.sort(x, descending=DESCENDING)
    tl.store(out_ptr + row * n_cols + offs, y, mask=mask)
