"""Exercise 16, reference solution: matmul with int4 weights, dequantized on the fly."""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def int4_matmul_kernel(
    a_ptr, wq_ptr, scale_ptr, c_ptr, M, N, K,
    stride_am, stride_wq, stride_sg, stride_cm,
    GROUP: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    half = tl.arange(0, BLOCK_K // 2)
    m_mask = rm[:, None] < M
    n_mask = rn[None, :] < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        # Even and odd columns of A meet the low and high nibbles of W.
        a_even = tl.load(a_ptr + rm[:, None] * stride_am + (k + 2 * half)[None, :],
                         mask=m_mask, other=0.0)  # fmt: skip
        a_odd = tl.load(a_ptr + rm[:, None] * stride_am + (k + 2 * half + 1)[None, :],
                        mask=m_mask, other=0.0)  # fmt: skip
        packed = tl.load(wq_ptr + (k // 2 + half)[:, None] * stride_wq + rn[None, :],
                         mask=n_mask, other=0)  # fmt: skip
        lo = (packed & 0xF).to(tl.float32) - 8.0
        hi = (packed >> 4).to(tl.float32) - 8.0
        scale = tl.load(scale_ptr + (k // GROUP) * stride_sg + rn, mask=rn < N, other=0.0)
        acc += (tl.dot(a_even, lo) + tl.dot(a_odd, hi)) * scale[None, :]
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc, mask=m_mask & n_mask)
