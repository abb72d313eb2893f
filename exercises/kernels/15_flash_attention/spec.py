"""Exercise 15 spec: attention over ragged sequence lengths, causal or not."""

import numpy as np

import minitriton as triton
from minitriton.course import TF32_TOLERANCE, Case, fp16_exact

TITLE = "Flash attention"
KERNELS = ("flash_attention_kernel",)
MINUTES = 60
REQUIRES = ("06", "07")
OUTCOMES = ("the online softmax on tiles", "causal masking", "attention without an S x S matrix")
BLOCK_M = BLOCK_N = 16

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "2 heads": 3,
    "S = 50": 1,
    "scores around 100": 2,
    "scores spread": 2,
    "scores around -256": 2,
    "one key scores": 2,
    "causal": 1,
}


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    """``softmax(q k^T / sqrt(d)) v`` per head, in float64."""
    d = q.shape[-1]
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) / np.sqrt(d)
    if causal:
        S = q.shape[1]
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True) @ v).astype(np.float32)


def launch(kernels, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    """Grid: (query blocks, heads); q, k, v, o are (heads, S, HEAD_DIM), contiguous."""
    heads, S, d = q.shape
    o = np.full_like(q, np.nan)
    grid = (triton.cdiv(S, BLOCK_M), heads)
    kernels.flash_attention_kernel[grid](
        q,
        k,
        v,
        o,
        S,
        S * d,
        d,
        float(1.0 / np.sqrt(d)),
        CAUSAL=causal,
        HEAD_DIM=d,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
    )
    return o


def cases() -> list[Case]:
    """Full blocks, a ragged length, large scores, and causal attention."""
    rng = np.random.default_rng(15)

    def qkv(heads: int, S: int, scale: float = 1.0, causal: bool = False) -> tuple:
        q, k, v = (rng.standard_normal((heads, S, 16), dtype=np.float32) for _ in range(3))
        return q * np.float32(scale), k, v, causal

    return [
        Case(
            "2 heads, S = 32: two key blocks, the row max changes between them",
            qkv(2, 32),
            **TF32_TOLERANCE,
        ),
        Case("S = 50: the last key block is partial", qkv(1, 50), **TF32_TOLERANCE),
        Case(
            "scores around 100: exp overflows without the max",
            qkv(1, 32, 30.0),
            # TF32 inputs shift scores of about 100 by up to 0.05, so the softmax
            # weights move by as much; an overflow without the max gives NaN.
            atol=5e-2,
            rtol=5e-2,
        ),
        Case("causal, S = 40", qkv(2, 40, causal=True), **TF32_TOLERANCE),
        *unsafe_shift_cases(),
    ]


def unsafe_shift_cases() -> list[Case]:
    """Scores that only a running max started at -inf survives (fp32 exp: 88.7 up, -103 down).

    q and k hold values fp16 holds exactly, so the scores are exact in TF32
    and the tolerance stays TF32's. A running max started at 0 (or a shift
    by the mean) gives 0 / 0 on rows whose scores are all below -103, and
    inf / inf on rows whose scores spread past 88.
    """
    S, d = 40, 16
    v = fp16_exact((1, S, d), seed=150)
    # Every key near 8 * ones, every query -8 * ones: scores around -256, spread about 8.
    k_near = 8 + fp16_exact((1, S, d), seed=151, scale=0.5)
    q_neg = np.full((1, S, d), -8.0, np.float32)
    # Scores spread with a standard deviation of about 100.
    q_wide, k_wide = fp16_exact((1, S, d), seed=152, scale=64), fp16_exact((1, S, d), seed=153)
    # One key whose score is about 1e3 for every query, the others about +-1.
    q_pos = np.abs(fp16_exact((1, S, d), seed=154))
    k_one = fp16_exact((1, S, d), seed=155, scale=0.25)
    k_one[0, 17] = 256.0
    return [
        Case(
            "scores spread over +-300: exp overflows unless shifted by the row max",
            (q_wide, k_wide, v, False),
            **TF32_TOLERANCE,
        ),
        Case(
            "scores around -256: the running max must start at -inf, not 0",
            (q_neg, k_near, v, False),
            **TF32_TOLERANCE,
        ),
        Case(
            "one key scores about 1e3 for every query: the others must weigh 0",
            (q_pos, k_one, v, False),
            **TF32_TOLERANCE,
        ),
    ]
