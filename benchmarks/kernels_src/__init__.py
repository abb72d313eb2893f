"""Benchmark kernels, written once against Triton's API and run on two implementations.

Each module here holds one Triton kernel, exactly as one would write it for
Triton, plus its host-side launcher and a NumPy reference. The kernels take
``triton`` and ``tl`` from :mod:`.lang`, which imports either real Triton or
MiniTriton according to the ``BENCH_FLAVOR`` environment variable, so the
same source text runs on Triton's interpreter and on MiniTriton's emulator.

Every kernel module provides ``NAME``, ``SIZE``, ``TARGET`` (the speedup
MiniTriton should reach over Triton's interpreter) and ``setup(rng)``, which
makes the inputs and returns a :class:`~.lang.Case`.
"""

#: Kernel modules in table order.
ROWS = ("vector_add", "softmax", "matmul", "layer_norm", "attention", "elementwise")
