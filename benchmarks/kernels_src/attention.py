"""Attention forward, FlashAttention style (after Triton tutorial 06, non-causal).

4 heads (batch x heads) of 256 tokens, head dim 64, fp16 q/k/v, fp32 softmax
and accumulator; each program owns BLOCK_M query rows of one head.
"""

from __future__ import annotations

import numpy as np

from kernels_src.lang import Case, device, tl, triton

BLOCK_M = 64
BLOCK_N = 64


@triton.jit
def attn_fwd(
    Q,
    K,
    V,
    Out,
    sm_scale,
    stride_h,
    stride_n,
    N_CTX,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)
    base = off_h * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_n + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1/log(2): exp2 instead of exp
    for start_n in range(0, N_CTX, BLOCK_N):
        # K is loaded transposed, (HEAD_DIM, BLOCK_N), as in the tutorial.
        k = tl.load(K + base + (start_n + offs_n)[None, :] * stride_n + offs_d[:, None])
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * stride_n + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    out_ptrs = Out + base + offs_m[:, None] * stride_n + offs_d[None, :]
    tl.store(out_ptrs, acc.to(tl.float16))


def setup(rng: np.random.Generator) -> Case:
    """Random fp16 q, k, v of shape (4, 256, 64); output fp16."""
    heads, n_ctx, head_dim = 4, 256, 64
    q, k, v = (
        (0.5 * rng.standard_normal((heads, n_ctx, head_dim), dtype=np.float32)).astype(np.float16)
        for _ in range(3)
    )
    out = np.zeros_like(q)
    sm_scale = 1.0 / head_dim**0.5
    args = (device(q), device(k), device(v), device(out), sm_scale, n_ctx * head_dim, head_dim)
    grid = (triton.cdiv(n_ctx, BLOCK_M), heads)

    def launch() -> None:
        attn_fwd[grid](*args, n_ctx, HEAD_DIM=head_dim, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)

    def check() -> None:
        q32, k32, v32 = (t.astype(np.float32) for t in (q, k, v))
        s = q32 @ k32.transpose(0, 2, 1) * sm_scale
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        expected = (p / p.sum(axis=-1, keepdims=True)) @ v32
        np.testing.assert_allclose(out.astype(np.float32), expected, rtol=1e-2, atol=1e-2)

    return Case(launch, check)
