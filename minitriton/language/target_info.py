"""``triton.language.target_info``: what a kernel is compiled for, as compile-time values.

``current_target()`` is the target of the kernel being compiled (its
``arch``), or outside a compile the active driver's (the emulated H200 on the
emulator). The predicates are ``constexpr_function``s, so a kernel may choose
code by them (``if cuda_capability_geq(9, 0):``); the emulator compiles for
sm_90 unless told otherwise, so it takes the sm_90 path, and inline PTX
there is a located error on the emulator, as always.
"""

from __future__ import annotations

from typing import Any

from minitriton.language.standard import constexpr_function

__all__ = ["current_target"]


def current_target() -> Any:
    """The ``GPUTarget`` of the kernel being compiled, else of the active driver."""
    from minitriton.backend.accelerate_matmul import arch_number
    from minitriton.frontend.builtins import COMPILING_OPTIONS
    from minitriton.runtime.driver import GPUTarget, driver

    options = COMPILING_OPTIONS.get()
    if options is not None:
        return GPUTarget("cuda", arch_number(options.arch), 32)
    return driver.active.get_current_target()


current_target.__triton_builtin__ = True  # type: ignore[attr-defined]


@constexpr_function
def is_cuda() -> bool:
    """Always true: MiniTriton compiles for NVIDIA GPUs (and emulates one)."""
    target = current_target()
    return target is not None and target.backend == "cuda"


@constexpr_function
def cuda_capability_geq(major: int, minor: int = 0) -> bool:
    """Whether the target's compute capability is at least ``major.minor``."""
    target = current_target()
    return bool(target is not None and target.backend == "cuda" and
                target.arch >= major * 10 + minor)  # fmt: skip


@constexpr_function
def is_hip() -> bool:
    """Always false: no AMD target."""
    return False


#: AMD architectures: never the target here either.
is_hip_cdna3 = is_hip_cdna4 = is_hip_gfx1250 = is_hip
