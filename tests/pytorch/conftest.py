"""Fixtures for the PyTorch tests: which backend and which torch device a test runs on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import minitriton as triton

#: (backend, torch device): the emulator on CPU tensors; the GPU on CUDA tensors.
BACKENDS = [
    pytest.param(("emulator", "cpu"), id="emulator"),
    pytest.param(("gpu", "cuda"), id="gpu", marks=pytest.mark.gpu),
]


@pytest.fixture(params=BACKENDS)
def device(request: pytest.FixtureRequest) -> Iterator[str]:
    """The torch device for this test's tensors; kernels launch on the matching backend."""
    backend, torch_device = request.param
    triton.set_backend(backend)
    try:
        yield torch_device
    finally:
        triton.set_backend(None)
