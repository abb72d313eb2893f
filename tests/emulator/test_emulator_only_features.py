"""fp8 and batched ``tl.dot`` on the emulator, and what the GPU backend makes of them.

Each feature is tested on the emulator here; the GPU backend is tested to
compile it (the GPU runs are in ``tests/gpu/test_fp8_batched_gpu.py``), and
to reject, with a located diagnostic, the one thing an arch cannot do:
rounding to fp8e4nv before sm_89.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.backend.build import compile_ir
from minitriton.diagnostics import CompileError
from minitriton.emulator.tf32 import truncate_to_tf32

# ---------------------------------------------------------------- batched dot


@triton.jit
def batched_dot(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, K: tl.constexpr):
    bi = tl.arange(0, B)[:, None, None]
    mi = tl.arange(0, M)[None, :, None]
    ki = tl.arange(0, K)[None, None, :]
    a = tl.load(a_ptr + bi * M * K + mi * K + ki)
    kj = tl.arange(0, K)[None, :, None]
    b = tl.load(b_ptr + bi * K * M + kj * M + tl.arange(0, M)[None, None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + bi * M * M + mi * M + tl.arange(0, M)[None, None, :], c)


def test_batched_dot_on_the_emulator() -> None:
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 16, 32), dtype=np.float32)
    b = rng.standard_normal((2, 32, 16), dtype=np.float32)
    c = np.zeros((2, 16, 16), dtype=np.float32)
    batched_dot[(1,)](a, b, c, B=2, M=16, K=32, backend="emulator")
    # fp32 inputs: tl.dot's default precision is TF32; the tensor cores truncate both inputs.
    expected = truncate_to_tf32(a).astype(np.float64) @ truncate_to_tf32(b).astype(np.float64)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
    assert not np.allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_batched_dot_compiles_for_the_gpu_with_tf32_inputs() -> None:
    a = np.zeros((2, 16, 32), dtype=np.float32)
    compiled = batched_dot.warmup(a, a, a, B=2, M=16, K=32, grid=(1,), backend="emulator")
    ptx = compile_ir(compiled.module, "sm_80").ptx
    assert "-8192;" in ptx and "fma.rn.f32" in ptx and "cvt.rna" not in ptx  # low 13 bits cut
    assert "-8192;" not in compile_ir(compiled.module, "sm_75").ptx  # no TF32 before sm_80


# ---------------------------------------------------------------- fp8


@triton.jit
def fp8_round_trip(x_ptr, f32_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(f32_ptr + offs, x.to(tl.float32), mask=offs < n)
    tl.store(y_ptr + offs, (x.to(tl.float32) * 3.0).to(y_ptr.dtype.element_ty), mask=offs < n)


@pytest.mark.parametrize("name", ["float8_e5m2", "float8_e4m3fn"])
def test_fp8_tensors_decode_and_round_like_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    dtype = getattr(torch, name)
    x = (torch.randn(100, generator=torch.Generator().manual_seed(1)) * 20).to(dtype)
    f32 = torch.zeros(100)
    y = torch.zeros(100, dtype=dtype)
    fp8_round_trip[(1,)](x, f32, y, 100, BLOCK=128, backend="emulator")
    assert torch.equal(f32, x.float())
    limit = torch.finfo(dtype).max
    expected = (x.float() * 3).clamp(-limit, limit).to(dtype)  # the GPU saturates
    assert torch.equal(y.view(torch.uint8), expected.view(torch.uint8))


@triton.jit
def fp8_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr):
    offs = tl.arange(0, M)
    a = tl.load(a_ptr + offs[:, None] * M + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * M + offs[None, :])
    tl.store(c_ptr + offs[:, None] * M + offs[None, :], tl.dot(a, b))


def test_fp8_dot_accumulates_in_fp32() -> None:
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(2)
    a = torch.randn(16, 16, generator=gen).to(torch.float8_e5m2)
    b = torch.randn(16, 16, generator=gen).to(torch.float8_e5m2)
    c = torch.zeros(16, 16)
    fp8_dot[(1,)](a, b, c, M=16, backend="emulator")
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-6, atol=1e-6)


def fp8_zeros(*shape: int):  # noqa: ANN201 (a reinterpreted array)
    return triton.reinterpret(np.zeros(shape, np.uint8), tl.float8e5)


def test_rounding_to_fp8e4nv_before_sm89_is_a_located_error() -> None:
    x = triton.reinterpret(np.zeros(8, np.uint8), tl.float8e4nv)
    compiled = fp8_round_trip.warmup(x, np.zeros(8, np.float32), x, 8, BLOCK=8, grid=(1,))
    with pytest.raises(CompileError, match="converting to fp8e4nv on the GPU needs sm_89") as info:
        compile_ir(compiled.module, "sm_80")
    text = str(info.value)
    assert "test_emulator_only_features.py:63:" in text and "^" in text and "arch='sm_89'" in text
    assert "cvt.rn.satfinite.e4m3x2.f32" in compile_ir(compiled.module, "sm_89").ptx
    # f8e5 rounds in software before sm_89, as in Triton (tests/backend/test_fp8_soft.py)
    e5 = fp8_zeros(8)
    compiled = fp8_round_trip.warmup(e5, np.zeros(8, np.float32), e5, 8, BLOCK=8, grid=(1,))
    assert "cvt.rn.satfinite" not in compile_ir(compiled.module, "sm_80").ptx
    assert "cvt.rn.satfinite.e5m2x2.f32" in compile_ir(compiled.module, "sm_89").ptx


@pytest.mark.parametrize(("arch", "instruction"), [
    ("sm_90a", "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2"),
    ("sm_89", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32"),
    ("sm_80", "fma.rn.f32"),  # no fp8 tensor cores: exact decoding, FMA
])  # fmt: skip
def test_fp8_dot_takes_each_archs_best_path(arch: str, instruction: str) -> None:
    x = fp8_zeros(64, 64)
    compiled = fp8_dot.warmup(x, x, np.zeros((64, 64), np.float32), M=64, grid=(1,))
    assert instruction in compile_ir(compiled.module, arch).ptx
