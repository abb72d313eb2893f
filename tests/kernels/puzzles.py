"""Puzzle-style kernels (after Sasha Rush's Triton-Puzzles), written as for real Triton.

Each kernel masks every load and store, so the sizes need not be multiples of
the block sizes.
"""

# fmt: off
import minitriton as triton
import minitriton.language as tl


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    """``z[j, i] = x[i] + y[j]`` for ``x`` of length N0 and ``y`` of length N1."""
    pid_0 = tl.program_id(0)
    pid_1 = tl.program_id(1)
    offs_i = pid_0 * B0 + tl.arange(0, B0)
    offs_j = pid_1 * B1 + tl.arange(0, B1)
    mask_i = offs_i < N0
    mask_j = offs_j < N1
    x = tl.load(x_ptr + offs_i, mask=mask_i)
    y = tl.load(y_ptr + offs_j, mask=mask_j)
    z = x[None, :] + y[:, None]
    z_offs = offs_j[:, None] * N0 + offs_i[None, :]
    tl.store(z_ptr + z_offs, z, mask=mask_j[:, None] & mask_i[None, :])


@triton.jit
def outer_mul_relu_kernel(x_ptr, y_ptr, z_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr):
    """Fused ``z[j, i] = relu(x[j, i] * y[j])`` for ``x`` of shape (N1, N0)."""
    pid_0 = tl.program_id(0)
    pid_1 = tl.program_id(1)
    offs_i = pid_0 * B0 + tl.arange(0, B0)
    offs_j = pid_1 * B1 + tl.arange(0, B1)
    mask = (offs_j[:, None] < N1) & (offs_i[None, :] < N0)
    offs = offs_j[:, None] * N0 + offs_i[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs_j, mask=offs_j < N1, other=0.0)
    z = tl.maximum(x * y[:, None], 0.0)
    tl.store(z_ptr + offs, z, mask=mask)


@triton.jit
def outer_mul_relu_bwd_kernel(
    x_ptr, y_ptr, dz_ptr, dx_ptr, N0, N1, B0: tl.constexpr, B1: tl.constexpr
):
    """Backward of ``outer_mul_relu_kernel`` with respect to ``x``."""
    pid_0 = tl.program_id(0)
    pid_1 = tl.program_id(1)
    offs_i = pid_0 * B0 + tl.arange(0, B0)
    offs_j = pid_1 * B1 + tl.arange(0, B1)
    mask = (offs_j[:, None] < N1) & (offs_i[None, :] < N0)
    offs = offs_j[:, None] * N0 + offs_i[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs_j, mask=offs_j < N1, other=0.0)
    dz = tl.load(dz_ptr + offs, mask=mask, other=0.0)
    xy = x * y[:, None]
    dx = tl.where(xy > 0, y[:, None] * dz, 0.0)
    tl.store(dx_ptr + offs, dx, mask=mask)


@triton.jit
def long_sum_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    """Row sums of ``x`` (N0 rows of length T), looping over the row in B1 chunks."""
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_mask = rows < N0
    acc = tl.zeros([B0], dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_mask[:, None] & (cols[None, :] < T)
        x = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(x, axis=1)
    tl.store(z_ptr + rows, acc, mask=row_mask)


@triton.jit
def long_softmax_kernel(x_ptr, z_ptr, N0, T, B0: tl.constexpr, B1: tl.constexpr):
    """Row softmax over long rows: an online max/sum pass, then a normalizing pass."""
    log2_e = 1.44269504
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    row_mask = rows < N0
    row_max = tl.full([B0], -float("inf"), dtype=tl.float32)
    denom = tl.zeros([B0], dtype=tl.float32)
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_mask[:, None] & (cols[None, :] < T)
        x = tl.load(x_ptr + rows[:, None] * T + cols[None, :], mask=mask, other=-float("inf"))
        new_max = tl.maximum(row_max, tl.max(x, axis=1))
        # Rescale the running sum to the new maximum before adding this chunk.
        scale = tl.exp2((row_max - new_max) * log2_e)
        p = tl.exp2((x - new_max[:, None]) * log2_e)
        denom = denom * scale + tl.sum(p, axis=1)
        row_max = new_max
    for start in range(0, T, B1):
        cols = start + tl.arange(0, B1)
        mask = row_mask[:, None] & (cols[None, :] < T)
        offs = rows[:, None] * T + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=-float("inf"))
        z = tl.exp2((x - row_max[:, None]) * log2_e) / denom[:, None]
        tl.store(z_ptr + offs, z, mask=mask)


@triton.jit
def conv2d_kernel(
    x_ptr, w_ptr, out_ptr,
    C, H, W, F, OH, OW,
    KH: tl.constexpr, KW: tl.constexpr, BH: tl.constexpr, BW: tl.constexpr,
):
    """Direct 'valid' 2-D cross-correlation: x (B, C, H, W), w (F, C, KH, KW) -> (B, F, OH, OW).

    Program (b * F + f, i, j) computes a BH x BW tile of output plane (b, f).
    """
    pid_bf = tl.program_id(0)
    b = pid_bf // F
    f = pid_bf % F
    oh = tl.program_id(1) * BH + tl.arange(0, BH)
    ow = tl.program_id(2) * BW + tl.arange(0, BW)
    out_mask = (oh[:, None] < OH) & (ow[None, :] < OW)
    acc = tl.zeros([BH, BW], dtype=tl.float32)
    for c in range(0, C):
        x_plane = x_ptr + (b * C + c) * H * W
        w_plane = w_ptr + (f * C + c) * KH * KW
        for kh in tl.static_range(KH):
            for kw in tl.static_range(KW):
                wv = tl.load(w_plane + kh * KW + kw)
                x_offs = (oh[:, None] + kh) * W + (ow[None, :] + kw)
                xv = tl.load(x_plane + x_offs, mask=out_mask, other=0.0)
                acc += xv * wv
    out_offs = (pid_bf * OH + oh[:, None]) * OW + ow[None, :]
    tl.store(out_ptr + out_offs, acc, mask=out_mask)


@triton.jit
def int4_matmul_kernel(
    a_ptr, bq_ptr, scale_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """``C = A @ (Q * scale)`` with A fp16 (M, K) and Q signed int4 (K, N), scale per column.

    Q is packed two values per int8 along K: row ``2r`` of Q is the low nibble
    of packed row ``r``, row ``2r + 1`` the high nibble (K is even). The dot is
    split into even and odd K so that each nibble plane is a plain block.
    """
    HALF_K: tl.constexpr = BLOCK_K // 2
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_h = tl.arange(0, HALF_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        rows = k // 2 + offs_h  # packed rows of this step
        row_mask = rows < K // 2
        a_mask = (offs_m[:, None] < M) & row_mask[None, :]
        a_even_ptrs = a_ptr + offs_m[:, None] * stride_am + (2 * rows)[None, :] * stride_ak
        a_even = tl.load(a_even_ptrs, mask=a_mask, other=0.0)
        a_odd = tl.load(a_even_ptrs + stride_ak, mask=a_mask, other=0.0)
        b_mask = row_mask[:, None] & (offs_n[None, :] < N)
        b_ptrs = bq_ptr + rows[:, None] * stride_bk + offs_n[None, :] * stride_bn
        packed = tl.load(b_ptrs, mask=b_mask, other=0)
        # Sign-extend each nibble with arithmetic shifts on int8.
        low = (packed << 4) >> 4
        high = packed >> 4
        acc = tl.dot(a_even, low.to(tl.float16), acc)
        acc = tl.dot(a_odd, high.to(tl.float16), acc)
    scale = tl.load(scale_ptr + offs_n, mask=offs_n < N, other=0.0)
    c = acc * scale[None, :]
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
