"""Exercise 07: tiled matrix multiplication C = A @ B (see README.md).

Run ``minitriton exercises check 7``.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # TODO: loop over K in steps of BLOCK_K. In each step, load the
    #       BLOCK_M x BLOCK_K tile of A and the BLOCK_K x BLOCK_N tile of B
    #       (strides! masks! what must masked lanes hold?), and accumulate
    #       acc += tl.dot(a_tile, b_tile).
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
