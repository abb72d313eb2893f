"""Exercise 16 spec: A @ dequant(Wq) with group-wise scales."""

import numpy as np

import minitriton as triton
from minitriton.course import TF32_TOLERANCE, Case

TITLE = "Quantized int4 matmul"
KERNELS = ("int4_matmul_kernel",)
MINUTES = 45
REQUIRES = ("07",)
OUTCOMES = ("bit unpacking with & and >>", "dequantizing in the kernel", "group-wise scales")
GROUP = BLOCK_K = 32
BLOCK_M = BLOCK_N = 16

#: The hint (1-based, in hints.md) that each case teaches, by the start of its name.
CASE_HINTS = {
    "16 x 32 x 16": 1,
    "K = 128": 2,
}


def pack(q: np.ndarray) -> np.ndarray:
    """K x N values in 0..15 -> K/2 x N bytes: even rows in the low nibble."""
    return (q[0::2] | (q[1::2] << 4)).astype(np.uint8)


def dequantize(packed: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The float64 weights ``(q - 8) * scale[k // GROUP]``."""
    q = np.empty((packed.shape[0] * 2, packed.shape[1]), np.int64)
    q[0::2], q[1::2] = packed & 0xF, packed >> 4
    return (q - 8) * np.repeat(scale.astype(np.float64), GROUP, axis=0)


def reference(a: np.ndarray, packed: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``a @ dequantize(packed, scale)``."""
    return (a.astype(np.float64) @ dequantize(packed, scale)).astype(np.float32)


def launch(kernels, a: np.ndarray, packed: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Tiles of C; K must be a multiple of GROUP."""
    M, K = a.shape
    N = packed.shape[1]
    c = np.full((M, N), np.nan, np.float32)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    kernels.int4_matmul_kernel[grid](
        a,
        packed,
        scale,
        c,
        M,
        N,
        K,
        a.strides[0] // 4,
        packed.strides[0],
        scale.strides[0] // 4,
        c.strides[0] // 4,
        GROUP=GROUP,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
    )
    return c


def _a_view(args: tuple, width: int) -> tuple:
    """``args`` with A a view of the first columns of a ``width``-wide array."""
    a, packed, scale = args
    wide = np.full((a.shape[0], width), np.nan, np.float32)
    wide[:, : a.shape[1]] = a
    return wide[:, : a.shape[1]], packed, scale


def cases() -> list[Case]:
    """One group, several groups with different scales, ragged M and N."""
    rng = np.random.default_rng(16)

    def problem(m: int, k: int, n: int) -> tuple:
        q = rng.integers(0, 16, (k, n), dtype=np.uint8)
        scale = rng.uniform(0.01, 0.1, (k // GROUP, n)).astype(np.float32)
        return rng.standard_normal((m, k), dtype=np.float32), pack(q), scale

    return [
        Case("16 x 32 x 16: one group", problem(16, 32, 16), **TF32_TOLERANCE),
        Case(
            "K = 128: four groups, four scales per column",
            problem(16, 128, 32),
            **TF32_TOLERANCE,
        ),
        Case("M = 20, N = 40: ragged tiles", problem(20, 64, 40), **TF32_TOLERANCE),
        Case(
            "A is a view of a 16 x 96 array: stride_am = 96",
            _a_view(problem(16, 64, 16), 96),
            **TF32_TOLERANCE,
        ),
    ]
