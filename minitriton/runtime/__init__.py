"""``triton.runtime``: the driver, the kernel classes and the errors under Triton's names."""

from minitriton.autotune import Autotuner, Config, Heuristics
from minitriton.jit import JITFunction, KernelInterface
from minitriton.runtime import driver, errors
from minitriton.runtime.errors import OutOfResources

__all__ = [
    "Autotuner",
    "Config",
    "Heuristics",
    "JITFunction",
    "KernelInterface",
    "OutOfResources",
    "driver",
    "errors",
]
