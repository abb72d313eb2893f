"""``triton.runtime.driver.active``: the device the kernels run on.

With the GPU backend and a GPU, every answer is the device's own (read
through the CUDA driver). On the emulator the answers are documented
stand-ins for the GPU being emulated, an NVIDIA H200 (Hopper, ``sm_90``), so
that host code which sizes grids from them keeps working:
:data:`~minitriton.resources.EMULATED_PROPERTIES` and target ``GPUTarget("cuda", 90, 32)``. The
active torch device is CUDA whenever torch sees a GPU (the emulator copies
CUDA tensors to the host and back), else the CPU.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from minitriton.resources import EMULATED_PROPERTIES


@dataclass(frozen=True)
class GPUTarget:
    """Triton's compile target: ``backend`` ("cuda"), ``arch`` (90 for sm_90), ``warp_size``."""

    backend: str
    arch: int | str
    warp_size: int


def _on_gpu() -> bool:
    from minitriton.jit import get_backend

    if get_backend() != "gpu":
        return False
    from minitriton.backend import gpu_available

    return bool(gpu_available())


class _Utils:
    """``driver.active.utils``."""

    def get_device_properties(self, device: Any = None) -> dict[str, int]:
        """The device's SM count, shared memory, registers, warp size and clocks."""
        if not _on_gpu():
            return dict(EMULATED_PROPERTIES)
        return _gpu_properties()


def _gpu_properties() -> dict[str, int]:
    from minitriton.backend.driver import _cu, _state, check, ensure_context

    ensure_context()
    cu = _cu()
    a = cu.CUdevice_attribute
    names = {
        "max_shared_mem": a.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        "max_num_regs": a.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
        "multiprocessor_count": a.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        "warpSize": a.CU_DEVICE_ATTRIBUTE_WARP_SIZE,
        "sm_clock_rate": a.CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
        "mem_clock_rate": a.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
        "mem_bus_width": a.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
    }
    dev = _state["dev"]
    return {
        k: int(check(cu.cuDeviceGetAttribute(v, dev), "cuDeviceGetAttribute"))
        for k, v in names.items()
    }


class _HostInterface:
    """What ``get_device_interface()`` gives on the emulator: work is done when it returns."""

    def synchronize(self) -> None:
        """Nothing to wait for."""

    def is_available(self) -> bool:
        """The emulator is always there."""
        return True

    def current_device(self) -> int:
        """Device 0."""
        return 0


class DriverBase:
    """``triton.backends.driver.DriverBase``: what every driver class offers."""

    @staticmethod
    def is_active() -> bool:
        """Whether this driver's device is present (asked of the class, as Triton does)."""
        raise NotImplementedError

    def get_current_target(self) -> GPUTarget:
        """The target that kernels compile for."""
        raise NotImplementedError


class ActiveDriver(DriverBase):
    """``triton.runtime.driver.active``: the GPU, or the emulated H200 where there is none."""

    def __init__(self) -> None:
        self.utils = _Utils()

    def get_current_target(self) -> GPUTarget:
        """The GPU's target (the emulated H200's on the emulator)."""
        if not _on_gpu():
            return GPUTarget("cuda", 90, 32)
        from minitriton.backend.driver import device_arch

        return GPUTarget("cuda", int(device_arch()[3:].rstrip("a")), 32)

    def get_active_torch_device(self) -> Any:
        """``torch.device("cuda", 0)`` when torch sees a GPU, else ``torch.device("cpu")``.

        As with Triton's interpreter, the emulator takes CUDA tensors too
        (it copies them to the host and back), so the device is CUDA
        whenever there is one.
        """
        import torch

        return torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")

    def get_device_interface(self) -> Any:
        """``torch.cuda`` on the GPU; an object with ``synchronize()`` on the emulator."""
        if _on_gpu():
            import torch

            return torch.cuda
        return _HostInterface()

    def get_current_device(self) -> int:
        """Device 0."""
        return 0

    def get_current_stream(self, device: Any = None) -> int:
        """torch's current stream on the GPU, as a handle (the stream launches use); else 0."""
        if not _on_gpu():
            return 0
        from minitriton.streams import torch_current_stream

        index = getattr(device, "index", device)  # an int, or a torch.device
        return torch_current_stream(0 if index is None else int(index))

    def get_empty_cache_for_benchmark(self) -> Any:
        """A buffer that :meth:`clear_cache` overwrites, to flush the L2 between runs."""
        import numpy as np

        return np.zeros(64 * 1024 * 1024 // 4, dtype=np.int32) if not _on_gpu() else _gpu_cache()

    def clear_cache(self, cache: Any) -> None:
        """Overwrite ``cache`` (``do_bench`` does this before each timed run)."""
        if hasattr(cache, "zero_"):
            cache.zero_()
        else:
            cache[...] = 0

    @staticmethod
    def is_active() -> bool:
        """Always: the emulator stands in for the GPU where there is none."""
        return True


def _gpu_cache() -> Any:
    import torch

    return torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")


def now() -> float:
    """Seconds from a monotonic clock (``do_bench`` on the emulator times with it)."""
    return time.perf_counter()


active = ActiveDriver()


class DriverConfig:
    """``triton.runtime.driver.driver``: holds the active driver (``driver.active``).

    Triton swaps drivers with ``set_active``; MiniTriton has one driver
    class, and :data:`active`, this module's own name, always follows.
    """

    @property
    def default(self) -> DriverBase:
        """The driver that MiniTriton starts with."""
        return _DEFAULT

    @property
    def active(self) -> DriverBase:
        """The driver in use."""
        return active

    def set_active(self, new: DriverBase) -> None:
        """Make ``new`` the active driver."""
        global active
        active = new  # type: ignore[assignment]

    def reset_active(self) -> None:
        """Go back to :attr:`default`."""
        self.set_active(_DEFAULT)


_DEFAULT = active
driver = DriverConfig()
