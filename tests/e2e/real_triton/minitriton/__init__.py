"""A stand-in ``minitriton`` that forwards to real Triton, to check the e2e tests themselves.

The e2e kernels claim to be real Triton code and the NumPy references claim to
match real Triton. With this folder first on ``PYTHONPATH``, ``import
minitriton as triton`` imports Triton itself, and every launch copies the
NumPy arguments to the GPU (keeping their strides) and back, so the same
tests run unchanged on Triton. On a machine with a GPU, torch and Triton, from
a directory outside the repository (so that the real ``minitriton`` is not
found first)::

    R=/path/to/repo
    PYTHONPATH=$R/tests/e2e/real_triton:$R python -m pytest -c $R/pyproject.toml \
        --rootdir=$R $R/tests/e2e -k "not gpu" -p no:cacheprovider

(the ``emulator`` cases then run on Triton; the ``backend=`` keyword is dropped).

With ``TRITON_INTERPRET=1`` the copies stay on the host and the kernels run
under Triton's interpreter, with no GPU: ``python scripts/reverse_contract.py``
does this in a separate virtual environment.
"""

import contextlib
import importlib
import os
import sys
import types

import numpy as np
import torch
import triton
import triton.language
from triton import *  # noqa: F403
from triton import Config, autotune, cdiv, heuristics, jit, next_power_of_2  # noqa: F401
from triton.runtime.jit import KernelInterface

DEVICE = "cpu" if os.environ.get("TRITON_INTERPRET", "") == "1" else "cuda"

language = triton.language
for _name in ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice"):
    with contextlib.suppress(ImportError):
        importlib.import_module(_name)
for _name, _module in list(sys.modules.items()):
    if _name.startswith("triton."):  # minitriton.language.extra.cuda.libdevice, ...
        sys.modules["minitriton" + _name[len("triton") :]] = _module

# The one MiniTriton module the e2e tests import besides the language: errors.
diagnostics = types.ModuleType(__name__ + ".diagnostics")
diagnostics.CompileError = triton.compiler.errors.CompilationError
sys.modules[diagnostics.__name__] = diagnostics


def _to_device(array: np.ndarray) -> torch.Tensor:
    """A copy of ``array`` on ``DEVICE`` with the same strides (views keep their layout)."""
    strides = [s // array.itemsize for s in array.strides]
    dtype = torch.from_numpy(array[:0]).dtype
    device = torch.empty_strided(array.shape, strides, dtype=dtype, device=DEVICE)
    device.copy_(torch.from_numpy(array))
    return device


def _getitem(self, grid):  # noqa: ANN001, ANN202
    def launcher(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        kwargs.pop("backend", None)
        pairs = []

        def convert(value):  # noqa: ANN001, ANN202
            if not isinstance(value, np.ndarray):
                return value
            device = _to_device(value)
            pairs.append((value, device))
            return device

        args = [convert(a) for a in args]
        kwargs = {k: convert(v) for k, v in kwargs.items()}
        result = self.run(*args, grid=grid, warmup=False, **kwargs)
        if DEVICE == "cuda":
            torch.cuda.synchronize()
        for host, device in pairs:
            host[...] = device.cpu().numpy()
        return result

    return launcher


KernelInterface.__getitem__ = _getitem
