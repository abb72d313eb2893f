"""Exercise 16: matmul with int4 weights (see README.md).

Run ``minitriton exercises check 16``.
"""

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
        # TODO 1: unpack. Byte (k//2 + j, n) holds q[k + 2j, n] in its low
        #         4 bits and q[k + 2j + 1, n] in its high 4 bits; the weight
        #         is q - 8 (as fp32).
        lo = packed.to(tl.float32)
        hi = packed.to(tl.float32)
        # TODO 2: every group of GROUP rows of W shares one scale per column
        #         (scale is K // GROUP x N). BLOCK_K == GROUP, so this whole
        #         step uses row k // GROUP of scale. Apply it.
        acc += tl.dot(a_even, lo) + tl.dot(a_odd, hi)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc, mask=m_mask & n_mask)
