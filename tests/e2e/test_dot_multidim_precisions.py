"""``tl.dot`` on batched blocks of any rank, ``tl.trans`` without dims, and the
``bf16x3`` / ``bf16x6`` precisions of fp32 dots, on both backends, against NumPy.

As in Triton, a dot of rank 4 or more folds its leading batch dims into one
(a 3-D dot) and unfolds the result; ``tl.trans(x)`` swaps the last two dims.
``bf16x3`` and ``bf16x6`` split each fp32 input into bf16 parts (``hi``,
``mid``, ``lo``: each rounds what the earlier ones left) and sum bf16 dots
of them: ``mid@hi + hi@mid`` (``bf16x6`` first adds ``mid@mid + lo@hi +
hi@lo``), NaNs there set to 0, then ``hi@hi``, then the accumulator.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton import bfloat16_view
from minitriton.diagnostics import CompileError
from tests.e2e.ptxas_check import assemble, needs_ptxas

M = N = K = 32


@triton.jit
def batched_dot(x_ptr, y_ptr, out_ptr, RANK: tl.constexpr, TRANS_A: tl.constexpr,
                TRANS_B: tl.constexpr):  # fmt: skip
    """``out = x @ y`` of two ``[2] * (RANK - 2) + [16, 16]`` blocks, each maybe transposed."""
    shape: tl.constexpr = [2] * (RANK - 2) + [16, 16]
    x = tl.load(x_ptr + tl.arange(0, 64 << RANK)).reshape(shape)
    y = tl.load(y_ptr + tl.arange(0, 64 << RANK)).reshape(shape)
    if TRANS_A:
        x = tl.trans(x)
    if TRANS_B:
        y = y.trans()
    tl.store(out_ptr + tl.arange(0, 64 << RANK), tl.dot(x, y).reshape([64 << RANK]))


@triton.jit
def batched_dot_acc(x_ptr, y_ptr, acc_ptr, out_ptr):
    """``out = x @ y + acc`` on 4-D blocks ``[2, 4, 16, 16]``."""
    offs = tl.arange(0, 2048)
    x = tl.load(x_ptr + offs).reshape(2, 4, 16, 16)
    y = tl.load(y_ptr + offs).reshape(2, 4, 16, 16)
    acc = tl.load(acc_ptr + offs).reshape(2, 4, 16, 16)
    tl.store(out_ptr + offs, tl.dot(x, y, acc=acc).reshape(2048))


@triton.jit
def trans_last_two(x_ptr, out_ptr, RANK: tl.constexpr):
    """``out = tl.trans(x)`` of a ``[2] * (RANK - 2) + [4, 8]`` block."""
    x = tl.load(x_ptr + tl.arange(0, 8 << RANK)).reshape([2] * (RANK - 2) + [4, 8])
    tl.store(out_ptr + tl.arange(0, 8 << RANK), tl.trans(x).reshape([8 << RANK]))


@triton.jit
def fp32_dot(x_ptr, y_ptr, c_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr,
             K: tl.constexpr, PRECISION: tl.constexpr):  # fmt: skip
    """``out = x @ y + c`` with fp32 inputs and ``input_precision=PRECISION``."""
    rows, cols, ks = tl.arange(0, M)[:, None], tl.arange(0, N)[None, :], tl.arange(0, K)
    x = tl.load(x_ptr + rows * K + ks[None, :])
    y = tl.load(y_ptr + ks[:, None] * N + cols)
    c = tl.load(c_ptr + rows * N + cols)
    tl.store(out_ptr + rows * N + cols, tl.dot(x, y, c, input_precision=PRECISION))


@triton.jit
def trans_of_a_row(x_ptr):
    """``tl.trans`` of a 1-D block: a compile error."""
    tl.trans(tl.load(x_ptr + tl.arange(0, 16)))


def _bf16(x: np.ndarray) -> np.ndarray:
    """fp32 ``x`` rounded to bf16 (to nearest, ties to even), kept in fp32."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


def _as_bf16_arg(x: np.ndarray):
    return bfloat16_view((_bf16(x).view(np.uint32) >> 16).astype(np.uint16))


def _bf16_split_model(a: np.ndarray, b: np.ndarray, c: np.ndarray, parts: int) -> np.ndarray:
    """The split dot, each bf16 dot exact and rounded once to fp32 (the emulator's bf16 dot)."""

    def split(x: np.ndarray) -> list[np.ndarray]:
        out = []
        for _ in range(parts):
            out.append(_bf16(x))
            x = (x - out[-1]).astype(np.float32)
        return out

    lhs, rhs = split(a), split(b)
    products = [(1, 0), (0, 1)] if parts == 2 else [(1, 1), (2, 0), (0, 2), (1, 0), (0, 1)]
    total = np.zeros(c.shape, np.float32)
    for i, j in products:
        total = (lhs[i].astype(np.float64) @ rhs[j] + total).astype(np.float32)
    total = np.where(np.isnan(total), np.float32(0), total)
    total = (lhs[0].astype(np.float64) @ rhs[0] + total).astype(np.float32)
    return total + c


def _fp32_inputs(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((M, K), (K, N), (M, N)))
    return a, b, c


def _run_fp32_dot(a, b, c, precision: str | None, backend: str = "emulator") -> np.ndarray:
    out = np.zeros((M, N), np.float32)
    fp32_dot[(1,)](a, b, c, out, M, N, K, precision, backend=backend)
    return out


@pytest.mark.parametrize("rank", [3, 4])
def test_trans_without_dims_swaps_the_last_two(backend: str, rank: int) -> None:
    x = np.arange(8 << rank, dtype=np.float32)
    out = np.zeros_like(x)
    trans_last_two[(1,)](x, out, rank, backend=backend)
    expected = np.swapaxes(x.reshape((2,) * (rank - 2) + (4, 8)), -1, -2)
    np.testing.assert_array_equal(out, expected.reshape(-1))


@pytest.mark.parametrize("trans", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("rank", [2, 4, 5])
def test_dot_of_any_rank_matches_numpy(backend: str, rank: int, trans: tuple[bool, bool]) -> None:
    rng = np.random.default_rng(rank)
    shape = (2,) * (rank - 2) + (16, 16)
    a, b = (rng.integers(-4, 5, shape).astype(np.float32) for _ in range(2))
    out = np.zeros(a.size, np.float32)
    batched_dot[(1,)](_as_bf16_arg(a), _as_bf16_arg(b), out, rank, *trans, backend=backend)
    a_t = np.swapaxes(a, -1, -2) if trans[0] else a
    b_t = np.swapaxes(b, -1, -2) if trans[1] else b
    np.testing.assert_array_equal(out, (a_t @ b_t).reshape(-1))  # small integers: exact


def test_4d_dot_adds_its_accumulator(backend: str) -> None:
    rng = np.random.default_rng(7)
    a, b = (rng.integers(-8, 9, 2048).astype(np.float16) for _ in range(2))
    acc = rng.standard_normal(2048).astype(np.float32)
    out = np.zeros(2048, np.float32)
    batched_dot_acc[(1,)](a, b, acc, out, backend=backend)
    shape = (2, 4, 16, 16)
    expected = a.reshape(shape).astype(np.float64) @ b.reshape(shape) + acc.reshape(shape)
    # The emulator rounds once. The GPU adds the accumulator first and rounds each of
    # the K = 16 fp32 steps; its sums reach about 1000, whose fp32 ulp is 6e-5.
    atol = 0.0 if backend == "emulator" else 16 * 6.2e-5
    np.testing.assert_allclose(out, expected.reshape(-1), rtol=1e-6, atol=atol)


@pytest.mark.parametrize(("precision", "parts"), [("bf16x3", 2), ("bf16x6", 3)])
def test_bf16_split_on_the_emulator_is_the_split_model(precision: str, parts: int) -> None:
    a, b, c = _fp32_inputs(parts)
    out = _run_fp32_dot(a, b, c, precision)
    np.testing.assert_array_equal(out, _bf16_split_model(a, b, c, parts))


#: Largest error allowed against the exact product (inputs ~N(0, 1), K = 32): one bf16
#: dot is off by about 1e-1 and a TF32 one by 1e-2; bf16x6 is about as good as fp32.
BOUNDS = {"bf16x3": 5e-4, "bf16x6": 1e-5}


@pytest.mark.parametrize("precision", sorted(BOUNDS))
def test_bf16_split_accuracy(backend: str, precision: str) -> None:
    a, b, c = _fp32_inputs(11)
    exact = a.astype(np.float64) @ b + c
    error = np.abs(_run_fp32_dot(a, b, c, precision, backend) - exact).max()
    assert error < BOUNDS[precision]
    tf32_error = np.abs(_run_fp32_dot(a, b, c, "tf32", backend) - exact).max()
    assert tf32_error > BOUNDS["bf16x3"]  # the bound tells the precisions apart


@pytest.mark.parametrize("precision", ["bf16x3", "bf16x6"])
def test_an_infinite_input_gives_infinity_not_nan(backend: str, precision: str) -> None:
    a, b, c = _fp32_inputs(5)
    a[3, 7] = np.inf  # its low parts are NaN (inf - inf); the split must not keep them
    out = _run_fp32_dot(a, b, c, precision, backend)
    assert np.array_equal(np.isinf(out[3]), np.ones(N, bool))
    assert np.array_equal(np.sign(out[3]), np.sign(b[7]))
    assert not np.isnan(out).any()


def test_the_default_precision_may_be_bf16x3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_F32_DEFAULT", "bf16x3")
    a, b, c = _fp32_inputs(2)
    out = _run_fp32_dot(a, b, c, None)
    np.testing.assert_array_equal(out, _bf16_split_model(a, b, c, 2))


def test_an_unknown_precision_lists_the_five() -> None:
    a, b, c = _fp32_inputs(0)
    with pytest.raises(CompileError, match="tf32, tf32x3, ieee, bf16x3, bf16x6, got 'bf16x9'"):
        _run_fp32_dot(a, b, c, "bf16x9")


def test_trans_of_a_1d_block_is_a_located_error() -> None:
    with pytest.raises(CompileError, match="tl.trans without dims needs a block of 2 or more"):
        trans_of_a_row[(1,)](np.zeros(16, np.float32))


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_batched_and_split_dots_assemble(arch: str, tmp_path) -> None:
    assemble(batched_dot, "*bf16, *bf16, *fp32, 4, True, True", arch, tmp_path)
    compiled = assemble(fp32_dot, "*fp32, *fp32, *fp32, *fp32, 64, 64, 32, 'bf16x6'", arch,
                        tmp_path)  # fmt: skip
    # Triton's test of these precisions looks for bf16 tensor-core dots in the PTX.
    bf16_mma = r"mma\S*\.sync\.aligned\.m\d+n\d+k16(\.row\.col)?\.f32\.bf16\.bf16"
    assert re.search(bf16_mma, compiled.ptx)
