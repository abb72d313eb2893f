"""Which stream a GPU launch runs on, and the checks made before it (no GPU needed).

Tensors here are CPU tensors or stand-ins that report a CUDA device; the stream
lookup is replaced by a recording function. tests/gpu/test_torch_streams.py runs
the same paths on a GPU, under CUDA graph capture and on side streams.
"""

from __future__ import annotations

import ctypes
import importlib
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton import streams
from minitriton.launch_checks import LaunchError, LaunchTypeError

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
jit_module = importlib.import_module("minitriton.jit")


class CudaStandIn:
    """What the launch path reads of a CUDA tensor on device ``index``."""

    def __init__(self, index: int, ptr: int = 4096) -> None:
        self.index, self.ptr = index, ptr
        self.device = SimpleNamespace(type="cuda", index=index)
        self.dtype = torch.float32
        self.is_cuda = True

    def get_device(self) -> int:
        return self.index

    def data_ptr(self) -> int:
        return self.ptr

    def detach(self) -> CudaStandIn:
        return self

    def cpu(self) -> Any:
        raise AssertionError("the GPU path must not copy a CUDA tensor to the host")

    def numpy(self) -> Any:
        raise AssertionError("the GPU path must not read a CUDA tensor on the host")


def pairs(**values: Any) -> list[tuple[Any, Any]]:
    """``(spec, value)`` pairs as a launch makes them."""
    out = []
    for name, value in values.items():
        spec = SimpleNamespace(name=name, kind="scalar" if isinstance(value, int) else "pointer")
        out.append((spec, value))
    return out


@pytest.fixture
def torch_stream(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """torch's current stream is 0xABC; each lookup records its device."""
    asked: list[int] = []

    def lookup(device: int) -> int:
        asked.append(device)
        return 0xABC

    monkeypatch.setattr(streams, "_lookup", [lookup])
    return asked


# ---------------------------------------------------------------- picking the stream


def test_torch_tensors_run_on_torchs_current_stream(torch_stream: list[int]) -> None:
    got = streams.launch_stream("k", pairs(x=CudaStandIn(0), n=5))
    assert got == 0xABC and torch_stream == [0]


def test_an_explicit_stream_wins(torch_stream: list[int]) -> None:
    s = SimpleNamespace(cuda_stream=0x1234)  # what a torch.cuda.Stream offers
    assert streams.launch_stream("k", pairs(x=CudaStandIn(0)), s) == 0x1234
    assert streams.launch_stream("k", pairs(x=CudaStandIn(0)), 77) == 77
    assert torch_stream == []
    with pytest.raises(LaunchTypeError, match="stream='fast': expected a torch.cuda.Stream"):
        streams.launch_stream("k", pairs(x=CudaStandIn(0)), "fast")


def test_other_arrays_keep_the_legacy_default_stream(torch_stream: list[int]) -> None:
    assert streams.launch_stream("k", pairs(x=np.zeros(4, np.float32), n=4)) is None
    assert torch_stream == []


def test_the_lookup_is_torchs_c_function_found_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams, "_lookup", [])
    found = streams.current_stream_function()
    assert found is torch._C._cuda_getCurrentRawStream
    assert streams._lookup == [found]


def test_importing_minitriton_does_not_import_torch() -> None:
    code = (
        "import sys, minitriton, minitriton.streams, minitriton.resources, minitriton.jit\n"
        "assert minitriton.streams.current_stream_function() is None\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# ---------------------------------------------------------------- bad tensors


def test_a_cpu_tensor_on_the_gpu_backend_names_the_argument_and_the_fix() -> None:
    with pytest.raises(LaunchTypeError) as info:
        streams.launch_stream("add", pairs(x=CudaStandIn(0), y=torch.zeros(4)))
    text = str(info.value)
    assert "kernel 'add': argument 'y' is a tensor on the cpu device" in text
    assert "pass y.cuda()" in text and "backend='emulator'" in text


def test_tensors_on_different_devices_are_named() -> None:
    with pytest.raises(LaunchError) as info:
        streams.launch_stream("add", pairs(x=CudaStandIn(0), y=CudaStandIn(1), out=CudaStandIn(0)))
    assert str(info.value).startswith(
        "kernel 'add': its tensor arguments are on different devices "
        "('x' on cuda:0, 'y' on cuda:1, 'out' on cuda:0)"
    )


def test_tensors_on_another_device_than_the_backends_are_refused() -> None:
    with pytest.raises(LaunchError, match="argument 'x' is on cuda:1; .* runs on cuda:0"):
        streams.launch_stream("add", pairs(x=CudaStandIn(1), y=CudaStandIn(1)))


# ---------------------------------------------------------------- CUDA graph capture


def test_launches_that_capture_cannot_record_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams, "capturing", lambda stream=None: True)
    host = pairs(x=CudaStandIn(0), y=np.zeros(4, np.float32))
    with pytest.raises(LaunchError, match="argument 'y' is a NumPy array, which is copied"):
        streams.check_capturable("k", host, debug=False, stream=0xABC)
    with pytest.raises(LaunchError, match="compiled with debug=True.*launch it outside"):
        streams.check_capturable("k", pairs(x=CudaStandIn(0)), debug=True, stream=0xABC)
    streams.check_capturable("k", pairs(x=CudaStandIn(0), n=3), debug=False, stream=0xABC)
    with pytest.raises(LaunchError, match="runs on the emulator, which copies CUDA tensors"):
        streams.check_emulator_capture("k")


def test_nothing_is_capturing_without_cuda() -> None:
    assert streams.capturing() is False  # torch is imported, but has not initialized CUDA
    streams.check_capturable("k", pairs(y=np.zeros(4, np.float32)), debug=True, stream=None)


# ---------------------------------------------------------------- the fast path


class FakeLauncher:
    """A loaded kernel taking ``(ptr, i32)``; records each launch's stream."""

    def __init__(self) -> None:
        self.kinds = ["ptr", "i32"]
        self.slots = [ctypes.c_uint64(), ctypes.c_int32()]
        self.streams: list[Any] = []

    def launch_raw(self, gx: int, gy: int, gz: int, stream: Any = None) -> None:
        self.streams.append(stream)


def fast_entry() -> Any:
    compiled = SimpleNamespace(binary=SimpleNamespace(checks=None))
    return jit_module._FastEntry(compiled, FakeLauncher(), [0, 1])


def test_the_fast_path_asks_torch_for_the_stream_at_each_launch(torch_stream: list[int]) -> None:
    entry = fast_entry()
    assert entry.launch((1, 1, 1), (CudaStandIn(0, ptr=8192), 7))
    assert entry.launch((1, 1, 1), (CudaStandIn(0), 7))
    assert entry.launcher.streams == [0xABC, 0xABC] and torch_stream == [0, 0]
    assert entry.launcher.slots[0].value == 4096 and entry.launcher.slots[1].value == 7


def test_the_fast_path_keeps_an_explicit_stream(torch_stream: list[int]) -> None:
    entry = fast_entry()
    entry.stream, entry.current = 0x55, None
    assert entry.launch((1, 1, 1), (CudaStandIn(0), 7))
    assert entry.launcher.streams == [0x55] and torch_stream == []


def test_the_fast_path_leaves_cpu_and_other_device_tensors_to_the_full_path(
    torch_stream: list[int],
) -> None:
    entry = fast_entry()
    assert not entry.launch((1, 1, 1), (torch.zeros(4), 7))
    assert not entry.launch((1, 1, 1), (CudaStandIn(1), 7))
    assert entry.launcher.streams == []


@triton.jit
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


@triton.jit
def add_stream(x_ptr, stream, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + stream)


def test_the_emulator_accepts_stream_and_a_parameter_may_be_named_stream() -> None:
    x = torch.zeros(8)
    add_one[(1,)](x, 8, BLOCK=8, stream=0x1234, backend="emulator")
    add_stream[(1,)](x, 5, BLOCK=8, backend="emulator")
    assert x.tolist() == [6.0] * 8


# ---------------------------------------------------------------- through kernel[grid](...)


class FakeBinary:
    """A loaded GPU kernel that launches nothing: records each launch's arguments and stream."""

    def __init__(self) -> None:
        self.launcher = FakeLauncher()
        self.launcher.kinds, self.launcher.slots = ["ptr"], [ctypes.c_uint64()]
        self.full_launches: list[tuple[list[Any], Any]] = []
        self.checks = None

    def launch(self, grid: Any, args: list[Any], stream: Any = None) -> None:
        self.full_launches.append((list(args), stream))

    def load(self) -> FakeLauncher:
        return self.launcher


@pytest.fixture
def fake_gpu(
    monkeypatch: pytest.MonkeyPatch, torch_stream: list[int], fast_paths: None
) -> FakeBinary:
    """``add_one`` compiles to a :class:`FakeBinary` on a GPU that is not there.

    The launch fast path is on, even in a run with ``MINITRITON_EMULATOR_PLAIN=1``.
    """
    binary = FakeBinary()

    def compile_kernel(src: Any, specs: Any, options: Any, stop_after: str = "ir-opt") -> Any:
        arg = SimpleNamespace(name_hint="x_ptr")
        module = SimpleNamespace(kernel=SimpleNamespace(body=SimpleNamespace(args=[arg])))
        specs = [s for s in specs if s.name != "n"]  # a one-argument kernel: x_ptr only
        return jit_module.CompiledKernel(src.name, module, specs, {}, options, binary=binary)

    monkeypatch.setattr(jit_module, "compile_kernel", compile_kernel)
    monkeypatch.setattr(jit_module, "gpu_available", lambda: True)
    monkeypatch.setattr(jit_module, "_device_arch", lambda: "sm_90")
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    add_one.cache.clear()
    return binary


def test_a_launch_goes_to_torchs_stream_then_through_the_fast_path(fake_gpu: FakeBinary) -> None:
    x = CudaStandIn(0)
    add_one[(1,)](x, 8, BLOCK=8, backend="gpu")  # the full path: it makes the fast entry
    add_one[(1,)](x, 8, BLOCK=8, backend="gpu")
    assert fake_gpu.full_launches == [([x], 0xABC)]
    assert fake_gpu.launcher.streams == [0xABC]


class StreamStandIn:
    """What a launch reads of a ``torch.cuda.Stream``: its handle (and it is hashable)."""

    cuda_stream = 0x77


@pytest.mark.parametrize("stream", [0x77, StreamStandIn()], ids=["handle", "stream object"])
def test_stream_reaches_both_paths(fake_gpu: FakeBinary, stream: Any) -> None:
    x = CudaStandIn(0)
    for _ in range(2):
        add_one[(1,)](x, 8, BLOCK=8, backend="gpu", stream=stream)
    assert fake_gpu.full_launches == [([x], 0x77)] and fake_gpu.launcher.streams == [0x77]


def test_a_cpu_tensor_after_a_cuda_launch_is_refused_by_name(fake_gpu: FakeBinary) -> None:
    add_one[(1,)](CudaStandIn(0), 8, BLOCK=8, backend="gpu")
    with pytest.raises(LaunchTypeError, match=r"argument 'x_ptr' is a tensor on the cpu device"):
        add_one[(1,)](torch.zeros(8), 8, BLOCK=8, backend="gpu")
    assert len(fake_gpu.full_launches) == 1 and fake_gpu.launcher.streams == []
