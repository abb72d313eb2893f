"""A stand-in ``minitriton`` that forwards to real Triton on the CPU (its interpreter).

The "many small scripts" row of ``emulator_vs_interpreter.py`` runs the
end-to-end tests' kernels on both sides. Those tests are written as
``import minitriton as triton``; with this folder first on ``PYTHONPATH``
and ``TRITON_INTERPRET=1`` set, that imports Triton itself, and every launch
hands NumPy arguments to Triton as CPU torch tensors sharing their memory
(``torch.from_numpy``), so the kernels' stores land in the arrays the tests
check. The ``backend=`` keyword is dropped.
"""

import sys

import numpy as np
import torch
import triton
import triton.language
from triton import *  # noqa: F403
from triton import Config, autotune, cdiv, heuristics, jit, next_power_of_2  # noqa: F401
from triton.runtime.jit import KernelInterface

language = triton.language
sys.modules[__name__ + ".language"] = triton.language


def _tensor(value):  # noqa: ANN001, ANN202
    """A NumPy array as a CPU tensor over the same memory; anything else unchanged."""
    return torch.from_numpy(value) if isinstance(value, np.ndarray) else value


def _getitem(self, grid):  # noqa: ANN001, ANN202
    def launcher(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        kwargs.pop("backend", None)
        args = [_tensor(a) for a in args]
        kwargs = {k: _tensor(v) for k, v in kwargs.items()}
        return self.run(*args, grid=grid, warmup=False, **kwargs)

    return launcher


KernelInterface.__getitem__ = _getitem
