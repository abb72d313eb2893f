"""The GPU backend's passes: one module each, in the one pass registry.

Each module of this package defines one :class:`GpuPass` (``stage = "gpu"``)
and registers it in :data:`minitriton.passes.PASSES`; its docstring is its
documentation page. :data:`GPU_PIPELINE` is their order and
:func:`run_gpu_passes` runs them (see :mod:`.gpu_pipeline`). Importing this
package imports every module in it, so each pass registers itself.

>>> from minitriton.backend.passes import GPU_PIPELINE
>>> GPU_PIPELINE[0]
'inline-calls'
"""

from __future__ import annotations

import importlib
import pkgutil

from minitriton.backend.passes.gpu_pipeline import (
    GPU_PIPELINE,
    GpuPass,
    GpuState,
    gpu_pass_names,
    gpu_snapshots,
    run_gpu_passes,
    watched,
    watching,
)

# Import every module of this package so that each pass registers itself.
for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")

__all__ = [
    "GPU_PIPELINE",
    "GpuPass",
    "GpuState",
    "gpu_pass_names",
    "gpu_snapshots",
    "run_gpu_passes",
    "watched",
    "watching",
]
