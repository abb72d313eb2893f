"""fp8 and batched (3-D) ``tl.dot`` on the GPU, against the emulator and NumPy.

fp8 runs on each path the H200 can take: ``wgmma`` e4m3/e5m2 (sm_90a),
``mma.sync`` m16n8k32 (sm_89 PTX, JIT-compiled for the H200) and the FMA dot
with exact decoding (sm_80). Products of fp8 values are exact in fp32, so
the three paths and the emulator differ only in the order (and, for the
tensor cores, the precision) of the fp32 accumulation. The batched dot runs
on the FMA path; with TF32 inputs it agrees with the emulator's TF32 dot.
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
    batched_dot_kernel,
    dot_kernel,
    imprecise_fp8_dot_kernel,
)

torch = pytest.importorskip("torch")


def cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def fp8_dot(a, b, tile, arch: str, backend: str, stages: int = 3):  # noqa: ANN001, ANN201
    (m, k), n = a.shape, b.shape[1]
    c = torch.full((m, n), float("nan"), device=a.device)
    bm, bn, bk = tile
    dot_kernel[(cdiv(m, bm), cdiv(n, bn))](
        a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride(),
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, PRECISION="tf32", backend=backend,
        num_warps=4, num_stages=stages, **({"arch": arch} if backend == "gpu" else {}),
    )  # fmt: skip
    return c.cpu().double().numpy()


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("arch", ["sm_90a", "sm_89", "sm_80"])
def test_fp8_dot_agrees_with_the_emulator(dtype: str, arch: str) -> None:
    gen = torch.Generator().manual_seed(11)
    m, n, k = 100, 72, 200  # ragged: masked tiles and a masked last K step
    a = torch.randn(m, k, generator=gen).to(getattr(torch, dtype))
    b = torch.randn(k, n, generator=gen).to(getattr(torch, dtype))
    exact = a.double().numpy() @ b.double().numpy()
    emulated = fp8_dot(a, b, (64, 64, 32), arch, "emulator")
    np.testing.assert_allclose(emulated, exact, rtol=1e-5, atol=1e-5)
    gpu = fp8_dot(a.cuda(), b.cuda(), (64, 64, 32), arch, "gpu")
    # The tensor cores accumulate fp8 products with fewer than fp32's bits (on
    # sm_90a about 14, as in Triton, whose default there is imprecise
    # accumulation): the error is bounded by the sum of the products' sizes.
    scale = np.abs(a.double().numpy()) @ np.abs(b.double().numpy())
    assert np.all(np.abs(gpu - emulated) <= 2.0**-11 * scale + 1e-6)
    assert not np.allclose(gpu, exact + 1.0)  # the check can fail


def imprecise_dot(a, b, limit, backend: str):  # noqa: ANN001, ANN201
    (m, k), n = a.shape, b.shape[1]
    c = torch.full((m, n), float("nan"), device=a.device)
    meta = {"arch": "sm_90a"} if backend == "gpu" else {}
    imprecise_fp8_dot_kernel[(m // 128, n // 128)](
        a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride(), BLOCK_M=128, BLOCK_N=128,
        BLOCK_K=128, LIMIT=limit, num_warps=8, backend=backend, **meta,
    )  # fmt: skip
    return c.cpu().double().numpy()


@pytest.mark.parametrize("b_k_major", [True, False], ids=["pipelined", "restaged"])
def test_max_num_imprecise_acc_sums_runs_in_fp32(b_k_major: bool) -> None:
    # Positive products: a long sum whose low bits the tensor cores' fp8 accumulator
    # drops at every step; summed in fp32 every 32 or 64 products, far fewer are lost.
    gen = torch.Generator().manual_seed(4)
    m, n, k = 128, 256, 4096
    a = (torch.rand(m, k, generator=gen) + 0.5).to(torch.float8_e4m3fn)
    b = (torch.rand(n, k, generator=gen) + 0.5).to(torch.float8_e4m3fn)
    b = b.T if b_k_major else b.T.contiguous()  # K-major B takes the pipelined wgmma path
    exact = a.double().numpy() @ b.double().numpy()
    errors = {}
    for limit in (None, 0, 32, 64):
        gpu = imprecise_dot(a.cuda(), b.cuda(), limit, "gpu")
        errors[limit] = float(np.max(np.abs(gpu - exact) / exact))
    print("relative errors by max_num_imprecise_acc:", errors)
    for limit in (0, 32, 64):
        # Each instruction (32 products) still sums with about 14 bits: about 2^-13
        # of the result at most, whatever the length of K.
        assert errors[limit] <= 2.0**-11, errors
    emulated = imprecise_dot(a, b, 32, "emulator")
    np.testing.assert_allclose(emulated, exact, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2"])
def test_fp8_conversions_match_the_emulator_bit_for_bit(dtype: str) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "emulator"))
    from test_emulator_only_features import fp8_round_trip

    t = getattr(torch, dtype)
    x = (torch.randn(1000, generator=torch.Generator().manual_seed(5)) * 40).to(t)
    outs = []
    for backend in ("emulator", "gpu"):
        dev = "cuda" if backend == "gpu" else "cpu"
        f32 = torch.zeros(1000, device=dev)
        y = torch.zeros(1000, dtype=t, device=dev)
        meta = {"arch": "sm_90a"} if backend == "gpu" else {}
        fp8_round_trip[(1,)](x.to(dev), f32, y, 1000, BLOCK=1024, backend=backend, **meta)
        outs.append((f32.cpu(), y.cpu().view(torch.uint8)))
    assert torch.equal(outs[0][0], x.float()) and torch.equal(outs[1][0], x.float())
    assert torch.equal(outs[0][1], outs[1][1])


def tf32(x: np.ndarray) -> np.ndarray:
    """fp32 as the tensor cores read it (the emulator's model for the default arch)."""
    to_tf32 = tensor_core_inputs()
    assert to_tf32 is not None
    return to_tf32(x.astype(np.float32))


@pytest.mark.parametrize("precision", ["tf32", "ieee"])
@pytest.mark.parametrize(("shape", "blocks"), [
    ((3, 20, 24, 40), (2, 32, 32, 16)),  # every dim masked, two programs
    ((4, 16, 16, 32), (4, 16, 16, 32)),
])  # fmt: skip
def test_batched_dot(precision: str, shape, blocks) -> None:  # noqa: ANN001
    nb, m, n, k = shape
    bb, bm, bn, bk = blocks
    rng = np.random.default_rng(9)
    a = rng.standard_normal((nb, m, k), dtype=np.float32)
    b = rng.standard_normal((nb, k, n), dtype=np.float32)
    out = {}
    for backend in ("emulator", "gpu"):
        c = np.full((nb, m, n), np.nan, np.float32)
        batched_dot_kernel[(cdiv(nb, bb),)](
            a, b, c, nb, m, n, k, BLOCK_B=bb, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
            PRECISION=precision, backend=backend,
        )  # fmt: skip
        out[backend] = c
    ra, rb = (tf32(a), tf32(b)) if precision == "tf32" else (a, b)
    ref = ra.astype(np.float64) @ rb.astype(np.float64)
    for c in out.values():
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["gpu"], out["emulator"], rtol=1e-5, atol=1e-5)
    if precision == "tf32":
        assert not np.allclose(out["gpu"], a.astype(np.float64) @ b.astype(np.float64), 1e-5, 1e-5)
