"""GPU launches from a thread other than the one that made the first launch.

A CUDA context is current per thread. The first launch makes the primary
context current in its own thread; a later launch from another thread must
make it current there as well: when it copies NumPy arguments, when it is
given device arrays, and on the fast path for CUDA tensors, where the launch
itself is the thread's first driver call. Skipped without a GPU.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.backend import DeviceArray, debug_mode, gpu_available, synchronize
from minitriton.emulator.errors import DeviceCheckError

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu_available(), reason="needs an NVIDIA GPU and cuda-python"),
]

N = 1000


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 3.0, mask=mask)


def in_new_thread(work: Callable[[], Any]) -> Any:
    """``work()`` run in a fresh thread; its result, or its exception raised here."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = work()
        except BaseException as e:  # re-raised in the test's thread
            box["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("result")


def launch(x: Any, out: Any) -> None:
    scale_kernel[(triton.cdiv(N, 256),)](x, out, N, BLOCK=256, backend="gpu")


def test_numpy_arguments_from_another_thread() -> None:
    x = np.arange(N, dtype=np.float32)
    out = np.zeros_like(x)
    launch(x, out)  # the first launch, in this thread
    np.testing.assert_array_equal(out, 3 * x)
    out2 = np.zeros_like(x)
    in_new_thread(lambda: launch(x, out2))
    np.testing.assert_array_equal(out2, 3 * x)


def test_device_arrays_from_another_thread() -> None:  # the full launch path
    x = np.arange(N, dtype=np.float32)
    dx, dout = DeviceArray.from_numpy(x), DeviceArray.from_numpy(np.zeros_like(x))
    launch(dx, dout)  # compiled and loaded in this thread
    dout2 = DeviceArray.from_numpy(np.zeros_like(x))

    def work() -> None:
        launch(dx, dout2)
        synchronize()

    in_new_thread(work)
    np.testing.assert_array_equal(dout2.to_numpy(), 3 * x)


def test_torch_tensors_from_another_thread_take_the_fast_path() -> None:
    torch = pytest.importorskip("torch")
    x = torch.arange(N, dtype=torch.float32, device="cuda")
    out, out2 = torch.zeros_like(x), torch.zeros_like(x)
    launch(x, out)  # the first launch: compiled, and remembered by the fast path
    torch.cuda.synchronize()
    # The thread touches neither torch nor the driver before the launch.
    in_new_thread(lambda: launch(x, out2))
    torch.cuda.synchronize()
    assert torch.equal(out2, 3 * x) and torch.equal(out, 3 * x)


def test_copying_a_device_array_back_from_another_thread() -> None:
    x = np.arange(N, dtype=np.float32)
    dx = DeviceArray.from_numpy(x)  # made in this thread
    np.testing.assert_array_equal(in_new_thread(dx.to_numpy), x)  # the thread's only call


def test_deferred_debug_report_raised_in_another_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("MINITRITON_DEBUG", "async")
    x = torch.arange(N, dtype=torch.float32, device="cuda")
    out = torch.zeros_like(x)
    grid = (triton.cdiv(N, 256),)
    scale_kernel[grid](x, out, N, BLOCK=256, backend="gpu")  # checked, remembered
    scale_kernel[grid](x, out, N + 8, BLOCK=256, backend="gpu")  # reads past x: deferred
    # The thread's launch takes the fast path; reading the earlier launch's
    # record is the thread's first driver call, and raises its located error.
    with pytest.raises(DeviceCheckError, match="out-of-bounds tt.load from 'x_ptr'"):
        in_new_thread(lambda: scale_kernel[grid](x, out, N, BLOCK=256, backend="gpu"))
    monkeypatch.delenv("MINITRITON_DEBUG")
    synchronize()
    assert not debug_mode._in_flight
    in_new_thread(lambda: scale_kernel[grid](x, out, N, BLOCK=256, backend="gpu", debug=True))
    torch.cuda.synchronize()
    assert torch.equal(out, 3 * x)
