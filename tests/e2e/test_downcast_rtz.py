"""``x.to(dtype, fp_downcast_rounding="rtz")``: narrowing float casts that round toward zero.

The reference works on the bits alone: it keeps the target's mantissa bits of
the source's significand and drops the rest (fewer below the target's
smallest exponent), caps a finite value at the largest finite code and maps
infinities and NaN. It shares nothing with the emulator, which steps the
value rounded to nearest one code toward zero where it went away from zero.
Every sign and exponent is covered, each with random and boundary mantissas.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.compiler import compile_kernel
from minitriton.diagnostics import CompileError
from minitriton.ir.parser import parse_module
from minitriton.ir.printer import print_module
from minitriton.ir.verifier import verify_module
from minitriton.jit import base_jit_function
from minitriton.signature import kernel_params, parse_signature
from tests.e2e.ptxas_check import assemble, needs_ptxas

BLOCK = 4096

#: Float formats: exponent bits, mantissa bits, bias, largest finite code and
#: infinity's code (None: the format has none and saturates).
FORMATS = {
    "float64": (11, 52, 1023, 0x7FEFFFFFFFFFFFFF, 0x7FF0000000000000),
    "float32": (8, 23, 127, 0x7F7FFFFF, 0x7F800000),
    "float16": (5, 10, 15, 0x7BFF, 0x7C00),
    "bfloat16": (8, 7, 127, 0x7F7F, 0x7F80),
    "float8e5": (5, 2, 15, 0x7B, 0x7C),
    "float8e4nv": (4, 3, 7, 0x7E, None),
}
#: The unsigned NumPy type that holds each format's codes.
CODES = {"float64": np.uint64, "float32": np.uint32, "float16": np.uint16,
         "bfloat16": np.uint16, "float8e5": np.uint8, "float8e4nv": np.uint8}  # fmt: skip
TARGETS = ["float16", "bfloat16", "float8e5", "float8e4nv"]


def toward_zero(bits: np.ndarray, src: str, dst: str) -> tuple[np.ndarray, np.ndarray]:
    """The ``dst`` codes of ``src`` codes ``bits`` rounded toward zero, and where they are NaN."""
    s_exp, s_man, s_bias, _, _ = FORMATS[src]
    exp_bits, man_bits, bias, largest, infinity = FORMATS[dst]
    bits = np.asarray(bits).astype(np.uint64)
    sign = bits >> np.uint64(s_exp + s_man)
    biased = ((bits >> np.uint64(s_man)) & np.uint64((1 << s_exp) - 1)).astype(np.int64)
    mantissa = bits & np.uint64((1 << s_man) - 1)
    significand = np.where(biased == 0, mantissa, mantissa | np.uint64(1 << s_man))
    # The target's biased exponent of the value; a subnormal source has exponent 1 - bias.
    exponent = np.maximum(biased, 1) - s_bias + bias
    # Keep man_bits bits after the leading one, fewer where the target is subnormal.
    shift = np.minimum(s_man - man_bits + np.maximum(1 - exponent, 0), 63).astype(np.uint64)
    code = (significand >> shift) + (np.maximum(exponent, 1) - 1).astype(np.uint64) * np.uint64(
        1 << man_bits
    )
    code = np.minimum(code, np.uint64(largest))
    top = biased == (1 << s_exp) - 1
    cap = largest if infinity is None else infinity
    code = np.where(top & (mantissa == 0), np.uint64(cap), code)
    code = code | (sign << np.uint64(exp_bits + man_bits))
    return code.astype(CODES[dst]), top & (mantissa != 0)


def is_nan(codes: np.ndarray, dst: str) -> np.ndarray:
    """Where ``dst`` codes are NaN: the exponent all ones and a mantissa (f8e4nv: all ones)."""
    exp_bits, man_bits, _, _, infinity = FORMATS[dst]
    magnitude = codes.astype(np.uint64) & np.uint64((1 << (exp_bits + man_bits)) - 1)
    all_ones = (1 << (exp_bits + man_bits)) - 1
    return magnitude == all_ones if infinity is None else magnitude > infinity


def patterns(src: str, per_exponent: int, seed: int = 0) -> np.ndarray:
    """Codes of ``src``: every sign and exponent with random and boundary mantissas."""
    exp_bits, man_bits = FORMATS[src][:2]
    rng = np.random.default_rng(seed)
    heads = np.arange(1 << (exp_bits + 1), dtype=np.uint64) << np.uint64(man_bits)
    low = rng.integers(0, 1 << man_bits, (heads.size, per_exponent), dtype=np.uint64)
    edges = np.array([0, 1, (1 << man_bits) - 1, 1 << (man_bits - 1)], np.uint64)
    bits = np.concatenate([(heads[:, None] | low).ravel(), (heads[:, None] | edges).ravel()])
    bits = np.resize(bits, -(-bits.size // BLOCK) * BLOCK)  # whole blocks
    return bits.astype(CODES[src])


@triton.jit
def downcast(src, dst, ROUNDING: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src + offs)
    tl.store(dst + offs, x.to(dst.dtype.element_ty, fp_downcast_rounding=ROUNDING))


@triton.jit
def downcast_constant(dst, VALUE: tl.constexpr, BLOCK: tl.constexpr):
    x = tl.full([BLOCK], VALUE, tl.float32)
    tl.store(dst + tl.arange(0, BLOCK), x.to(dst.dtype.element_ty, fp_downcast_rounding="rtz"))


def run(src_bits: np.ndarray, src: str, dst: str, backend: str, rounding: str | None = "rtz"):
    """The kernel's ``dst`` codes for ``src`` codes."""
    args = [triton.reinterpret(src_bits, getattr(tl, src))]
    out = np.zeros(src_bits.size, CODES[dst])
    args.append(triton.reinterpret(out, getattr(tl, dst)))
    downcast[(src_bits.size // BLOCK,)](*args, rounding, BLOCK=BLOCK, backend=backend)
    return out


def check(got: np.ndarray, bits: np.ndarray, src: str, dst: str) -> None:
    want, nan = toward_zero(bits, src, dst)
    assert np.all(is_nan(got[nan], dst)), "a NaN must stay NaN"
    wrong = np.flatnonzero((got != want) & ~nan)
    assert wrong.size == 0, (
        f"{wrong.size} wrong, e.g. {hex(int(bits[wrong[0]]))} -> {hex(int(got[wrong[0]]))}, "
        f"expected {hex(int(want[wrong[0]]))}"
    )


@pytest.mark.parametrize("dst", TARGETS)
def test_float32_rounds_toward_zero_bit_exact(dst: str) -> None:
    bits = patterns("float32", 256)
    check(run(bits, "float32", dst, "emulator"), bits, "float32", dst)


@pytest.mark.parametrize(
    "src, dst",
    [
        ("float64", "float32"),
        ("float64", "bfloat16"),
        ("float16", "float8e4nv"),
        ("bfloat16", "float8e5"),
    ],
)
def test_other_sources_round_toward_zero_once(src: str, dst: str) -> None:
    bits = patterns(src, 8 if src == "float64" else 64)
    check(run(bits, src, dst, "emulator"), bits, src, dst)


@pytest.mark.parametrize(
    "dst, value, expected",
    [
        ("float16", 1.0 + 2.0**-11 + 2.0**-20, 1.0),  # nearest would be 1 + 2**-10
        ("float16", -(1.0 + 2.0**-10 - 2.0**-20), -1.0),
        ("float16", 65519.0, 65504.0),  # nearest too; 65520 and above round to inf
        ("float16", 1e30, 65504.0),  # too large: the largest finite value
        ("float16", -np.inf, -np.inf),
        ("float16", 2.0**-24 * 1.99, 2.0**-24),  # the smallest subnormal
        ("bfloat16", 3.0e38, (1 + 97 / 128) * 2.0**127),
        ("float8e5", 60000.0, 57344.0),
        ("float8e5", np.inf, np.inf),
        ("float8e4nv", 479.0, 448.0),  # the code above 448 is NaN
        ("float8e4nv", -np.inf, -448.0),  # no infinity: it saturates
        ("float8e4nv", -(2.0**-9) * 0.99, -0.0),
    ],
)
def test_named_values(dst: str, value: float, expected: float) -> None:
    bits = np.full(BLOCK, value, np.float32).view(np.uint32)
    got = decode(int(run(bits, "float32", dst, "emulator")[0]), dst)
    assert got == expected and np.signbit(got) == np.signbit(expected)


def decode(code: int, dst: str) -> float:
    """The value of one ``dst`` code (finite or infinite)."""
    exp_bits, man_bits, bias, _, infinity = FORMATS[dst]
    sign = -1.0 if code >> (exp_bits + man_bits) else 1.0
    magnitude = code & ((1 << (exp_bits + man_bits)) - 1)
    if infinity is not None and magnitude == infinity:
        return sign * np.inf
    exponent, mantissa = magnitude >> man_bits, magnitude & ((1 << man_bits) - 1)
    if exponent == 0:
        return sign * mantissa * 2.0 ** (1 - bias - man_bits)
    return sign * (1 + mantissa / 2**man_bits) * 2.0 ** (exponent - bias)


def test_rtne_is_the_default_rounding() -> None:
    bits = patterns("float32", 16)
    nearest = run(bits, "float32", "float16", "emulator", rounding=None)
    np.testing.assert_array_equal(run(bits, "float32", "float16", "emulator", "rtne"), nearest)
    assert np.count_nonzero(nearest != run(bits, "float32", "float16", "emulator")) > 1000


def test_a_constant_is_not_folded_to_nearest() -> None:
    out = np.zeros(16, np.float16)
    downcast_constant[(1,)](out, 1.0 + 2.0**-11 + 2.0**-20, BLOCK=16, backend="emulator")
    np.testing.assert_array_equal(out, np.float16(1.0))


def _module(signature: str):
    jit = base_jit_function(downcast)
    specs = parse_signature(signature, kernel_params(jit.fn))
    return compile_kernel(jit.source, specs, stop_after="ir-opt").module


def test_the_ir_prints_and_parses_the_rounding() -> None:
    text = print_module(_module("*fp32, *fp8e4nv, 'rtz', 128"))
    assert 'arith.cast(%x) {rounding = "rtz"} : tensor<128xf8e4nv>' in text
    assert print_module(parse_module(text)) == text
    nearest = print_module(_module("*fp32, *fp8e4nv, 'rtne', 128"))
    assert "arith.cast(%x) : tensor<128xf8e4nv>" in nearest and "rounding" not in nearest


@pytest.mark.parametrize(
    "cast, problem",
    [
        ('arith.cast(%x) {rounding = "rtz"} : tensor<128xf64>', "needs a narrowing float cast"),
        ('arith.cast(%x) {rounding = "rtz"} : tensor<128xi32>', "needs a narrowing float cast"),
        ('arith.cast(%x) {rounding = "rtz"} : tensor<128xf8e4b15>', "f8e4b15"),
        ('arith.cast(%x) {rounding = "rd"} : tensor<128xf16>', 'rounding must be "rtz"'),
    ],
)
def test_the_verifier_refuses_other_rtz_casts(cast: str, problem: str) -> None:
    text = print_module(_module("*fp32, *fp16, 'rtz', 128"))
    bad = text.replace('arith.cast(%x) {rounding = "rtz"} : tensor<128xf16>', cast)
    bad = bad.replace("tt.store(%8, %9)", "").replace("ptr<f16>", "ptr<f32>")
    with pytest.raises(CompileError, match=problem):
        verify_module(parse_module(bad))


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("dst, cvt", [("fp16", "cvt.rz.f16.f32"), ("bf16", "cvt.rz.bf16.f32")])
def test_the_ptx_rounds_toward_zero(dst: str, cvt: str, arch: str, tmp_path) -> None:
    ptx = assemble(downcast, f"*fp32, *{dst}, 'rtz', 128", arch, tmp_path).ptx
    assert cvt in ptx and ".rn." not in ptx


@needs_ptxas
@pytest.mark.parametrize("src", ["fp32", "fp64", "bf16"])
@pytest.mark.parametrize("dst", ["fp8e5", "fp8e4nv"])
def test_the_ptx_of_fp8_rounds_toward_zero_through_fp16(src: str, dst: str, tmp_path) -> None:
    ptx = assemble(downcast, f"*{src}, *{dst}, 'rtz', 128", "sm_90a", tmp_path).ptx
    assert "cvt.rz.f16.f32" in ptx and "satfinite" not in ptx
    assert ("cvt.rz.f32.f64" in ptx) == (src == "fp64")


@pytest.mark.parametrize(
    "src, dst, rounding, message, triton_words",
    [
        (np.float32, tl.float16, "rz", "fp_downcast_rounding='rz' is not a rounding mode",
         "Invalid rounding mode: rz. Supported rounding modes are 'rtne' and 'rtz'."),
        (np.float16, tl.float32, "rtz", "applies only to a narrowing float cast, not fp16 to fp32",
         "Source scalar type is fp16 and destination type is fp32"),
        (np.float32, tl.int32, "rtne", "applies only to a narrowing float cast, not fp32 to int32",
         "should be set only for truncating fp conversions"),
        (np.float32, tl.float8e4b15, "rtz", "not supported for a cast to tl.float8e4b15", None),
    ],
)  # fmt: skip
def test_refused_roundings_are_located_errors(src, dst, rounding, message, triton_words) -> None:
    holder = {tl.float16: np.float16, tl.float32: np.float32, tl.int32: np.int32}.get(dst)
    out = np.zeros(BLOCK, holder) if holder else triton.reinterpret(np.zeros(BLOCK, np.uint8), dst)
    with pytest.raises(CompileError) as info:
        downcast[(1,)](np.ones(BLOCK, src), out, rounding, BLOCK=BLOCK, backend="emulator")
    text = str(info.value)
    assert message in text
    assert "test_downcast_rtz.py:" in text and "x.to(dst.dtype.element_ty" in text and "^" in text
    if triton_words is not None:
        assert triton_words in str(info.value.__cause__)


def test_a_bitcast_and_an_unchanged_type_ignore_the_rounding() -> None:
    x = np.linspace(-3, 3, BLOCK, dtype=np.float32)
    out = np.zeros(BLOCK, np.float32)
    downcast[(1,)](x, out, "toward-zero", BLOCK=BLOCK, backend="emulator")  # as in Triton
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("dst", TARGETS)
def test_both_backends_round_toward_zero(backend: str, dst: str) -> None:
    bits = patterns("float32", 64, seed=3)
    check(run(bits, "float32", dst, backend), bits, "float32", dst)


def test_the_help_spells_every_dtype_as_a_kernel_does() -> None:
    # The help of a refused rounding names the dtype as `tl.<name>`: each must be tl's object.
    import minitriton.language as tl
    from minitriton.frontend.builtins import _dtype_name
    from minitriton.ir.types import _TRITON_NAMES, ScalarType

    for name in _TRITON_NAMES:
        t = ScalarType(name)
        spelled = _dtype_name(t)
        assert spelled.startswith("tl.") and getattr(tl, spelled[3:]) is t, (name, spelled)
