"""``triton.runtime``: the driver, the kernel classes and the errors under Triton's names.

The kernel classes and the driver are imported on first use, so that the
launcher may import :mod:`minitriton.runtime.errors` without the autotuner.
"""

from typing import TYPE_CHECKING

from minitriton.lazy import lazy_attributes
from minitriton.runtime import errors
from minitriton.runtime.errors import InterpreterError, OutOfResources

if TYPE_CHECKING:
    from minitriton.autotune import Autotuner, Config, Heuristics
    from minitriton.jit import JITFunction, KernelInterface
    from minitriton.runtime import driver

__all__ = [
    "Autotuner",
    "Config",
    "Heuristics",
    "InterpreterError",
    "JITFunction",
    "KernelInterface",
    "OutOfResources",
    "driver",
    "errors",
    "jit",
]

__getattr__ = lazy_attributes(
    __name__,
    {
        "Autotuner": "minitriton.autotune",
        "Config": "minitriton.autotune",
        "Heuristics": "minitriton.autotune",
        "JITFunction": "minitriton.jit",
        "KernelInterface": "minitriton.jit",
        "driver": "minitriton.runtime.driver",
        "jit": "minitriton.runtime.jit",
    },
)
