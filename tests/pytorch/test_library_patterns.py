"""Kernels written for Triton by a library run unchanged (``import triton`` aliased).

``triton_style_library`` uses libdevice by both import paths and
``triton.language.math``, the device's SM count from
``triton.runtime.driver.active``, ``torch.cuda.device_count()`` host code and
a ``torch.autograd.Function``; here it runs on the emulator (CPU tensors)
and, with the ``gpu`` marker, on the GPU.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from minitriton.compat import alias_triton
from minitriton.runtime.driver import EMULATED_PROPERTIES

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _triton_modules() -> dict[str, Any]:
    return {n: m for n, m in sys.modules.items() if n == "triton" or n.startswith("triton.")}


@pytest.fixture
def library() -> Iterator[ModuleType]:
    """The library, imported while ``triton`` is aliased to MiniTriton.

    The alias is undone right after the import: torch's own compiler imports
    ``triton`` for itself and must not find MiniTriton there.
    """
    saved = _triton_modules()
    try:
        alias_triton()
        module = importlib.import_module("triton_style_library")
        aliased = module.triton
    finally:
        for name in _triton_modules():
            del sys.modules[name]
        sys.modules.update(saved)
    assert aliased.__name__ == "minitriton"
    try:
        yield module
    finally:
        sys.modules.pop("triton_style_library", None)


def test_forward_and_backward_match_torch(library: Any, device: str) -> None:
    x = torch.linspace(-4, 4, 1000, device=device, requires_grad=True)
    y = library.gelu(x)
    y.backward(torch.cos(x.detach()))
    ref = x.detach().clone().requires_grad_()
    torch.nn.functional.gelu(ref).backward(torch.cos(ref.detach()))
    torch.testing.assert_close(y, torch.nn.functional.gelu(ref.detach()))
    torch.testing.assert_close(x.grad, ref.grad)


def test_gradcheck_fp64_on_the_emulator(library: Any) -> None:
    import minitriton

    minitriton.set_backend("emulator")
    try:
        x = torch.randn(70, dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradcheck(library.gelu, (x,))
    finally:
        minitriton.set_backend(None)


def test_grid_sized_from_the_device_properties(library: Any, device: str) -> None:
    triton = library.triton
    props = triton.runtime.driver.active.utils.get_device_properties(
        triton.runtime.driver.active.get_current_device()
    )
    sms = library.num_sms(torch.empty(0, device=device).device)
    assert sms == props["multiprocessor_count"] > 0
    if device == "cpu" and not torch.cuda.is_available():
        assert props == EMULATED_PROPERTIES  # the emulated H200's
        assert torch.cuda.device_count() == 0  # a CPU build of torch: host code takes the driver's
    # More tiles than SMs: each persistent program does several.
    n = (sms + 3) * library.BLOCK + 5
    x = torch.randn(n, device=device)
    torch.testing.assert_close(library.gelu(x), torch.nn.functional.gelu(x))


def test_library_under_torch_compile(library: Any, device: str) -> None:
    torch._dynamo.reset()

    def block(x: Any) -> Any:
        return library.gelu(x * 2).sum()

    x = torch.randn(300, device=device, requires_grad=True)
    loss = torch.compile(block, backend="aot_eager")(x)
    loss.backward()
    ref = x.detach().clone().requires_grad_()
    torch.nn.functional.gelu(ref * 2).sum().backward()
    torch.testing.assert_close(loss, torch.nn.functional.gelu(ref.detach() * 2).sum())
    torch.testing.assert_close(x.grad, ref.grad)
