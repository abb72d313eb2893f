"""Persistent matmuls (tutorial 09's style) on both backends, against NumPy.

Each program loops over output tiles with ``tl.range(..., flatten=True)``;
the descriptor kernel also takes ``warp_specialize=`` and stores its epilogue
whole or in two halves. The grid is smaller than the number of tiles, so
every program computes several tiles, and the shapes leave partial tiles at
the edges.
"""

from __future__ import annotations

import numpy as np
import pytest

from minitriton.tools.tensor_descriptor import TensorDescriptor
from tests.kernels.persistent_matmul import persistent_desc_matmul, persistent_matmul

BM, BN, BK = 64, 64, 32
NUM_SMS = 3


def _operands(m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(9)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    return a, b


def _reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) @ b.astype(np.float32)


def test_persistent_matmul(backend: str) -> None:
    m, n, k = 150, 140, 80  # 3 x 3 tiles for 3 programs; ragged edges and K tail
    a, b = _operands(m, n, k)
    c = np.full((m, n), np.nan, dtype=np.float16)
    persistent_matmul[(NUM_SMS,)](
        a, b, c, m, n, k, k, 1, n, 1, n, 1,
        BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, GROUP_SIZE_M=2, NUM_SMS=NUM_SMS,
        backend=backend,
    )  # fmt: skip
    np.testing.assert_allclose(c.astype(np.float32), _reference(a, b), rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("subtile", [False, True])
@pytest.mark.parametrize("warp_specialize", [False, True])
def test_persistent_descriptor_matmul(backend: str, subtile: bool, warp_specialize: bool) -> None:
    m, n, k = 192, 128, 96  # 3 x 2 tiles for 3 programs
    a, b = _operands(m, n, k)
    bt = np.ascontiguousarray(b.T)  # the kernel computes A @ B.T
    c = np.full((m, n), np.nan, dtype=np.float16)
    store_bn = BN // 2 if subtile else BN
    a_desc = TensorDescriptor.from_tensor(a, [BM, BK])
    b_desc = TensorDescriptor.from_tensor(bt, [BN, BK])
    c_desc = TensorDescriptor.from_tensor(c, [BM, store_bn])
    persistent_desc_matmul[(NUM_SMS,)](
        a_desc, b_desc, c_desc, m, n, k,
        BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, GROUP_SIZE_M=2,
        EPILOGUE_SUBTILE=subtile, NUM_SMS=NUM_SMS, WARP_SPECIALIZE=warp_specialize,
        backend=backend,
    )  # fmt: skip
    np.testing.assert_allclose(c.astype(np.float32), _reference(a, b), rtol=2e-2, atol=5e-2)
