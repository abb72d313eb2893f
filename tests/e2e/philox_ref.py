"""NumPy reference for Triton's random numbers (``triton/language/random.py``, Triton 3.6).

It follows Triton's ``philox_impl``, ``philox``, ``randint4x``, ``randint``,
``uint_to_uniform_float``, ``rand`` and ``randn`` (with
``pair_uniform_to_normal``) step by step, on unsigned NumPy arrays, so the
stream matches Triton's bit for bit (checked against Triton 3.6 on an H200).

``tl.rand``/``tl.randint`` always run Philox-4x32-10: the counter is
``(offset_lo, offset_hi, 0, 0)``, where ``offset_hi`` is the high word of an
int64 offset and 0 for 32-bit offsets, and the key is ``(seed_lo, seed_hi)``.
``philox`` on 64-bit counters runs Philox-4x64-10, as Triton's does. Triton's
Philox is Random123's, so Random123's known-answer vectors check this module
on its own.
"""

from __future__ import annotations

import numpy as np

N_ROUNDS_DEFAULT = 10

# (KEY_A, KEY_B, ROUND_A, ROUND_B) for 32- and 64-bit words, as in ``philox_impl``.
CONSTANTS = {
    32: (0x9E3779B9, 0xBB67AE85, 0xD2511F53, 0xCD9E8D57),
    64: (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B, 0xD2E7470EE14C6C93, 0xCA5A826395121157),
}
UINT = {32: np.uint32, 64: np.uint64}
SIGNED = {32: np.int32, 64: np.int64}
# scale = ((2**23 - 1) / 2**23) * 2**-(N_BITS - 1): the largest with MAX_INT * scale < 1.0
UNIFORM_SCALE = {32: 4.6566127342e-10, 64: 1.0842020432385337e-19}

Quad = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _mul_lo_hi(a: int, b: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Low and high halves of the ``2 * bits`` product ``a * b`` (``a * b`` and ``umulhi``)."""
    if bits == 32:
        product = np.uint64(a) * b.astype(np.uint64)
        return product.astype(np.uint32), (product >> np.uint64(32)).astype(np.uint32)
    # 64 x 64 -> 128 bits from four 32 x 32 -> 64 partial products.
    m32, s32 = np.uint64(0xFFFFFFFF), np.uint64(32)
    a_lo, a_hi = np.uint64(a & 0xFFFFFFFF), np.uint64(a >> 32)
    b_lo, b_hi = b & m32, b >> s32
    p0, p1, p2, p3 = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
    mid = (p0 >> s32) + (p1 & m32) + (p2 & m32)
    hi = p3 + (p1 >> s32) + (p2 >> s32) + (mid >> s32)
    lo = np.uint64(a) * b  # wraps modulo 2**64
    return lo, hi


def philox_impl(
    c0: np.ndarray,
    c1: np.ndarray,
    c2: np.ndarray,
    c3: np.ndarray,
    k0: np.ndarray,
    k1: np.ndarray,
    n_rounds: int = N_ROUNDS_DEFAULT,
) -> Quad:
    """``n_rounds`` Philox rounds on the counter ``(c0..c3)`` with the key ``(k0, k1)``.

    The word size (32 or 64 bits) is ``c0``'s; every input must be unsigned.
    """
    bits = np.asarray(c0).dtype.itemsize * 8
    key_a, key_b, round_a, round_b = CONSTANTS[bits]
    u = UINT[bits]
    c0, c1, c2, c3 = (np.asarray(c, dtype=u) for c in (c0, c1, c2, c3))
    k0, k1 = np.asarray(k0, dtype=u), np.asarray(k1, dtype=u)
    with np.errstate(over="ignore"):
        for _ in range(n_rounds):
            lo_b, hi_b = _mul_lo_hi(round_b, c2, bits)
            lo_a, hi_a = _mul_lo_hi(round_a, c0, bits)
            c0, c1, c2, c3 = hi_b ^ c1 ^ k0, lo_b, hi_a ^ c3 ^ k1, lo_a
            # raise key
            k0 = (k0 + u(key_a)).astype(u)
            k1 = (k1 + u(key_b)).astype(u)
    return c0, c1, c2, c3


def philox(
    seed: int,
    c0: np.ndarray,
    c1: np.ndarray,
    c2: np.ndarray,
    c3: np.ndarray,
    n_rounds: int = N_ROUNDS_DEFAULT,
) -> Quad:
    """Key Philox with the seed and bitcast the counters to unsigned words.

    32-bit words: key ``(seed_lo, seed_hi)``; 64-bit words: key ``(seed, 0)``.
    """
    bits = np.asarray(c0).dtype.itemsize * 8
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF  # seed.to(tl.uint64)
    if bits == 32:
        k0, k1 = np.uint32(seed & 0xFFFFFFFF), np.uint32(seed >> 32)
    else:
        k0, k1 = np.uint64(seed), np.uint64(0)
    u = UINT[bits]
    c0, c1, c2, c3 = (np.asarray(c).view(u) for c in (c0, c1, c2, c3))
    return philox_impl(c0, c1, c2, c3, k0, k1, n_rounds)


def randint4x(seed: int, offset: np.ndarray, n_rounds: int = N_ROUNDS_DEFAULT) -> Quad:
    """Four blocks of random uint32 words for ``seed`` and the ``offset`` block.

    The offset's low 32 bits are the first counter word; for a 64-bit offset
    its high word (``offset >> 32``, arithmetic for int64) is the second.
    """
    offset = np.asarray(offset)
    offset_lo = offset.astype(np.uint32)  # offset.to(tl.uint32): keeps the low 32 bits
    zero = offset_lo * np.uint32(0)
    wide = offset.dtype.itemsize * 8 > 32
    offset_hi = (offset >> 32).astype(np.uint32) if wide else zero
    return philox(seed, offset_lo, offset_hi, zero, zero, n_rounds)


def randint(seed: int, offset: np.ndarray, n_rounds: int = N_ROUNDS_DEFAULT) -> np.ndarray:
    """The first of ``randint4x``'s blocks."""
    return randint4x(seed, offset, n_rounds)[0]


def uint_to_uniform_float(x: np.ndarray) -> np.ndarray:
    """Triton's map from random words to fp32 in [0, 1): fold the sign, then scale."""
    bits = x.dtype.itemsize * 8
    x = x.view(SIGNED[bits])
    x = np.where(x < 0, -x - 1, x)
    # int -> fp32 rounds to nearest, then one fp32 multiply by the fp32 constant.
    return x.astype(np.float32) * np.float32(UNIFORM_SCALE[bits])


def rand(seed: int, offset: np.ndarray, n_rounds: int = N_ROUNDS_DEFAULT) -> np.ndarray:
    """Uniform fp32 in [0, 1), as ``tl.rand(seed, offset)``."""
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


def pair_uniform_to_normal(u1: np.ndarray, u2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Box-Muller transform, in float64 (Triton computes in fp32 with fast math)."""
    u1 = np.maximum(np.float32(1.0e-7), u1).astype(np.float64)
    th = np.float64(np.float32(6.283185307179586) * u2)
    r = np.sqrt(-2.0 * np.log(u1))
    return r * np.cos(th), r * np.sin(th)


def randn(seed: int, offset: np.ndarray, n_rounds: int = N_ROUNDS_DEFAULT) -> np.ndarray:
    """Standard normal samples, as ``tl.randn(seed, offset)`` (float64: compare loosely)."""
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    n1, _ = pair_uniform_to_normal(uint_to_uniform_float(i1), uint_to_uniform_float(i2))
    return n1
