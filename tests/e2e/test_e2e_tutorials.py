"""Triton's tutorial kernels, run unchanged, against NumPy references.

Sizes are deliberately not multiples of the block sizes, so a missing mask fails.
"""

from __future__ import annotations

import math

import numpy as np
import philox_ref
import pytest

import minitriton as triton
from tests.kernels.attention_masked import attn_fwd_masked
from tests.kernels.dropout import _seeded_dropout
from tests.kernels.fused_attention import _attn_fwd
from tests.kernels.fused_softmax import softmax_kernel
from tests.kernels.layer_norm import (
    _layer_norm_bwd_dwdb,
    _layer_norm_bwd_dx_fused,
    _layer_norm_fwd_fused,
)
from tests.kernels.matmul import matmul_kernel
from tests.kernels.random_kernels import (
    rand_kernel,
    rand_offset64_kernel,
    randint_kernel,
    randn_kernel,
)
from tests.kernels.vector_add import add_kernel


def row_stride(a: np.ndarray) -> int:
    """Stride of dimension 0 in elements, as ``tensor.stride(0)``."""
    return a.strides[0] // a.itemsize


def strides(a: np.ndarray) -> tuple[int, ...]:
    """All strides in elements, as ``tensor.stride()``."""
    return tuple(s // a.itemsize for s in a.strides)


# ---------------------------------------------------------------- 01 vector add


@pytest.mark.parametrize("n", [1, 1000, 4099])
def test_vector_add(backend: str, rng: np.random.Generator, n: int) -> None:
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    out = np.zeros_like(x)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024, backend=backend)
    np.testing.assert_allclose(out, x + y, rtol=1e-6, atol=0)


def test_vector_add_leaves_memory_past_the_end(backend: str, rng: np.random.Generator) -> None:
    n = 300
    x = rng.standard_normal(n + 30, dtype=np.float32)
    y = rng.standard_normal(n + 30, dtype=np.float32)
    out = np.full_like(x, 7.0)
    add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK_SIZE=128, backend=backend)
    np.testing.assert_allclose(out[:n], x[:n] + y[:n], rtol=1e-6)
    assert np.all(out[n:] == 7.0), "masked-off lanes were written"


# ---------------------------------------------------------------- 02 fused softmax


def softmax_ref(x: np.ndarray) -> np.ndarray:
    z = x.astype(np.float64)
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


@pytest.mark.parametrize(("n_rows", "n_cols"), [(37, 100), (5, 781)])
def test_fused_softmax(backend: str, rng: np.random.Generator, n_rows: int, n_cols: int) -> None:
    x = rng.standard_normal((n_rows, n_cols), dtype=np.float32) * 3
    y = np.zeros_like(x)
    block = triton.next_power_of_2(n_cols)
    # Fewer programs than rows, so each program loops over several rows.
    num_programs = min(4, n_rows)
    softmax_kernel[(num_programs, 1, 1)](
        y, x, row_stride(x), row_stride(y), n_rows, n_cols,
        BLOCK_SIZE=block, num_stages=2, backend=backend,
    )  # fmt: skip
    np.testing.assert_allclose(y, softmax_ref(x), rtol=1e-5, atol=1e-7)


def test_fused_softmax_strided_views(backend: str, rng: np.random.Generator) -> None:
    """Input and output are views into wider arrays: the row strides differ from n_cols,
    and the kernel's stores must land in the caller's array."""
    n_rows, n_cols = 9, 50
    x_full = rng.standard_normal((n_rows, 64), dtype=np.float32)
    y_full = np.full((n_rows, 80), 5.0, dtype=np.float32)
    x, y = x_full[:, 3 : 3 + n_cols], y_full[:, :n_cols]
    softmax_kernel[(3,)](
        y, x, row_stride(x), row_stride(y), n_rows, n_cols,
        BLOCK_SIZE=64, num_stages=2, backend=backend,
    )  # fmt: skip
    np.testing.assert_allclose(y_full[:, :n_cols], softmax_ref(x), rtol=1e-5, atol=1e-7)
    assert np.all(y_full[:, n_cols:] == 5.0), "stores past n_cols"


# ---------------------------------------------------------------- 03 matmul


def matmul_ref(a: np.ndarray, b: np.ndarray, activation: str) -> np.ndarray:
    c = a.astype(np.float32) @ b.astype(np.float32)
    if activation == "leaky_relu":
        c = np.where(c >= 0, c, 0.01 * c)
    return c.astype(np.float16)


def launch_matmul(kernel, a, b, c, backend: str, **meta) -> None:  # noqa: ANN001
    M, K = a.shape
    _, N = b.shape
    grid = lambda META: (  # noqa: E731
        triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]),
    )
    kernel[grid](a, b, c, M, N, K, *strides(a), *strides(b), *strides(c), backend=backend, **meta)


@pytest.mark.parametrize("activation", ["", "leaky_relu"])
def test_matmul_autotuned(backend: str, rng: np.random.Generator, activation: str) -> None:
    """The tutorial's autotuned kernel as it stands (its configs use 128x256 tiles)."""
    M, N, K = 200, 136, 96
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), dtype=np.float16)
    launch_matmul(matmul_kernel, a, b, c, backend, ACTIVATION=activation)
    np.testing.assert_allclose(
        c.astype(np.float32), matmul_ref(a, b, activation), rtol=1e-2, atol=1e-2
    )


@pytest.mark.parametrize(
    ("block_m", "block_n", "block_k", "group_m"),
    [(32, 32, 32, 4), (64, 16, 64, 2), (16, 64, 16, 8)],
)
def test_matmul_grouped_small_blocks(
    backend: str, rng: np.random.Generator, block_m: int, block_n: int, block_k: int, group_m: int
) -> None:
    """The same kernel (``Autotuner.fn``) with explicit small tiles: several groups, a
    ragged last group, and K not a multiple of BLOCK_SIZE_K."""
    M, N, K = 200, 136, 96
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), dtype=np.float16)
    launch_matmul(
        matmul_kernel.fn, a, b, c, backend,
        BLOCK_SIZE_M=block_m, BLOCK_SIZE_N=block_n, BLOCK_SIZE_K=block_k,
        GROUP_SIZE_M=group_m, ACTIVATION="leaky_relu",
    )  # fmt: skip
    np.testing.assert_allclose(
        c.astype(np.float32), matmul_ref(a, b, "leaky_relu"), rtol=1e-2, atol=1e-2
    )


def test_matmul_transposed_strides(backend: str, rng: np.random.Generator) -> None:
    """B passed as a transposed view: the kernel must follow the strides it is given."""
    M, N, K = 70, 50, 40
    a = rng.standard_normal((M, K)).astype(np.float16)
    bt = rng.standard_normal((N, K)).astype(np.float16)
    b = bt.T  # a non-contiguous view
    c = np.zeros((M, N), dtype=np.float16)
    launch_matmul(
        matmul_kernel.fn, a, b, c, backend,
        BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=16, GROUP_SIZE_M=2,
    )  # fmt: skip
    np.testing.assert_allclose(c.astype(np.float32), matmul_ref(a, b, ""), rtol=1e-2, atol=1e-2)


# ---------------------------------------------------------------- 04 dropout and Philox


def test_philox_reference_known_answers() -> None:
    """The NumPy reference reproduces Random123's Philox-4x32-10 and 4x64-10 known answers."""
    cases = [
        (np.uint32, [0] * 6, [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
        (np.uint32, [0xFFFFFFFF] * 6, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
        (
            np.uint32,
            [0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822, 0x299F31D0],
            [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1],
        ),
        (
            np.uint64,
            [0] * 6,
            [0x16554D9ECA36314C, 0xDB20FE9D672D0FDC, 0xD7E772CEE186176B, 0x7E68B68AEC7BA23B],
        ),
        (
            np.uint64,
            [2**64 - 1] * 6,
            [0x87B092C3013FE90B, 0x438C3C67BE8D0224, 0x9CC7D7C69CD777B6, 0xA09CAEBF594F0BA0],
        ),
        (
            np.uint64,
            [
                0x243F6A8885A308D3, 0x13198A2E03707344, 0xA4093822299F31D0,
                0x082EFA98EC4E6C89, 0x452821E638D01377, 0xBE5466CF34E90C6C,
            ],
            [0xA528F45403E61D95, 0x38C72DBD566E9788, 0xA5A1610E72FD18B5, 0x57BD43B5E52B7FE6],
        ),
    ]  # fmt: skip
    for dtype, inputs, expected in cases:
        args = [np.array([v], dtype=dtype) for v in inputs]
        got = [int(c[0]) for c in philox_ref.philox_impl(*args)]
        assert got == expected


SEEDS = [0, 123, 2**31 - 1, 2**40 + 7]


@pytest.mark.parametrize("seed", SEEDS)
def test_randint_stream(backend: str, seed: int) -> None:
    n = 1000
    out = np.zeros(n, dtype=np.int32)
    randint_kernel[(triton.cdiv(n, 256),)](out, seed, n, BLOCK=256, backend=backend)
    expected = philox_ref.randint(seed, np.arange(n, dtype=np.int32))
    np.testing.assert_array_equal(out.view(np.uint32), expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_rand_stream(backend: str, seed: int) -> None:
    n = 1000
    out = np.zeros(n, dtype=np.float32)
    rand_kernel[(triton.cdiv(n, 256),)](out, seed, n, BLOCK=256, backend=backend)
    # Integer arithmetic, an int->float conversion and one fp32 multiply: exact.
    np.testing.assert_array_equal(out, philox_ref.rand(seed, np.arange(n, dtype=np.int32)))
    assert out.min() >= 0.0 and out.max() < 1.0


def test_rand_stream_int64_offsets(backend: str) -> None:
    """int64 offsets: their high word is Philox's second counter word (Triton 3.6)."""
    n, seed, base = 700, 99, 2**33 + 5
    out = np.zeros(n, dtype=np.float32)
    rand_offset64_kernel[(triton.cdiv(n, 256),)](out, seed, base, n, BLOCK=256, backend=backend)
    offsets = base + np.arange(n, dtype=np.int64)
    np.testing.assert_array_equal(out, philox_ref.rand(seed, offsets))


def test_randn_stream(backend: str) -> None:
    n, seed = 1000, 42
    out = np.zeros(n, dtype=np.float32)
    randn_kernel[(triton.cdiv(n, 256),)](out, seed, n, BLOCK=256, backend=backend)
    expected = philox_ref.randn(seed, np.arange(n, dtype=np.int32))
    # log, sqrt, cos are fast approximations on the GPU.
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("n", "p", "seed"), [(1000, 0.5, 123), (3001, 0.2, 512)])
def test_seeded_dropout(
    backend: str, rng: np.random.Generator, n: int, p: float, seed: int
) -> None:
    x = rng.uniform(0.5, 1.5, n).astype(np.float32)  # nonzero, so zeros mean "dropped"
    out = np.full_like(x, np.nan)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    _seeded_dropout[grid](x, out, n, p, seed, BLOCK_SIZE=1024, backend=backend)
    keep = philox_ref.rand(seed, np.arange(n, dtype=np.int32)) > np.float32(p)
    np.testing.assert_array_equal(out != 0, keep)
    expected = np.where(keep, x / (np.float32(1) - np.float32(p)), np.float32(0))
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    # Same seed, same mask; another seed, another mask.
    again = np.zeros_like(x)
    _seeded_dropout[grid](x, again, n, p, seed, BLOCK_SIZE=256, backend=backend)
    np.testing.assert_array_equal(again, out)
    other = np.zeros_like(x)
    _seeded_dropout[grid](x, other, n, p, seed + 1, BLOCK_SIZE=1024, backend=backend)
    assert np.any((other != 0) != keep)


# ---------------------------------------------------------------- 05 layer norm


def layer_norm_ref(x, w, b, eps):  # noqa: ANN001, ANN201
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1)
    var = ((x64 - mean[:, None]) ** 2).mean(axis=1)
    rstd = 1 / np.sqrt(var + eps)
    y = (x64 - mean[:, None]) * rstd[:, None] * w + b
    return y, mean, rstd


@pytest.mark.parametrize("block", [32, 128])
def test_layer_norm_forward(backend: str, rng: np.random.Generator, block: int) -> None:
    M, N, eps = 37, 100, 1e-5
    x = (-2.3 + 0.5 * rng.standard_normal((M, N))).astype(np.float32)
    w = rng.random(N, dtype=np.float32)
    b = rng.random(N, dtype=np.float32)
    y = np.zeros_like(x)
    mean = np.zeros(M, dtype=np.float32)
    rstd = np.zeros(M, dtype=np.float32)
    _layer_norm_fwd_fused[(M,)](
        x, y, w, b, mean, rstd, row_stride(x), N, eps, BLOCK_SIZE=block, backend=backend
    )
    y_ref, mean_ref, rstd_ref = layer_norm_ref(x, w, b, eps)
    np.testing.assert_allclose(mean, mean_ref, rtol=1e-5)
    np.testing.assert_allclose(rstd, rstd_ref, rtol=1e-4)
    np.testing.assert_allclose(y, y_ref, rtol=1e-4, atol=1e-4)


def test_layer_norm_backward(backend: str, rng: np.random.Generator) -> None:
    """dx with the atomic_cas spin lock and partial dw/db buffers, then their reduction."""
    M, N, eps, group_m = 37, 100, 1e-5, 8
    x = (-2.3 + 0.5 * rng.standard_normal((M, N))).astype(np.float32)
    w = rng.random(N, dtype=np.float32)
    b = rng.random(N, dtype=np.float32)
    dy = (0.1 * rng.standard_normal((M, N))).astype(np.float32)
    _, mean64, rstd64 = layer_norm_ref(x, w, b, eps)
    mean, rstd = mean64.astype(np.float32), rstd64.astype(np.float32)

    locks = np.zeros(2 * group_m, dtype=np.int32)
    partial_dw = np.zeros((group_m, N), dtype=np.float32)
    partial_db = np.zeros((group_m, N), dtype=np.float32)
    dx = np.zeros_like(x)
    _layer_norm_bwd_dx_fused[(M,)](
        dx, dy, partial_dw, partial_db, x, w, mean, rstd, locks, row_stride(x), N,
        GROUP_SIZE_M=group_m, BLOCK_SIZE_N=triton.next_power_of_2(N), backend=backend,
    )  # fmt: skip
    dw = np.zeros(N, dtype=np.float32)
    db = np.zeros(N, dtype=np.float32)
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_SIZE_N"]),)  # noqa: E731
    _layer_norm_bwd_dwdb[grid](
        partial_dw, partial_db, dw, db, group_m, N,
        BLOCK_SIZE_M=16, BLOCK_SIZE_N=32, backend=backend,
    )  # fmt: skip

    xhat = (x.astype(np.float64) - mean64[:, None]) * rstd64[:, None]
    wdy = w * dy.astype(np.float64)
    c1 = (xhat * wdy).mean(axis=1, keepdims=True)
    c2 = wdy.mean(axis=1, keepdims=True)
    dx_ref = (wdy - (xhat * c1 + c2)) * rstd64[:, None]
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dw, (dy * xhat).sum(axis=0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(db, dy.astype(np.float64).sum(axis=0), rtol=1e-4, atol=1e-5)
    assert np.all(locks[:group_m] == 0), "every lock is released"
    assert np.all(locks[group_m:] == 1), "every group's count flag is set"


# ---------------------------------------------------------------- 06 fused attention


def attention_ref(q, k, v, sm_scale, causal):  # noqa: ANN001, ANN201
    """Output and base-2 log-sum-exp of softmax(q k^T * sm_scale) v, in float64."""
    s = np.einsum("zhmd,zhnd->zhmn", q.astype(np.float64), k.astype(np.float64)) * sm_scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    row_max = s.max(axis=-1, keepdims=True)
    e = np.exp(s - row_max)
    denom = e.sum(axis=-1, keepdims=True)
    out = np.einsum("zhmn,zhnd->zhmd", e / denom, v.astype(np.float64))
    lse2 = (row_max + np.log(denom))[..., 0] / math.log(2)
    return out, lse2


def run_attention(kernel, q, k, v, sm_scale, causal, block_m, block_n, backend):  # noqa: ANN001, ANN201
    Z, H, n_ctx, head_dim = q.shape
    out = np.zeros_like(q)
    m = np.zeros((Z * H, n_ctx), dtype=np.float32)
    grid = (triton.cdiv(n_ctx, block_m), Z * H, 1)
    kernel[grid](
        q, k, v, sm_scale, m, out,
        *strides(q), *strides(k), *strides(v), *strides(out),
        Z, H, n_ctx,
        HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n,
        STAGE=3 if causal else 1, backend=backend,
    )  # fmt: skip
    return out, m


def make_qkv(rng: np.random.Generator, shape: tuple[int, ...]):  # noqa: ANN201
    return tuple(rng.normal(0.0, 0.5, shape).astype(np.float16) for _ in range(3))


@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention_tutorial(backend: str, rng: np.random.Generator, causal: bool) -> None:
    """The tutorial's block-pointer kernel; it has no masks, so N_CTX is a multiple of
    the blocks here (the masked variant below covers ragged lengths)."""
    q, k, v = make_qkv(rng, (2, 2, 64, 32))
    sm_scale = 0.5
    out, m = run_attention(_attn_fwd, q, k, v, sm_scale, causal, 16, 16, backend)
    out_ref, lse_ref = attention_ref(q, k, v, sm_scale, causal)
    np.testing.assert_allclose(out.astype(np.float32), out_ref, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(m, lse_ref.reshape(m.shape), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("n_ctx", "block_m", "block_n"), [(50, 16, 16), (75, 32, 16)])
def test_fused_attention_ragged(
    backend: str, rng: np.random.Generator, causal: bool, n_ctx: int, block_m: int, block_n: int
) -> None:
    q, k, v = make_qkv(rng, (2, 3, n_ctx, 32))
    sm_scale = 1.0 / math.sqrt(32)
    out, m = run_attention(attn_fwd_masked, q, k, v, sm_scale, causal, block_m, block_n, backend)
    out_ref, lse_ref = attention_ref(q, k, v, sm_scale, causal)
    np.testing.assert_allclose(out.astype(np.float32), out_ref, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(m, lse_ref.reshape(m.shape), rtol=1e-3, atol=1e-3)
