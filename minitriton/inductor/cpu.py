"""``torch.compile`` on CPU tensors, with the Triton kernels Inductor writes run by MiniTriton.

TorchInductor can write Triton kernels for CPU tensors too
(``torch._inductor.config.cpu_backend = "triton"``, meant for Triton's CPU
backend). :func:`enable` selects that and hands every kernel Inductor writes
to MiniTriton instead of Triton, so a whole compiled model runs on a laptop,
on the emulator, with no GPU and no Triton installed::

    import minitriton.inductor
    minitriton.inductor.enable()          # before the first torch.compile

    model = torch.compile(model)
    model(x)                              # x on the CPU: Inductor's kernels run on the emulator

What :func:`enable` changes, for the whole process:

* ``triton`` becomes MiniTriton (:func:`minitriton.compat.alias_triton`), and
  Inductor's runtime helpers (``triton_helpers``: ``welford``, ``max2``,
  ``libdevice``, ...) are imported again on top of it where an earlier
  import had bound them to another ``triton``;
* Inductor's CPU backend is ``"triton"`` and it compiles in this process
  (``compile_threads = 1``);
* each kernel source Inductor hands to its compiler is loaded from Inductor's
  code cache (so a diagnostic names that file and line) with
  :mod:`minitriton.inductor.heuristics` in place of Inductor's heuristics
  module, only while the file loads: the kernel gets the first config
  Inductor would try and launches with ``backend`` (``"emulator"`` by
  default: the tensors are on the CPU).

Inductor's own compile-time code keeps its real heuristics module. This is how
``tests/inductor/test_compile_cpu.py`` checks Inductor's kernels for a few
hundred torch operations against eager torch.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator
from typing import Any

HEURISTICS = "torch._inductor.runtime.triton_heuristics"
#: Inductor's runtime modules that bind ``triton`` when they are imported.
_BOUND_TO_TRITON = (
    "torch._inductor.runtime.triton_compat",
    "torch._inductor.runtime.triton_helpers",
)


def enable(backend: str = "emulator") -> None:
    """Make ``torch.compile`` run Inductor's Triton kernels for CPU tensors on MiniTriton.

    ``backend`` is the MiniTriton backend the kernels launch on. Call it once,
    before the first ``torch.compile``; it changes the process for good (see
    the module's docstring).
    """
    from minitriton import compat
    from minitriton.jit import resolve_backend

    resolve_backend(backend)  # checks the name
    compat.alias_triton()
    _rebind_runtime_helpers()
    warnings.filterwarnings("ignore", message="Could not find an active CPU backend")
    import torch._inductor.config as config
    from torch._inductor.async_compile import AsyncCompile

    config.cpu_backend = "triton"
    config.compile_threads = 1

    def triton(self: Any, kernel_name: str, source_code: str, device_str: str = "cpu") -> Any:
        return load_kernel(kernel_name, source_code, backend)

    _put(AsyncCompile, "triton", triton)


def load_kernel(kernel_name: str, source_code: str, backend: str | None = None) -> Any:
    """Load one kernel source Inductor wrote; its ``run(*args, stream=...)`` uses ``backend``."""
    from torch._inductor.codecache import PyCodeCache

    with _minitriton_heuristics():
        module = PyCodeCache.load(source_code)
    kernel = getattr(module, kernel_name)
    kernel.backend = backend
    return kernel


@contextlib.contextmanager
def _minitriton_heuristics() -> Iterator[None]:
    """Inductor's heuristics module is MiniTriton's while a kernel file is imported."""
    import torch._inductor.runtime as runtime

    from minitriton.inductor import heuristics

    real = sys.modules.get(HEURISTICS)
    sys.modules[HEURISTICS] = heuristics
    _put(runtime, "triton_heuristics", heuristics)
    try:
        yield
    finally:
        if real is None:
            del sys.modules[HEURISTICS]
            delattr(runtime, "triton_heuristics")
        else:
            sys.modules[HEURISTICS] = real
            _put(runtime, "triton_heuristics", real)


def _put(owner: Any, name: str, value: Any) -> None:
    """``owner.name = value`` on torch's objects (typed or not, as torch is installed or not)."""
    setattr(owner, name, value)


def _rebind_runtime_helpers() -> None:
    """Drop Inductor's runtime modules that an earlier import bound to another ``triton``.

    The next import (a kernel file's ``from torch._inductor.runtime import
    triton_helpers``) then binds them to MiniTriton.
    """
    import minitriton

    runtime = sys.modules.get("torch._inductor.runtime")
    for name in _BOUND_TO_TRITON:
        module = sys.modules.get(name)
        if module is None or getattr(module, "triton", None) is minitriton:
            continue
        del sys.modules[name]
        if runtime is not None and getattr(runtime, name.rsplit(".", 1)[1], None) is module:
            delattr(runtime, name.rsplit(".", 1)[1])
