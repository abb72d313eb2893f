"""``tl.dot_scaled`` on both backends, against a NumPy model of the MX formats.

The reference decodes each format from its bits (fp4 e2m1, fp8 e4m3 and
e5m2) with its own formula, applies the ``e8m0`` scales (``2**(s - 127)``
per 32 elements along K) and multiplies in float64; as in Triton, scaled
operands are rounded to bf16 (fp16 when a format is ``"fp16"``) before the
product.
"""

from __future__ import annotations

import numpy as np
import pytest

from minitriton.diagnostics import CompileError
from tests.e2e.ptxas_check import assemble, needs_ptxas
from tests.kernels import dot_scaled as K

M, N, KK = 16, 32, 64
#: fp8 formats: (exponent bits, mantissa bits, bias).
FP8 = {"e4m3": (4, 3, 7), "e5m2": (5, 2, 15)}


def _fp8_value(bits: np.ndarray, fmt: str) -> np.ndarray:
    e_bits, m_bits, bias = FP8[fmt]
    sign = np.where(bits & 0x80, -1.0, 1.0)
    exp = (bits.astype(np.int64) >> m_bits) & ((1 << e_bits) - 1)
    man = (bits & ((1 << m_bits) - 1)).astype(np.float64) / (1 << m_bits)
    value = np.where(exp == 0, man * 2.0 ** (1 - bias), (1 + man) * 2.0 ** (exp - bias))
    return sign * value


def _fp4_value(nibbles: np.ndarray) -> np.ndarray:
    e, m = (nibbles >> 1) & 3, (nibbles & 1).astype(np.float64)
    value = np.where(e == 0, m * 0.5, (1 + m / 2) * 2.0 ** (e.astype(np.float64) - 1))
    return np.where(nibbles & 8, -value, value)


def _round(x: np.ndarray, fmt: str) -> np.ndarray:
    """``x`` rounded to bf16 (to nearest even) or fp16."""
    if fmt == "fp16":
        return x.astype(np.float16).astype(np.float64)
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def _operand(rng: np.random.Generator, fmt: str, shape: tuple[int, int], along: int) -> tuple:
    """(the array passed, its decoded values) for one operand; e2m1 packs along ``along``."""
    if fmt == "e2m1":
        packed = list(shape)
        packed[along] //= 2
        data = rng.integers(0, 256, packed, dtype=np.uint8)
        pairs = np.stack([_fp4_value(data & 0xF), _fp4_value(data >> 4)], axis=along + 1)
        return data, pairs.reshape(shape)
    if fmt in FP8:
        data = rng.integers(0, 256, shape, dtype=np.uint8)
        top = (1 << FP8[fmt][0]) - 1 << FP8[fmt][1]
        data[(data & 0x7F) >= top] = 0  # no infinities or NaNs
        return data, _fp8_value(data, fmt)
    data = rng.standard_normal(shape).astype(np.float16)
    if fmt == "bf16":
        data = _round(data.astype(np.float64), "bf16").astype(np.float32)
        return (data.view(np.uint32) >> 16).astype(np.uint16), data.astype(np.float64)
    return data, data.astype(np.float64)


PAIRS = [("e2m1", "e2m1"), ("e2m1", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "bf16"), ("fp16", "e2m1")]


@pytest.mark.parametrize("scaled", [False, True])
@pytest.mark.parametrize(("fmt_a", "fmt_b"), PAIRS)
def test_dot_scaled_matches_the_mx_formats(
    backend: str, fmt_a: str, fmt_b: str, scaled: bool
) -> None:
    rng = np.random.default_rng(PAIRS.index((fmt_a, fmt_b)))
    a, a_val = _operand(rng, fmt_a, (M, KK), along=1)
    b, b_val = _operand(rng, fmt_b, (KK, N), along=0)
    a_scale = rng.integers(118, 136, (M, KK // 32), dtype=np.uint8)
    b_scale = rng.integers(118, 136, (N, KK // 32), dtype=np.uint8)
    compute = "fp16" if "fp16" in (fmt_a, fmt_b) else "bf16"
    if scaled:
        a_val = _round(a_val * np.repeat(2.0 ** (a_scale - 127.0), 32, axis=1), compute)
        b_val = _round(b_val * np.repeat(2.0 ** (b_scale - 127.0), 32, axis=1).T, compute)
    else:
        a_val, b_val = _round(a_val, compute), _round(b_val, compute)
    if "bf16" in (fmt_a, fmt_b):
        from minitriton import bfloat16_view

        a, b = (bfloat16_view(x) if f == "bf16" else x for x, f in ((a, fmt_a), (b, fmt_b)))
    out = np.zeros((M, N), np.float32)
    K.scaled_product[(1,)](a, a_scale, b, b_scale, out, M, N, KK, fmt_a, fmt_b, scaled,
                           backend=backend)  # fmt: skip
    expected = a_val @ b_val
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def test_fp4_packed_along_m_and_n_with_an_accumulator(backend: str) -> None:
    rng = np.random.default_rng(3)
    a, a_val = _operand(rng, "e2m1", (32, KK), along=0)
    b, b_val = _operand(rng, "e2m1", (KK, N), along=1)
    acc = rng.standard_normal((32, N)).astype(np.float32)
    out = np.zeros((32, N), np.float32)
    K.fp4_packed_along_m_and_n[(1,)](a, b, acc, out, 32, N, KK, backend=backend)
    np.testing.assert_allclose(out, acc + a_val @ b_val, rtol=1e-6, atol=1e-5)


def test_a_scale_of_0xff_is_nan(backend: str) -> None:
    rng = np.random.default_rng(4)
    a, _ = _operand(rng, "e4m3", (M, KK), along=1)
    b, _ = _operand(rng, "e4m3", (KK, N), along=0)
    a_scale = np.full((M, KK // 32), 127, np.uint8)
    a_scale[3, 1] = 0xFF
    b_scale = np.full((N, KK // 32), 127, np.uint8)
    out = np.zeros((M, N), np.float32)
    K.scaled_product[(1,)](a, a_scale, b, b_scale, out, M, N, KK, "e4m3", "e4m3", True,
                           backend=backend)  # fmt: skip
    assert np.isnan(out[3]).all() and not np.isnan(np.delete(out, 3, axis=0)).any()


#: e4m3 scale bytes and their values: 1, 2, 0.5, 1.5, 3, -1.
E4M3_SCALES = {0x38: 1.0, 0x40: 2.0, 0x30: 0.5, 0x3C: 1.5, 0x44: 3.0, 0xB8: -1.0}


def test_nvfp4_scales_are_e4m3_values_per_16(backend: str) -> None:
    rng = np.random.default_rng(6)
    a, a_val = _operand(rng, "e2m1", (M, KK), along=1)
    b, b_val = _operand(rng, "e2m1", (KK, N), along=0)
    codes = np.array(sorted(E4M3_SCALES), np.uint8)
    a_scale = rng.choice(codes, (M, KK // 16))
    b_scale = rng.choice(codes, (N, KK // 16))
    value = np.vectorize(E4M3_SCALES.get)
    a_ref = _round(a_val * np.repeat(value(a_scale), 16, axis=1), "bf16")
    b_ref = _round(b_val * np.repeat(value(b_scale), 16, axis=1).T, "bf16")
    out = np.zeros((M, N), np.float32)
    K.nvfp4_product[(1,)](a, a_scale, b, b_scale, out, M, N, KK, backend=backend)
    np.testing.assert_allclose(out, a_ref @ b_ref, rtol=1e-6, atol=1e-5)


def test_errors_name_the_format_and_the_scale_shape() -> None:
    a = np.zeros((16, 64), np.uint8)
    with pytest.raises(CompileError, match=r"lhs_scale must be a uint8 block of shape \[16, 2\]"):
        K.bad_scale_shape[(1,)](a, np.zeros((16, 4), np.uint8), np.zeros((16, 16), np.float32))
    with pytest.raises(CompileError, match='lhs_format must be one of "e2m1", "e4m3"'):
        K.bad_format[(1,)](np.zeros((16, 32), np.uint8), np.zeros((16, 16), np.float32), "e3m2")


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize(("fmt_a", "fmt_b"), PAIRS[:4])
def test_dot_scaled_assembles(fmt_a: str, fmt_b: str, arch: str, tmp_path) -> None:
    types = {"e2m1": "u8", "e4m3": "u8", "e5m2": "u8", "bf16": "bf16", "fp16": "fp16"}
    signature = (f"*{types[fmt_a]}, *u8, *{types[fmt_b]}, *u8, *fp32, {M}, {N}, {KK}, "
                 f"'{fmt_a}', '{fmt_b}', True")  # fmt: skip
    assemble(K.scaled_product, signature, arch, tmp_path)
