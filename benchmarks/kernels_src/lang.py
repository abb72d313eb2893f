"""Which Triton the benchmark kernels are written against, and host helpers.

``BENCH_FLAVOR=triton`` imports real Triton (run it with
``TRITON_INTERPRET=1`` for its CPU interpreter, set before the import);
anything else imports MiniTriton, on its default backend: the NumPy
emulator on a machine without a GPU. Row
modules do ``from kernels_src.lang import library, triton`` and never look at
the flavor themselves; they take their kernels from the kernel library
(``tests/kernels/``) with :func:`library`, under the same flavor.

Inputs are made as NumPy arrays. :func:`device` hands an array to a launch:
Triton's interpreter wants torch tensors, so there the array is wrapped by
``torch.from_numpy`` (sharing its memory, so the kernel's stores land in the
NumPy array that the check reads); MiniTriton takes the array itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
from kernel_library import load_library

FLAVOR = os.environ.get("BENCH_FLAVOR", "minitriton")

if FLAVOR == "triton":
    import torch
    import triton
    import triton.language as tl
else:
    # No set_backend(): the child runs on the default backend, as a student's
    # script does (the parent sets MINITRITON_BACKEND=emulator on a GPU machine).
    import minitriton as triton
    import minitriton.language as tl

__all__ = ["FLAVOR", "Case", "device", "library", "tl", "triton"]


@dataclass
class Case:
    """One benchmark row, ready to run: ``launch()`` runs the kernel once,
    ``check()`` asserts the outputs of the last launch match NumPy.
    ``respecialize()``, where given, launches another specialization of the
    same kernel (to time a second compile)."""

    launch: Callable[[], None]
    check: Callable[[], None]
    respecialize: Callable[[], None] | None = None


def device(array: np.ndarray) -> Any:
    """``array`` as a kernel argument of the current flavor (same memory)."""
    if FLAVOR == "triton":
        return torch.from_numpy(array)
    return array


def library(module: str) -> ModuleType:
    """The kernel library's ``tests/kernels/<module>.py`` under the current flavor."""
    return load_library(module, FLAVOR)
