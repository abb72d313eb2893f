"""Tensor-core dots on the GPU, forced onto the mma.sync path with ``arch="sm_80"``.

sm_80 PTX JIT-compiles on any newer GPU, so these run on Hopper too. Results
are compared with NumPy: fp16 and bf16 products are exact in fp32, tf32 is
compared with a NumPy reference that rounds the inputs to tf32 first (and
must differ from the exact product), int8 must match exactly. Outputs are
poisoned first, so every element must be written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from minitriton.backend import gpu_available
from minitriton.emulator.tf32 import tensor_core_inputs

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu_available(), reason="needs an NVIDIA GPU and cuda-python"),
]

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.kernels.dot_kernels import (  # noqa: E402
    chained_dot_kernel,
    dot_bt_kernel,
    dot_kernel,
    int8_dot_kernel,
)

ARCH = "sm_80"


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(4321)


def cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def strides(x) -> tuple[int, ...]:  # noqa: ANN001 (NumPy array or torch tensor)
    if hasattr(x, "stride") and callable(x.stride):
        return tuple(x.stride())
    return tuple(s // x.itemsize for s in x.strides)


def run_dot(kernel, a, b, c, tile, num_warps=4, **meta):  # noqa: ANN001
    (m, k), n = a.shape, b.shape[1]
    bm, bn, bk = tile
    grid = (cdiv(m, bm), cdiv(n, bn))
    kernel[grid](
        a, b, c, m, n, k, *strides(a), *strides(b), *strides(c),
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, backend="gpu", arch=ARCH, num_warps=num_warps, **meta,
    )  # fmt: skip
    return c


def tf32(x: np.ndarray) -> np.ndarray:
    """fp32 as the tensor cores of ``ARCH`` read it (the emulator's model: truncation)."""
    to_tf32 = tensor_core_inputs(ARCH, "mma.sync")
    assert to_tf32 is not None
    return to_tf32(x.astype(np.float32))


SHAPES = [
    ((100, 72, 80), (64, 64, 32), 4),  # ragged in M, N and K: masked edges
    ((256, 256, 128), (128, 128, 32), 4),
    ((256, 512, 128), (128, 256, 64), 8),
    ((48, 40, 16), (16, 16, 16), 4),  # smaller than the warps' tile: replicated warps
]


@pytest.mark.parametrize(("mnk", "tile", "warps"), SHAPES)
def test_fp16(rng, mnk, tile, warps):
    m, n, k = mnk
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    run_dot(dot_kernel, a, b, c, tile, warps, PRECISION="tf32")
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4)


def test_fp16_transposed_b(rng):
    a = rng.standard_normal((128, 96)).astype(np.float16)
    b = np.asfortranarray(rng.standard_normal((96, 64)).astype(np.float16))
    c = np.full((128, 64), np.nan, np.float32)
    run_dot(dot_kernel, a, b, c, (64, 64, 32), PRECISION="tf32")
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("mnk", "tile", "warps"), SHAPES[:2])
def test_bf16(rng, mnk, tile, warps):
    torch = pytest.importorskip("torch")
    m, n, k = mnk
    gen = torch.Generator(device="cuda").manual_seed(7)
    a = torch.randn((m, k), device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn((k, n), device="cuda", generator=gen).to(torch.bfloat16)
    c = torch.full((m, n), float("nan"), device="cuda")
    run_dot(dot_kernel, a, b, c, tile, warps, PRECISION="tf32")
    ref = a.double().cpu().numpy() @ b.double().cpu().numpy()
    np.testing.assert_allclose(c.cpu().numpy(), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("mnk", "tile", "warps"), SHAPES[:3])
def test_tf32_reads_the_inputs_as_the_model_says(rng, mnk, tile, warps):
    m, n, k = mnk
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    run_dot(dot_kernel, a, b, c, tile, warps, PRECISION="tf32")
    ref = tf32(a).astype(np.float64) @ tf32(b).astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - exact).max() > 1e-3  # really tf32, not the exact product


def test_ieee_is_exact(rng):
    a = rng.standard_normal((100, 80)).astype(np.float32)
    b = rng.standard_normal((80, 72)).astype(np.float32)
    c = np.full((100, 72), np.nan, np.float32)
    run_dot(dot_kernel, a, b, c, (64, 64, 32), PRECISION="ieee")
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("mnk", "tile", "warps"), [
    ((100, 72, 80), (64, 64, 32), 4), ((256, 256, 256), (128, 128, 64), 8)])  # fmt: skip
def test_int8(rng, mnk, tile, warps):
    m, n, k = mnk
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    b = rng.integers(-128, 128, (k, n), dtype=np.int8)
    c = np.full((m, n), -(2**31), np.int32)
    run_dot(int8_dot_kernel, a, b, c, tile, warps)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize(("block", "head_dim"), [(64, 64), (64, 32), (16, 32)])
def test_chained_dots_keep_p_in_registers(rng, block, head_dim):
    n_ctx = 256
    q, k, v = (rng.normal(0, 0.5, (n_ctx, head_dim)).astype(np.float16) for _ in range(3))
    o = np.full((n_ctx, head_dim), np.nan, np.float32)
    chained_dot_kernel[(n_ctx // block,)](
        q, k, v, o, n_ctx, BLOCK_M=block, BLOCK_N=block, HEAD_DIM=head_dim,
        backend="gpu", arch=ARCH, num_warps=4,
    )  # fmt: skip
    s = q.astype(np.float32) @ k.astype(np.float32).T
    p = np.exp2(s - s.max(axis=1, keepdims=True))
    ref = (p.astype(np.float16).astype(np.float32) @ v.astype(np.float32)) / p.sum(1, keepdims=True)
    np.testing.assert_allclose(o, ref, rtol=2e-2, atol=2e-3)


# ------------------------------------------------------------------ the cp.async pipeline

PIPELINE_SHAPES = [
    ((100, 72, 200), (64, 64, 32)),  # 7 K steps, the last one masked
    ((64, 64, 40), (64, 64, 32)),  # 2 K steps: fewer than the prologue's stages
    ((130, 136, 16), (64, 64, 32)),  # one masked K step
]


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize(("mnk", "tile"), PIPELINE_SHAPES)
@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_pipelined_matches_unpipelined_bit_for_bit(rng, dtype, mnk, tile, stages):
    # Same instructions in the same order: only where the operands wait differs.
    m, n, k = mnk
    np_t = {"fp16": np.float16, "fp32": np.float32}[dtype]
    a = rng.standard_normal((m, k)).astype(np_t)
    b = rng.standard_normal((k, n)).astype(np_t)
    out = []
    for s in (1, stages):
        c = np.full((m, n), np.nan, np.float32)
        out.append(run_dot(dot_kernel, a, b, c, tile, PRECISION="tf32", num_stages=s))
    np.testing.assert_array_equal(out[0], out[1])
    ref = (tf32(a) if dtype == "fp32" else a).astype(np.float64)
    ref = ref @ (tf32(b) if dtype == "fp32" else b).astype(np.float64)
    np.testing.assert_allclose(out[1], ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("stages", [2, 4])
def test_pipelined_int8_and_bf16(rng, stages):
    torch = pytest.importorskip("torch")
    a = rng.integers(-128, 128, (96, 200), dtype=np.int8)
    b = rng.integers(-128, 128, (200, 80), dtype=np.int8)
    c = np.full((96, 80), -(2**31), np.int32)
    run_dot(int8_dot_kernel, a, b, c, (64, 64, 64), num_stages=stages)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
    gen = torch.Generator(device="cuda").manual_seed(3)
    x = torch.randn((100, 200), device="cuda", generator=gen).to(torch.bfloat16)
    y = torch.randn((200, 72), device="cuda", generator=gen).to(torch.bfloat16)
    z = torch.full((100, 72), float("nan"), device="cuda")
    run_dot(dot_kernel, x, y, z, (64, 64, 32), PRECISION="tf32", num_stages=stages)
    ref = x.double().cpu().numpy() @ y.double().cpu().numpy()
    np.testing.assert_allclose(z.cpu().numpy(), ref, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------ K-major B, pipelined

K_MAJOR = [((100, 72, 80), (64, 64, 32), 4), ((256, 256, 128), (128, 128, 64), 8)]


@pytest.mark.parametrize(("mnk", "tile", "warps"), K_MAJOR)
@pytest.mark.parametrize("dtype", ["fp16", "tf32", "int8"])
def test_k_major_b_is_read_from_its_ring(rng, dtype, mnk, tile, warps):
    # B stored N-major (Fortran order): copied K-major into its ring, read without .trans.
    m, n, k = mnk
    if dtype == "int8":
        a = rng.integers(-128, 128, (m, k), dtype=np.int8)
        b = np.asfortranarray(rng.integers(-128, 128, (k, n), dtype=np.int8))
        c = np.full((m, n), -(2**31), np.int32)
        run_dot(int8_dot_kernel, a, b, c, tile, warps)
        np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
        return
    st = np.float16 if dtype == "fp16" else np.float32
    a = rng.standard_normal((m, k)).astype(st)
    b = np.asfortranarray(rng.standard_normal((k, n)).astype(st))
    c = np.full((m, n), np.nan, np.float32)
    run_dot(dot_kernel, a, b, c, tile, warps, PRECISION="tf32")
    ra, rb = (a, b) if dtype == "fp16" else (tf32(a), tf32(b))
    ref = ra.astype(np.float64) @ rb.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_trans_of_a_loaded_b(dtype):
    # tl.dot(a, tl.trans(b)) with B stored N x K (tutorial 09's form), ragged edges.
    torch = pytest.importorskip("torch")
    gen = torch.Generator(device="cuda").manual_seed(11)
    m, n, k = 200, 136, 96
    a = torch.randn((m, k), device="cuda", generator=gen).to(getattr(torch, dtype))
    b = torch.randn((n, k), device="cuda", generator=gen).to(getattr(torch, dtype))
    c = torch.full((m, n), float("nan"), device="cuda")
    dot_bt_kernel[(cdiv(m, 64), cdiv(n, 64))](
        a, b, c, m, n, k, *strides(a), *strides(b), *strides(c),
        BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, backend="gpu", arch=ARCH, num_warps=4,
    )  # fmt: skip
    ref = a.double().cpu().numpy() @ b.double().cpu().numpy().T
    np.testing.assert_allclose(c.cpu().numpy(), ref, rtol=1e-4, atol=1e-4)


def attention_ref(q, k, v, sm_scale: float, causal: bool) -> np.ndarray:  # noqa: ANN001
    """softmax(q k^T * sm_scale) v in float64."""
    s = np.einsum("zhmd,zhnd->zhmn", q.astype(np.float64), k.astype(np.float64)) * sm_scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum("zhmn,zhnd->zhmd", e / e.sum(axis=-1, keepdims=True), v.astype(np.float64))


ATTENTION = [(256, 64, 64, 64, 4), (128, 32, 16, 16, 4), (512, 128, 128, 64, 8)]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("n_ctx", "head_dim", "block_m", "block_n", "warps"), ATTENTION)
@pytest.mark.parametrize("masked", [False, True])
def test_fused_attention_pipelines_k_and_v(rng, causal, n_ctx, head_dim, block_m, block_n, warps,
                                           masked):  # fmt: skip
    # Tutorial 06 (block pointers; k read K-major) and its masked variant (ragged N_CTX).
    from tests.kernels.attention_masked import attn_fwd_masked
    from tests.kernels.fused_attention import _attn_fwd

    n = n_ctx - 56 if masked else n_ctx
    q, k, v = (rng.normal(0.0, 0.5, (2, 2, n, head_dim)).astype(np.float16) for _ in range(3))
    out = np.full_like(q, np.nan)
    m = np.zeros((4, n), dtype=np.float32)
    sm_scale = head_dim**-0.5
    kernel = attn_fwd_masked if masked else _attn_fwd
    kernel[(cdiv(n, block_m), 4, 1)](
        q, k, v, sm_scale, m, out, *strides(q), *strides(k), *strides(v), *strides(out),
        2, 2, n, HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n, STAGE=3 if causal else 1,
        backend="gpu", arch=ARCH, num_warps=warps, num_stages=3,
    )  # fmt: skip
    ref = attention_ref(q, k, v, sm_scale, causal)
    np.testing.assert_allclose(out.astype(np.float32), ref, rtol=1e-2, atol=1e-2)
