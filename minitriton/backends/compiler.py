"""``triton.backends.compiler``: a compile target and the backend that compiles for it."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from minitriton.compiler import DEFAULT_ARCH, CompileOptions
from minitriton.runtime.driver import GPUTarget

__all__ = ["BaseBackend", "CUDABackend", "GPUTarget"]


class BaseBackend:
    """What every backend answers: which targets it takes, its options, its cache key."""

    def __init__(self, target: GPUTarget) -> None:
        self.target = target

    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        """Whether this backend compiles for ``target``."""
        raise NotImplementedError

    def hash(self) -> str:
        """A key for caches: changes when this backend would compile differently."""
        raise NotImplementedError

    def parse_options(self, options: dict[str, Any]) -> Any:
        """The backend's options, from a dict of keyword arguments (unknown keys are dropped)."""
        raise NotImplementedError


class CUDABackend(BaseBackend):
    """MiniTriton's backend for NVIDIA targets (``GPUTarget("cuda", 90, 32)``).

    Its options are :class:`minitriton.compiler.CompileOptions`, the same
    ones a launch takes (``num_warps``, ``num_stages``, ``num_ctas``,
    ``maxnreg``, ...), with the target's architecture.
    """

    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        """Targets whose backend is ``"cuda"``."""
        return target.backend == "cuda"

    def arch(self) -> str:
        """The target as an ``sm_XX`` name (``sm_90`` for arch 90)."""
        arch = self.target.arch
        return arch if isinstance(arch, str) and arch.startswith("sm_") else f"sm_{arch}"

    def hash(self) -> str:
        """The compiler's digest and the architecture."""
        from minitriton.compiler.compiler import triton_key

        return f"{triton_key()}-{self.arch()}"

    def parse_options(self, options: dict[str, Any]) -> CompileOptions:
        """A :class:`CompileOptions` from the keys it knows; the target's arch when not given."""
        known = {f.name for f in fields(CompileOptions)}
        given = {k: v for k, v in options.items() if k in known}
        given.setdefault("arch", self.arch() if self.target.arch else DEFAULT_ARCH)
        return CompileOptions(**given)
