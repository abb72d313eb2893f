"""``triton.runtime.jit``: the kernel classes and the decorator, under Triton's module name."""

from __future__ import annotations

from minitriton.jit import JITFunction, KernelInterface, MockTensor, jit

__all__ = ["JITFunction", "KernelInterface", "MockTensor", "jit"]
