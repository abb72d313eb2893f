"""TF32 in the emulator: ``cvt.rna.tf32.f32``, truncation, and the fp32 ``tl.dot`` built on them.

The rounding is checked bit for bit: on edge values against hand-derived
results, and on random bit patterns against an independent reference that
rounds the magnitude in fp64 arithmetic (``floor(|x| / ulp + 1/2) * ulp``).
The dot is checked through ``@jit`` kernels for every ``input_precision``
and for the arch it models: the tensor cores read fp32 as TF32 the way
:data:`~minitriton.emulator.tf32.TF32_INPUTS` says (truncation on sm_80 and
sm_90), and before sm_80 there is no TF32 at all.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator import tf32 as tf32_model
from minitriton.emulator.tf32 import (
    round_to_tf32,
    split_tf32,
    tensor_core_inputs,
    tf32_dot,
    truncate_to_tf32,
)

F32_MIN_EXP = -126  # exponent of the smallest normal; subnormals share its ULP


def bits(values: list[int]) -> np.ndarray:
    """fp32 values with the given bit patterns."""
    return np.array(values, dtype=np.uint32).view(np.float32)


def as_bits(x: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(x, dtype=np.float32).view(np.uint32)]


def reference_rna(x: np.ndarray) -> np.ndarray:
    """Round finite fp32 ``x`` to 11 significant bits, ties away from zero, in fp64.

    Every step is exact in fp64: the ULP is a power of two, ``|x| / ulp`` has
    at most 24 bits, and the result overflows to infinity in the final cast.
    """
    x64 = x.astype(np.float64)
    _, exp = np.frexp(x64)  # |x| = m * 2**exp with 0.5 <= m < 1
    ulp = np.ldexp(1.0, np.maximum(exp - 1, F32_MIN_EXP) - 10)
    rounded = np.copysign(np.floor(np.abs(x64) / ulp + 0.5) * ulp, x64)
    with np.errstate(over="ignore"):
        return rounded.astype(np.float32)


# ---------------------------------------------------------------- the rounding

EDGES = [  # (input bits, expected bits, what it checks)
    (0x3F800000, 0x3F800000, "1.0 is already TF32"),
    (0x3F800FFF, 0x3F800000, "just below half an ULP rounds down"),
    (0x3F801000, 0x3F802000, "a tie rounds away from zero (to even would give 0x3f800000)"),
    (0x3F803000, 0x3F804000, "a tie with an odd last bit rounds up"),
    (0xBF801000, 0xBF802000, "a negative tie rounds away from zero"),
    (0x3F801001, 0x3F802000, "just above half an ULP rounds up"),
    (0x3FFFF000, 0x40000000, "the carry ripples into the exponent"),
    (0x7F7FE000, 0x7F7FE000, "the largest finite TF32 value"),
    (0x7F7FEFFF, 0x7F7FE000, "below the tie under it stays finite"),
    (0x7F7FFFFF, 0x7F800000, "the largest finite fp32 rounds to infinity (no .satfinite)"),
    (0xFF7FFFFF, 0xFF800000, "... and to minus infinity"),
    (0x7F800000, 0x7F800000, "infinity stays"),
    (0xFF800000, 0xFF800000, "minus infinity stays"),
    (0x00000000, 0x00000000, "zero"),
    (0x80000000, 0x80000000, "negative zero keeps its sign"),
    (0x00000FFF, 0x00000000, "the smallest subnormals round to zero"),
    (0x80000FFF, 0x80000000, "... keeping the sign"),
    (0x00001000, 0x00002000, "a subnormal tie rounds away from zero (no flush)"),
    (0x00002000, 0x00002000, "the smallest TF32 subnormal"),
    (0x007FFFFF, 0x00800000, "the largest subnormal rounds up to the smallest normal"),
]


@pytest.mark.parametrize("given, expected, why", EDGES, ids=[e[2] for e in EDGES])
def test_rounding_of_edge_values(given: int, expected: int, why: str) -> None:
    assert as_bits(round_to_tf32(bits([given]))) == [expected], why


def test_nan_stays_nan_even_with_payload_only_in_the_dropped_bits() -> None:
    x = bits([0x7F800001, 0xFF800FFF, 0x7FC00000, 0x7FFFFFFF])
    out = round_to_tf32(x)
    assert np.isnan(out).all()
    assert [b >> 31 for b in as_bits(out)] == [0, 1, 0, 0]  # the sign is kept
    assert all(b & 0x1FFF == 0 for b in as_bits(out))


def test_rounding_matches_the_fp64_reference_on_random_bit_patterns() -> None:
    rng = np.random.default_rng(10)
    raw = rng.integers(0, 2**32, size=200_000, dtype=np.uint64).astype(np.uint32)
    ties = (raw & np.uint32(0xFFFFE000)) | np.uint32(0x1000)  # every one a tie
    x = np.concatenate([raw, ties]).view(np.float32)
    x = x[np.isfinite(x)]
    assert as_bits(round_to_tf32(x)) == as_bits(reference_rna(x))


def test_rounded_values_are_tf32_and_within_half_an_ulp() -> None:
    x = np.random.default_rng(11).standard_normal(10_000).astype(np.float32)
    r = round_to_tf32(x)
    assert not (r.view(np.uint32) & np.uint32(0x1FFF)).any()
    err = np.abs(r.astype(np.float64) - x) / np.abs(x)
    assert err.max() <= 2.0**-11
    assert err.max() > 2.0**-12  # it is rounding, not a no-op


def test_truncation_clears_the_low_bits_toward_zero() -> None:
    x = bits([0x3F801FFF, 0xBF801FFF, 0x7F7FFFFF, 0x00001FFF, 0x7F800000, 0x7F800001])
    out = truncate_to_tf32(x)
    assert as_bits(out)[:5] == [0x3F800000, 0xBF800000, 0x7F7FE000, 0x00000000, 0x7F800000]
    assert np.isnan(out[5])
    assert as_bits(round_to_tf32(x[:1])) == [0x3F802000]  # rounding differs


def test_split_gives_a_tf32_head_and_an_exact_tail() -> None:
    x = np.random.default_rng(12).standard_normal(1000).astype(np.float32)
    big, small = split_tf32(x)
    np.testing.assert_array_equal(big, round_to_tf32(x))
    np.testing.assert_array_equal(big.astype(np.float64) + small, x.astype(np.float64))


# ---------------------------------------------------------------- tf32_dot


def test_dot_rounds_inputs_and_accumulates_in_fp32_steps_of_eight() -> None:
    # Every a is 1 + 2**-11, a tie: TF32 rounds it to 1 + 2**-10 (away from zero).
    a = np.full((16, 16), 1 + 2.0**-11, np.float32)
    b = np.ones((16, 16), np.float32)
    np.testing.assert_array_equal(tf32_dot(a, b, np.zeros((16, 16), np.float32)), 16 * (1 + 2**-10))
    # Each step adds 8 * 0.25 = 2 to 2**25 (ULP 4): a tie to even, so it stays;
    # one rounding of the exact sum would give 2**25 + 4.
    quarter = np.full((16, 16), 0.25, np.float32)
    acc = np.full((16, 16), 2.0**25, np.float32)
    np.testing.assert_array_equal(tf32_dot(quarter, b, acc), 2.0**25)


def test_dot_of_tf32_inputs_is_close_to_exact() -> None:
    rng = np.random.default_rng(13)
    a = round_to_tf32(rng.standard_normal((3, 32, 64)).astype(np.float32))  # batched programs
    b = round_to_tf32(rng.standard_normal((64, 32)).astype(np.float32))
    acc = rng.standard_normal((32, 32)).astype(np.float32)
    exact = a.astype(np.float64) @ b + acc
    bound = (64 // 8) * 2.0**-24 * (np.abs(a).astype(np.float64) @ np.abs(b) + np.abs(acc))
    assert (np.abs(tf32_dot(a, b, acc) - exact) <= bound).all()


# ---------------------------------------------------------------- tl.dot on the emulator


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, PRECISION: tl.constexpr, M: tl.constexpr, K: tl.constexpr,
               N: tl.constexpr):  # fmt: skip
    rm, rk, rn = tl.arange(0, M), tl.arange(0, K), tl.arange(0, N)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.load(c_ptr + rm[:, None] * N + rn[None, :])
    if PRECISION == "default":
        c = tl.dot(a, b, c)
    elif PRECISION == "allow_tf32":
        c = tl.dot(a, b, c, allow_tf32=True)
    elif PRECISION == "no_tf32":
        c = tl.dot(a, b, c, allow_tf32=False)
    else:
        c = tl.dot(a, b, c, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


def run_dot(
    a: np.ndarray, b: np.ndarray, acc: np.ndarray, precision: str, arch: str = "sm_90"
) -> np.ndarray:
    c = acc.astype(np.float32).copy()
    (m, k), n = a.shape, b.shape[1]
    dot_kernel[(1,)](a, b, c, precision, m, k, n, backend="emulator", arch=arch)
    return c


def reference_rz(x: np.ndarray) -> np.ndarray:
    """Finite fp32 ``x`` truncated to 11 significant bits, in fp64 (independent of the bits)."""
    x64 = x.astype(np.float64)
    _, exp = np.frexp(x64)
    ulp = np.ldexp(1.0, np.maximum(exp - 1, F32_MIN_EXP) - 10)
    return (np.trunc(x64 / ulp) * ulp).astype(np.float32)


@pytest.fixture
def operands() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(14)
    a, b, acc = (rng.standard_normal(s).astype(np.float32) for s in ((32, 64), (64, 16), (32, 16)))
    return a, b, acc


def exact(a: np.ndarray, b: np.ndarray, acc: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) @ b.astype(np.float64) + acc


@pytest.mark.parametrize("precision", ["default", "tf32", "allow_tf32"])
def test_tl_dot_on_fp32_uses_tf32_by_default(operands, precision: str) -> None:
    a, b, acc = operands
    got = run_dot(a, b, acc, precision)
    np.testing.assert_array_equal(got, tf32_dot(a, b, acc, truncate_to_tf32))
    truncated = exact(reference_rz(a), reference_rz(b), acc)
    np.testing.assert_allclose(got, truncated, rtol=1e-6, atol=1e-5)
    assert np.abs(got - exact(a, b, acc)).max() > 1e-3  # the inputs' truncation shows
    assert np.abs(got - tf32_dot(a, b, acc, round_to_tf32)).max() > 1e-4  # not rounded


@pytest.mark.parametrize(("arch", "want"), [("sm_90", "rz"), ("sm_90a", "rz"), ("sm_80", "rz"),
                                            ("sm_86", "rz"), ("sm_75", "exact")])  # fmt: skip
def test_tl_dot_models_the_arch_it_is_compiled_for(operands, arch: str, want: str) -> None:
    a, b, acc = operands
    got = run_dot(a, b, acc, "default", arch=arch)
    if want == "exact":  # no TF32 before sm_80: Triton's FMA dot is exact fp32
        np.testing.assert_array_equal(got, exact(a, b, acc).astype(np.float32))
    else:
        np.testing.assert_array_equal(got, tf32_dot(a, b, acc, truncate_to_tf32))


def test_the_table_picks_truncation_or_rounding(monkeypatch, operands) -> None:
    assert tensor_core_inputs("sm_90", "wgmma") is truncate_to_tf32
    assert tensor_core_inputs("sm_80") is truncate_to_tf32
    assert tensor_core_inputs("sm_75") is None
    # Were the measurement to find that mma.sync rounds, one entry changes the model.
    table = {**tf32_model.TF32_INPUTS, ("sm_80", "mma.sync"): "round"}
    monkeypatch.setattr(tf32_model, "TF32_INPUTS", table)
    assert tensor_core_inputs("sm_80") is round_to_tf32
    assert tensor_core_inputs("sm_90", "wgmma") is truncate_to_tf32
    a, b, acc = operands
    got = run_dot(a, b, acc, "default", arch="sm_80")
    np.testing.assert_array_equal(got, tf32_dot(a, b, acc, round_to_tf32))
    rounded = exact(reference_rna(a), reference_rna(b), acc)
    np.testing.assert_allclose(got, rounded, rtol=1e-6, atol=1e-5)


def test_truncation_matches_an_independent_reference() -> None:
    rng = np.random.default_rng(16)
    x = rng.integers(0, 0x7F000000, 4096, dtype=np.uint32).view(np.float32)
    x = np.where(rng.random(4096) < 0.5, -x, x)
    assert as_bits(truncate_to_tf32(x)) == as_bits(reference_rz(x))
    assert as_bits(truncate_to_tf32(x)) != as_bits(round_to_tf32(x))


@pytest.mark.parametrize("precision", ["ieee", "no_tf32"])
def test_tl_dot_ieee_stays_exact(operands, precision: str) -> None:
    a, b, acc = operands
    np.testing.assert_array_equal(
        run_dot(a, b, acc, precision), exact(a, b, acc).astype(np.float32)
    )


def test_tl_dot_tf32x3_is_nearly_exact(operands) -> None:
    a, b, acc = operands
    want = exact(a, b, acc)
    err3 = np.abs(run_dot(a, b, acc, "tf32x3") - want)
    err1 = np.abs(run_dot(a, b, acc, "tf32") - want)
    scale = np.abs(a).astype(np.float64) @ np.abs(b) + np.abs(acc)
    assert (err3 <= 2.0**-18 * scale).all()  # 3 passes: about fp32's accuracy
    assert err1.max() > 50 * err3.max()


def test_tl_dot_on_fp16_is_unaffected_by_precision() -> None:
    rng = np.random.default_rng(15)
    a = rng.standard_normal((16, 32)).astype(np.float16)
    b = rng.standard_normal((32, 16)).astype(np.float16)
    acc = np.zeros((16, 16), np.float32)
    want = exact(a, b, acc).astype(np.float32)
    np.testing.assert_array_equal(run_dot(a, b, acc, "default"), want)


# ---------------------------------------------------------------- TRITON_F32_DEFAULT


def test_triton_f32_default_sets_the_default_precision(monkeypatch, operands) -> None:
    a, b, acc = operands
    tf32 = run_dot(a, b, acc, "default")
    monkeypatch.setenv("TRITON_F32_DEFAULT", "ieee")
    np.testing.assert_array_equal(
        run_dot(a, b, acc, "default"), exact(a, b, acc).astype(np.float32)
    )
    monkeypatch.setenv("TRITON_F32_DEFAULT", "tf32x3")
    np.testing.assert_array_equal(run_dot(a, b, acc, "default"), run_dot(a, b, acc, "tf32x3"))
    # A dot that names its precision keeps it.
    np.testing.assert_array_equal(run_dot(a, b, acc, "tf32"), tf32)
    monkeypatch.delenv("TRITON_F32_DEFAULT")
    np.testing.assert_array_equal(run_dot(a, b, acc, "default"), tf32)  # back: a cache key


def test_triton_f32_default_must_name_a_precision(monkeypatch, operands) -> None:
    monkeypatch.setenv("TRITON_F32_DEFAULT", "fp32")
    with pytest.raises(ValueError, match="TRITON_F32_DEFAULT must be one of tf32, tf32x3, ieee"):
        run_dot(*operands, "default")
