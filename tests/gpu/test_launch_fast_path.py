"""The launch fast path: ``kernel[grid](...)`` with CUDA tensors, after the first launch.

The first launch of a specialization takes the full path (bind, specialize,
compile) and leaves an entry in ``kernel._fast``; later launches with
arguments that specialize the same way go through that entry. These tests
check that the fast path computes the same results, recompiles when the
specialization changes, and steps aside for anything it does not handle.
Skipped without a GPU or PyTorch.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.backend import gpu_available

torch = pytest.importorskip("torch")
jit_module = importlib.import_module("minitriton.jit")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu_available(), reason="needs an NVIDIA GPU and cuda-python"),
]


@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr = 256):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, alpha * x + y, mask=mask)


@pytest.fixture(autouse=True)
def fresh_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jit_module, "_selected_backend", None)
    monkeypatch.delenv("MINITRITON_BACKEND", raising=False)
    axpy_kernel.cache.clear()
    axpy_kernel.compile_count = 0


def _tensors(n: int) -> tuple:
    gen = torch.Generator(device="cuda").manual_seed(n)
    x = torch.randn(n + 64, device="cuda", generator=gen)
    y = torch.randn(n + 64, device="cuda", generator=gen)
    return x, y, torch.zeros_like(x)


def _grid(n: int, block: int = 256) -> tuple[int]:
    return (triton.cdiv(n, block),)


def test_repeated_launches_reuse_the_entry_and_stay_correct():
    x, y, out = _tensors(5000)
    for n, alpha in ((5000, 2.0), (4099, -0.5), (17, 3.0), (5000, 0.25)):
        out.zero_()
        axpy_kernel[_grid(n)](x, y, out, alpha, n, backend="gpu")
        torch.cuda.synchronize()
        want = alpha * x[:n] + y[:n]
        torch.testing.assert_close(out[:n], want, rtol=1e-6, atol=1e-6)
        assert torch.all(out[n:] == 0), "masked-off lanes were written"
    assert axpy_kernel.compile_count == 1  # 5000, 4099 and 17: i32, not 1, not all % 16
    assert len(axpy_kernel._fast.entries) >= 1


def test_a_new_specialization_recompiles():
    x, y, out = _tensors(4096)
    axpy_kernel[_grid(4096)](x, y, out, 1.0, 4096, backend="gpu")
    axpy_kernel[_grid(4096)](x, y, out, 1.0, 4096, backend="gpu")
    assert axpy_kernel.compile_count == 1
    # Misaligned pointers, n divisible by 16 or not, another BLOCK: each compiles anew.
    xs, ys, outs = x[1:], y[1:], out[1:]
    axpy_kernel[_grid(4000)](xs, ys, outs, 1.0, 4000, backend="gpu")
    axpy_kernel[_grid(4001)](x, y, out, 1.0, 4001, backend="gpu")
    axpy_kernel[_grid(4001, 128)](x, y, out, 1.0, 4001, BLOCK=128, backend="gpu")
    assert axpy_kernel.compile_count == 4
    torch.cuda.synchronize()
    torch.testing.assert_close(out[:4001], x[:4001] + y[:4001])
    torch.testing.assert_close(outs[:4000], xs[:4000] + ys[:4000])


def test_callable_grid_sees_the_arguments():
    x, y, out = _tensors(3000)
    seen = []

    def grid(meta: dict) -> tuple[int]:
        seen.append((meta["n"], meta["BLOCK"]))
        return (triton.cdiv(meta["n"], meta["BLOCK"]),)

    for n in (3000, 2999):
        axpy_kernel[grid](x, y, out, 1.0, n, backend="gpu")
    torch.cuda.synchronize()
    assert seen == [(3000, 256), (2999, 256)]
    torch.testing.assert_close(out[:3000], x[:3000] + y[:3000])


def test_numpy_arguments_still_take_the_full_path():
    x, y, out = _tensors(1000)
    axpy_kernel[_grid(1000)](x, y, out, 1.0, 1000, backend="gpu")
    xn, yn = x.cpu().numpy(), y.cpu().numpy()
    outn = np.zeros_like(xn)
    axpy_kernel[_grid(1000)](xn, yn, outn, 1.0, 1000, backend="gpu")
    np.testing.assert_allclose(outn[:1000], xn[:1000] + yn[:1000], rtol=1e-6)


def test_a_cpu_tensor_is_refused_after_a_cuda_launch():
    x, y, out = _tensors(1000)
    axpy_kernel[_grid(1000)](x, y, out, 1.0, 1000, backend="gpu")
    with pytest.raises(
        TypeError, match=r"argument 'x_ptr' is a tensor on the cpu device.*x_ptr.cuda"
    ):
        axpy_kernel[_grid(1000)](x.cpu(), y, out, 1.0, 1000, backend="gpu")


def test_switching_the_backend_leaves_the_fast_path():
    x, y, out = _tensors(1000)
    axpy_kernel[_grid(1000)](x, y, out, 1.0, 1000)  # default backend: the GPU
    triton.set_backend("emulator")
    try:
        # The emulator copies CUDA tensors to the host and back, as Triton's interpreter does.
        compiled = axpy_kernel[_grid(1000)](x, y, out, 2.0, 1000)
        assert compiled.binary is None  # no GPU kernel: the emulator ran it
    finally:
        triton.set_backend(None)
    torch.testing.assert_close(out[:1000], 2.0 * x[:1000] + y[:1000])


@pytest.mark.parametrize("impl", ["ctypes", "bindings"])
def test_both_ways_of_calling_cuLaunchKernel(impl: str):
    x, y, out = _tensors(2048)
    compiled = axpy_kernel[_grid(2048)](x, y, out, 1.0, 2048, backend="gpu")
    launcher = compiled.binary.load()
    before = launcher.impl
    try:
        if launcher.use(impl) != impl:
            pytest.skip(f"{impl} launches are not available here")
        out.zero_()
        axpy_kernel[_grid(2048)](x, y, out, 3.0, 2048, backend="gpu")
        torch.cuda.synchronize()
        torch.testing.assert_close(out[:2048], 3.0 * x[:2048] + y[:2048])
    finally:
        launcher.use(before)


@triton.jit
def scale_tiles_kernel(in_desc, out_desc, factor, BM: tl.constexpr, BN: tl.constexpr):
    # Each program scales one tile, read and written through host descriptors.
    row = tl.program_id(0) * BM
    col = tl.program_id(1) * BN
    tile = in_desc.load([row, col])
    out_desc.store([row, col], tile * factor)


def _scale(x, factor: float) -> torch.Tensor:
    from minitriton.tools.tensor_descriptor import TensorDescriptor

    out = torch.full_like(x, float("nan"))
    grid = (triton.cdiv(x.shape[0], 32), triton.cdiv(x.shape[1], 64))
    descs = [TensorDescriptor.from_tensor(t, [32, 64]) for t in (x, out)]
    scale_tiles_kernel[grid](*descs, factor, 32, 64, backend="gpu")
    return out


def test_descriptor_launches_take_the_fast_path_with_fresh_fields():
    # The same layout with new tensors, sizes and factors: one compile, one fast entry, and
    # each launch reads its own descriptors' base, sizes and strides.
    scale_tiles_kernel.cache.clear()
    scale_tiles_kernel.compile_count = 0
    for rows, cols, factor in ((96, 128, 2.0), (64, 192, -1.5), (160, 64, 0.5)):
        x = torch.randn(rows, cols, device="cuda")
        out = _scale(x, factor)
        torch.cuda.synchronize()
        torch.testing.assert_close(out, x * factor)
    assert scale_tiles_kernel.compile_count == 1
    assert len(scale_tiles_kernel._fast.entries) == 1
    # Sizes that are not multiples of 16 specialize anew (and are clipped at the edges).
    x = torch.randn(50, 72, device="cuda")
    torch.testing.assert_close(_scale(x, 3.0), x * 3.0)
    assert scale_tiles_kernel.compile_count == 2
