"""``triton.backends``: the compile targets MiniTriton has, under Triton's names.

``backends`` maps a backend's name to its compiler and driver classes, as
Triton's plugin registry does. MiniTriton has one, ``"nvidia"``: its driver
is always active, since the emulator stands in for an NVIDIA H200 where no
GPU is present (:mod:`minitriton.runtime.driver`). Code that looks for a
``"cpu"`` backend (Triton's CPU plugin) finds none.
"""

from __future__ import annotations

from dataclasses import dataclass

from minitriton.backends import compiler, driver
from minitriton.backends.compiler import BaseBackend, CUDABackend, GPUTarget
from minitriton.backends.driver import DriverBase, GPUDriver

__all__ = [
    "Backend",
    "BaseBackend",
    "CUDABackend",
    "DriverBase",
    "GPUDriver",
    "GPUTarget",
    "backends",
    "compiler",
    "driver",
    "make_backend",
]


@dataclass(frozen=True)
class Backend:
    """One entry of :data:`backends`: the classes of a backend's compiler and driver."""

    compiler: type[BaseBackend]
    driver: type[DriverBase]


#: Triton's registry of backends, by name.
backends: dict[str, Backend] = {"nvidia": Backend(compiler=CUDABackend, driver=GPUDriver)}


def make_backend(target: GPUTarget) -> BaseBackend:
    """The backend that compiles for ``target`` (Triton's ``make_backend``)."""
    for entry in backends.values():
        if entry.compiler.supports_target(target):
            return entry.compiler(target)
    raise RuntimeError(f"no backend for target {target!r}: MiniTriton compiles for 'cuda'")
