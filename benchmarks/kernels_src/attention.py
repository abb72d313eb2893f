"""Attention forward, FlashAttention style (after Triton tutorial 06, non-causal).

4 heads (batch x heads) of 256 tokens, head dim 64, fp16 q/k/v, fp32 softmax
and accumulator; each program owns BLOCK_M query rows of one head. The kernel
is the library's tutorial 06 with plain pointers and masks
(``tests/kernels/attention_masked.py``): Triton's interpreter no longer has the
tutorial's block pointers.
"""

from __future__ import annotations

import numpy as np

from kernels_src.lang import Case, device, library, triton

BLOCK_M = 64
BLOCK_N = 64

attn_fwd_masked = library("attention_masked").attn_fwd_masked


def setup(rng: np.random.Generator) -> Case:
    """Random fp16 q, k, v of shape (1, 4, 256, 64); output fp16."""
    z, heads, n_ctx, head_dim = 1, 4, 256, 64
    q, k, v = (
        (0.5 * rng.standard_normal((z, heads, n_ctx, head_dim), dtype=np.float32)).astype(
            np.float16
        )
        for _ in range(3)
    )
    out = np.zeros_like(q)
    m = np.zeros((z * heads, n_ctx), dtype=np.float32)  # the rows' log-sum-exp
    sm_scale = 1.0 / head_dim**0.5
    # Strides in elements, the same for the four row-major tensors.
    strides = tuple(s // q.itemsize for s in q.strides)
    args = (device(q), device(k), device(v), sm_scale, device(m), device(out), *strides * 4)
    grid = (triton.cdiv(n_ctx, BLOCK_M), z * heads)

    def launch() -> None:
        attn_fwd_masked[grid](
            *args, z, heads, N_CTX=n_ctx, HEAD_DIM=head_dim, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
            STAGE=1,
        )  # fmt: skip

    def check() -> None:
        q32, k32, v32 = (t.astype(np.float32) for t in (q, k, v))
        s = q32 @ k32.transpose(0, 1, 3, 2) * sm_scale
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        expected = (p / p.sum(axis=-1, keepdims=True)) @ v32
        np.testing.assert_allclose(out.astype(np.float32), expected, rtol=1e-2, atol=1e-2)

    return Case(launch, check)
