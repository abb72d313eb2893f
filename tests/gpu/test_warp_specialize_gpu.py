"""Warp-specialized descriptor matmuls on the H200 against NumPy, tails included.

``ws_desc_matmul`` asks for ``warp_specialize=True`` on its K loop: the PTX
must hold the producer warpgroup's ``setmaxnreg`` and the kernel must be
launched with ``num_warps + 4`` warps; its result must equal NumPy's and,
bit for bit, the same kernel's without the flag (the ``wgmma`` sequence is
the same, only who issues the copies changes). Under ``MINITRITON_DEBUG=1``
the checked variant keeps ``cp.async`` and runs unspecialized. The pass is
off by default: the tests turn it on (``MINITRITON_WARP_SPECIALIZE=1``).
"""

from __future__ import annotations

import numpy as np
import pytest

from minitriton.tools.tensor_descriptor import TensorDescriptor
from tests.kernels.tma_matmul import ws_desc_matmul

pytestmark = pytest.mark.gpu

BK = 64
#: (M, N, K): ragged M, N and K; one K block; K shorter than the ring; a deep K loop.
SHAPES = [(300, 176, 208), (129, 256, 72), (128, 128, 64), (64, 320, 96), (256, 384, 1024)]


@pytest.fixture(autouse=True)
def _warp_specialize(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINITRITON_WARP_SPECIALIZE", "1")
    monkeypatch.delenv("MINITRITON_TMA", raising=False)


def _inputs(m: int, n: int, k: int, dtype: str, seed: int = 7) -> tuple:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    if dtype == "bf16":  # bf16 values: what the kernel sees (top half of fp32)
        a = (a.view(np.uint32) & 0xFFFF0000).view(np.float32)
        b = (b.view(np.uint32) & 0xFFFF0000).view(np.float32)
    return a, b, a.astype(np.float64) @ b.astype(np.float64)


def _run(
    a: np.ndarray,
    b: np.ndarray,
    dtype: str,
    ws: bool,
    warps: int,
    bm: int = 128,
    bn: int = 128,
    **options,
):  # noqa: ANN003, ANN202
    torch = pytest.importorskip("torch")
    tdtype = torch.float16 if dtype == "f16" else torch.bfloat16
    ta = torch.from_numpy(a).cuda().to(tdtype)
    tb = torch.from_numpy(np.ascontiguousarray(b.T)).cuda().to(tdtype)  # B.T: N x K
    m, n = a.shape[0], b.shape[1]
    tc = torch.full((m, n), float("nan"), dtype=tdtype, device="cuda")
    descs = [TensorDescriptor.from_tensor(ta, [bm, BK]), TensorDescriptor.from_tensor(tb, [bn, BK]),
             TensorDescriptor.from_tensor(tc, [bm, bn])]  # fmt: skip
    grid = ((m + bm - 1) // bm, (n + bn - 1) // bn)
    ck = ws_desc_matmul[grid](*descs, m, n, a.shape[1], bm, bn, BK, ws, num_warps=warps,
                              num_stages=3, backend="gpu", **options)  # fmt: skip
    return ck, tc.float().cpu().numpy()


def _tol(dtype: str) -> dict:
    return {"rtol": 2e-2, "atol": 0.25 if dtype == "bf16" else 0.05}


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("warps", [4, 8])
def test_warp_specialized_matmul(dtype: str, shape: tuple, warps: int) -> None:
    a, b, want = _inputs(*shape, dtype)
    ck, got = _run(a, b, dtype, True, warps)
    ptx = ck.asm["ptx"]
    assert "setmaxnreg.dec.sync.aligned.u32 40" in ptx and f".maxntid {32 * (warps + 4)}" in ptx
    np.testing.assert_allclose(got, want, **_tol(dtype))
    _, plain = _run(a, b, dtype, False, warps)
    np.testing.assert_array_equal(got, plain)


def test_wide_tile_two_consumer_warpgroups() -> None:
    a, b, want = _inputs(300, 520, 328, "f16", seed=3)
    ck, got = _run(a, b, "f16", True, 8, bn=256)
    assert ".maxnreg 168" in ck.asm["ptx"]  # 12 warps: 65536 / 384 registers each at entry
    np.testing.assert_allclose(got, want, **_tol("f16"))


def test_many_programs_repeatedly() -> None:
    # Many CTAs per SM and several launches: a lost arrival or a parity slip would hang
    # or corrupt some tile.
    a, b, want = _inputs(1024, 1024, 2048, "f16", seed=11)
    for _ in range(3):
        _, got = _run(a, b, "f16", True, 4)
        np.testing.assert_allclose(got, want, rtol=2e-2, atol=0.1)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_debug_mode_runs_unspecialized(dtype: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINITRITON_DEBUG", "1")
    a, b, want = _inputs(300, 176, 208, dtype)
    ck, got = _run(a, b, dtype, True, 4)
    assert "setmaxnreg" not in ck.asm["ptx"] and "cp.async.bulk" not in ck.asm["ptx"]
    np.testing.assert_allclose(got, want, **_tol(dtype))
