"""``tl.extra.cuda``: ``libdevice`` and Triton's CUDA-only helpers.

``num_warps()`` and ``num_threads()`` are compile-time values of the launch's
options. ``gdc_wait()`` and ``gdc_launch_dependents()`` are programmatic
dependent launch's ``griddepcontrol`` on sm_90 and later (nothing before,
and nothing on the emulator, where launches run one after another).
``globaltimer()`` and ``smid()`` read the GPU's registers with inline PTX, so
they run on the GPU only, as in Triton.
"""

from __future__ import annotations

from typing import Any

from minitriton.language import core
from minitriton.language.extra.cuda import libdevice

__all__ = ["libdevice", "num_threads", "num_warps", "gdc_wait", "gdc_launch_dependents",
           "globaltimer", "smid"]  # fmt: skip


#: ``tl.inline_asm_elementwise``, called the way Triton's builtins call each other.
_asm: Any = core.inline_asm_elementwise


@core.extern
def num_warps(_semantic: Any = None) -> core.constexpr:
    """The launch's ``num_warps``, a compile-time value."""
    return core.constexpr(_semantic.options.num_warps)


@core.extern
def num_threads(_semantic: Any = None) -> core.constexpr:
    """Threads per program: ``num_warps * 32``, a compile-time value."""
    return core.constexpr(_semantic.options.num_warps * 32)


@core.extern
def gdc_wait(_semantic: Any = None) -> None:
    """Wait for the grid this launch depends on (``griddepcontrol.wait``)."""
    _semantic.grid_dependency_wait()


@core.extern
def gdc_launch_dependents(_semantic: Any = None) -> None:
    """Let the dependent launch start (``griddepcontrol.launch_dependents``)."""
    _semantic.grid_dependency_launch_dependents()


@core.extern
def globaltimer(_semantic: Any = None) -> Any:
    """The GPU's nanosecond clock (``%globaltimer``), an ``int64``."""
    return _asm("mov.u64 $0, %globaltimer;", "=l", [], dtype=core.int64, is_pure=False, pack=1,
                _semantic=_semantic)  # fmt: skip


@core.extern
def smid(_semantic: Any = None) -> Any:
    """The id of the multiprocessor the program runs on (``%smid``), an ``int32``."""
    return _asm("mov.u32 $0, %smid;", "=r", [], dtype=core.int32, is_pure=True, pack=1,
                _semantic=_semantic)  # fmt: skip
