"""Host and frontend behaviour that Triton's own tests rely on.

Each test holds MiniTriton to what Triton does for one construct: a string
continued with a backslash inside a call, ``CompilationError.error_message``,
``JITFunction.src`` (dedented, patched with ``_unsafe_update_src``), the
exception classes of bad launch options, Triton's ``sm90`` arch spelling and
``enable_reflect_ftz``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.compiler import ASTSource, CompileOptions, compile_kernel
from minitriton.frontend.parser import parse_expression


# The call is laid out as Triton's own test writes it.
# fmt: off
@triton.jit
def shift_packed(X, Y, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    y = tl.inline_asm_elementwise(
        "and.b32 $0, $1, 0x1F1F1F1F; \
            shl.b32 $0, $0, 3;", "=r,r", [
            x,
        ], dtype=tl.int8, is_pure=True, pack=4)
    tl.store(Y + tl.arange(0, BLOCK), y)
# fmt: on


def test_backslash_continued_string_in_a_call_compiles() -> None:
    specs = ASTSource(shift_packed, {"X": "*u8", "Y": "*u8"}, {"BLOCK": 64}).arg_specs()
    ptx = compile_kernel(shift_packed.source, specs, CompileOptions(), stop_after="ptx").asm["ptx"]
    # The backslash-newline is dropped, as Python drops it; the indentation stays.
    assert "0x1F1F1F1F;             shl.b32" in ptx


@pytest.mark.parametrize(
    "text, value",
    [('"a\\\nb"', "ab"), ("'a\\\r\nb'", "ab"), ("r'a\\\nb'", "a\\\nb"), ('"it\\"s"', 'it"s')],
)
def test_short_string_spans_lines_only_by_backslash(text: str, value: str) -> None:
    assert parse_expression(text).value == value  # type: ignore[attr-defined]


def test_short_string_with_bare_newline_is_unterminated() -> None:
    with pytest.raises(triton.CompilationError, match="unterminated string literal"):
        parse_expression('"a\nb"')


@triton.jit
def store_none(out):
    tl.store(out, None)


def test_error_message_is_the_bare_message() -> None:
    with pytest.raises(triton.CompilationError) as info:
        store_none.warmup(np.zeros(1, np.int32), grid=(1,))
    assert info.value.error_message == "value must be a tensor or a number, got None"
    assert "a @jit helper that reaches its end without `return`" in str(info.value)


def _nested_kernel():  # noqa: ANN202 - returns a JITFunction
    @triton.jit
    def copy(x_ptr, out_ptr, flip):
        offs = tl.arange(0, 8)
        PICK  # noqa: B018, F821 - replaced before it compiles
        tl.store(dst + offs, tl.load(x_ptr + offs))  # noqa: F821

    return copy


def test_src_is_dedented_and_patchable_with_a_block() -> None:
    kernel = _nested_kernel()
    assert kernel.src.startswith("def copy(x_ptr, out_ptr, flip):\n    offs")
    pick = "\n    if flip > 0:\n        dst = out_ptr\n    else:\n        dst = out_ptr\n"
    kernel._unsafe_update_src(kernel.src.replace("PICK", pick))
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    kernel[(1,)](x, out, 1)
    np.testing.assert_array_equal(out, x)


@triton.jit
def nothing(x, n):
    pass


def test_num_warps_not_a_power_of_two_is_an_assertion() -> None:
    with pytest.raises(AssertionError, match="must be a power of 2"):
        nothing.warmup(np.zeros(1, np.float32), 1, grid=(1,), num_warps=3)


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1])
def test_int_argument_past_64_bits_overflows(value: int) -> None:
    with pytest.raises(OverflowError, match="does not fit in 64 bits"):
        nothing[(1,)](np.zeros(1, np.float32), value)


def test_arch_takes_tritons_spelling() -> None:
    options, _, _ = nothing._split_options({"arch": "sm80"})
    assert options.arch == "sm_80"


def test_num_ctas_above_one_needs_hopper() -> None:
    with pytest.raises(ValueError, match=r"num_ctas > 1 requires NVIDIA SM90\+ \(Hopper\)"):
        nothing.warmup(np.zeros(1, np.float32), 1, grid=(1,), arch="sm80", num_ctas=2)


@triton.jit
def exp2_rsqrt(data):
    ptrs = data + tl.arange(0, 128)
    x = tl.load(ptrs)
    tl.store(ptrs, tl.math.exp2(x) + tl.math.rsqrt(x))


@pytest.mark.parametrize("ftz", [True, False])
def test_enable_reflect_ftz_picks_the_approximation(ftz: bool) -> None:
    specs = ASTSource(exp2_rsqrt, {"data": "*fp32"}).arg_specs()
    options = CompileOptions(enable_reflect_ftz=ftz)
    ptx = compile_kernel(exp2_rsqrt.source, specs, options, stop_after="ptx").asm["ptx"]
    assert ("ex2.approx.ftz.f32" in ptx) == ftz
    assert ("ex2.approx.f32" in ptx) == (not ftz)
    assert ("rsqrt.approx.ftz.f32" in ptx) == ftz


# ---------------------------------------------------------------- inline asm on pointers


@triton.jit
def shift_through_pointers(X, Y, BLOCK: tl.constexpr):
    # The asm loads and stores itself: pointers travel as 64-bit addresses ("l").
    tl.inline_asm_elementwise(
        "ld.global.b8 $0, [$1]; shl.b32 $0, $0, 3; st.global.b8 [$2], $0;", "=r,l,l",
        [X + tl.arange(0, BLOCK), Y + tl.arange(0, BLOCK)], dtype=tl.int8, is_pure=False, pack=1,
    )  # fmt: skip


def test_inline_asm_takes_pointer_operands_as_64_bit_addresses() -> None:
    specs = ASTSource(shift_through_pointers, {"X": "*u8", "Y": "*u8"}, {"BLOCK": 128}).arg_specs()
    ptx = compile_kernel(
        shift_through_pointers.source, specs, CompileOptions(), stop_after="ptx"
    ).asm["ptx"]
    # One asm block per element, each with the two addresses in 64-bit registers.
    calls = re.findall(r"ld\.global\.b8 %r\d+, \[%rd\d+\];.*st\.global\.b8 \[%rd\d+\]", ptx)
    assert calls and len(calls) == ptx.count("// begin inline asm")


@pytest.mark.gpu
def test_inline_asm_through_pointers_runs_on_the_gpu() -> None:
    x = np.arange(256, dtype=np.uint8)
    y = np.zeros(256, np.uint8)
    shift_through_pointers[(1,)](x, y, BLOCK=256, backend="gpu")
    np.testing.assert_array_equal(y, (x << 3).astype(np.uint8))


# ---------------------------------------------------------------- hints as statements


@triton.jit
def copy_shifted(dst, src, off, N, BLOCK: tl.constexpr, HINT: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offsets = offsets + tl.load(off)
    if HINT:
        # The results are dropped: as in Triton, the hints hold for `offsets` itself.
        tl.max_contiguous(tl.multiple_of(offsets, BLOCK), BLOCK)
    tl.store(dst + offsets, tl.load(src + offsets, mask=offsets < N), mask=offsets < N)


@pytest.mark.parametrize("hint", [False, True])
def test_a_hint_whose_result_is_dropped_still_holds(hint: bool) -> None:
    signature = {"dst": "*fp32", "src": "*fp32", "off": "*i32", "N": "i32"}
    divisible = {(i,): [["tt.divisibility", 16]] for i in range(4)}
    specs = ASTSource(copy_shifted, signature, {"BLOCK": 1024, "HINT": hint}, divisible).arg_specs()
    ptx = compile_kernel(copy_shifted.source, specs, CompileOptions(), stop_after="ptx").asm["ptx"]
    assert ("ld.global.v4.b32" in ptx) == hint


def test_a_hint_as_a_statement_keeps_the_numbers(backend: str) -> None:
    src = np.arange(2048, dtype=np.float32)
    dst = np.zeros(1024, np.float32)
    copy_shifted[(1,)](dst, src, np.array([512], np.int32), 1024, BLOCK=1024, HINT=True,
                       backend=backend)  # fmt: skip
    np.testing.assert_array_equal(dst[512:], src[512:1024])  # offsets 512 ... 1023 are in
    np.testing.assert_array_equal(dst[:512], 0)


# ---------------------------------------------------------------- Triton's debug option


@triton.jit
def checked_gather(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    idx = tl.load(idx_ptr + offs)
    tl.device_assert((idx >= 0) & (idx < n), "index out of bounds: 0 <= idx < n")
    tl.store(out_ptr + offs, tl.load(x_ptr + tl.expect_zero(idx * 0, offs < BLOCK) + idx))


GATHER = ASTSource(
    checked_gather, {"x_ptr": "*fp32", "idx_ptr": "*i32", "out_ptr": "*fp32", "n": "i32"},
    {"BLOCK": 64},
)  # fmt: skip


@pytest.mark.parametrize("debug", [False, True])
def test_tritons_debug_option_keeps_the_asserts_alone(debug: bool) -> None:
    # Triton's debug=True (torch's Inductor sets it for its indexing asserts) keeps
    # tl.device_assert and tl.expect_zero; MiniTriton's debug mode stays off
    k = triton.compile(GATHER, options={"debug": debug, "num_warps": 2})
    assert k.asm["ttir"].count("tt.assert") == (2 if debug else 0)
    assert ("__assertfail" in k.asm["ptx"]) == debug  # a failing one stops the kernel
    assert not k.options.debug and k.options.device_asserts == debug
    params = re.search(r"\.entry \w+\(([^)]*)\)", k.asm["ptx"])
    assert params and params.group(1).count(".param") == 4  # no hidden bounds parameters


@pytest.mark.gpu
def test_tritons_debug_option_runs_passing_asserts_on_the_gpu() -> None:
    k = triton.compile(GATHER, options={"debug": True})
    x = np.arange(100, dtype=np.float32) * 0.5
    idx = np.random.default_rng(3).integers(0, 100, 64).astype(np.int32)
    out = np.zeros(64, np.float32)
    k[(1, 1, 1)](x, idx, out, 100, 64)
    np.testing.assert_array_equal(out, x[idx])
