"""Which CUDA stream a GPU launch runs on, and the checks that go with it.

As in Triton, a launch with PyTorch CUDA tensors runs on torch's *current
stream* of their device (``torch.cuda.current_stream()``): work queued with
``with torch.cuda.stream(s):`` stays in order with the kernel, and a launch
inside ``torch.cuda.graph(g)`` capture is recorded into the graph. A launch
keyword ``stream=`` (an integer ``CUstream`` handle, or a ``torch.cuda.Stream``)
chooses the stream instead. Launches of other arrays (NumPy, ``DeviceArray``,
CuPy) run on the legacy default stream, unless ``stream=`` says otherwise.

The stream is looked up with torch's own C function
(``torch._C._cuda_getCurrentRawStream``, what Triton's launcher calls), found
once: this module never imports torch, it only uses it once the program has.

Checks made here, before anything reaches the driver (each a
:class:`~minitriton.launch_checks.LaunchError` that names the argument):

* a CPU tensor passed to the GPU backend (the fix: ``.cuda()``);
* CUDA tensors on different devices, or on another device than the one the
  GPU backend runs on (device 0);
* a launch that cannot be recorded while its stream is being captured into
  a CUDA graph: NumPy arguments (copied to and from the device, which waits
  for the GPU) and debug-mode launches (which wait to read their error
  record).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minitriton.launch_checks import BF16View, LaunchError, LaunchTypeError
from minitriton.torch_interop import TensorWrapper, is_torch_tensor

#: The device the GPU backend runs on (its CUDA context is that device's primary one).
DEVICE = 0

_lookup: list[Callable[[int], int]] = []


def current_stream_function() -> Callable[[int], int] | None:
    """torch's ``_cuda_getCurrentRawStream(device)``, or None while torch is not imported.

    Found once and kept: a launch calls it without any attribute lookup.
    """
    if _lookup:
        return _lookup[0]
    torch = sys.modules.get("torch")
    found = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
    if found is None:
        return None
    _lookup.append(found)
    return found


def torch_current_stream(device: int = DEVICE) -> int:
    """The handle of torch's current stream on ``device`` (0 without torch)."""
    lookup = current_stream_function()
    return int(lookup(device)) if lookup is not None else 0


def stream_handle(stream: Any) -> int:
    """An explicit ``stream=``: a ``torch.cuda.Stream`` (its ``cuda_stream``) or a handle."""
    handle = getattr(stream, "cuda_stream", None)
    try:
        return int(handle if handle is not None else stream)
    except (TypeError, ValueError):
        raise LaunchTypeError(
            f"stream={stream!r}: expected a torch.cuda.Stream or an integer CUstream handle"
        ) from None


def launch_stream(kernel: str, args: Sequence[tuple[Any, Any]], stream: Any = None) -> int | None:
    """The stream of a GPU launch of ``args`` (``(spec, value)`` pairs), after the checks.

    ``stream`` is the launch's ``stream=`` (None: not given). Returns a
    handle, or None for the legacy default stream.
    """
    tensors = [(spec.name, tensor_of(value)) for spec, value in args if _is_tensor(value)]
    check_devices(kernel, tensors)
    if stream is not None:
        return stream_handle(stream)
    if tensors:
        return torch_current_stream(DEVICE)
    return None


def _is_tensor(value: Any) -> bool:
    return is_torch_tensor(tensor_of(value))


def tensor_of(value: Any) -> Any:
    """The tensor under a :func:`~minitriton.torch_interop.reinterpret` wrapper."""
    return value.base if isinstance(value, TensorWrapper) else value


def check_devices(kernel: str, tensors: Sequence[tuple[str, Any]]) -> None:
    """Every tensor on CUDA device :data:`DEVICE`, or pinned on the host (one check per
    argument, named)."""
    from minitriton.backend.driver import pinned_host  # loaded by any GPU launch already

    tensors = [(name, tensor) for name, tensor in tensors if not pinned_host(tensor)]
    for name, tensor in tensors:
        if tensor.device.type != "cuda":
            raise LaunchTypeError(
                f"kernel '{kernel}': argument '{name}' is a tensor on the {tensor.device.type}"
                f" device; the GPU backend reads device memory: pass {name}.cuda() (or"
                f" {name}.pin_memory(), which the GPU reads in place), or run the launch on the"
                " emulator (backend='emulator')"
            )
    devices = {name: int(tensor.get_device()) for name, tensor in tensors}
    if len(set(devices.values())) > 1:
        where = ", ".join(f"'{n}' on cuda:{d}" for n, d in devices.items())
        raise LaunchError(
            f"kernel '{kernel}': its tensor arguments are on different devices ({where});"
            " move them to one device (x.to('cuda:0'))"
        )
    for name, device in devices.items():
        if device != DEVICE:
            raise LaunchError(
                f"kernel '{kernel}': argument '{name}' is on cuda:{device}; MiniTriton's GPU"
                f" backend runs on cuda:{DEVICE}: pass {name}.to('cuda:{DEVICE}')"
            )


# ------------------------------------------------------------------ CUDA graph capture


def capturing(stream: int | None = None) -> bool:
    """True while torch's current stream (or the driver's ``stream``) is being captured.

    Nothing is asked of torch unless it is imported and has initialized CUDA
    (no capture can be under way otherwise).
    """
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and cuda.is_initialized() and cuda.is_current_stream_capturing():
        return True
    return stream is not None and stream != 0 and _driver_capturing(stream)


def _driver_capturing(stream: int) -> bool:
    from minitriton.backend.driver import _cu, check

    cu = _cu()
    status = check(cu.cuStreamIsCapturing(cu.CUstream(stream)), "cuStreamIsCapturing")
    return int(getattr(status, "value", status)) != 0  # CU_STREAM_CAPTURE_STATUS_NONE is 0


def check_capturable(
    kernel: str, args: Sequence[tuple[Any, Any]], debug: bool, stream: int | None
) -> None:
    """Refuse, before it starts, a launch that a CUDA graph capture cannot record."""
    host = [spec.name for spec, value in args if _is_host_array(spec, value)]
    if not host and not debug:
        return
    if not capturing(stream):
        return
    if debug:
        raise LaunchError(
            f"kernel '{kernel}' was compiled with debug=True, and a debug-mode launch waits for"
            " the GPU to read its error record, which a CUDA graph capture cannot record;"
            " launch it outside the capture, or without debug (debug=False, MINITRITON_DEBUG"
            " unset)"
        )
    raise LaunchError(
        f"kernel '{kernel}': argument '{host[0]}' is a NumPy array, which is copied to the"
        " device and back around the launch; a CUDA graph capture cannot record such copies:"
        " pass CUDA tensors (torch.from_numpy(a).cuda()) inside the capture"
    )


def _is_host_array(spec: Any, value: Any) -> bool:
    return spec.kind != "scalar" and isinstance(value, (np.ndarray, BF16View))


def check_emulator_capture(kernel: str) -> None:
    """The emulator copies CUDA tensors to the host and back: not while capturing."""
    if capturing():
        raise LaunchError(
            f"kernel '{kernel}' runs on the emulator, which copies CUDA tensors to the host and"
            " back; a CUDA graph capture cannot record that: launch it with the GPU backend"
            " (backend='gpu') inside the capture, or outside the capture"
        )
