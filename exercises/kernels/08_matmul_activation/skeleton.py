"""Exercise 08: fused linear layer, leaky_relu(A @ W + bias) (see README.md).

The matmul is done (it is exercise 07's). Run ``minitriton exercises check 8``.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def linear_leaky_relu_kernel(
    a_ptr, w_ptr, bias_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_wk, stride_wn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # TODO: the K loop of exercise 07 (bring yours): acc += tl.dot(a_tile, w_tile)
    #       over steps of BLOCK_K, with W's strides stride_wk and stride_wn.
    # TODO: the epilogue, while the tile is still in registers:
    #       add bias[n] to every row of the tile, then apply the leaky ReLU
    #       (z if z > 0 else 0.01 * z).
    out = acc
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, out, mask=(rm[:, None] < M) & (rn[None, :] < N))
