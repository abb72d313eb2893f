"""The GPU backend: block IR -> LLVM IR (llvmlite) -> PTX -> cuda-python.

Public API (used by ``minitriton.jit``)::

    kernel = compile_module(module, arch="sm_90", num_warps=4)   # GPUKernel
    kernel.launch((grid_x, grid_y, grid_z), args)                # NumPy or device arrays
    llir, ptx = compile_to_ptx(module, "sm_90", 4)               # no GPU needed
    gpu_available()                                              # never raises

``kernel.asm["ttgir"]`` shows the IR with the layout chosen for every block
value; ``kernel.llir`` and ``kernel.ptx`` the later stages. See
``docs/internals`` for the design: layouts, vectorization, reductions, the
cache and the runtime.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from minitriton.backend.build import (
    PTXModule,
    compile_ir,
    compile_ir_debug,
    compile_to_ptx,
)
from minitriton.backend.cache import cache_key, load, module_text, store
from minitriton.backend.driver import (
    CUDAError,
    DeviceArray,
    Launcher,
    gpu_available,
    load_fuller,
    load_kernel,
)
from minitriton.backend.driver import synchronize as _synchronize_context
from minitriton.backend.lower.debug import CheckTable
from minitriton.ir.ops import Module

__all__ = [
    "CUDAError",
    "PTXModule",
    "DeviceArray",
    "GPUKernel",
    "compile_module",
    "compile_to_ptx",
    "gpu_available",
    "synchronize",
]

_kernels: dict[str, GPUKernel] = {}


def synchronize() -> None:
    """Wait for all work on the GPU.

    A kernel fault raises :class:`CUDAError` here. The first failed check of
    a debug-mode launch whose report was deferred (``MINITRITON_DEBUG=async``,
    :mod:`~minitriton.backend.debug_mode`) raises its located error here too.
    """
    _synchronize_context()
    debug_mode = sys.modules.get("minitriton.backend.debug_mode")  # loaded by a debug launch
    if debug_mode is not None:
        debug_mode.report_deferred(wait=True)


_lock = threading.Lock()


def _load_hooks() -> Any:
    """``minitriton.knobs.runtime`` when a load hook is set (setting one imports the knobs)."""
    knobs = sys.modules.get("minitriton.knobs")
    runtime = knobs.runtime if knobs is not None else None
    if runtime is None:
        return None
    if runtime.kernel_load_start_hook.calls or runtime.kernel_load_end_hook.calls:
        return runtime
    return None


@dataclass(eq=False, repr=False)
class GPUKernel(PTXModule):
    """A compiled kernel (a :class:`PTXModule`), loaded into CUDA on its first launch."""

    #: Debug mode's table of checked sites (None: compiled without ``debug=True``).
    checks: CheckTable | None = None
    _launcher: Launcher | None = field(default=None, init=False)

    # Compared and hashed by identity, not by its texts: one loaded kernel per compile.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    @classmethod
    def of(cls, compiled: PTXModule, checks: CheckTable | None = None) -> GPUKernel:
        """``compiled``, to be loaded and launched; ``checks`` for a debug-mode kernel."""
        return cls(**{f.name: getattr(compiled, f.name) for f in fields(PTXModule)}, checks=checks)

    def load(self) -> Launcher:
        """Load the PTX into the CUDA context (once), between Triton's load hooks."""
        if self._launcher is None:
            hooks = _load_hooks()
            if hooks is not None:
                hooks.kernel_load_start_hook(None, None, self.name, {}, self.hash)
            self._launcher = self._loaded_launcher()
            if hooks is not None:
                function = getattr(self._launcher, "func", None)
                hooks.kernel_load_end_hook(None, function, self.name, {}, self.hash)
        return self._launcher

    @functools.cached_property
    def hash(self) -> str:
        """A digest of the PTX (Triton's ``CompiledKernel.hash``, which load hooks receive).

        Computed once: the PTX of a compiled kernel does not change, and both hooks ask.
        """
        import hashlib

        return hashlib.sha256(self.ptx.encode()).hexdigest()

    def _loaded_launcher(self) -> Launcher:
        """The launcher of the loaded kernel (the schedule that fits more programs, if two)."""
        shared = self.shared
        if self.alt_ptx:  # two schedules: the one that fits more programs per SM
            candidates = [(self.ptx, self.shared), (self.alt_ptx, self.alt_shared)]
            func, shared = load_fuller(candidates, self.name, self.num_warps)
        else:
            func = load_kernel(self.ptx, self.name, self.shared, self.num_warps)
        if self.checks is not None:
            from minitriton.backend.debug_mode import DebugLauncher

            return DebugLauncher(func, self.name, self.params, self.num_warps, shared, self.checks)
        return Launcher(func, self.name, self.params, self.num_warps, shared, tma=self.tma)

    def launch(self, grid: Sequence[int], args: Sequence[Any], stream: Any = None) -> None:
        """Launch on ``grid`` programs; ``args`` match the kernel's arguments one to one."""
        launcher = self._launcher or self.load()
        launcher(grid, args, stream)

    def __repr__(self) -> str:
        return f"<GPUKernel {self.name} num_warps={self.num_warps} shared={self.shared}>"


def compile_module(
    module: Module,
    *,
    arch: str = "sm_90",
    num_warps: int = 4,
    num_stages: int = 3,
    maxnreg: int | None = None,
    debug: bool = False,
) -> GPUKernel:
    """Compile ``module``'s kernel (cached in memory and on disk); no GPU is needed.

    ``maxnreg`` caps the registers of each thread (Triton's option of that
    name: the PTX's ``.maxnreg``; ptxas spills what does not fit).

    ``debug=True`` compiles the checked variant (:mod:`~minitriton.backend.lower.debug`);
    it is cached in memory only. While the GPU passes are watched
    (:func:`~minitriton.backend.passes.watching`) no cache answers: the passes run.
    """
    from minitriton.backend.passes import watched

    if watched():
        if debug:
            return GPUKernel.of(*compile_ir_debug(module, arch, num_warps, num_stages, maxnreg))
        return GPUKernel.of(compile_ir(module, arch, num_warps, num_stages, maxnreg))
    key = cache_key(module_text(module), arch, num_warps, num_stages, maxnreg)
    if debug:
        return _debug_kernel(module, key, arch, num_warps, num_stages, maxnreg)
    kernel = _kernels.get(key)
    if kernel is not None:
        return kernel
    with _lock:
        kernel = _kernels.get(key)
        if kernel is None:
            compiled = load(key)
            if compiled is None:
                compiled = compile_ir(module, arch, num_warps, num_stages, maxnreg)
                store(key, compiled)
            kernel = _kernels[key] = GPUKernel.of(compiled)
    return kernel


def _debug_kernel(
    module: Module, key: str, arch: str, num_warps: int, num_stages: int, maxnreg: int | None
) -> GPUKernel:
    key = "debug:" + key
    with _lock:
        kernel = _kernels.get(key)
        if kernel is None:
            compiled, table = compile_ir_debug(module, arch, num_warps, num_stages, maxnreg)
            kernel = _kernels[key] = GPUKernel.of(compiled, table)
    return kernel


def clear_memory_cache() -> None:
    """Forget the in-memory cache (the disk cache stays); for tests and benchmarks."""
    _kernels.clear()
