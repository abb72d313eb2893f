"""TMA copies on the H200: descriptor and block-pointer matmuls against NumPy, tails included.

M, N and K are not multiples of the blocks (boxes past the end read zeros);
the row strides stay multiples of 16 elements, so the specialization lets
the pipeliner pick TMA, which each test checks in the PTX.
"""

from __future__ import annotations

import numpy as np
import pytest

from minitriton.tools.tensor_descriptor import TensorDescriptor
from tests.kernels.tma_matmul import block_ptr_matmul, desc_matmul

pytestmark = pytest.mark.gpu

M, N, K = 300, 176, 208
BM, BN, BK = 128, 128, 64


def _inputs(dtype: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    if dtype == "bf16":  # bf16 values: what the kernel sees (top half of fp32)
        a = (a.view(np.uint32) & 0xFFFF0000).view(np.float32)
        b = (b.view(np.uint32) & 0xFFFF0000).view(np.float32)
    return a, b, a.astype(np.float64) @ b.astype(np.float64)


def _torch(x: np.ndarray, dtype: str):  # noqa: ANN202
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(x).cuda()
    return t.to(torch.float16 if dtype == "f16" else torch.bfloat16)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_descriptor_matmul_with_tails(dtype: str) -> None:
    torch = pytest.importorskip("torch")
    a, b, want = _inputs(dtype)
    ta, tb = _torch(a, dtype), _torch(np.ascontiguousarray(b.T), dtype)  # B.T: N x K
    tc = torch.zeros((M, N), dtype=ta.dtype, device="cuda")
    descs = [TensorDescriptor.from_tensor(ta, [BM, BK]), TensorDescriptor.from_tensor(tb, [BN, BK]),
             TensorDescriptor.from_tensor(tc, [BM, BN])]  # fmt: skip
    grid = (triton_cdiv(M, BM), triton_cdiv(N, BN))
    ck = desc_matmul[grid](*descs, M, N, K, BM, BN, BK, num_warps=8, num_stages=3, backend="gpu")
    assert "cp.async.bulk.tensor.2d" in ck.asm["ptx"]
    got = tc.float().cpu().numpy()
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=0.25 if dtype == "bf16" else 0.05)


def test_block_pointer_matmul_with_tails() -> None:
    torch = pytest.importorskip("torch")
    a, b, want = _inputs("f16")
    ta, tb = _torch(a, "f16"), _torch(b, "f16")
    tc = torch.zeros((M, N), dtype=torch.float16, device="cuda")
    grid = (triton_cdiv(M, BM), triton_cdiv(N, BN))
    ck = block_ptr_matmul[grid](ta, tb, tc, M, N, K, K, 1, N, 1, N, 1, BM, BN, BK,
                                num_warps=8, num_stages=3, backend="gpu")  # fmt: skip
    assert "cp.async.bulk.tensor.2d" in ck.asm["ptx"]
    np.testing.assert_allclose(tc.float().cpu().numpy(), want, rtol=2e-2, atol=0.05)


def test_debug_mode_checks_the_cp_async_path() -> None:
    torch = pytest.importorskip("torch")
    a, b, want = _inputs("f16")
    ta, tb = _torch(a, "f16"), _torch(np.ascontiguousarray(b.T), "f16")
    tc = torch.zeros((M, N), dtype=torch.float16, device="cuda")
    descs = [TensorDescriptor.from_tensor(ta, [BM, BK]), TensorDescriptor.from_tensor(tb, [BN, BK]),
             TensorDescriptor.from_tensor(tc, [BM, BN])]  # fmt: skip
    grid = (triton_cdiv(M, BM), triton_cdiv(N, BN))
    ck = desc_matmul[grid](*descs, M, N, K, BM, BN, BK, num_warps=8, num_stages=3,
                           backend="gpu", debug=True)  # fmt: skip
    assert "cp.async.bulk" not in ck.asm["ptx"] and "cp.async.cg" in ck.asm["ptx"]
    np.testing.assert_allclose(tc.float().cpu().numpy(), want, rtol=2e-2, atol=0.05)


def triton_cdiv(x: int, y: int) -> int:
    return (x + y - 1) // y
