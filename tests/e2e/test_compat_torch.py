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
pytestmark = pytest.mark.torch


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


def test_a_reinterpreted_tensor_has_tritons_tensor_methods() -> None:
    """Triton's tests make outputs from inputs: ``out = inp.new_empty(...)``, ``.clone()``."""
    x = triton.reinterpret(torch.tensor([1, 2, 250], dtype=torch.uint8), tl.int8)
    out = x.new_empty((3,))
    assert out.dtype == tl.int8 and out.shape == (3,) and out.element_size() == 1
    double[(1,)](x, out, 3, BLOCK=4, backend="emulator")
    assert out.base.view(torch.int8).tolist() == [2, 4, -12]
    copy = out.clone()
    out.copy_(x)
    assert copy.base.view(torch.int8).tolist() == [2, 4, -12]  # a copy, not a view
    assert out.cpu().base.tolist() == [1, 2, 250] and torch.equal(out.data, out.base)
    assert str(out).startswith("TensorWrapper[int8]")
    numpy_out = triton.reinterpret(np.zeros(3, np.uint8), tl.int8).new_empty((2, 3))
    assert numpy_out.shape == (2, 3) and numpy_out.base.dtype == np.uint8


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
