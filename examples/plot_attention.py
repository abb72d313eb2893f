"""
Attention
=========

Scaled dot-product attention, ``softmax(Q K^T / sqrt(d)) V``, computed the
FlashAttention way: each program owns ``BLOCK_M`` query rows and streams over
the keys and values in blocks of ``BLOCK_N``, keeping a running maximum
``m_i`` and a running sum ``l_i`` of the softmax (the "online softmax"), so the
full ``seq x seq`` score matrix never exists.
"""

# sphinx_gallery_thumbnail_path = "_static/thumbs/plot_attention.png"

import numpy as np

import minitriton as triton
import minitriton.language as tl


@triton.jit
def attention_fwd(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    seq_len,
    sm_scale,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    start_m = tl.program_id(0) * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(
        q_ptr + offs_m[:, None] * HEAD_DIM + offs_d[None, :],
        mask=offs_m[:, None] < seq_len,
        other=0.0,
    )
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, seq_len, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kv_mask = offs_n[:, None] < seq_len
        k = tl.load(k_ptr + offs_n[:, None] * HEAD_DIM + offs_d[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + offs_n[:, None] * HEAD_DIM + offs_d[None, :], mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * sm_scale
        s = tl.where(offs_n[None, :] < seq_len, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p, v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(
        o_ptr + offs_m[:, None] * HEAD_DIM + offs_d[None, :], out, mask=offs_m[:, None] < seq_len
    )


def attention(q, k, v):
    """Single-head attention of ``(seq, d)`` arrays."""
    seq_len, head_dim = q.shape
    o = np.empty_like(q)
    BLOCK_M, BLOCK_N = 16, 16
    grid = (triton.cdiv(seq_len, BLOCK_M),)
    attention_fwd[grid](
        q,
        k,
        v,
        o,
        seq_len,
        float(1.0 / np.sqrt(head_dim)),  # a Python float: np.float64 would make the kernel fp64
        HEAD_DIM=head_dim,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
    )
    return o


# %%
# Check against NumPy, with a sequence length that is not a multiple of the
# blocks.

rng = np.random.default_rng(0)
seq_len, head_dim = 100, 32
q, k, v = (rng.standard_normal((seq_len, head_dim)).astype(np.float32) for _ in range(3))
o = attention(q, k, v)

scores = q @ k.T / np.sqrt(head_dim)
weights = np.exp(scores - scores.max(axis=1, keepdims=True))
expected = (weights / weights.sum(axis=1, keepdims=True)) @ v
# The reference is exact fp32; both tl.dot calls round their fp32 inputs to
# TF32 (Triton's default input_precision), hence the tolerance.
np.testing.assert_allclose(o, expected, rtol=1e-2, atol=1e-2)
print("max error:", np.abs(o - expected).max())
