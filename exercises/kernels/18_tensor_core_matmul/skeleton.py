"""Exercise 18: an fp16 matmul that runs on the tensor cores (see README.md).

Run ``minitriton exercises check 18``.
"""

import minitriton as triton
import minitriton.language as tl

# TODO: choose tile sizes the tensor cores take (README.md, "Which dots
#       reach the tensor cores"). These small ones compute the right numbers
#       but compile to FMAs.
BLOCK_M = 16
BLOCK_N = 16
BLOCK_K = 16


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
    # TODO: the K loop of exercise 07, on fp16 tiles: load the A and B tiles
    #       (masked, other=0.0) and keep them fp16 up to the dot;
    #       accumulate in fp32 with acc = tl.dot(a, b, acc).
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
