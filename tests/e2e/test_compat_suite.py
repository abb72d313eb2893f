"""Behaviour that Triton's own language tests (``test_core.py``) check, on both backends.

Shapes that compare equal to lists, ``isinstance`` on run-time values,
conditional expressions whose branches store, Triton's reverse scans, right
shifts of mixed signedness, dots of a single row, the fp8 formats of other
GPUs, Triton's dtype API and error classes, ``triton.set_allocator``,
``do_bench_cudagraph`` and patching a kernel's source.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.diagnostics import CompileError
from minitriton.runtime.allocation import NullAllocator, get_allocator
from minitriton.runtime.errors import InterpreterError
from tests.e2e.ptxas_check import assemble, assemble_for_args, needs_ptxas
from tests.kernels import compat_suite as K


def test_shapes_compare_with_lists_and_isinstance(backend: str) -> None:
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(3, np.float32)
    K.shapes_and_types[(1,)](out, x, N=8, backend=backend)
    np.testing.assert_array_equal(out, [0.0, 1.0, -4.0])


def test_a_conditional_expression_runs_only_its_branch(backend: str) -> None:
    out = np.zeros(8, np.float32)
    x, y = np.array([1.0], np.float32), np.array([2.0], np.float32)
    K.store_on_one_side[(4,)](out, x, y, 10, backend=backend)
    np.testing.assert_array_equal(out, [1, 2, 1, 2, 7, 7, 7, 7])


def test_reverse_scan_keeps_the_running_value_on_the_left(backend: str) -> None:
    out = np.zeros(8, np.int32)
    K.reverse_scan_first[(1,)](out, np.arange(8, dtype=np.int32) + 10, N=8, backend=backend)
    np.testing.assert_array_equal(out, np.full(8, 17))  # Triton's: flip, scan, flip


@pytest.mark.parametrize(("x_type", "y_type", "out_type"), [
    (np.int8, np.uint8, np.uint8), (np.uint8, np.int8, np.uint8), (np.int32, np.uint32, np.uint32),
    (np.uint16, np.int32, np.int32), (np.int16, np.int8, np.int16),
])  # fmt: skip
def test_right_shift_follows_the_left_operands_signedness(
    backend: str, x_type: type, y_type: type, out_type: type
) -> None:
    # out_type is C's promotion (unsigned wins at equal width); the shift itself copies
    # the sign bit when x's own type is signed: it shifts x's own value.
    rng = np.random.default_rng(1)
    bits = np.iinfo(x_type).bits
    x = rng.integers(np.iinfo(x_type).min, np.iinfo(x_type).max, 64, dtype=x_type)
    y = rng.integers(0, bits, 64).astype(y_type)
    out = np.zeros(64, out_type)
    K.shift_right[(1,)](out, x, y, N=64, backend=backend)
    expected = [(int(a) >> int(b)) % 2 ** np.iinfo(out_type).bits for a, b in zip(x, y)]
    np.testing.assert_array_equal(out.view(f"u{out.itemsize}"), expected)


@pytest.mark.parametrize(("m", "n", "k"), [(1, 32, 32), (8, 8, 16), (32, 2, 32), (2, 2, 16)])
def test_dots_of_small_blocks(backend: str, m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(m * n)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    K.small_dot[(1,)](a, b, c, M=m, N=n, K=k, backend=backend)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_the_emulator_takes_any_k_and_the_gpu_says_what_it_needs(tmp_path) -> None:
    a, b = np.ones((64, 4), np.float16), np.ones((4, 64), np.float16)
    c = np.zeros((64, 64), np.float32)
    K.small_dot[(1,)](a, b, c, M=64, N=64, K=4, backend="emulator")  # as Triton's interpreter
    assert (c == 4).all()
    with pytest.raises(CompileError, match="K >= 16 on the GPU; got M=64, N=64, K=4"):
        assemble(K.small_dot, "*fp16, *fp16, *fp32, 64, 64, 4", "sm_90a", tmp_path)


# -- fp8 formats of other GPUs (the emulator only) ------------------------------------

FP8 = {  # name -> (largest finite value, NaN code or None, negative zero code or None)
    "float8e4b15": (1.875, None, 0x80),
    "float8e4b8": (240.0, 0x80, None),
    "float8e5b16": (57344.0, 0x80, None),
}


@pytest.mark.parametrize("name", sorted(FP8))
def test_fp8_formats_of_other_gpus_round_trip_on_the_emulator(name: str) -> None:
    largest, nan_code, negative_zero = FP8[name]
    dtype = getattr(tl, name)
    exp_bits = 8 - 1 - dtype.fp_mantissa_width
    # Every code's value, decoded by the emulator, then encoded again: the same code.
    xs = np.array([0.5, -0.0, 1.5, -1e9, largest, largest * 4, np.nan, 2.0**-20], np.float32)
    bits, back = np.zeros(8, np.uint8), np.zeros(8, np.float32)
    K.fp8_round_trip[(1,)](bits, back, xs, N=8, FP8=dtype, backend="emulator")
    assert back[0] == 0.5 and back[2] == 1.5
    assert back[3] == -largest and back[4] == largest and back[5] == largest  # saturate
    assert back[7] == 0.0 or back[7] == 2.0 ** (1 - dtype.exponent_bias - dtype.fp_mantissa_width)
    assert exp_bits in (4, 5)
    if nan_code is None:
        assert not np.isnan(back).any()  # no NaN in the format
    else:
        assert bits[6] == nan_code and np.isnan(back[6])
    assert bits[1] == (negative_zero or 0)  # the fnuz formats have no negative zero


@pytest.mark.parametrize("name", ["float8e4b8", "float8e5b16"])
def test_the_gpu_refuses_amd_fp8_formats(name: str, tmp_path) -> None:
    args = (np.zeros(8, np.uint8), np.zeros(8, np.float32), np.zeros(8, np.float32), 8,
            getattr(tl, name))  # fmt: skip
    with pytest.raises(CompileError, match="not supported by the GPU backend"):
        assemble_for_args(K.fp8_round_trip, args, "sm_90a", tmp_path)


@pytest.mark.parametrize("name", ["float8e4b8", "float8e5b16"])
def test_a_gpu_compile_refuses_amd_fp8_even_where_the_value_is_unused(name: str) -> None:
    # Triton's test_fp8_support: its frontend refuses the type before any pass runs
    with pytest.raises(triton.CompilationError) as info:
        triton.compile(triton.compiler.ASTSource(
            fn=K.unused_fp8_dot, signature={"dtype": "constexpr"},
            constexprs={"dtype": getattr(tl, name)}))  # fmt: skip
    assert "not supported in this architecture" in str(info.value.__cause__)
    assert "kernels/compat_suite.py:" in str(info.value) and "^" in str(info.value)


def e4b15_values() -> np.ndarray:
    """The value of each of fp8e4b15's 256 codes, from fp16: the same bias, 3 mantissa bits."""
    codes = np.arange(256, dtype=np.uint16)
    return (((codes & 0x80) << 8) | ((codes & 0x7F) << 7)).view(np.float16).astype(np.float32)


def e4b15_round(x: np.ndarray) -> np.ndarray:
    """fp8e4b15 codes of ``x``: nearest, ties to the even code, saturating at 1.875; NaN 0x7f."""
    grid = e4b15_values()[:128].astype(np.float64)  # increasing, 0 to 1.875
    a = np.minimum(np.abs(x.astype(np.float64)), grid[-1])
    distance = np.abs(grid[None, :] - np.nan_to_num(a)[:, None])
    best = distance.min(axis=1, keepdims=True)
    ties = distance == best
    code = np.where(ties.sum(axis=1) > 1, np.argmax(ties & (np.arange(128) % 2 == 0), axis=1),
                    np.argmax(ties, axis=1))  # fmt: skip
    code = np.where(np.signbit(x), code | 0x80, code)
    return np.where(np.isnan(x), 0x7F, code).astype(np.uint8)


def test_fp8e4b15_rounds_and_decodes_on_both_backends(backend: str) -> None:
    # Triton keeps fp8e4b15 on NVIDIA GPUs: the GPU converts it in software
    rng = np.random.default_rng(3)
    values = e4b15_values()
    mids = (values[:127] + values[1:128]) / 2  # ties, both neighbours' codes
    xs = np.concatenate([values, mids, -mids, rng.uniform(-2.5, 2.5, 1000),
                         [1.9, 2.0, 1e30, -np.inf, np.nan, 2.0**-18, 3 * 2.0**-18]])  # fmt: skip
    xs = xs.astype(np.float32)
    n = 2048
    xs = np.concatenate([xs, np.zeros(n - xs.size, np.float32)])
    bits, back = np.zeros(n, np.uint8), np.zeros(n, np.float32)
    K.fp8_round_trip[(1,)](bits, back, xs, N=n, FP8=tl.float8e4b15, backend=backend)
    np.testing.assert_array_equal(bits, e4b15_round(xs))
    np.testing.assert_array_equal(back, values[bits])


def test_fp8e4b15_dot_goes_through_fp16_on_both_backends(backend: str) -> None:
    rng = np.random.default_rng(4)
    m, n, k = 32, 32, 64
    a = rng.integers(0, 256, (m, k), dtype=np.uint8)
    b = rng.integers(0, 256, (k, n), dtype=np.uint8)
    c = np.zeros((m, n), np.float32)
    K.fp8_bits_dot[(1,)](a, b, c, M=m, N=n, K=k, FP8=tl.float8e4b15, backend=backend)
    values = e4b15_values().astype(np.float64)
    np.testing.assert_allclose(c, values[a] @ values[b], rtol=1e-5, atol=1e-5)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_fp8e4b15_compiles_in_software_on_every_arch(arch: str, tmp_path) -> None:
    args = (np.zeros(64, np.uint8), np.zeros(64, np.float32), np.zeros(64, np.float32), 64,
            tl.float8e4b15)  # fmt: skip
    ptx = assemble_for_args(K.fp8_round_trip, args, arch, tmp_path).ptx
    assert "cvt.rn.satfinite" not in ptx and "cvt.rni.f32.f32" in ptx
    a = np.zeros((64, 64), np.uint8)
    args = (a, a, np.zeros((64, 64), np.float32), 64, 64, 64, tl.float8e4b15)
    ptx = assemble_for_args(K.fp8_bits_dot, args, arch, tmp_path).ptx
    assert ("wgmma" in ptx and "f16.f16" in ptx) if arch == "sm_90a" else "mma.sync" in ptx


def test_an_fp8e4b15_dot_warns_as_tritons_does_on_sm90_and_only_there() -> None:
    source = triton.compiler.ASTSource(
        fn=K.unused_fp8_dot, signature={"dtype": "constexpr"},
        constexprs={"dtype": tl.float8e4b15})  # fmt: skip
    with pytest.warns(UserWarning, match="fp8e4b15 is deprecated on Hopper and later"):
        triton.compile(source, target=triton.backends.compiler.GPUTarget("cuda", 90, 32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        triton.compile(source, target=triton.backends.compiler.GPUTarget("cuda", 80, 32))
        a = np.zeros((16, 16), np.uint8)
        K.fp8_bits_dot[(1,)](a, a, np.zeros((16, 16), np.float32), M=16, N=16, K=16,
                             FP8=tl.float8e4b15, backend="emulator")  # fmt: skip


@pytest.mark.parametrize("name", ["float8e4nv", "float8e5"])
def test_abs_of_fp8_clears_the_sign_bit(backend: str, name: str) -> None:
    dtype = getattr(tl, name)
    bits = np.arange(256, dtype=np.uint8)
    nan = (bits & 0x7F) >= (0x7F if name == "float8e4nv" else 0x7D)  # NaN codes (and e5's inf)
    bits[nan] = 0
    out = np.full(256, 0xAA, np.uint8)
    K.abs_of_bits[(1,)](out, bits, N=256, FP8=dtype, backend=backend)
    np.testing.assert_array_equal(out, bits & 0x7F)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("signature", [
    "*fp16, *fp16, *fp32, 1, 32, 32", "*fp16, *fp16, *fp32, 8, 8, 16",
    "*fp32, *fp32, *fp32, 64, 2, 8", "*i8, *i8, *i32, 2, 2, 32",
])  # fmt: skip
def test_small_dots_assemble(signature: str, arch: str, tmp_path) -> None:
    assemble(K.small_dot, signature, arch, tmp_path)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("kernel", [K.store_on_one_side, K.shift_right, K.reverse_scan_first])
def test_compat_kernels_assemble(kernel: triton.JITFunction, arch: str, tmp_path) -> None:
    signature = {
        K.store_on_one_side: "*fp32, *fp32, *fp32, i32",
        K.shift_right: "*u8, *i8, *u8, 64",
        K.reverse_scan_first: "*i32, *i32, 64",
    }[kernel]
    assemble(kernel, signature, arch, tmp_path)


def test_aggregates_are_built_passed_returned_and_carried(backend: str) -> None:
    x, y = np.arange(8, dtype=np.float32), np.linspace(-1, 1, 8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    K.aggregates[(1,)](x, y, out, N=8, backend=backend)
    a, b = y, x  # q is p swapped; its a grows by one in the second round
    expected = (a + b) * 3 + a * b + (a + 1 + b) * 3 + (a + 1) * b + x
    np.testing.assert_allclose(out, expected, rtol=1e-6)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_aggregates_assemble(arch: str, tmp_path) -> None:
    x = np.zeros(8, np.float32)
    assemble_for_args(K.aggregates, (x, x, x, 8), arch, tmp_path)


def test_an_aggregate_needs_its_fields_set() -> None:
    @triton.aggregate
    class Half:
        a: tl.tensor
        b: tl.tensor

        @triton.constexpr_function
        def __init__(self, a):
            self.a = a

    @triton.jit
    def make_half(x_ptr):
        h = Half(tl.load(x_ptr + tl.arange(0, 8)))
        tl.store(x_ptr + tl.arange(0, 8), h.a)

    with pytest.raises(CompileError, match=r"Half.__init__ did not set b"):
        make_half[(1,)](np.zeros(8, np.float32), backend="emulator")


#: What an H200 gives for NaN, inf, -inf and 1e30 converted to each integer type (Triton 3.6's
#: kernels, their bits): from f32 and narrower (one row: f16, bf16 and f32 agree), and from f64.
H200_CASTS = {
    "int8": (["0x0", "0xff", "0x0", "0xff"], ["0x0", "0xff", "0x0", "0xff"]),
    "int16": (["0x0", "0x7fff", "0x8000", "0x7fff"], ["0x8000", "0x7fff", "0x8000", "0x7fff"]),
    "int32": (["0x0", "0x7fffffff", "0x80000000", "0x7fffffff"],
              ["0x80000000", "0x7fffffff", "0x80000000", "0x7fffffff"]),
    "int64": (["0x8000000000000000", "0x7fffffffffffffff", "0x8000000000000000",
               "0x7fffffffffffffff"],) * 2,
    "uint8": (["0x0", "0xff", "0x0", "0xff"], ["0x0", "0xff", "0x0", "0xff"]),
    "uint16": (["0x0", "0xffff", "0x0", "0xffff"], ["0x8000", "0xffff", "0x0", "0xffff"]),
    "uint32": (["0x0", "0xffffffff", "0x0", "0xffffffff"],
               ["0x80000000", "0xffffffff", "0x0", "0xffffffff"]),
    "uint64": (["0x8000000000000000", "0xffffffffffffffff", "0x0", "0xffffffffffffffff"],) * 2,
}  # fmt: skip


@pytest.mark.parametrize("dst", sorted(H200_CASTS))
@pytest.mark.parametrize("src", [np.float32, np.float64, np.float16])
def test_casts_of_nan_infinity_and_huge_floats_give_the_h200s_integers(
    backend: str, src: type, dst: str
) -> None:
    x = np.array([np.nan, np.inf, -np.inf, 1e30 if src != np.float16 else np.inf], src)
    bits = np.dtype(dst).itemsize * 8
    out = np.zeros(4, dst)
    K.cast_to[(1,)](x, out, N=4, DST=getattr(tl, dst), backend=backend)
    got = [hex(int(v) & ((1 << bits) - 1)) for v in out]
    assert got == H200_CASTS[dst][src == np.float64]


def test_a_float_cast_to_8_bits_keeps_the_low_byte_of_the_16_bit_result() -> None:
    x = np.array([200.0, -200.0, 300.0, -3.7], np.float32)
    out = np.zeros(4, np.int8)
    K.cast_to[(1,)](x, out, N=4, DST=tl.int8, backend="emulator")
    assert out.tolist() == [-56, 56, 44, -3]  # 200 = 0x00c8, 300 = 0x012c


def test_triton_compile_of_an_ast_source_gives_ptx() -> None:
    src = triton.compiler.ASTSource(
        fn=K.compare_and_swap, signature={"x_ptr": "*fp32", "old_ptr": "*fp32"},
        constexprs={"N": 64}, attrs={(0,): [["tt.divisibility", 16]]},
    )  # fmt: skip
    compiled = triton.compile(src, options={"num_warps": 2})
    assert ".entry compare_and_swap" in compiled.asm["ptx"]
    assert ".maxntid 64" in compiled.asm["ptx"]  # two warps
    assert "atom" in compiled.asm["ptx"]
    by_index = triton.compile(triton.compiler.ASTSource(
        K.compare_and_swap, {"x_ptr": "*i32", "old_ptr": "*i32", "N": "constexpr"},
        constexprs={(2,): 32}))  # fmt: skip
    assert "cas.b32" in by_index.asm["ptx"]


def test_triton_compile_takes_launch_options_and_tritons_targets() -> None:
    from minitriton.runtime.driver import GPUTarget

    src = triton.compiler.ASTSource(
        fn=K.compare_and_swap, signature={"x_ptr": "*fp32", "old_ptr": "*fp32"},
        constexprs={"N": 64},
    )  # fmt: skip
    for capability, ptx_target in ((90, "sm_90a"), (100, "sm_100a"), (80, "sm_80")):
        compiled = triton.compile(src, target=GPUTarget("cuda", capability, 32))
        assert f".target {ptx_target}\n" in compiled.asm["ptx"]
    # Options CompileOptions knows pass through; Triton's own others are left out, and
    # debug too (Inductor asks for it; MiniTriton's debug mode checks every access).
    options = {"num_warps": 2, "enable_fp_fusion": False, "debug": True, "launch_pdl": True}
    compiled = triton.compile(src, options=options)
    assert compiled.options.num_warps == 2 and not compiled.options.enable_fp_fusion
    assert not compiled.options.debug


def test_triton_compile_reports_a_kernels_error() -> None:
    src = triton.compiler.ASTSource(K.drops_cube, {"x_ptr": "*fp32"}, constexprs={"N": 8})
    with pytest.raises(triton.CompilationError, match="The result of cube is not being used"):
        triton.compile(src)
    with pytest.raises(ValueError, match="no type or value for parameter 'N'"):
        triton.compile(triton.compiler.ASTSource(K.drops_cube, {"x_ptr": "*fp32"}))


def test_a_dropped_result_of_a_must_use_function_is_an_error() -> None:
    x = np.full(8, 2.0, np.float32)
    K.uses_cube[(1,)](x, N=8, backend="emulator")
    assert (x == 8).all()
    with pytest.raises(CompileError, match=r"The result of cube is not being used\. Write y ="):
        K.drops_cube[(1,)](x, N=8, backend="emulator")


def test_a_block_pointer_advances_as_a_method_and_a_dropped_advance_is_an_error() -> None:
    x, out = np.arange(16, dtype=np.float32), np.zeros(8, np.float32)
    K.advances_a_block_pointer[(1,)](x, out, N=8, DROP=False, backend="emulator")
    np.testing.assert_array_equal(out, x[8:])
    with pytest.raises(CompileError, match="The result of tl.advance is not being used"):
        K.advances_a_block_pointer[(1,)](x, out, N=8, DROP=True, backend="emulator")


def test_a_descriptors_block_shape_equals_a_list() -> None:
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    out = np.zeros((4, 8), np.float32)
    K.descriptor_fields[(1,)](out, x, 8, 8, BM=4, BN=8, backend="emulator")
    np.testing.assert_array_equal(out, x[4:])


def test_an_in_kernel_descriptor_may_pad_with_nan(backend: str) -> None:
    x = np.arange(12 * 20, dtype=np.float32).reshape(12, 20)
    out = np.zeros((8, 16), np.float32)
    K.nan_padded_tile[(1,)](out, x, 12, 20, BM=8, BN=16, backend=backend)
    expected = np.full((8, 16), np.nan, np.float32)
    expected[:4, :4] = x[8:12, 16:20]
    np.testing.assert_array_equal(out, expected)


def test_nan_padding_is_refused_for_integers() -> None:
    x = np.zeros((12, 20), np.int32)
    with pytest.raises(CompileError, match="Padding option `nan` is not supported for integer"):
        K.nan_padded_tile[(1,)](x, x, 12, 20, BM=8, BN=16, backend="emulator")


@pytest.mark.parametrize("index_type", [np.int32, np.int16])
def test_descriptor_gather_and_scatter_move_rows(backend: str, index_type: type) -> None:
    x, y_size = np.arange(40 * 64, dtype=np.float32).reshape(40, 64), 64
    idx = np.array([3, 0, 39, 40, -1, 7, 7, 12], index_type)  # 40 and -1: outside, read as 0
    dst_idx = np.array([0, 1, 2, 3, 4, 50, 6, 7], index_type)  # row 50: outside, skipped
    out = np.full((40, 64), -1.0, np.float32)
    K.gather_then_scatter[(1,)](out, x, idx, dst_idx, 16, 40, y_size, BLOCK_X=8, BLOCK_Y=32,
                                backend=backend)  # fmt: skip
    expected = np.full((40, 64), -1.0, np.float32)
    for src, dst in zip(idx, dst_idx):
        if 0 <= dst < 40:
            expected[dst, 16:48] = x[src, 16:48] if 0 <= src < 40 else 0.0
    np.testing.assert_array_equal(out, expected)


def test_descriptor_gather_needs_a_one_row_block_and_small_int_offsets() -> None:
    @triton.jit
    def two_rows(x_ptr, out_ptr, BLOCK: tl.constexpr):
        desc = tl.make_tensor_descriptor(x_ptr, [8, 32], [32, 1], [2, 32])
        tl.store(out_ptr + tl.arange(0, 8)[:, None] * 32 + tl.arange(0, 32)[None, :],
                 desc.gather(tl.arange(0, 8), 0))  # fmt: skip

    @triton.jit
    def wide_offsets(x_ptr, out_ptr, BLOCK: tl.constexpr):
        desc = tl.make_tensor_descriptor(x_ptr, [8, 32], [32, 1], [1, 32])
        tl.store(out_ptr + tl.arange(0, 8)[:, None] * 32 + tl.arange(0, 32)[None, :],
                 desc.gather(tl.arange(0, 8).to(tl.int64), 0))  # fmt: skip

    x = np.zeros((8, 32), np.float32)
    with pytest.raises(CompileError, match=r"descriptor block must have 1 row.*\[2, 32\]"):
        two_rows[(1,)](x, x, 8, backend="emulator")
    with pytest.raises(CompileError, match="must have dtype int16 or int32, but got int64"):
        wide_offsets[(1,)](x, x, 8, backend="emulator")


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_descriptor_gather_and_scatter_assemble(arch: str, tmp_path) -> None:
    x, idx = np.zeros((40, 64), np.float16), np.zeros(8, np.int32)
    args = (x, x, idx, idx, 16, 40, 64, 8, 32)
    assemble_for_args(K.gather_then_scatter, args, arch, tmp_path)


@pytest.mark.parametrize("dtype", [np.float16, np.int16, np.uint16, np.float32, np.int64])
def test_compare_and_swap_of_16_bits_and_more(backend: str, dtype: type) -> None:
    x = np.tile(np.array([0, 1, 3, 0], dtype), 16)
    old = np.full(64, 7, dtype)
    K.compare_and_swap[(1,)](x, old, N=64, backend=backend)
    np.testing.assert_array_equal(old, np.tile(np.array([0, 1, 3, 0], dtype), 16))
    np.testing.assert_array_equal(x, np.tile(np.array([2, 1, 3, 2], dtype), 16))


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_75"])
def test_a_16_bit_compare_and_swap_assembles(arch: str, tmp_path) -> None:
    x = np.zeros(64, np.float16)
    assert "cas.b16" in assemble_for_args(K.compare_and_swap, (x, x, 64), arch, tmp_path).ptx


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_abs_of_fp8_assembles(arch: str, tmp_path) -> None:
    bits = np.zeros(256, np.uint8)
    assemble_for_args(K.abs_of_bits, (bits, bits, 256, tl.float8e5), arch, tmp_path)


# -- the host API ----------------------------------------------------------------------


def test_tritons_dtype_api() -> None:
    assert tl.dtype("fp16") is not None and tl.dtype("fp16") == tl.float16
    assert [tl.dtype(n) for n in tl.dtype.SINT_TYPES] == [tl.int8, tl.int16, tl.int32, tl.int64]
    assert tl.float32.primitive_bitwidth == 32 and tl.float32.fp_mantissa_width == 23
    assert (tl.bfloat16.exponent_bias, tl.float16.exponent_bias) == (127, 15)
    assert tl.float8e4nv.fp_mantissa_width == 3 and tl.float8e5.exponent_bias == 15
    assert tl.int16.is_int16() and not tl.int16.is_uint16() and tl.uint16.is_int_unsigned()
    assert tl.float16.is_fp16() and not tl.float16.is_bf16() and tl.bfloat16.is_floating()
    assert tl.int1.is_int1() and not tl.int1.is_int_unsigned()
    assert (tl.uint8.get_int_max_value(), tl.int8.get_int_min_value()) == (255, -128)
    with pytest.raises(AttributeError):
        _ = tl.float32.int_bitwidth
    assert tl.pi32_t == tl.pointer_type(tl.int32)


def test_tritons_error_classes() -> None:
    assert issubclass(triton.CompilationError, triton.TritonError)
    assert issubclass(InterpreterError, triton.TritonError)
    x = np.zeros(4, np.float32)

    @triton.jit
    def out_of_bounds(x_ptr):
        tl.store(x_ptr + tl.arange(0, 8), 1.0)

    with pytest.raises(InterpreterError, match="out-of-bounds"):
        out_of_bounds[(1,)](x, backend="emulator")


def test_set_allocator_keeps_a_function_and_refuses_anything_else() -> None:
    assert isinstance(get_allocator(), NullAllocator)
    with pytest.raises(RuntimeError, match="set_allocator"):
        get_allocator()(128, 128, None)

    def alloc(size: int, alignment: int, stream: object) -> np.ndarray:
        return np.empty(size, np.int8)

    import contextvars

    def set_and_read() -> object:
        triton.set_allocator(alloc)
        return get_allocator()

    assert contextvars.copy_context().run(set_and_read) is alloc
    with pytest.raises(TypeError, match="expects a function"):
        triton.set_allocator(128)  # type: ignore[arg-type]


def test_do_bench_cudagraph_times_the_emulator_without_a_gpu() -> None:
    x, out = np.arange(8, dtype=np.int32), np.zeros(8, np.int32)
    ms = triton.testing.do_bench_cudagraph(lambda: K.reverse_scan_first[(1,)](out, x, N=8), rep=1)
    assert isinstance(ms, float) and ms > 0
    assert (out == 7).all()
    with pytest.raises(ValueError, match="return_mode"):
        triton.testing.do_bench_cudagraph(lambda: None, return_mode="best")


@triton.jit
def _template(out_ptr, x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    tl.store(out_ptr + tl.arange(0, 4), x + 1)  # <- OP


def test_unsafe_update_src_compiles_the_new_text() -> None:
    x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    kernel = triton.JITFunction(_template.fn)
    kernel[(1,)](out, x)
    np.testing.assert_array_equal(out, x + 1)
    kernel._unsafe_update_src(kernel.src.replace("x + 1", "x * 10"))
    kernel[(1,)](out, x)
    np.testing.assert_array_equal(out, x * 10)
    kernel._unsafe_update_src(kernel.src.replace("x * 10", "x * undefined_name"))
    with pytest.raises(CompileError) as info:
        kernel[(1,)](out, x)
    # Located at the template's own line: the patched text keeps the line numbers.
    lines = Path(__file__).read_text(encoding="utf-8").splitlines()
    line = next(i for i, t in enumerate(lines, 1) if t.rstrip().endswith("# <- OP"))
    assert info.value.first.loc.line == line


# -- kernels made by exec(), as Triton's interpreter-mode tests make them -------------------


@triton.jit
def _exec_template(x_ptr, out_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4))  # noqa: F841 - GENERATE reads it
    tl.store(out_ptr + tl.arange(0, 4), GENERATE)  # noqa: F821 - replaced below


def _patched(template: triton.JITFunction, expr: str) -> triton.JITFunction:
    """Triton's ``patch_kernel`` in interpreter mode: the template's text, edited, run by exec."""
    import inspect
    import textwrap

    namespace: dict[str, object] = {}
    src = textwrap.dedent(inspect.getsource(template.fn)).replace("GENERATE", expr)
    exec(src, globals(), namespace)  # noqa: S102 - the test's own template
    return namespace[template.fn.__name__]  # type: ignore[return-value]


def test_a_kernel_made_by_exec_compiles_from_the_text_its_caller_holds() -> None:
    x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    _patched(_exec_template, "x * 3 + 1")[(1,)](x, out)
    np.testing.assert_array_equal(out, x * 3 + 1)
    with pytest.raises(CompileError) as info:
        _patched(_exec_template, "x * missing")[(1,)](x, out)
    diag = info.value.first
    assert diag.loc.file.startswith("<exec _exec_template ") and diag.loc.line == 4
    assert "x * missing" in info.value.diagnostics[0].render()  # the line is shown


def test_a_kernel_whose_text_is_gone_says_so() -> None:
    source = "import minitriton as triton\n@triton.jit\ndef lost(x):\n    pass\n"
    with pytest.raises(RuntimeError, match="exec\\(\\) of a text that the calling code keeps"):
        exec(source.replace("lost(x)", "lost(x, y)"), {}, {})  # noqa: S102 - a temporary text


def test_a_compile_errors_cause_is_its_message() -> None:
    @triton.jit
    def bad_axis(x_ptr):
        tl.store(x_ptr, tl.program_id(20))

    with pytest.raises(triton.CompilationError) as info:
        bad_axis[(1,)](np.zeros(1, np.int32))
    assert str(info.value.__cause__) == "program_id axis must be 0, 1, or 2 but got 20"


# -- inline PTX ------------------------------------------------------------------------------


def _tf32_rna(x: np.ndarray) -> np.ndarray:
    """fp32 rounded to 10 mantissa bits, ties away from zero (``cvt.rna.tf32.f32``), as bits."""
    bits = x.view(np.uint32).astype(np.uint64)
    return ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.int32)


@pytest.mark.gpu
def test_inline_asm_runs_on_the_gpu() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal(128).astype(np.float32)
    y = rng.standard_normal(128).astype(np.float16)
    bits, halves = np.zeros(256, np.int32), np.zeros(128, np.float16)
    K.inline_asm[(1,)](x, y, bits, halves, 128, backend="gpu")
    tf32 = _tf32_rna(x)
    np.testing.assert_array_equal(bits[:128], tf32)
    product = tf32.view(np.uint32).astype(np.uint64) * 3
    lo, hi = product & 0xFFFFFFFF, product >> 32
    np.testing.assert_array_equal(bits[128:].view(np.uint32), (lo ^ hi).astype(np.uint32))
    np.testing.assert_array_equal(halves, y + y)


@pytest.mark.gpu
def test_packed_inline_asm_runs_on_the_gpu() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal(256).astype(np.float32)
    halves = np.zeros(256, np.float16)
    data = rng.integers(-128, 128, 256).astype(np.int8)
    out = data.copy()
    K.packed_asm[(1,)](x, halves, out, 256, backend="gpu")
    np.testing.assert_array_equal(halves, x.astype(np.float16))
    # prmt 0x0123 reverses the four bytes of each register: groups of 4 consecutive elements
    np.testing.assert_array_equal(out, data.reshape(-1, 4)[:, ::-1].reshape(-1))


def test_inline_asm_runs_on_the_emulator() -> None:
    x, y = np.ones(8, np.float32), np.ones(8, np.float16)
    bits, halves = np.zeros(16, np.int32), np.zeros(8, np.float16)
    K.inline_asm[(1,)](x, y, bits, halves, 8, backend="emulator")
    np.testing.assert_array_equal(bits[:8], np.float32(1).view(np.int32))  # 1.0 is TF32 already
    np.testing.assert_array_equal(halves, 2)


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_inline_asm_assembles(arch: str, tmp_path) -> None:
    module = assemble(K.inline_asm, "*fp32, *fp16, *i32, *fp16, 128", arch, tmp_path)
    for instruction in ("cvt.rna.tf32.f32", "mul.hi.u32", "add.f16"):
        assert instruction in module.ptx
    packed = assemble(K.packed_asm, "*fp32, *fp16, *i8, 256", arch, tmp_path)
    calls = packed.ptx.count("cvt.rn.f16x2.f32")
    swaps = packed.ptx.count("0, 0x0123;")  # the asm as written (loads use prmt too)
    assert calls > 0 and swaps > 0 and calls == 2 * swaps  # 2 elements a call, then 4


@triton.jit
def _duplicate_axes(x_ptr, N: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, N), tl.sum(tl.expand_dims(tl.arange(0, N), (0, -3)), axis=0))


@triton.jit
def _axis_out_of_range(x_ptr, N: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, N), tl.expand_dims(tl.arange(0, N), 2))


def test_axis_errors_use_tritons_words() -> None:
    x = np.zeros(8, np.int32)
    with pytest.raises(CompileError) as info:
        _duplicate_axes[(1,)](x, 8)
    message = "expand_dims received duplicate axes, normalized axes = [0, 0]"
    assert str(info.value.__cause__) == message
    with pytest.raises(CompileError) as info:
        _axis_out_of_range[(1,)](x, 8)
    assert str(info.value.__cause__).startswith("invalid axis 2. Expected -2 <= axis < 2")


# -- what library code such as FlagGems' relies on -----------------------------------------


class _PointerLike:
    """An object that is no array but has ``data_ptr()`` and ``dtype`` (FlagGems' buffers)."""

    def __init__(self, array: np.ndarray, offset: int) -> None:
        self.array, self.offset, self.dtype = array, offset, array.dtype

    def data_ptr(self) -> int:
        return self.array.ctypes.data + self.offset * self.array.itemsize


@triton.jit
def _copy8(x_ptr, y_ptr):
    offs = tl.arange(0, 8)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


def test_a_pointer_like_argument_reads_the_array_that_holds_its_address() -> None:
    x, y = np.arange(16, dtype=np.float32), np.zeros(8, np.float32)
    _copy8[(1,)](_PointerLike(x, 8), y, backend="emulator")  # host memory
    np.testing.assert_array_equal(y, x[8:])


@triton.jit
def _lowest(dtype):
    tl.static_assert(dtype.value == tl.float32)  # Triton's constexpr(dtype).value
    return -3.0


@triton.jit
def _uses_value(out_ptr, N: tl.constexpr):
    x = tl.load(out_ptr + tl.arange(0, N))
    tl.store(out_ptr + tl.arange(0, N), x + _lowest(x.dtype) + N.value)


def test_value_of_a_compile_time_value_is_the_value() -> None:
    out = np.ones(4, np.float32)
    _uses_value[(1,)](out, 4)
    np.testing.assert_array_equal(out, 1 - 3 + 4)


def test_cache_key_and_globals() -> None:
    assert _copy8.__globals__ is globals()
    key = _copy8.cache_key
    assert isinstance(key, str) and len(key) == 64 and key == _copy8.cache_key
    assert key != _uses_value.cache_key


@triton.jit
def _lowest_of(dtype):
    if dtype is tl.float32:
        return -3.0e38
    elif dtype is tl.float16:
        return -65504.0
    else:
        raise ValueError("Unsupported dtype")  # never reached for fp32 or fp16


@triton.jit
def _fill_lowest(out_ptr, N: tl.constexpr):
    x = tl.load(out_ptr + tl.arange(0, N))
    tl.store(out_ptr + tl.arange(0, N), tl.full([N], _lowest_of(x.dtype), x.dtype))


def test_dtypes_compare_with_is_and_an_unreached_raise_compiles() -> None:
    out = np.zeros(4, np.float16)
    _fill_lowest[(1,)](out, 4)
    assert (out == -65504.0).all()
    with pytest.raises(CompileError) as info:
        _fill_lowest[(1,)](np.zeros(4, np.int32), 4)
    assert info.value.first.message == "unsupported construct: raise statement"
    assert "tl.static_assert" in (info.value.first.help or "")


# -- forms of Triton's newer tests ----------------------------------------------------------


def test_newer_syntax(backend: str) -> None:
    x = np.arange(1, 9, dtype=np.float32)
    out, lock = np.zeros(8, np.float32), np.zeros(1, np.int32)
    K.newer_syntax[(1,)](x, out, lock, N=8, backend=backend)
    np.testing.assert_allclose(out, x + 1 + x[0])
    assert lock[0] == 3  # cdiv(8, 3)


def test_umulhi_multiplies_unsigned_bit_patterns(backend: str) -> None:
    """As Triton's ``tl.umulhi``: ``-1`` of int32 reads as ``2**32 - 1``."""
    x = np.array([-1, -1, 7, 1 << 30, -(1 << 31), 3, -5, 123456789], np.int32)
    y = np.array([-1, 2, -1, 4, -(1 << 31), 5, -7, -987654321], np.int32)
    out = np.zeros(8, np.int32)
    K.umulhi_kernel[(1,)](x, y, out, N=8, backend=backend)
    product = x.view(np.uint32).astype(object) * y.view(np.uint32).astype(object)
    want = np.array([int(p) >> 32 for p in product], np.uint64).astype(np.uint32).view(np.int32)
    np.testing.assert_array_equal(out, want)


def test_atomics_of_16_bit_integers_are_refused() -> None:
    with pytest.raises(CompileError, match="atomic_add does not support int16"):
        K.atomic_on_int16[(1,)](np.zeros(1, np.int16), backend="emulator")


def test_a_descriptor_block_narrower_than_16_bytes_is_refused() -> None:
    with pytest.raises(CompileError, match="at least 16 bytes in the last dimension, but got "
                                           r"2 \* 4 = 8 bytes"):  # fmt: skip
        K.narrow_descriptor[(1,)](np.zeros((128, 128), np.int32), backend="emulator")


def test_a_many_element_block_is_no_condition() -> None:
    @triton.jit
    def two(x_ptr):
        if tl.load(x_ptr + tl.arange(0, 2)) > 0:
            tl.store(x_ptr, 1)

    with pytest.raises(CompileError, match="must be a scalar, got a block"):
        two[(1,)](np.zeros(2, np.int32), backend="emulator")


def test_a_block_through_a_scalar_pointer_is_refused() -> None:
    @triton.jit
    def scalar_store(x_ptr):
        tl.store(x_ptr, tl.arange(0, 4))

    with pytest.raises(CompileError, match="Value argument cannot be block type if pointer"):
        scalar_store[(1,)](np.zeros(4, np.int32), backend="emulator")


def test_an_emulator_launchs_compile_error_is_an_interpreter_error_too() -> None:
    """As in Triton's interpreter, which runs the kernel's Python: tests written for it
    expect InterpreterError in interpreter mode and CompilationError otherwise."""
    with pytest.raises(triton.CompilationError) as info:
        K.narrow_descriptor[(1,)](np.zeros((128, 128), np.int32), backend="emulator")
    assert isinstance(info.value, InterpreterError)
    assert type(info.value).__name__ == "CompileError"
    assert "at least 16 bytes" in str(info.value.__cause__)


@pytest.mark.gpu
def test_a_gpu_launchs_compile_error_is_no_interpreter_error() -> None:
    with pytest.raises(CompileError) as info:
        K.narrow_descriptor[(1,)](np.zeros((128, 128), np.int32), backend="gpu")
    assert not isinstance(info.value, InterpreterError)
