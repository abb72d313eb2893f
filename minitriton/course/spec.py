"""What an exercise's ``spec.py`` builds on: one :class:`Case` per test.

A kernel exercise's ``spec.py`` defines::

    TITLE = "Vector add with masks"
    KERNELS = ("add_kernel",)       # names the student's file must define
    MINUTES = 20                    # estimated time, for the course map
    REQUIRES = ("01",)              # exercises to do first
    OUTCOMES = ("...",)             # what the student learns
    CASE_HINTS = {"n = 1000": 2}    # optional: the hint each case teaches, by name start

    def reference(*args): ...       # NumPy: the expected output(s)
    def launch(kernels, *args): ... # runs the student's kernels, returns the output(s)
    def cases() -> list[Case]: ...  # the inputs; shapes that catch typical bugs

Optionally, to grade how the kernel compiles (not only what it computes)::

    def compiled(kernels) -> dict[str, str]: ...   # runs with the student's code
    def check_compiled(info) -> list[tuple[str, bool, str]]: ...  # (case, passed, why)
    COMPILED_HINTS = {"tensor cores": 1}            # the hint each such case teaches

``launch`` gets the student's module (``kernels.add_kernel``) and fresh
copies of the arrays (with the same strides: a view stays a view);
``reference`` gets copies too, so in-place kernels are fine. Outputs are
one array, a tuple of arrays or a dict of named arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Case:
    """One test input of a kernel exercise.

    ``name`` says what the case catches (``"n = 1000: not a multiple of
    BLOCK"``); outputs match when ``|got - expected| <= atol + rtol * |expected|``.
    ``hint`` is the number (1-based) of the hint in ``hints.md`` that teaches
    what the case tests: when it is the first case to fail, ``check`` shows
    that hint instead of the next one in order.
    """

    name: str
    args: tuple[Any, ...]
    atol: float = 1e-5
    rtol: float = 1e-5
    hint: int | None = None


#: ``atol`` and ``rtol`` for the outputs of an fp32 ``tl.dot`` checked against
#: an exact reference: ``Case(name, args, **TF32_TOLERANCE)``. By default
#: (``input_precision="tf32"``) ``tl.dot`` rounds fp32 inputs to TF32, 10
#: mantissa bits, on the GPU and on the emulator alike, as Triton does; a
#: product over K = 50 standard-normal values is then off by up to about
#: 5e-3, twice that where the hardware truncates instead of rounding.
TF32_TOLERANCE: dict[str, float] = {"atol": 1e-2, "rtol": 1e-2}

#: How many times the fp32 reference's own error an accumulation case tolerates.
ACCUMULATION_FACTOR = 64.0


def fp16_exact(shape: tuple[int, ...], seed: int, scale: float = 1.0) -> np.ndarray:
    """Standard-normal fp32 values (times ``scale``, a power of two) that fp16 holds exactly.

    Such inputs are exact in every precision a dot may round its inputs to
    (fp16, TF32), so a matmul's error is its accumulation's alone.
    """
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale).astype(np.float16).astype(np.float32)


def accumulation_tolerance(
    fp32: np.ndarray, fp64: np.ndarray, floor: float = 0.0
) -> dict[str, float]:
    """``atol`` for a case that catches an fp16 accumulator: from the fp32 reference's error.

    ``fp32`` is the output computed the way a right kernel does (fp32
    accumulation; summed in the worst order, one K value after another),
    ``fp64`` the exact one. The tolerance is :data:`ACCUMULATION_FACTOR`
    times their largest difference (at least ``floor``): room for any fp32
    summation order, GPU tensor cores included, but far below what an
    accumulator rounded to fp16 (11 significant bits, not 24) loses over a
    long K. ``rtol`` is 0: the bound is absolute.
    """
    error = float(np.max(np.abs(fp32.astype(np.float64) - fp64)))
    return {"atol": max(ACCUMULATION_FACTOR * error, floor), "rtol": 0.0}


def fp32_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` accumulated in fp32 one K value after another (the worst common order)."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    for k in range(a.shape[1]):
        acc += a32[:, k : k + 1] * b32[k : k + 1, :]
    return acc
