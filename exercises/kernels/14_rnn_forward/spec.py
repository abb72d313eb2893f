"""Exercise 14 spec: RNN hidden states for batches of sequences."""

import numpy as np

import minitriton as triton
from minitriton.course import (
    TF32_TOLERANCE,
    Case,
    accumulation_tolerance,
    fp16_exact,
    fp32_matmul,
)

TITLE = "RNN forward"
KERNELS = ("rnn_forward_kernel",)
MINUTES = 40
REQUIRES = ("07", "08")
OUTCOMES = ("sequential loops with a carried block", "weights resident across time steps")
BLOCK_B = 16

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "B = 20": 1,
    "x stored time-major": 1,
    "D = 512": 4,
}


def reference(x: np.ndarray, h0: np.ndarray, wx: np.ndarray, wh: np.ndarray, b: np.ndarray):
    """Every hidden state ``h_t = tanh(x_t @ wx + h_{t-1} @ wh + b)``, shape (B, T, H)."""
    B, T, _ = x.shape
    h = h0.astype(np.float64)
    out = np.empty((B, T, wh.shape[0]))
    for t in range(T):
        h = np.tanh(x[:, t].astype(np.float64) @ wx + h @ wh + b)
        out[:, t] = h
    return out.astype(np.float32)


def launch(
    kernels, x: np.ndarray, h0: np.ndarray, wx: np.ndarray, wh: np.ndarray, b: np.ndarray
) -> np.ndarray:
    """One program per BLOCK_B sequences; it runs all T steps."""
    B, T, D = x.shape
    H = wh.shape[0]
    out = np.full((B, T, H), np.nan, np.float32)
    sx, so = [s // 4 for s in x.strides], [s // 4 for s in out.strides]
    kernels.rnn_forward_kernel[(triton.cdiv(B, BLOCK_B),)](
        x, h0, wx, wh, b, out, B, T, sx[0], sx[1], so[0], so[1], D=D, H=H, BLOCK_B=BLOCK_B
    )
    return out


def cases() -> list[Case]:
    """A full batch block, a partial one, and x stored time-major (T, B, D)."""
    rng = np.random.default_rng(14)

    def problem(B: int, T: int, D: int, H: int, time_major: bool = False) -> tuple:
        x = rng.standard_normal((T, B, D) if time_major else (B, T, D), dtype=np.float32)
        x = x.transpose(1, 0, 2) if time_major else x
        return (
            x,
            rng.standard_normal((B, H), dtype=np.float32) * 0.5,
            (rng.standard_normal((D, H)) / np.sqrt(D)).astype(np.float32),
            (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32),
            rng.standard_normal(H, dtype=np.float32) * 0.1,
        )

    return [
        Case("B = 16, T = 6, D = 16, H = 32", problem(16, 6, 16, 32), **TF32_TOLERANCE),
        Case("B = 20: a partial batch block", problem(20, 5, 16, 16), **TF32_TOLERANCE),
        Case(
            "x stored time-major: stride_xb = D, stride_xt = B * D",
            problem(12, 4, 16, 16, time_major=True),
            **TF32_TOLERANCE,
        ),
        long_k_case(),
    ]


def long_k_case() -> Case:
    """D = 512: x @ wx sums 512 products; the tolerance is the fp32 reference's own error.

    x and wx are exact in fp16 and TF32 and wh is 0, so a right kernel
    differs from the exact states only by fp32 additions and tanh; a dot
    whose result is kept in fp16 (11 significant bits) is 40 times further off.
    """
    B, T, D, H = 16, 2, 512, 16
    x = fp16_exact((B, T, D), seed=140)
    h0 = fp16_exact((B, H), seed=141, scale=0.5)
    wx = fp16_exact((D, H), seed=142, scale=1 / 32)
    wh = np.zeros((H, H), np.float32)
    b = fp16_exact((H,), seed=143, scale=0.125)
    exact = reference(x, h0, wx, wh, b).astype(np.float64)
    fp32 = np.stack(
        [np.tanh(fp32_matmul(x[:, t], wx) + b) for t in range(T)], axis=1
    )  # wh = 0: each step is x_t @ wx + b
    # A floor of a few fp32 ulps of tanh: GPUs compute exp (and so tanh) approximately.
    tolerance = accumulation_tolerance(fp32, exact, floor=2e-5)
    return Case(
        "D = 512: x @ wx sums 512 products, exact to within 64 times fp32's rounding",
        (x, h0, wx, wh, b),
        **tolerance,
    )
