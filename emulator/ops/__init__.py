"""Each op's meaning on the emulator, one module per op family.

The families are the same as the GPU backend's (``backend/lower/<family>.py``):

* :mod:`.arith`: ``arith.*``: constants, integer and float arithmetic,
  compares, ``select``, casts;
* :mod:`.math`: ``math.*``: libdevice functions, ``abs``, ``fma``, ``pow``;
* :mod:`.memory`: ``tt.addptr``, ``tt.load``, ``tt.store``, atomics;
* :mod:`.shape`: ``tt.make_range``, ``splat``, ``broadcast``,
  ``expand_dims``, ``reshape``, ``trans``, ``tt.hint``;
* :mod:`.reduce`: ``tt.reduce``, ``tt.scan``, ``tt.sort``;
* :mod:`.matrix`: ``tt.dot``;
* :mod:`.control`: ``scf.if``, ``scf.for``, ``scf.while``, ``tt.call``,
  program ids, ``tt.barrier``;
* :mod:`.debug`: ``tt.print``, ``tt.assert``.

Each function is registered with ``@semantics(OpClass)``
(:mod:`minitriton.emulator.registry`) when its module is imported; importing
this package imports them all. Each is the op's plain NumPy meaning; the
fast paths that the interpreter tries first (lazy lanes, row views,
in-place results) are apart, in :mod:`.speed` (see
:mod:`minitriton.emulator.speed`).
"""

# speed last: a fast path is registered beside its op's semantics, which must exist.
from minitriton.emulator.ops import (
    arith,
    control,
    debug,
    math,
    matrix,
    memory,
    reduce,
    shape,
    speed,
)

__all__ = ["arith", "control", "debug", "math", "matrix", "memory", "reduce", "shape", "speed"]
