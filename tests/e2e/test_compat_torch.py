"""torch tensors on the emulator, as Triton's interpreter takes them.

bf16 and fp8 tensors, tensors that require grad, CUDA tensors (copied to
the host and back) and ``triton.reinterpret``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl

torch = pytest.importorskip("torch")


@triton.jit
def double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * 2, mask=offs < n)


def test_bf16_tensors() -> None:
    x = torch.linspace(-3, 3, 100, dtype=torch.bfloat16)
    y = torch.zeros(100, dtype=torch.bfloat16)
    double[(4,)](x, y, 100, BLOCK=32, backend="emulator")
    assert torch.equal(y, x * 2)


def test_tensor_that_requires_grad() -> None:
    x = torch.randn(50, requires_grad=True)
    y = torch.zeros(50)
    double[(2,)](x, y, 50, BLOCK=32, backend="emulator")
    assert torch.equal(y, x.detach() * 2)


def test_torch_view_with_an_offset_keeps_its_memory() -> None:
    base = torch.zeros(4, 8)
    x = torch.arange(1, 9, dtype=torch.float32)
    double[(1,)](x, base[2], 8, BLOCK=8, backend="emulator")
    assert torch.equal(base[2], x * 2)
    assert int((base != 0).sum()) == 8  # nothing written outside row 2


def test_reinterpret_reads_the_bits_as_another_type() -> None:
    x = torch.tensor([1.0, -2.5, 3.0], dtype=torch.float32)
    y = torch.zeros(3, dtype=torch.int32)
    double[(1,)](triton.reinterpret(x, tl.int32), y, 3, BLOCK=4, backend="emulator")
    assert torch.equal(y, x.view(torch.int32) * 2)


def test_reinterpret_on_numpy_and_a_wrong_size() -> None:
    x = np.array([1, 2, 250], dtype=np.uint8)
    y = np.zeros(3, dtype=np.int8)
    double[(1,)](triton.reinterpret(x, tl.int8), y, 3, BLOCK=4, backend="emulator")
    np.testing.assert_array_equal(y, (x.view(np.int8) * 2).astype(np.int8))
    with pytest.raises(ValueError, match="16 bits"):
        triton.reinterpret(x, tl.float16)


class FakeDevice:
    """A stand-in for ``torch.device("cuda")`` (this test needs no GPU)."""

    type = "cuda"


class FakeCudaTensor:
    """Behaves like a CUDA tensor for the emulator: its data is reachable only via .cpu()."""

    def __init__(self, data: Any) -> None:
        self.data = data
        self.dtype = data.dtype
        self.shape = data.shape
        self.device = FakeDevice()

    def data_ptr(self) -> int:
        return int(self.data.data_ptr())

    def detach(self) -> FakeCudaTensor:
        return self

    def cpu(self) -> Any:
        return self.data.clone()  # a copy, as from a device

    def numpy(self) -> Any:
        raise TypeError("can't convert cuda tensor to numpy")

    def copy_(self, host: Any) -> None:
        self.data.copy_(host)


def test_cuda_tensors_are_copied_to_the_host_and_back() -> None:
    x = FakeCudaTensor(torch.arange(40, dtype=torch.float32))
    y = FakeCudaTensor(torch.zeros(40))
    double[(2,)](x, y, 40, BLOCK=32, backend="emulator")
    assert torch.equal(y.data, torch.arange(40, dtype=torch.float32) * 2)


@pytest.mark.gpu
def test_real_cuda_tensors_on_the_emulator() -> None:
    x = torch.randn(70, device="cuda")
    y = torch.zeros(70, device="cuda")
    double[(3,)](x, y, 70, BLOCK=32, backend="emulator")
    assert torch.equal(y, x * 2)


@triton.jit
def fp8_round_trip(x_ptr, f32_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(f32_ptr + offs, x.to(tl.float32), mask=offs < n)
    tl.store(y_ptr + offs, (x.to(tl.float32) * 3.0).to(y_ptr.dtype.element_ty), mask=offs < n)


@pytest.mark.parametrize("name", ["float8_e5m2", "float8_e4m3fn"])
def test_fp8_tensors_decode_and_round_like_torch(name: str) -> None:
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
    gen = torch.Generator().manual_seed(2)
    a = torch.randn(16, 16, generator=gen).to(torch.float8_e5m2)
    b = torch.randn(16, 16, generator=gen).to(torch.float8_e5m2)
    c = torch.zeros(16, 16)
    fp8_dot[(1,)](a, b, c, M=16, backend="emulator")
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-6, atol=1e-6)


def test_fp8_on_the_gpu_backend_is_a_located_error() -> None:
    from minitriton.backend.compiler import compile_ir
    from minitriton.diagnostics import CompileError

    x = torch.zeros(8, dtype=torch.float8_e5m2)
    compiled = fp8_round_trip.warmup(x, torch.zeros(8), x, 8, BLOCK=8, grid=(1,))
    with pytest.raises(CompileError, match="fp8e5 is not supported on the GPU backend yet"):
        compile_ir(compiled.module)
