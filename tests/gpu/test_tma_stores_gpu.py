"""TMA stores on the H200: epilogues stored through shared memory, against NumPy.

Tutorial 09's persistent descriptor matmul stores its tile whole or in two
halves (``EPILOGUE_SUBTILE``), in fp16, bf16 or fp32; M and N are not
multiples of the tile, so the copy engine must clip the boxes at the
edges. TMA stores are off by default: each test turns them on
(``MINITRITON_TMA_STORES=1``). Three programs compute every tile, so each program's next tile is
written into the shared tiles that its previous stores read. Each test
checks in the PTX that the stores were TMA stores (or, in debug mode, that
they were not).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from minitriton.tools.tensor_descriptor import TensorDescriptor
from tests.kernels.persistent_matmul import persistent_desc_matmul, persistent_matmul
from tests.kernels.tma_matmul import block_ptr_matmul

pytestmark = pytest.mark.gpu
KERNELS = (persistent_desc_matmul, persistent_matmul, block_ptr_matmul)


@pytest.fixture(autouse=True)
def _tma_stores(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """TMA stores on (they are off by default), in kernels compiled afresh."""
    monkeypatch.setenv("MINITRITON_TMA_STORES", "1")
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    # The launcher keeps compiled kernels by specialization and options, not by switch.
    for k in KERNELS:
        k.cache.clear()
    yield
    for k in KERNELS:
        k.cache.clear()


M, N, K = 300, 208, 200  # 3 x 2 tiles of 128 x 128, ragged in M, N and K
BM, BN, BK = 128, 128, 64
NUM_SMS = 3
TMA_STORE = "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"


def _inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    return a, b, a.astype(np.float64) @ b.astype(np.float64)


def _torch_dtype(dtype: str):  # noqa: ANN202
    torch = pytest.importorskip("torch")
    return {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[dtype]


def _run_persistent(subtile: bool, dtype: str, debug: bool = False):  # noqa: ANN202
    torch = pytest.importorskip("torch")
    a, b, want = _inputs()
    ta = torch.from_numpy(a).cuda()
    tbt = torch.from_numpy(np.ascontiguousarray(b.T)).cuda()  # the kernel computes A @ B.T
    tc = torch.full((M, N), float("nan"), dtype=_torch_dtype(dtype), device="cuda")
    store_bn = BN // 2 if subtile else BN
    descs = [TensorDescriptor.from_tensor(ta, [BM, BK]),
             TensorDescriptor.from_tensor(tbt, [BN, BK]),
             TensorDescriptor.from_tensor(tc, [BM, store_bn])]  # fmt: skip
    ck = persistent_desc_matmul[(NUM_SMS,)](
        *descs, M, N, K, BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, GROUP_SIZE_M=2,
        EPILOGUE_SUBTILE=subtile, NUM_SMS=NUM_SMS, WARP_SPECIALIZE=False,
        num_warps=4, num_stages=3, backend="gpu", debug=debug,
    )  # fmt: skip
    got = tc.float().cpu().numpy()
    return ck, got, want


def _tolerance(dtype: str) -> dict[str, float]:
    return {"rtol": 2e-2, "atol": 0.3 if dtype == "bf16" else 0.05}


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("subtile", [False, True], ids=["whole", "subtiled"])
def test_persistent_epilogue_is_stored_by_tma(subtile: bool, dtype: str) -> None:
    ck, got, want = _run_persistent(subtile, dtype)
    ptx = ck.asm["ptx"]
    # Each store is one box per 128-byte column block: fp16 tiles of 64 columns are one box.
    blocks = {("f16", False): 2, ("f16", True): 2, ("f32", False): 4, ("f32", True): 4}
    assert ptx.count(TMA_STORE) == blocks.get((dtype, subtile), 2)
    assert "cp.async.bulk.wait_group.read 0" in ptx
    assert "st.global" not in ptx
    np.testing.assert_allclose(got, want, **_tolerance(dtype))


def test_debug_mode_keeps_plain_stores_and_checks_them() -> None:
    ck, got, want = _run_persistent(True, "f16", debug=True)
    assert TMA_STORE not in ck.asm["ptx"] and "st.global" in ck.asm["ptx"]
    np.testing.assert_allclose(got, want, **_tolerance("f16"))


def test_pointer_epilogue_with_aligned_rows_is_stored_by_tma() -> None:
    # tutorial 09's pointer kernel: c_ptr + offs_cm * stride_cm + offs_cn, masked by M and N.
    torch = pytest.importorskip("torch")
    a, b, want = _inputs()
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    tc = torch.full((M, N), float("nan"), dtype=torch.float16, device="cuda")
    ck = persistent_matmul[(NUM_SMS,)](
        ta, tb, tc, M, N, K, K, 1, N, 1, N, 1,
        BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, GROUP_SIZE_M=2, NUM_SMS=NUM_SMS,
        num_warps=4, num_stages=3, backend="gpu",
    )  # fmt: skip
    assert ck.asm["ptx"].count(TMA_STORE) == 2
    np.testing.assert_allclose(tc.float().cpu().numpy(), want, **_tolerance("f16"))


def test_block_pointer_store_with_tails() -> None:
    torch = pytest.importorskip("torch")
    a, b, want = _inputs()
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    tc = torch.full((M, N), float("nan"), dtype=torch.float16, device="cuda")
    grid = ((M + BM - 1) // BM, (N + BN - 1) // BN)
    ck = block_ptr_matmul[grid](ta, tb, tc, M, N, K, K, 1, N, 1, N, 1, BM, BN, BK,
                                num_warps=8, num_stages=3, backend="gpu")  # fmt: skip
    assert ck.asm["ptx"].count(TMA_STORE) == 2
    np.testing.assert_allclose(tc.float().cpu().numpy(), want, **_tolerance("f16"))
