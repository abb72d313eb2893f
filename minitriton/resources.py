"""Whether a compiled kernel fits the device: shared memory, registers, threads.

Before the first launch of a compiled kernel, the GPU backend compares what
it needs with what the device offers one block (a CUDA thread block runs one
program):

* **shared memory**: the bytes the compiler laid out (``kernel.metadata.shared``,
  plus any static shared memory the loaded function reports) against the
  most a block may opt in to (227 KiB on an H200);
* **threads**: ``num_warps * 32`` against the device's threads per block
  (1024), and against the loaded function's own limit, which its register
  use lowers;
* **registers**: registers per thread (``kernel.n_regs``) times threads
  against the registers of one block (65536).

A kernel over a limit raises :class:`~minitriton.runtime.errors.OutOfResources`
(Triton's exception) naming the kernel, the resource, what it needs, the
limit and its configuration, before the driver is asked to launch it; the
autotuner skips such configs. The emulator runs any configuration, but
``minitriton check`` warns when one would not fit the GPU it stands for
(:data:`EMULATED`, an H200).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from minitriton.runtime.errors import OutOfResources

#: What ``utils.get_device_properties`` answers on the emulator (an H200).
EMULATED_PROPERTIES = {
    "max_shared_mem": 232448,
    "max_num_regs": 65536,
    "multiprocessor_count": 132,
    "warpSize": 32,
    "sm_clock_rate": 1980000,
    "mem_clock_rate": 3201000,
    "mem_bus_width": 6144,
}


@dataclass(frozen=True)
class DeviceLimits:
    """What one block may use on a device."""

    name: str  # the device's ("NVIDIA H200")
    shared: int  # bytes of shared memory a block may opt in to
    registers: int  # 32-bit registers of one block
    threads: int  # threads of one block


#: The GPU the emulator stands for (see :mod:`minitriton.runtime.driver`).
EMULATED = DeviceLimits(
    "NVIDIA H200",
    EMULATED_PROPERTIES["max_shared_mem"],
    EMULATED_PROPERTIES["max_num_regs"],
    1024,
)
#: The architecture ``minitriton check`` compiles for to find a kernel's shared memory.
EMULATED_ARCH = "sm_90a"


@dataclass(frozen=True)
class Usage:
    """What one block of a compiled kernel needs.

    ``registers`` (per thread) and ``max_threads`` (the loaded function's
    limit) are known once the kernel is loaded on a GPU; None before.
    """

    shared: int
    threads: int
    registers: int | None = None
    max_threads: int | None = None


def over_limit(usage: Usage, limits: DeviceLimits) -> tuple[str, int, int] | None:
    """``(resource, required, limit)`` of the first resource over its limit, or None."""
    if usage.shared > limits.shared:
        return "shared memory", usage.shared, limits.shared
    if usage.threads > limits.threads:
        return "threads", usage.threads, limits.threads
    if usage.registers is not None and usage.registers * usage.threads > limits.registers:
        return "registers", usage.registers * usage.threads, limits.registers
    if usage.max_threads is not None and usage.threads > usage.max_threads:
        return "threads", usage.threads, usage.max_threads
    return None


def check_fits(kernel: str, usage: Usage, limits: DeviceLimits, config: str = "") -> None:
    """Raise :class:`OutOfResources` when ``usage`` is over one of ``limits``."""
    problem = over_limit(usage, limits)
    if problem is not None:
        resource, required, limit = problem
        raise OutOfResources(required, limit, resource, kernel, config)


def config_text(options: Any, arg_specs: Sequence[Any]) -> str:
    """``num_warps=8, num_stages=6, BLOCK_M=256``: a specialization's configuration."""
    parts = [f"num_warps={options.num_warps}", f"num_stages={options.num_stages}"]
    parts += [f"{s.name}={s.value!r}" for s in arg_specs if s.kind == "constexpr"]
    return ", ".join(parts)


# ------------------------------------------------------------------ on the emulator


def emulated_warning(compiled: Any) -> str | None:
    """Why ``compiled`` would not fit :data:`EMULATED`, or None (also when unknown).

    Shared memory comes from compiling the kernel's IR for
    :data:`EMULATED_ARCH` (llvmlite only, no GPU; cached like any GPU
    compile); registers are not known without a GPU. When the kernel cannot
    be compiled for the GPU, nothing is said. Worked out once per kernel.
    """
    if not hasattr(compiled, "_emulated_warning"):
        compiled._emulated_warning = _emulated_problem(compiled)
    return compiled._emulated_warning


def _emulated_problem(compiled: Any) -> str | None:
    try:
        shared = _emulated_shared(compiled)
    except Exception:  # no llvmlite, a construct the GPU backend lacks: no warning
        return None
    usage = Usage(shared, 32 * compiled.options.num_warps)
    config = config_text(compiled.options, compiled.arg_specs)
    try:
        check_fits(compiled.name, usage, EMULATED, config)
    except OutOfResources as e:
        return f"{e} The emulator runs it anyway; on an {EMULATED.name} it would not launch."
    return None


def _emulated_shared(compiled: Any) -> int:
    from minitriton.backend import compile_module

    options = compiled.options
    binary = compile_module(
        compiled.module, arch=EMULATED_ARCH, num_warps=options.num_warps,
        num_stages=options.num_stages, maxnreg=options.maxnreg,
    )  # fmt: skip
    return int(binary.shared)
