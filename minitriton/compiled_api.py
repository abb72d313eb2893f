"""Triton's host-side API on a compiled kernel: ``n_regs``, ``metadata``, ``kernel[grid](...)``.

Tutorial 02 sizes its grid from what the compiled kernel uses::

    kernel = softmax_kernel.warmup(y, x, ..., BLOCK_SIZE=BLOCK_SIZE, grid=(1,))
    kernel._init_handles()
    n_regs, size_smem = kernel.n_regs, kernel.metadata.shared
    kernel[(num_programs, 1, 1)](y, x, ..., BLOCK_SIZE)

On the GPU the numbers are the driver's (``cuFuncGetAttribute``: registers
per thread, and local memory / 4 as the spill count, as Triton computes it).
The emulator has no registers: it reports :data:`EMULATOR_N_REGS` registers,
no spills and :data:`EMULATOR_SHARED` bytes of shared memory, stand-ins
chosen so that such occupancy arithmetic gives sensible grids.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

#: Registers per thread that a kernel compiled for the emulator reports.
EMULATOR_N_REGS = 32
#: Bytes of shared memory it reports: not 0, since occupancy formulas divide by it.
EMULATOR_SHARED = 1024

#: Runs a compiled kernel: ``RUN_COMPILED(kernel, grid, bound)``, ``bound`` mapping
#: every parameter to its value. :mod:`minitriton.jit` (the launcher, a higher layer
#: that ``import minitriton`` always loads) sets it, so the compiler never imports it.
RUN_COMPILED: Callable[[Any, Any, dict[str, Any]], None] | None = None


class CompiledKernelAPI:
    """Mixed into :class:`~minitriton.compiler.CompiledKernel`."""

    binary: Any
    name: str
    options: Any
    source: Any
    arg_specs: list[Any]

    @property
    def _on_gpu(self) -> bool:
        """Compiled for the GPU backend (a dump gives emulator kernels PTX too, never loaded)."""
        return getattr(self.binary, "_launcher", None) is not None

    def _init_handles(self) -> None:
        """Load the kernel on the device (on the GPU); nothing to do on the emulator."""
        if self._on_gpu:
            self.binary.load()

    @property
    def n_regs(self) -> int:
        """Registers per thread (a stand-in on the emulator)."""
        if not self._on_gpu:
            return EMULATOR_N_REGS
        return self._function_attribute("CU_FUNC_ATTRIBUTE_NUM_REGS")

    @property
    def n_spills(self) -> int:
        """Registers spilled to local memory, per thread (0 on the emulator)."""
        if not self._on_gpu:
            return 0
        return self._function_attribute("CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES") // 4

    @property
    def metadata(self) -> SimpleNamespace:
        """``shared`` (bytes of shared memory), ``num_warps``, ``num_stages``, ``name``.

        On the GPU, ``shared`` is the loaded schedule's: of a kernel compiled
        two ways (a dot left in flight or not), the one the launcher kept.
        """
        shared = self.binary.load().shared if self._on_gpu else EMULATOR_SHARED
        return SimpleNamespace(
            shared=shared,
            num_warps=self.options.num_warps,
            num_stages=getattr(self.options, "num_stages", None),
            name=self.name,
        )

    def _function_attribute(self, name: str) -> int:
        from minitriton.backend.driver import _cu, check

        cu = _cu()
        func = self.binary.load().func
        attr = getattr(cu.CUfunction_attribute, name)
        return int(check(cu.cuFuncGetAttribute(attr, func), "cuFuncGetAttribute", self.name))

    def __getitem__(self, grid: Any) -> Any:
        """``kernel[grid](*args)``: launch this compiled specialization.

        The arguments are the kernel's parameters in order, constexprs
        included (as Triton's compiled kernels take them); the constexprs
        must equal the values this kernel was compiled for.
        """

        def launcher(*args: Any, **kwargs: Any) -> None:
            assert RUN_COMPILED is not None, "minitriton.jit sets it when it is imported"
            RUN_COMPILED(self, grid, self._bind(args, kwargs))

        return launcher

    def _bind(self, args: tuple, kwargs: dict) -> dict[str, Any]:
        names = [s.name for s in self.arg_specs]
        bound = dict(zip(names, args)) | kwargs
        for spec in self.arg_specs:
            if spec.kind != "constexpr" or spec.name not in bound:
                continue
            if bound[spec.name] != spec.value:
                raise ValueError(
                    f"{self.name}: this kernel was compiled for {spec.name}={spec.value!r}, "
                    f"not {bound[spec.name]!r}; call the @jit function to compile another"
                )
        missing = [n for n in names if n not in bound]
        if missing:
            raise TypeError(f"{self.name}: missing argument(s) {', '.join(missing)}")
        return bound
