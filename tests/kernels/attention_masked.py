"""Fused attention forward after Triton's tutorial 06, with plain pointers and masks.

The tutorial's kernel (see ``fused_attention.py``) needs the sequence length to
be a multiple of the blocks. This version keeps its structure (BLOCK_M x
BLOCK_N tiles, online softmax in base 2 with ``qk_scale``, the STAGE constexpr
branches for the off-band and on-band loops) and masks the ragged last block.
"""

# fmt: off
import minitriton as triton
import minitriton.language as tl


@triton.jit
def _attn_fwd_inner_masked(
    acc, l_i, m_i, q,
    K, V, stride_kn, stride_kk, stride_vn, stride_vk,
    start_m, qk_scale, N_CTX,
    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
    STAGE: tl.constexpr, offs_m, offs_n,
):
    # range of values handled by this stage
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    # causal = False
    else:
        lo, hi = 0, N_CTX
    offs_d = tl.arange(0, HEAD_DIM)
    # loop over k, v and update accumulator
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        col_mask = cols < N_CTX
        # -- compute qk ----
        k = tl.load(
            K + offs_d[:, None] * stride_kk + cols[None, :] * stride_kn,
            mask=col_mask[None, :],
            other=0.0,
        )
        qk = tl.dot(q, k)
        if STAGE == 2:
            mask = (offs_m[:, None] >= cols[None, :]) & col_mask[None, :]
        else:
            mask = col_mask[None, :]
        qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        qk -= m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        # -- update m_i and l_i
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        # -- update output accumulator --
        acc = acc * alpha[:, None]
        v = tl.load(
            V + cols[:, None] * stride_vn + offs_d[None, :] * stride_vk,
            mask=col_mask[:, None],
            other=0.0,
        )
        p = p.to(tl.float16)
        acc = tl.dot(p, v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def attn_fwd_masked(
    Q, K, V, sm_scale, M, Out,
    stride_qz, stride_qh, stride_qm, stride_qk,
    stride_kz, stride_kh, stride_kn, stride_kk,
    stride_vz, stride_vh, stride_vn, stride_vk,
    stride_oz, stride_oh, stride_om, stride_ok,
    Z, H, N_CTX,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    STAGE: tl.constexpr,
):
    """Attention for (Z, H, N_CTX, HEAD_DIM) fp16 tensors; STAGE 3 is causal, 1 is not.

    Also writes M, the base-2 log-sum-exp of each row of scores, as the tutorial does.
    """
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_offset = off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    k_offset = off_z.to(tl.int64) * stride_kz + off_h.to(tl.int64) * stride_kh
    v_offset = off_z.to(tl.int64) * stride_vz + off_h.to(tl.int64) * stride_vh
    o_offset = off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh
    # initialize offsets
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    row_mask = offs_m < N_CTX
    # initialize pointer to m and l
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    # load scales
    qk_scale = sm_scale
    qk_scale *= 1.44269504  # 1/log(2)
    # load q: it will stay in SRAM throughout
    q_ptrs = Q + q_offset + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk
    q = tl.load(q_ptrs, mask=row_mask[:, None], other=0.0)
    # stage 1: off-band
    # For causal = True, STAGE = 3 and _attn_fwd_inner gets 1 as its STAGE
    # For causal = False, STAGE = 1, and _attn_fwd_inner gets 3 as its STAGE
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner_masked(
            acc, l_i, m_i, q,
            K + k_offset, V + v_offset, stride_kn, stride_kk, stride_vn, stride_vk,
            start_m, qk_scale, N_CTX,
            BLOCK_M, HEAD_DIM, BLOCK_N,
            4 - STAGE, offs_m, offs_n,
        )
    # stage 2: on-band
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner_masked(
            acc, l_i, m_i, q,
            K + k_offset, V + v_offset, stride_kn, stride_kk, stride_vn, stride_vk,
            start_m, qk_scale, N_CTX,
            BLOCK_M, HEAD_DIM, BLOCK_N,
            2, offs_m, offs_n,
        )
    # epilogue
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i, mask=row_mask)
    o_ptrs = Out + o_offset + offs_m[:, None] * stride_om + offs_d[None, :] * stride_ok
    tl.store(o_ptrs, acc.to(Out.type.element_ty), mask=row_mask[:, None])
