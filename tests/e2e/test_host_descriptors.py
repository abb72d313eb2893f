"""Host-side tensor descriptors (``triton.tools.tensor_descriptor.TensorDescriptor``).

Every test runs on the emulator and on the GPU, against NumPy: tiles past the
tensor's end read as zero (or NaN), stores past it are dropped, and tutorial
09's descriptor matmul runs unchanged, its block shapes set by an autotune
``pre_hook``.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.tools.tensor_descriptor import TensorDescriptor
from tests.kernels import tc_kernels


@triton.jit
def desc_add_one(x_desc, y_desc, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    tile = x_desc.load([pm * BM, pn * BN])
    y_desc.store([pm * BM, pn * BN], tile + 1)


def test_tiles_past_the_end_are_clipped(backend: str) -> None:
    x = np.arange(37 * 40, dtype=np.float32).reshape(37, 40)
    big = np.full((48, 48), -7.0, dtype=np.float32)
    y = big[:37, :40]  # a view: the kernel must write nothing around it
    grid = (3, 3)  # 48 x 48 of tiles over 37 x 40
    x_desc, y_desc = (TensorDescriptor.from_tensor(v, [16, 16]) for v in (x, y))
    desc_add_one[grid](x_desc, y_desc, 16, 16, backend=backend)
    np.testing.assert_array_equal(big[:37, :40], x + 1)
    np.testing.assert_array_equal(big[37:], -7.0)
    np.testing.assert_array_equal(big[:, 40:], -7.0)


@triton.jit
def desc_tile_out(x_desc, out_ptr, row, col, BM: tl.constexpr, BN: tl.constexpr):
    tile = x_desc.load([row, col])
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(out_ptr + offs, tile)


@pytest.mark.parametrize("padding", ["zero", "nan"])
def test_loads_past_the_end_are_padded(backend: str, padding: str) -> None:
    x = np.arange(10 * 12, dtype=np.float32).reshape(10, 12) + 1
    out = np.full((8, 8), -1.0, dtype=np.float32)
    desc = TensorDescriptor.from_tensor(x, [8, 8], padding=padding)
    desc_tile_out[(1,)](desc, out, 4, 8, 8, 8, backend=backend)
    pad = 0.0 if padding == "zero" else np.nan
    want = np.full((8, 8), pad, dtype=np.float32)
    want[:6, :4] = x[4:10, 8:12]
    np.testing.assert_array_equal(out, want)


def test_a_descriptor_over_a_strided_view(backend: str) -> None:
    base = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    view = base[3:27, 8:40]  # row stride 64 elements, offset 16-byte aligned
    out = np.zeros((8, 8), dtype=np.float32)
    desc_tile_out[(1,)](TensorDescriptor.from_tensor(view, [8, 8]), out, 20, 28, 8, 8,
                        backend=backend)  # fmt: skip
    want = np.zeros((8, 8), dtype=np.float32)
    want[:4, :4] = view[20:24, 28:32]
    np.testing.assert_array_equal(out, want)


@triton.jit
def load_3d(d, i):
    return d.load([i, 0, 0])


@triton.jit
def desc_double_3d(x_desc, y_desc, B: tl.constexpr):
    i = tl.program_id(0)
    y_desc.store([i * B, 0, 0], load_3d(x_desc, i * B) * 2)


def test_a_3d_descriptor_passed_to_a_helper() -> None:
    x = np.arange(5 * 4 * 8, dtype=np.float32).reshape(5, 4, 8)
    y = np.zeros_like(x)
    descs = [TensorDescriptor.from_tensor(v, [2, 4, 8]) for v in (x, y)]
    desc_double_3d[(3,)](*descs, 2, backend="emulator")  # the last tile is half past the end
    np.testing.assert_array_equal(y, 2 * x)


@triton.jit
def desc_first_tile(x_desc, out_ptr, B: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, B), x_desc.load([4]))


@triton.jit
def desc_tiles_by_padding(zero_desc, nan_desc, out_ptr, B: tl.constexpr):
    desc_first_tile(zero_desc, out_ptr, B)
    desc_first_tile(nan_desc, out_ptr + B, B)


def test_a_helper_is_specialized_on_the_padding() -> None:
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(16, dtype=np.float32)
    zero, nan = (TensorDescriptor.from_tensor(x, [8], padding=p) for p in ("zero", "nan"))
    desc_tiles_by_padding[(1,)](zero, nan, out, 8, backend="emulator")
    np.testing.assert_array_equal(out[:8], [4, 5, 6, 7, 0, 0, 0, 0])
    np.testing.assert_array_equal(out[8:], [4, 5, 6, 7, np.nan, np.nan, np.nan, np.nan])


@triton.jit
def desc_add_one_1d(x_desc, y_desc, B: tl.constexpr):
    i = tl.program_id(0)
    y_desc.store([i * B], x_desc.load([i * B]) + 1)


def test_a_bf16_view_descriptor() -> None:
    from minitriton.launch_checks import bfloat16_view

    values = np.arange(40, dtype=np.float32)
    bits = (values.view(np.uint32) >> 16).astype(np.uint16)  # exact in bf16
    out = np.zeros(40, dtype=np.uint16)
    descs = [TensorDescriptor.from_tensor(bfloat16_view(v), [16]) for v in (bits, out)]
    desc_add_one_1d[(3,)](*descs, 16, backend="emulator")
    np.testing.assert_array_equal((out.astype(np.uint32) << 16).view(np.float32), values + 1)


# ---------------------------------------------------------------- tutorial 09


def _set_block_shapes(nargs: dict) -> None:
    """Tutorial 09's pre_hook: the config decides the descriptors' block shapes."""
    bm, bn, bk = nargs["BLOCK_SIZE_M"], nargs["BLOCK_SIZE_N"], nargs["BLOCK_SIZE_K"]
    nargs["a_desc"].block_shape = [bm, bk]
    nargs["b_desc"].block_shape = [bn, bk]
    nargs["c_desc"].block_shape = [bm, bn]


matmul_kernel_tma = triton.autotune(
    configs=[
        triton.Config(
            {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8},
            num_warps=4,
            num_stages=3,
            pre_hook=_set_block_shapes,
        ),
    ],  # fmt: skip
    key=["M", "N", "K"],
)(tc_kernels.matmul_kernel_tma)  # the kernel the GPU benchmark times


def descriptor_matmul(a, b):  # noqa: ANN001, ANN201 - tutorial 09's host code
    """C = A @ B.T for A (M x K) and B (N x K), through host descriptors."""
    M, K = a.shape
    N = b.shape[0]
    c = np.zeros((M, N), dtype=np.float16) if isinstance(a, np.ndarray) else a.new_zeros((M, N))
    dummy_block = [1, 1]
    a_desc = TensorDescriptor.from_tensor(a, dummy_block)
    b_desc = TensorDescriptor.from_tensor(b, dummy_block)
    c_desc = TensorDescriptor.from_tensor(c, dummy_block)

    def grid(META):  # noqa: ANN001, ANN202, N803
        return (triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]),)

    matmul_kernel_tma[grid](a_desc, b_desc, c_desc, M, N, K)
    return c


def test_tutorial_09_descriptor_matmul_on_the_emulator(rng: np.random.Generator) -> None:
    # Tails in every dimension: 72 x 80 x 48 over 64 x 64 x 32 tiles.
    a = rng.standard_normal((72, 48)).astype(np.float16)
    b = rng.standard_normal((80, 48)).astype(np.float16)
    c = descriptor_matmul(a, b)
    want = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=1e-2, atol=1e-2)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
@pytest.mark.parametrize(("M", "N", "K"), [(256, 256, 256), (200, 136, 168)])
def test_descriptor_matmul_on_the_gpu(dtype_name: str, M: int, N: int, K: int) -> None:  # noqa: N803
    torch = pytest.importorskip("torch")
    dtype = getattr(torch, dtype_name)
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn((M, K), device="cuda", generator=gen).to(dtype)
    b = torch.randn((N, K), device="cuda", generator=gen).to(dtype)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)  # every element written
    descs = [TensorDescriptor.from_tensor(t, [1, 1]) for t in (a, b, c)]
    grid = (triton.cdiv(M, 64) * triton.cdiv(N, 64),)
    matmul_kernel_tma[grid](*descs, M, N, K)
    want = a.float() @ b.float().T
    err = ((c.float() - want).abs().max() / want.abs().max()).item()
    assert err < (1e-2 if dtype_name == "bfloat16" else 2e-3), err


# ---------------------------------------------------------------- mistakes


def test_descriptors_check_their_layout() -> None:
    x = np.zeros((8, 6), dtype=np.float32)  # rows of 24 bytes: not a multiple of 16
    with pytest.raises(ValueError, match="multiples of 16 bytes"):
        TensorDescriptor.from_tensor(x, [4, 4])
    with pytest.raises(ValueError, match="last dimension must be contiguous"):
        TensorDescriptor(np.zeros((8, 8), np.float32), [8, 8], [1, 8], [4, 4])
    with pytest.raises(ValueError, match="padding must be 'zero' or 'nan'"):
        TensorDescriptor.from_tensor(np.zeros((8, 8), np.float32), [4, 4], padding="inf")


def test_a_bad_block_shape_is_named_at_the_launch() -> None:
    x = np.zeros((16, 16), dtype=np.float32)
    out = np.zeros((8, 8), dtype=np.float32)
    desc = TensorDescriptor.from_tensor(x, [6, 8])
    with pytest.raises(TypeError, match=r"argument 'x_desc': block sizes must be powers of two"):
        desc_tile_out[(1,)](desc, out, 0, 0, 8, 8, backend="emulator")
