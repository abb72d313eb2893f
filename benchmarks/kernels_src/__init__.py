"""Benchmark rows: library kernels run on two implementations of Triton.

Each module here takes its kernel from the kernel library (``tests/kernels/``,
written against Triton's API) with :func:`.lang.library`, and holds its inputs,
its launch and a NumPy reference. :mod:`.lang` imports either real Triton or
MiniTriton according to the ``BENCH_FLAVOR`` environment variable, and the
library module under the same flavor, so the same source text runs on
Triton's interpreter and on MiniTriton's emulator.

Every kernel module provides ``setup(rng)``, which makes the inputs and
returns a :class:`~.lang.Case`. The table's labels and targets are listed
here, so the runner can print them without importing any kernel.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """One row of the table: its module, its labels and its speedup target."""

    module: str
    name: str
    size: str
    #: The speedup MiniTriton's emulator should reach over Triton's interpreter.
    target: float


#: The rows in table order.
ROWS = (
    Row("vector_add", "vector add", "n=98,432", 5.0),
    Row("softmax", "fused softmax", "1823x781 fp32", 5.0),
    Row("matmul", "grouped matmul", "512^3 fp16->fp32", 5.0),
    Row("layer_norm", "layer norm fwd", "1151x8192 fp16", 5.0),
    Row("attention", "attention fwd", "Z*H=4 N=256 D=64", 5.0),
    Row("elementwise", "elementwise 1e5 progs", "n=6.4M BLOCK=64", 20.0),
)
