"""``tl``'s standard-library functions, on both backends, against NumPy.

``tl.swizzle2d`` (tutorial 03's grouped order), ``tl.flip``, ``tl.ravel``,
``tl.cat``, ``tl.gather``, ``tl.histogram``, ``tl.reduce_or`` and the
random-number helpers (against ``philox_ref``, Triton's stream); each kernel
is also compiled to PTX and assembled with ``ptxas`` for sm_90a and sm_80.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.backend import sass
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.diagnostics import CompileError
from minitriton.frontend.lower import NOT_YET
from minitriton.jit import base_jit_function
from minitriton.signature import kernel_params, parse_signature
from tests.e2e import philox_ref
from tests.e2e.ptxas_check import assemble, needs_ptxas
from tests.kernels import standard_lib as K


def _swizzled(size_i: int, size_j: int, group: int) -> np.ndarray:
    """Triton's docstring example, computed the slow way: groups of rows, column-major."""
    out = np.zeros((size_i, size_j), np.int32)
    for i in range(size_i):
        for j in range(size_j):
            ij = i * size_j + j
            first = ij // (group * size_j) * group
            rows = min(size_i - first, group)
            k = ij % (group * size_j)
            out[i, j] = (first + k % rows) * size_j + k // rows
    return out


def test_swizzle2d_matches_tritons_example(backend: str) -> None:
    out = np.full((4, 4), -1, np.int32)
    K.swizzle_kernel[(4, 4)](out, SIZE_I=4, SIZE_J=4, GROUP=2, backend=backend)
    # Triton's docstring draws where each index goes: position out[i, j] holds i * 4 + j.
    moved = np.zeros(16, np.int32)
    moved[out.ravel()] = np.arange(16)
    want = [[0, 2, 4, 6], [1, 3, 5, 7], [8, 10, 12, 14], [9, 11, 13, 15]]
    np.testing.assert_array_equal(moved.reshape(4, 4), want)
    np.testing.assert_array_equal(out, _swizzled(4, 4, 2))


@pytest.mark.parametrize(("size_i", "size_j", "group"), [(5, 3, 2), (7, 4, 3), (6, 8, 8)])
def test_swizzle2d_on_blocks_with_a_short_last_group(backend, size_i, size_j, group) -> None:
    out = np.full(64, -1, np.int32)
    K.swizzle_block_kernel[(1,)](out, size_i, SIZE_J=size_j, GROUP=group, BLOCK=64,
                                 backend=backend)  # fmt: skip
    n = size_i * size_j
    np.testing.assert_array_equal(out[:n], _swizzled(size_i, size_j, group).ravel())
    assert (out[n:] == -1).all()
    assert sorted(out[:n]) == list(range(n))  # a permutation


def test_flip_ravel_and_cat(backend: str, rng: np.random.Generator) -> None:
    m, n = 4, 8
    x = rng.standard_normal((m, n)).astype(np.float32)
    x[0, 0] = -0.0  # every bit pattern comes through
    y = rng.standard_normal((m, n)).astype(np.float32)
    outs = [np.full(shape, np.nan, np.float32)
            for shape in [(m, n), (m, n), (m * n,), (2 * m, n), (m, 2 * n)]]  # fmt: skip
    K.shapes_kernel[(1,)](x, y, *outs, M=m, N=n, backend=backend)
    flipped, flipped0, raveled, cat0, cat1 = outs
    np.testing.assert_array_equal(flipped, x[:, ::-1])
    assert np.signbit(flipped[0, -1])
    np.testing.assert_array_equal(flipped0, x[::-1, :])
    np.testing.assert_array_equal(raveled, x.ravel())
    np.testing.assert_array_equal(cat0, np.concatenate([x, y], axis=0))
    np.testing.assert_array_equal(cat1, np.concatenate([x, y], axis=1))


def test_flip_of_booleans(backend: str) -> None:
    x = np.array([1, -1, -1, 1, 1, 1, -1, -1], np.float32)
    out = np.zeros(8, np.int8)
    K.flip_bool_kernel[(1,)](x, out, N=8, backend=backend)
    np.testing.assert_array_equal(out, (x > 0)[::-1].astype(np.int8))


def test_gather_along_either_axis(backend: str, rng: np.random.Generator) -> None:
    m, n, k = 8, 4, 16
    src = rng.standard_normal((m, n)).astype(np.float32)
    src[3, 1] = np.nan
    idx = rng.integers(0, m, (k, n)).astype(np.int32)
    idx[0, 1] = 3  # the NaN is gathered as a NaN
    out0 = np.zeros((k, n), np.float32)
    out1 = np.zeros((m, 8), np.float32)  # idx reshaped to M x K with K = 8
    K.gather_kernel[(1,)](src, idx, out0, out1, M=m, N=n, K=k, backend=backend)
    np.testing.assert_array_equal(out0, np.take_along_axis(src, idx, axis=0))
    idx1 = idx.reshape(m, 8) % n
    np.testing.assert_array_equal(out1, np.take_along_axis(src, idx1, axis=1))


@pytest.mark.parametrize("index_type", [np.int64, np.uint8, np.int16])
def test_a_large_gather_with_indices_out_of_range(
    backend: str, rng: np.random.Generator, index_type: type
) -> None:
    # 256 x 64 results from a 128 x 64 table: 2^21 one-hot elements, which the gather
    # does not build (it reads the table from shared memory on the GPU).
    m, n, k = 128, 64, 256
    src = rng.standard_normal((m, n)).astype(np.float32)
    idx = rng.integers(0, m, (k, n)).astype(index_type)
    idx[:4, 0] = [m, np.iinfo(index_type).max, 0, m - 1]  # out of range: 0
    out = np.full((k, n), np.nan, np.float32)
    K.large_gather[(1,)](src, idx, out, M=m, N=n, K=k, backend=backend)
    wide = idx.astype(np.int64)
    expected = np.take_along_axis(src, np.where(wide < m, wide, 0), axis=0)
    np.testing.assert_array_equal(out, np.where(wide < m, expected, 0.0))


def test_histogram_and_reduce_or(backend: str, rng: np.random.Generator) -> None:
    n, bins = 100, 16
    x = rng.integers(-3, bins + 3, 128).astype(np.int32)  # some outside [0, bins)
    out = np.full(bins, -1, np.int32)
    ors = np.zeros(16, np.int32)
    K.histogram_kernel[(1,)](x, out, ors, n, BLOCK=128, BINS=bins, backend=backend)
    kept = x[:n][(x[:n] >= 0) & (x[:n] < bins)]
    np.testing.assert_array_equal(out, np.bincount(kept, minlength=bins))
    padded = np.where(np.arange(128) < n, x, 0).reshape(16, 8)
    np.testing.assert_array_equal(ors, np.bitwise_or.reduce(padded, axis=1))


@pytest.mark.parametrize(
    ("m", "bins", "warps"),
    [(2048, 2, 4), (1024, 128, 4), (256, 512, 4), (8, 512, 4), (32, 512, 8), (8, 2, 1)],
)  # fewer values than threads: replicated lanes must count each value once
def test_histograms_of_many_sizes(backend: str, rng, m: int, bins: int, warps: int) -> None:
    x = rng.integers(-2, bins + 2, m).astype(np.int32)
    out = np.full(bins, -1, np.int32)
    K.bins_kernel[(1,)](x, out, M=m, BINS=bins, num_warps=warps, backend=backend)
    np.testing.assert_array_equal(out, np.bincount(x[(x >= 0) & (x < bins)], minlength=bins))


def test_histograms_with_a_mask_per_program(backend: str, rng) -> None:
    x = rng.integers(-1, 9, (4, 64)).astype(np.int32)
    out = np.full((4, 8), -1, np.int32)
    K.rows_histogram_kernel[(4,)](x, out, 40, M=64, BINS=8, backend=backend)
    for pid in range(4):
        row = x[pid, : 40 - pid]
        kept = row[(row >= 0) & (row < 8)]
        np.testing.assert_array_equal(out[pid], np.bincount(kept, minlength=8))


def test_a_histogram_is_one_op_counted_in_shared_memory() -> None:
    jit = base_jit_function(K.bins_kernel)
    specs = parse_signature("*i32:16, *i32:16, 1024, 128", kernel_params(jit.fn))
    k = compile_kernel(jit.source, specs, stop_after="ptx")
    assert k.asm["ir-opt"].count("tt.histogram") == 1
    assert "tt.reduce" not in k.asm["ir-opt"]  # no one-hot block summed along an axis
    # 1024 values over 128 threads: 8 increments a thread, in shared memory.
    assert k.asm["ptx"].count("atom.shared.add.u32") == 8


@pytest.mark.skipif(
    not sass.available(),
    reason="needs NVIDIA's ptxas and nvdisasm (or cuobjdump)",
)
def test_the_histograms_increments_are_warp_aggregated() -> None:
    jit = base_jit_function(K.bins_kernel)
    specs = parse_signature("*i32:16, *i32:16, 1024, 128", kernel_params(jit.fn))
    k = compile_kernel(jit.source, specs, CompileOptions(arch="sm_90a"), stop_after="ptx")
    assert "ATOMS.POPC.INC" in k.asm["sass"]  # what Triton's own test looks for


def test_random_4x_helpers_follow_tritons_stream(backend: str) -> None:
    block, seed = 64, 1234
    u = np.zeros((4, block), np.float32)
    z = np.zeros((4, block), np.float32)
    f = np.zeros((2, block), np.float32)
    K.random4x_kernel[(1,)](u, z, f, seed, BLOCK=block, backend=backend)
    offs = np.arange(block, dtype=np.int32)
    words = philox_ref.randint4x(seed, offs)
    uniforms = [philox_ref.uint_to_uniform_float(w) for w in words]
    np.testing.assert_array_equal(u, np.stack(uniforms))
    normals = [*philox_ref.pair_uniform_to_normal(*uniforms[:2]),
               *philox_ref.pair_uniform_to_normal(*uniforms[2:])]  # fmt: skip
    np.testing.assert_allclose(z, np.stack(normals), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(f, np.stack(normals[:2]), rtol=1e-4, atol=1e-4)


def test_topk_both_ways(backend: str, rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 32)).astype(np.float32)
    top = np.zeros((4, 8), np.float32)
    low = np.zeros((4, 8), np.float32)
    K.topk_kernel[(1,)](x, top, low, M=4, N=32, K=8, backend=backend)
    np.testing.assert_array_equal(top, -np.sort(-x, axis=1)[:, :8])
    np.testing.assert_array_equal(low, np.sort(x, axis=1)[:, :8])


# ---------------------------------------------------------------- errors


def _errors(kernel, signature: str) -> str:  # noqa: ANN001
    jit = base_jit_function(kernel)
    specs = parse_signature(signature, kernel_params(jit.fn))
    with pytest.raises(CompileError) as info:
        compile_kernel(jit.source, specs)
    return str(info.value)


@triton.jit
def float_histogram(x_ptr, out_ptr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    tl.store(out_ptr + tl.arange(0, 4), tl.histogram(x, 4))


@triton.jit
def mismatched_cat(x_ptr):
    a = tl.load(x_ptr + tl.arange(0, 8))
    b = tl.load(x_ptr + tl.arange(0, 4))
    tl.store(x_ptr + tl.arange(0, 16), tl.cat(a, b, can_reorder=True))


def test_a_histogram_of_floats_is_a_located_error() -> None:
    text = _errors(float_histogram, "*fp32, *i32")
    assert "tl.histogram needs a 1-D block of integers" in text
    assert "test_standard_lib.py:" in text and "tl.histogram(x, 4)" in text and "^" in text


@triton.jit
def future_function(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    tl.store(x_ptr + tl.arange(0, 8), tl.future_function(x))


def test_tritons_functions_we_lack_say_so_and_what_to_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every tl function of Triton's now runs; the list is for the ones Triton adds next.
    monkeypatch.setitem(NOT_YET, "future_function", "call tl.sum instead")
    text = _errors(future_function, "*i32")
    assert "tl.future_function is Triton's, but MiniTriton does not support it yet" in text
    assert "help: call tl.sum instead" in text and "^" in text


@triton.jit
def largest_k(x_ptr, K: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 32))
    tl.store(x_ptr, tl.min(tl.topk(x, K), 0))


@pytest.mark.parametrize(
    ("k", "triton_words"),
    [(0, "k must be greater than 0"), (3, "k must be a power of two"),
     (64, "k must not exceed the size of the selected dimension")],
)  # fmt: skip
def test_a_bad_topk_k_fails_as_tritons_static_assert(k: int, triton_words: str) -> None:
    from minitriton.diagnostics import CompileTimeAssertionFailure

    with pytest.raises(CompileTimeAssertionFailure) as info:
        largest_k[(1,)](np.zeros(32, np.float32), K=k, backend="emulator")
    assert f"tl.topk needs k a power of two up to 32, got {k}" in str(info.value)
    assert info.value.error_message == "topk: " + triton_words


def test_cat_of_two_shapes_is_a_located_error() -> None:
    text = _errors(mismatched_cat, "*fp32")
    assert "tl.cat requires tensors of the same shape, got tensor<8xf32> and tensor<4xf32>" in text
    assert "tl.cat(a, b, can_reorder=True)" in text


def test_tritons_newer_function_forms(backend: str, rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 8)).astype(np.float32)
    out = np.zeros_like(x)
    K.newer_forms_kernel[(1,)](x, out, M=4, N=8, backend=backend)
    np.testing.assert_allclose(out, 3 * x - 1, rtol=1e-6, atol=1e-6)


def test_expect_zero_is_checked_in_debug_mode() -> None:
    x = np.array([0, 0, 0, 0, 5, 6, 7, 8], np.float32)
    K.expect_zero_kernel[(1,)](x.copy(), N=8, backend="emulator", debug=True)  # zeros where asked
    x[2] = 3.0
    with pytest.raises(triton.UserError, match="expect_zero expected x == 0") as info:
        K.expect_zero_kernel[(1,)](x, N=8, backend="emulator", debug=True)
    assert "lanes 2 (1 lane of 8)" in str(info.value)
    K.expect_zero_kernel[(1,)](x, N=8, backend="emulator")  # not checked outside debug mode
    for debug in (False, True):
        jit = base_jit_function(K.expect_zero_kernel)
        specs = parse_signature("*fp32:16, 8", kernel_params(jit.fn))
        ir = compile_kernel(jit.source, specs, CompileOptions(debug=debug), stop_after="ir-opt")
        assert ("tt.assert" in ir.asm["ir-opt"]) == debug  # as Triton's IR


def test_squeeze_of_a_longer_dimension_is_a_located_error() -> None:
    with pytest.raises(CompileError, match="tl.squeeze: dimension 0 of tensor<2x4xi32> has size 2"):
        K.squeeze_wrong_dim[(1,)](np.zeros(8, np.int32), N=8, backend="emulator")


# ---------------------------------------------------------------- PTX for both archs

PTX_CASES = {
    "swizzle": (K.swizzle_kernel, "*i32:16, 4, 4, 2"),
    "swizzle_block": (K.swizzle_block_kernel, "*i32:16, i32, 4, 2, 64"),
    "shapes": (K.shapes_kernel, ", ".join(["*fp32:16"] * 7) + ", 4, 8"),
    "flip_bool": (K.flip_bool_kernel, "*fp32:16, *i8:16, 8"),
    "gather": (K.gather_kernel, "*fp32:16, *i32:16, *fp32:16, *fp32:16, 8, 4, 16"),
    "large-gather": (K.large_gather, "*fp32:16, *i64:16, *fp32:16, 128, 64, 256"),
    "histogram": (K.histogram_kernel, "*i32:16, *i32:16, *i32:16, i32, 128, 16"),
    "bins": (K.bins_kernel, "*i32:16, *i32:16, 8, 512"),
    "topk": (K.topk_kernel, "*fp32:16, *fp32:16, *fp32:16, 4, 32, 8"),
    "random4x": (K.random4x_kernel, "*fp32:16, *fp32:16, *fp32:16, i32, 64"),
    "newer-forms": (K.newer_forms_kernel, "*fp32:16, *fp32:16, 4, 8"),
}


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("case", sorted(PTX_CASES))
def test_ptx_assembles(case: str, arch: str, tmp_path: Path) -> None:
    assemble(*PTX_CASES[case], arch, tmp_path)


def test_the_block_size_limit_is_tritons_constant(backend: str) -> None:
    assert tl.TRITON_MAX_TENSOR_NUMEL == 2**20
    out = np.zeros(8, np.int32)
    K.max_numel_kernel[(1,)](out, BLOCK=8, backend=backend)
    np.testing.assert_array_equal(out, np.full(8, 2**17))
    with pytest.raises(CompileError, match="static_assert"):
        K.max_numel_kernel[(1,)](np.zeros(1, np.int32), BLOCK=2**21, backend="emulator")
