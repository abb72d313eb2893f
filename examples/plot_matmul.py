"""
Matrix multiplication
=====================

A blocked matrix product ``C = A @ B``, as in Triton's matmul tutorial: each
program computes one ``BLOCK_M x BLOCK_N`` tile of ``C``, walking along ``K``
in steps of ``BLOCK_K`` and accumulating with ``tl.dot`` in fp32. Masks make
it work for sizes that are not multiples of the block sizes.

``tl.dot`` on fp32 inputs uses TF32 by default, on the GPU as in Triton and
on the emulator too: the inputs are rounded to 10 mantissa bits before they
are multiplied, so the check against NumPy's exact product below needs a
tolerance of about 1e-2 (``input_precision="ieee"`` computes exactly).
"""

# sphinx_gallery_thumbnail_path = "_static/thumbs/plot_matmul.png"

import numpy as np

import minitriton as triton
import minitriton.language as tl


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptrs, acc, mask=c_mask)


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` with the kernel above; strides are counted in elements."""
    M, K = a.shape
    _, N = b.shape
    c = np.empty((M, N), dtype=np.float32)
    BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 16
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    matmul_kernel[grid](
        a,
        b,
        c,
        M,
        N,
        K,
        a.strides[0] // 4,
        a.strides[1] // 4,
        b.strides[0] // 4,
        b.strides[1] // 4,
        c.strides[0] // 4,
        c.strides[1] // 4,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
    )
    return c


# %%
# Check against NumPy, with sizes that are not multiples of the blocks.

rng = np.random.default_rng(0)
a = rng.standard_normal((70, 50)).astype(np.float32)
b = rng.standard_normal((50, 40)).astype(np.float32)
c = matmul(a, b)
expected = a @ b
# The reference is exact fp32; tl.dot rounded the inputs to TF32 (see above).
np.testing.assert_allclose(c, expected, rtol=1e-2, atol=1e-2)
print("max error:", np.abs(c - expected).max())
