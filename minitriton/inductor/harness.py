"""What an Inductor kernel file needs from its surroundings to run on MiniTriton.

:func:`install` makes ``triton`` MiniTriton, puts
:mod:`minitriton.inductor.heuristics` where Inductor's
``torch._inductor.runtime.triton_heuristics`` would be, and, when the
kernels run on the emulator, makes the file's benchmark one timed run (the
emulator is far slower than a GPU and Inductor's benchmark repeats a launch
for 40 ms and more). Where torch sees no GPU, a file written on a GPU
machine runs on the CPU instead: its ``device='cuda:0'`` tensors
(``rand_strided``, ``torch.zeros``, ``torch.empty``,
``torch.empty_strided``) are made on the CPU, and
``torch.cuda.set_device``, ``torch.cuda._DeviceGuard`` and the raw stream
become no-ops. torch is imported only here, when a file that imports it is
run.
"""

from __future__ import annotations

import contextlib
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

HEURISTICS = "torch._inductor.runtime.triton_heuristics"


def install(backend: str | None = None) -> None:
    """Prepare this process to run Inductor kernel files on ``backend`` (None: the default)."""
    from minitriton import compat
    from minitriton.inductor import heuristics
    from minitriton.jit import resolve_backend

    compat.alias_triton()
    # A file written for Triton's CPU backend asks for it; its kernels run here all the same.
    warnings.filterwarnings("ignore", message="Could not find an active CPU backend")
    import torch
    import torch._inductor.runtime as runtime

    sys.modules[HEURISTICS] = heuristics
    runtime.triton_heuristics = heuristics
    if not torch.cuda.is_available():
        _cuda_on_cpu(torch)
    if resolve_backend(backend) == "emulator":
        _one_timed_run()


class _NoDeviceGuard(contextlib.nullcontext):
    """``torch.cuda._DeviceGuard(index)`` where there is no GPU: nothing to switch."""

    def __init__(self, index: Any = None) -> None:
        super().__init__()


def _cuda_on_cpu(torch: Any) -> None:
    """A file written for CUDA makes its tensors on the CPU, and its stream calls do nothing."""
    import torch._dynamo.testing as testing

    torch.cuda._DeviceGuard = _NoDeviceGuard
    torch.cuda.set_device = lambda device: None
    torch._C._cuda_getCurrentRawStream = lambda index: 0
    for name in ("zeros", "empty", "empty_strided"):  # get_args() makes workspaces with these
        setattr(torch, name, _on_cpu(getattr(torch, name)))
    made_on = testing.rand_strided
    if getattr(made_on, "_minitriton", False):
        return

    def rand_strided(size: Any, stride: Any, dtype: Any = None, device: Any = "cpu",
                     extra_size: int = 0) -> Any:  # fmt: skip
        if str(device).startswith("cuda"):
            device = "cpu"
        return made_on(size, stride, dtype=dtype, device=device, extra_size=extra_size)

    rand_strided._minitriton = True  # type: ignore[attr-defined]
    testing.rand_strided = rand_strided


def _on_cpu(make: Callable[..., Any]) -> Callable[..., Any]:
    """``make`` (``torch.zeros``, ...) with a CUDA ``device=`` read as the CPU."""
    if getattr(make, "_minitriton", False):
        return make

    def on_cpu(*args: Any, **kwargs: Any) -> Any:
        if str(kwargs.get("device", "")).startswith("cuda"):
            kwargs["device"] = "cpu"
        return make(*args, **kwargs)

    on_cpu._minitriton = True  # type: ignore[attr-defined]
    return on_cpu


def _one_timed_run() -> None:
    """Inductor's ``benchmarker.benchmark(fn, device=..., rep=...)`` runs ``fn`` once."""
    from torch._inductor.runtime.benchmarking import benchmarker

    def benchmark(fn: Callable[[], Any], *args: Any, **kwargs: Any) -> float:
        start = time.perf_counter()
        fn()
        ms = (time.perf_counter() - start) * 1e3
        note = f"minitriton: one run on the emulator, {ms:.1f} ms (not a GPU timing)"
        print(note, file=sys.stderr)
        return ms

    for name in ("benchmark", "benchmark_gpu", "benchmark_cpu"):
        setattr(benchmarker, name, benchmark)
