"""``triton.runtime``: the driver, and the kernel classes under Triton's names."""

from minitriton.autotune import Autotuner, Config, Heuristics
from minitriton.jit import JITFunction, KernelInterface
from minitriton.runtime import driver

__all__ = ["Autotuner", "Config", "Heuristics", "JITFunction", "KernelInterface", "driver"]
