"""NumPy reference for Triton's random numbers (``triton/language/random.py``).

It follows Triton's ``philox_impl``, ``philox``, ``randint4x``, ``randint``,
``rand`` (``uint32_to_uniform_float``) and ``randn`` (``pair_uniform_to_normal``)
step by step, on uint32 arrays, so the stream matches Triton's bit for bit.
Philox-4x32 with Triton's constants is the Random123 generator, so the
Random123 known-answer vectors check this module on its own.
"""

from __future__ import annotations

import numpy as np

PHILOX_KEY_A = np.uint32(0x9E3779B9)
PHILOX_KEY_B = np.uint32(0xBB67AE85)
PHILOX_ROUND_A = np.uint32(0xD2511F53)
PHILOX_ROUND_B = np.uint32(0xCD9E8D57)
N_ROUNDS_DEFAULT = 10

_U32 = np.uint32
_U64 = np.uint64
_LOW32 = np.uint64(0xFFFFFFFF)

Quad = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _mul_lo_hi(a: np.uint32, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Low and high 32 bits of the 64-bit product ``a * b`` (``a * b`` and ``tl.umulhi``)."""
    product = _U64(a) * b.astype(_U64)
    return (product & _LOW32).astype(_U32), (product >> _U64(32)).astype(_U32)


def philox_impl(
    c0: np.ndarray,
    c1: np.ndarray,
    c2: np.ndarray,
    c3: np.ndarray,
    k0: np.ndarray,
    k1: np.ndarray,
    n_rounds: int = N_ROUNDS_DEFAULT,
) -> Quad:
    """``n_rounds`` Philox rounds on the counter ``(c0..c3)`` with the key ``(k0, k1)``."""
    c0, c1, c2, c3 = (np.asarray(c, dtype=_U32) for c in (c0, c1, c2, c3))
    k0, k1 = np.asarray(k0, dtype=_U32), np.asarray(k1, dtype=_U32)
    with np.errstate(over="ignore"):
        for _ in range(n_rounds):
            lo_b, hi_b = _mul_lo_hi(PHILOX_ROUND_B, c2)
            lo_a, hi_a = _mul_lo_hi(PHILOX_ROUND_A, c0)
            c0, c1, c2, c3 = hi_b ^ c1 ^ k0, lo_b, hi_a ^ c3 ^ k1, lo_a
            # raise key
            k0 = (k0 + PHILOX_KEY_A).astype(_U32)
            k1 = (k1 + PHILOX_KEY_B).astype(_U32)
    return c0, c1, c2, c3


def philox(
    seed: int,
    c0: np.ndarray,
    c1: np.ndarray,
    c2: np.ndarray,
    c3: np.ndarray,
    n_rounds: int = N_ROUNDS_DEFAULT,
) -> Quad:
    """Split the seed into its 32-bit halves (low half first) and run Philox."""
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    seed_hi = _U32((seed >> 32) & 0xFFFFFFFF)
    seed_lo = _U32(seed & 0xFFFFFFFF)
    return philox_impl(c0, c1, c2, c3, seed_lo, seed_hi, n_rounds)


def _as_u32(offset: np.ndarray) -> np.ndarray:
    """Bitcast an int32 (or uint32) offset block to uint32."""
    offset = np.asarray(offset)
    if offset.dtype == np.int32:
        return offset.view(_U32)
    return offset.astype(_U32)


def randint4x(seed: int, offset: np.ndarray, n_rounds: int = N_ROUNDS_DEFAULT) -> Quad:
    """Four blocks of random uint32 for ``seed`` and the ``offset`` block."""
    c0 = _as_u32(offset)
    zero = np.zeros_like(c0)
    return philox(seed, c0, zero, zero, zero, n_rounds)


def randint(seed: int, offset: np.ndarray, n_rounds: int = N_ROUNDS_DEFAULT) -> np.ndarray:
    """The first of ``randint4x``'s blocks, as uint32."""
    return randint4x(seed, offset, n_rounds)[0]


def uint32_to_uniform_float(x: np.ndarray) -> np.ndarray:
    """Triton's map from uint32 to fp32 in [0, 1): fold the sign, scale by 1/MAX_INT."""
    x = np.asarray(x, dtype=_U32).view(np.int32)
    x = np.where(x < 0, -x - 1, x)
    # int32 -> fp32 rounds to nearest, then one fp32 multiply by the fp32 constant.
    return x.astype(np.float32) * np.float32(4.656613e-10)


def rand(seed: int, offset: np.ndarray, n_rounds: int = N_ROUNDS_DEFAULT) -> np.ndarray:
    """Uniform fp32 in [0, 1), as ``tl.rand(seed, offset)``."""
    return uint32_to_uniform_float(randint(seed, offset, n_rounds))


def pair_uniform_to_normal(u1: np.ndarray, u2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Box-Muller transform, in float64 (Triton computes in fp32 with fast math)."""
    u1 = np.maximum(np.float32(1.0e-7), u1).astype(np.float64)
    th = np.float64(np.float32(6.283185307179586)) * u2.astype(np.float64)
    r = np.sqrt(-2.0 * np.log(u1))
    return r * np.cos(th), r * np.sin(th)


def randn(seed: int, offset: np.ndarray, n_rounds: int = N_ROUNDS_DEFAULT) -> np.ndarray:
    """Standard normal samples, as ``tl.randn(seed, offset)`` (float64, to compare loosely)."""
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    n1, _ = pair_uniform_to_normal(uint32_to_uniform_float(i1), uint32_to_uniform_float(i2))
    return n1
