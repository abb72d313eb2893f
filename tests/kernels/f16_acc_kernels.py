"""Dots that accumulate in fp16 (``out_dtype=tl.float16``, or an fp16 ``acc``)."""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def dot_out_kernel(x_ptr, y_ptr, z_ptr, M: tl.constexpr, N: tl.constexpr,
                   K: tl.constexpr, F16_OUT: tl.constexpr, CHAIN: tl.constexpr):  # fmt: skip
    """One ``tl.dot`` as in Triton's ``test_dot``; ``CHAIN``: times ``y``'s first N rows."""
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    x = tl.load(x_ptr + m[:, None] * K + k[None, :])
    y = tl.load(y_ptr + k[:, None] * N + n[None, :])
    z = tl.dot(x, y, out_dtype=tl.float16) if F16_OUT else tl.dot(x, y)
    if CHAIN:
        w = tl.load(y_ptr + n[:, None] * N + n[None, :])
        z = tl.dot(z.to(w.dtype), w, out_dtype=tl.float16)
    tl.store(z_ptr + m[:, None] * N + n[None, :], z)


@triton.jit
def matmul_f16_acc_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):  # fmt: skip
    """``C = A @ B`` (row-major, K a multiple of ``BLOCK_K``) with an fp16 accumulator."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=mask)
