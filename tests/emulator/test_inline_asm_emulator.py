"""``tl.inline_asm_elementwise`` on the emulator: its PTX evaluator against NumPy.

Integer and conversion instructions are compared bit for bit; ``.approx``
ones, which the emulator computes as the correctly rounded function, within
a few ulps of NumPy's. Kernels check operand numbering, ``pack``, several
results and the located error for an instruction the evaluator does not know.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator.ptx import PtxError, run_elementwise
from minitriton.ir.types import ScalarType
from minitriton.runtime.errors import InterpreterError
from tests.kernels import compat_suite as K

I32, U32, F32, F16 = ScalarType("i32"), ScalarType("u32"), ScalarType("f32"), ScalarType("f16")
RNG = np.random.default_rng(7)


def asm(text: str, constraints: str, out: ScalarType, *args: np.ndarray,
        pack: int = 1) -> np.ndarray:  # fmt: skip
    """One result of ``text`` applied elementwise to ``args`` (their dtype gives the type)."""
    types = [ScalarType({"int32": "i32", "uint32": "u32", "float32": "f32", "float16": "f16",
                         "int8": "i8", "uint16": "u16"}[a.dtype.name]) for a in args]  # fmt: skip
    return run_elementwise(text, constraints, pack, list(zip(args, types)), [out])[0]


def bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32).view(np.uint32)


def words(n: int = 64) -> np.ndarray:
    edge = np.array([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x12345678], np.uint32)
    return np.concatenate([edge, RNG.integers(0, 2**32, n, dtype=np.uint32)])


# ---------------------------------------------------------------- float arithmetic


@pytest.mark.parametrize(
    ("text", "reference", "ulps"),
    [
        ("ex2.approx.ftz.f32 $0, $1;", np.exp2, 2),
        ("lg2.approx.f32 $0, $1;", np.log2, 2),
        ("rcp.approx.ftz.f32 $0, $1;", np.reciprocal, 1),
        ("rsqrt.approx.f32 $0, $1;", lambda x: 1 / np.sqrt(x), 2),
        ("sqrt.approx.f32 $0, $1;", np.sqrt, 1),
        ("tanh.approx.f32 $0, $1;", np.tanh, 2),
        ("sin.approx.f32 $0, $1;", np.sin, 2),
    ],
)
def test_approx_functions_are_the_fp32_function(text, reference, ulps) -> None:
    x = RNG.uniform(0.01, 4.0, 200).astype(np.float32)
    got = asm(text, "=f,f", F32, x)
    want = reference(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_max_ulp(got, want, maxulp=ulps)


def test_ftz_flushes_subnormal_inputs_and_results() -> None:
    tiny = np.array([1e-40, -1e-40, 2.0**-127, 1.0], np.float32)
    np.testing.assert_array_equal(bits(asm("mul.ftz.f32 $0, $1, 0f3F800000;", "=f,f", F32, tiny)),
                                  bits([0.0, -0.0, 0.0, 1.0]))  # fmt: skip
    np.testing.assert_array_equal(asm("add.f32 $0, $1, 0f00000000;", "=f,f", F32, tiny), tiny)
    np.testing.assert_array_equal(asm("mul.rn.ftz.f32 $0, $1, 0f3F000000;", "=f,f", F32,
                                      np.float32([2.0**-126, 3.0])), [0.0, 1.5])  # fmt: skip


def test_add_sub_mul_fma_round_as_the_gpu() -> None:
    a, b, c = (RNG.standard_normal(100).astype(np.float32) for _ in range(3))
    np.testing.assert_array_equal(asm("add.f32 $0, $1, $2;", "=f,f,f", F32, a, b), a + b)
    np.testing.assert_array_equal(asm("sub.rn.f32 $0, $1, $2;", "=f,f,f", F32, a, b), a - b)
    np.testing.assert_array_equal(asm("mul.f32 $0, $1, $2;", "=f,f,f", F32, a, b), a * b)
    exact = a.astype(np.float64) * b + c  # |a*b + c| ~ 1: float64 keeps it exact enough here
    got = asm("fma.rn.f32 $0, $1, $2, $3;", "=f,f,f,f", F32, a, b, c)
    np.testing.assert_array_equal(got, exact.astype(np.float32))
    # 1 + 2**-24 + 2**-70 rounds up; through float64 (a tie, then to even) it would round down.
    fa, fb, fc = np.float32([-(2.0**-24) * (1 + 2.0**-23)]), np.float32([1 - 2.0**-23]), \
        np.float32([1 + 2.0**-23])  # fmt: skip
    assert asm("fma.rn.f32 $0, $1, $2, $3;", "=f,f,f,f", F32, fa, fb, fc)[0] == fc[0]
    toward_zero = asm("add.rz.f32 $0, $1, $2;", "=f,f,f", F32, np.float32([1.0, -1.0]),
                      np.float32([2.0**-30, -(2.0**-30)]))  # fmt: skip
    np.testing.assert_array_equal(toward_zero, [1.0, -1.0])
    up = asm("add.rp.f32 $0, $1, $2;", "=f,f,f", F32, np.float32([1.0]), np.float32([2.0**-30]))
    assert up[0] == np.nextafter(np.float32(1), np.float32(2))


def test_f16x2_packed_arithmetic_works_per_half() -> None:
    x = RNG.standard_normal(64).astype(np.float16)
    y = RNG.standard_normal(64).astype(np.float16)
    got = asm("add.rn.f16x2 $0, $1, $2;", "=r,r,r", F16, x, y, pack=2)
    np.testing.assert_array_equal(got, x + y)
    got = asm("mul.f16x2 $0, $1, $2;", "=r,r,r", F16, x, y, pack=2)
    np.testing.assert_array_equal(got, x * y)
    np.testing.assert_array_equal(asm("neg.f16x2 $0, $1;", "=r,r", F16, x, pack=2), -x)


def test_min_max_neg_abs_and_max_xorsign_abs() -> None:
    a = np.float32([1.0, -3.0, 2.0, np.nan, -0.0, 5.0])
    b = np.float32([-2.0, 1.0, np.nan, 1.0, 0.0, -7.0])
    got = asm("max.NaN.xorsign.abs.f32 $0, $1, $2;", "=f,f,f", F32, a, b)
    np.testing.assert_array_equal(got, [-2.0, -3.0, np.nan, np.nan, -0.0, -7.0])
    assert bits(got)[2] == 0x7FFFFFFF  # the GPU's canonical NaN
    np.testing.assert_array_equal(asm("min.f32 $0, $1, $2;", "=f,f,f", F32, a, b),
                                  [-2.0, -3.0, 2.0, 1.0, -0.0, -7.0])  # fmt: skip
    assert np.signbit(asm("max.f32 $0, $1, $2;", "=f,f,f", F32, a, b)[4]) == np.False_
    np.testing.assert_array_equal(asm("abs.f32 $0, $1;", "=f,f", F32, a), np.abs(a))
    np.testing.assert_array_equal(bits(asm("neg.f32 $0, $1;", "=f,f", F32, a)), bits(a) ^ 2**31)


# ---------------------------------------------------------------- conversions


def test_tf32_conversions() -> None:
    x = np.concatenate([RNG.standard_normal(100), [1 + 2**-11, 1 + 3 * 2**-11]]).astype(np.float32)
    raw = bits(x).astype(np.uint64)
    rna = ((raw + 0x1000) & 0xFFFFE000).astype(np.uint32)
    rn = ((raw + 0xFFF + ((raw >> 13) & 1)) & 0xFFFFE000).astype(np.uint32)
    got = asm("cvt.rna.tf32.f32 $0, $1;", "=r,f", I32, x).view(np.uint32)
    np.testing.assert_array_equal(got, rna)
    np.testing.assert_array_equal(asm("cvt.rn.tf32.f32 $0, $1;", "=r,f", I32, x).view(np.uint32),
                                  rn)  # fmt: skip
    assert rna[-2] != rn[-2]  # a tie: away from zero, or to even


def test_packed_half_and_fp8_conversions() -> None:
    x = RNG.standard_normal(64).astype(np.float32) * 8
    halves = asm("cvt.rn.f16x2.f32 $0, $2, $1;", "=r,r,r", F16, x, pack=2)
    np.testing.assert_array_equal(halves, x.astype(np.float16))
    pairs = asm("cvt.rn.bf16x2.f32 $0, $2, $1;", "=r,r,r", ScalarType("bf16"), x, pack=2)
    b = bits(x).astype(np.uint64)
    np.testing.assert_array_equal(pairs, ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16))
    big = np.float32([1.0, -1.0, 500.0, -1e6, 0.3, np.nan])
    codes = asm("cvt.rn.satfinite.e4m3x2.f32 $0, $2, $1;", "=h,r,r", ScalarType("u8"), big, pack=2)
    np.testing.assert_array_equal(codes, [0x38, 0xB8, 0x7E, 0xFE, 0x2A, 0x7F])
    back = asm("cvt.rn.f16x2.e4m3x2 $0, $1;", "=r,h", F16, codes.astype(np.int8), pack=2)
    np.testing.assert_array_equal(back[:5], [1.0, -1.0, 448.0, -448.0, 0.3125])


def test_scalar_conversions() -> None:
    h = RNG.standard_normal(32).astype(np.float16)
    np.testing.assert_array_equal(asm("cvt.f32.f16 $0, $1;", "=f,h", F32, h), h.astype(np.float32))
    x = np.float32([2.5, -2.5, 3.7, -3.7, 1e10, -1e10, np.nan])
    np.testing.assert_array_equal(asm("cvt.rzi.s32.f32 $0, $1;", "=r,f", I32, x),
                                  [2, -2, 3, -3, 2**31 - 1, -(2**31), 0])  # fmt: skip
    np.testing.assert_array_equal(asm("cvt.rni.s32.f32 $0, $1;", "=r,f", I32, x)[:4],
                                  [2, -2, 4, -4])  # fmt: skip
    np.testing.assert_array_equal(asm("cvt.rn.f16.f32 $0, $1;", "=h,f", F16, x[:4]),
                                  x[:4].astype(np.float16))  # fmt: skip
    n = np.int32([-5, 7, 2**24 + 1])
    np.testing.assert_array_equal(asm("cvt.rn.f32.s32 $0, $1;", "=f,r", F32, n),
                                  n.astype(np.float32))  # fmt: skip
    np.testing.assert_array_equal(asm("cvt.s32.s8 $0, $1;", "=r,r", I32, np.int32([0x80, 0x7F])),
                                  [-128, 127])  # fmt: skip


# ---------------------------------------------------------------- integers


def test_integer_arithmetic() -> None:
    a, b, c = words(), words()[::-1].copy(), RNG.integers(0, 2**32, 70, dtype=np.uint32)
    a64, b64 = a.astype(np.uint64), b.astype(np.uint64)
    s = lambda x: x.view(np.int32).astype(np.int64)  # noqa: E731
    cases = {
        "add.u32 $0, $1, $2;": a + b,
        "sub.s32 $0, $1, $2;": a - b,
        "mul.lo.u32 $0, $1, $2;": a * b,
        "mul.hi.u32 $0, $1, $2;": ((a64 * b64) >> 32).astype(np.uint32),
        "mul.hi.s32 $0, $1, $2;": ((s(a) * s(b)) >> 32).astype(np.uint32),
        "mad.lo.s32 $0, $1, $2, $3;": a * b + c,
    }
    for text, want in cases.items():
        got = asm(text, "=r,r,r,r" if "mad" in text else "=r,r,r", U32,
                  *([a, b, c] if "mad" in text else [a, b]))  # fmt: skip
        np.testing.assert_array_equal(got, want, err_msg=text)
    wide = run_elementwise("mul.wide.u32 $0, $1, $2;", "=l,r,r", 1, [(a, U32), (b, U32)],
                           [ScalarType("u64")])[0]  # fmt: skip
    np.testing.assert_array_equal(wide, a64 * b64)


def test_bitwise_and_shift_instructions() -> None:
    a, b = words(), words()[::-1].copy()
    n = (b % 40).astype(np.uint32)
    a64, b64 = a.astype(np.uint64), b.astype(np.uint64)
    cases = {
        "and.b32 $0, $1, $2;": a & b,
        "or.b32 $0, $1, $2;": a | b,
        "xor.b32 $0, $1, $2;": a ^ b,
        "not.b32 $0, $1;": ~a,
        "shl.b32 $0, $1, 5;": a << 5,
        "shr.u32 $0, $1, 7;": a >> 7,
        "shr.s32 $0, $1, 7;": (a.view(np.int32) >> 7).view(np.uint32),
        "shf.l.wrap.b32 $0, $1, $2, 17;": ((b64 << 17) | (a64 >> 15)).astype(np.uint32),
        "shf.r.clamp.b32 $0, $1, $2, 9;": ((a64 >> 9) | (b64 << 23)).astype(np.uint32),
        "lop3.b32 $0, $1, $2, 0x0F0F0F0F, 0xE8;": (a & b) | (a & 0x0F0F0F0F) | (b & 0x0F0F0F0F),
        "prmt.b32 $0, $1, $2, 0x5140;": (
            (a & 0xFF) | ((b & 0xFF) << 8) | ((a >> 8 & 0xFF) << 16) | ((b >> 8 & 0xFF) << 24)
        ),
        "bfe.u32 $0, $1, 4, 12;": (a >> 4) & 0xFFF,
        "bfe.s32 $0, $1, 4, 12;": ((a.view(np.int32) << 16) >> 20).view(np.uint32),
        "bfi.b32 $0, $1, $2, 8, 4;": (b & ~np.uint32(0xF00)) | ((a & 0xF) << 8),
        "popc.b32 $0, $1;": np.bitwise_count(a).astype(np.uint32),
        "clz.b32 $0, $1;": np.array([32 - int(v).bit_length() for v in a], np.uint32),
        "brev.b32 $0, $1;": np.array([int(f"{v:032b}"[::-1], 2) for v in a], np.uint32),
    }
    for text, want in cases.items():
        args = [a] if text.count("$") == 2 else [a, b]
        got = asm(text, ",".join(["=r"] + ["r"] * len(args)), U32, *args)
        np.testing.assert_array_equal(got, want, err_msg=text)
    shifted = asm("shl.b32 $0, $1, $2;", "=r,r,r", U32, a, n)
    np.testing.assert_array_equal(
        shifted, np.where(n >= 32, 0, a64 << np.minimum(n, 31)) & 0xFFFFFFFF
    )


def test_mov_packs_and_unpacks_registers() -> None:
    x = RNG.integers(0, 2**32, 16, dtype=np.uint32)
    swapped = asm("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, $1; mov.b32 $0, {hi, lo}; }", "=r,r",
                  U32, x)  # fmt: skip
    np.testing.assert_array_equal(swapped, (x >> 16) | (x << 16))


# ---------------------------------------------------------------- blocks, predicates


def test_a_block_with_local_registers_and_predicates() -> None:
    x = np.float32([-2.0, 3.0, -0.5, 4.0])
    y = np.float32([10.0, 20.0, 30.0, 40.0])
    text = """{
        .reg .pred p;
        setp.lt.f32 p, $1, 0f00000000;   // x < 0
        selp.f32 $0, $1, $2, p;
    }"""
    np.testing.assert_array_equal(asm(text, "=f,f,f", F32, x, y), [-2.0, 20.0, -0.5, 40.0])
    guarded = """{ .reg .pred p, q; .reg .b32 t<2>;
        setp.gt.s32 p|q, $1, 5;
        mov.b32 t0, 100; mov.b32 t1, 200;
        @p add.s32 $0, $1, t0;
        @!p sub.s32 $0, $1, t1;
        @q xor.b32 $0, $0, 1;
    }"""
    n = np.int32([1, 6, 5, 100])
    np.testing.assert_array_equal(asm(guarded, "=r,r", I32, n), [(1 - 200) ^ 1, 106, -196, 200])


def test_unknown_instructions_and_forms_are_errors_that_name_them() -> None:
    x = np.zeros(4, np.uint32)
    with pytest.raises(PtxError, match="'bar'") as info:
        asm("bar.sync 0;", "=r,r", U32, x)
    assert "prmt" in info.value.help and "backend='gpu'" in info.value.help
    with pytest.raises(PtxError, match=r"'\.cc' on 'add'"):
        asm("add.cc.u32 $0, $1, 1;", "=r,r", U32, x)
    with pytest.raises(PtxError, match="memory operands"):
        asm("ld.global.b32 $0, [$1];", "=r,l", U32, x)
    with pytest.raises(PtxError, match=r"unknown register '\$5'"):
        asm("mov.b32 $0, $5;", "=r,r", U32, x)


# ---------------------------------------------------------------- kernels


def _tf32_rna(x: np.ndarray) -> np.ndarray:
    return ((x.view(np.uint32).astype(np.uint64) + 0x1000) & 0xFFFFE000).astype(np.uint32)


def test_the_gpu_tests_inline_asm_kernels_run_on_the_emulator() -> None:
    x = RNG.standard_normal(128).astype(np.float32)
    y = RNG.standard_normal(128).astype(np.float16)
    out, halves = np.zeros(256, np.int32), np.zeros(128, np.float16)
    K.inline_asm[(1,)](x, y, out, halves, 128, backend="emulator")
    tf32 = _tf32_rna(x)
    np.testing.assert_array_equal(out[:128].view(np.uint32), tf32)
    product = tf32.astype(np.uint64) * 3
    mixed = ((product & 0xFFFFFFFF) ^ (product >> 32)).astype(np.uint32)
    np.testing.assert_array_equal(out[128:].view(np.uint32), mixed)
    np.testing.assert_array_equal(halves, y + y)
    data = RNG.integers(-128, 128, 256).astype(np.int8)
    swapped, halves = data.copy(), np.zeros(256, np.float16)
    x = RNG.standard_normal(256).astype(np.float32)
    K.packed_asm[(1,)](x, halves, swapped, 256, backend="emulator")
    np.testing.assert_array_equal(halves, x.astype(np.float16))
    np.testing.assert_array_equal(swapped, data.reshape(-1, 4)[:, ::-1].reshape(-1))


@triton.jit
def _unpack_bytes(a_ptr, b_ptr, c_ptr, d_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    # four uint8 of `a` arrive in $8; $9-$12 are four fp32 of `b`
    c, d = tl.inline_asm_elementwise(
        """{
            .reg .b8 byte<4>;
            mov.b32 {byte0, byte1, byte2, byte3}, $8;
            cvt.u32.u8 $0, byte0;
            cvt.u32.u8 $1, byte1;
            cvt.u32.u8 $2, byte2;
            cvt.u32.u8 $3, byte3;
        }
        cvt.rn.f32.s32 $4, $0;
        cvt.rn.f32.s32 $5, $1;
        cvt.rn.f32.s32 $6, $2;
        cvt.rn.f32.s32 $7, $3;
        max.f32 $4, $4, $9;
        max.f32 $5, $5, $10;
        max.f32 $6, $6, $11;
        max.f32 $7, $7, $12;""",
        "=r,=r,=r,=r,=r,=r,=r,=r,r,r,r,r,r", [a, b], dtype=(tl.int32, tl.float32),
        is_pure=True, pack=4,
    )  # fmt: skip
    tl.store(c_ptr + offs, c)
    tl.store(d_ptr + offs, d)


def test_pack_four_bytes_and_two_results_over_several_programs() -> None:
    a = RNG.integers(0, 256, 96).astype(np.uint8)
    b = RNG.uniform(0, 255, 96).astype(np.float32)
    c, d = np.zeros(96, np.int32), np.zeros(96, np.float32)
    _unpack_bytes[(3,)](a, b, c, d, BLOCK=32, backend="emulator")
    np.testing.assert_array_equal(c, a)
    np.testing.assert_array_equal(d, np.maximum(a.astype(np.float32), b))


@triton.jit
def _funnel_and_diff(x_ptr, y_ptr, z_ptr, w_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    s = tl.full([BLOCK], n, tl.int32)
    z = tl.inline_asm_elementwise("shf.l.wrap.b32 $0, $1, $2, $3;", "=r, r, r, r", [x, y, s],
                                  dtype=tl.int32, is_pure=True, pack=1)  # fmt: skip
    tl.store(z_ptr + offs, z)
    hi, lo = tl.inline_asm_elementwise("sub.u32 $0, $2, $3; sub.u32 $1, $3, $2;", "=r,=r,r,r",
                                       [x, y], dtype=(tl.uint32, tl.uint32), is_pure=True,
                                       pack=1)  # fmt: skip
    tl.store(w_ptr + offs, hi ^ lo)


def test_a_funnel_shift_and_two_results_in_a_kernel() -> None:
    x, y = words(58), words(58)[::-1].copy()
    z, w = np.zeros(64, np.uint32), np.zeros(64, np.uint32)
    _funnel_and_diff[(1,)](x, y, z, w, 17, BLOCK=64, backend="emulator")
    np.testing.assert_array_equal(z, (y << 17) | (x >> 15))
    np.testing.assert_array_equal(w, (x - y) ^ (y - x))


@triton.jit
def _unknown_instruction(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    y = tl.inline_asm_elementwise("vote.sync.ballot.b32 $0, 1, 0xffffffff;", "=r,r", [x],
                                  dtype=tl.int32, is_pure=True, pack=1)  # fmt: skip
    tl.store(x_ptr + tl.arange(0, N), y)


def test_an_unknown_instruction_is_a_located_error() -> None:
    with pytest.raises(InterpreterError) as info:
        _unknown_instruction[(1,)](np.zeros(8, np.int32), N=8, backend="emulator")
    text = str(info.value)
    assert "test_inline_asm_emulator.py:" in text and "vote.sync.ballot.b32" in text
    assert "the emulator does not know the PTX instruction 'vote'" in text
    assert "Traceback" not in text and "lop3" in text  # the help lists what it knows
