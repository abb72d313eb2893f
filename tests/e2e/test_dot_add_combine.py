"""``acc += tl.dot(a, b)`` accumulates in the dot, as ``acc = tl.dot(a, b, acc)`` does.

Triton's combine rule (MiniTriton's ``canonicalize``) turns ``dot(a, b, 0) + d``
into ``dot(a, b, d)``: in a K loop the tensor cores then add onto the
accumulator, with no block add per step. Both backends, against NumPy.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl


@triton.jit
def plus_equals_matmul(a_ptr, b_ptr, c_ptr, K: tl.constexpr, BM: tl.constexpr,
                       BN: tl.constexpr, BK: tl.constexpr, INT: tl.constexpr):  # fmt: skip
    """``c = a @ b`` of one ``BM x K`` by ``K x BN`` tile, summed ``BK`` at a time with ``+=``."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.int32 if INT else tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@pytest.mark.parametrize("kind", ["fp16", "int8"])
def test_plus_equals_dot_matches_numpy(backend: str, kind: str) -> None:
    rng = np.random.default_rng(7)
    BM, BN, BK, K = 64, 64, 32, 128
    if kind == "int8":
        a = rng.integers(-128, 128, (BM, K), dtype=np.int8)
        b = rng.integers(-128, 128, (K, BN), dtype=np.int8)
        c = np.zeros((BM, BN), np.int32)
        want = a.astype(np.int64) @ b.astype(np.int64)
    else:
        a = rng.standard_normal((BM, K)).astype(np.float16)
        b = rng.standard_normal((K, BN)).astype(np.float16)
        c = np.zeros((BM, BN), np.float32)
        want = a.astype(np.float64) @ b.astype(np.float64)
    out = plus_equals_matmul[(1,)](a, b, c, K, BM, BN, BK, kind == "int8", backend=backend)
    if kind == "int8":
        np.testing.assert_array_equal(c, want)
    else:
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-3)
    ir = out.asm["ttir"]
    # the loop's dot takes the carried accumulator, and no block add is left in the loop
    assert re.search(r"= tt\.dot\(%\w+, %\w+, %acc", ir), ir
    assert not re.search(r"arith\.add\([^)]*\) : tensor<64x64x", ir), ir
