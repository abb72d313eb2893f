"""Optimization passes over the IR, their registry and the default pipeline.

Each pass lives in its own module, whose docstring is its documentation page.
Importing this package imports every module in it, so a new pass only has to
be dropped into this folder and decorated with :func:`register_pass`.

>>> from minitriton.passes import run_pipeline, DEFAULT_PIPELINE
>>> run_pipeline(module, print_after=["cse"])  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import pkgutil

from minitriton.passes.base import PASSES, Pass, get_pass, register_pass

# Import every module of this package so that each pass registers itself.
for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")

from minitriton.passes.pipeline import (  # noqa: E402 - after the registrations
    DEFAULT_PIPELINE,
    dump_dir_writer,
    run_pipeline,
    snapshots,
)

__all__ = [
    "DEFAULT_PIPELINE",
    "PASSES",
    "Pass",
    "dump_dir_writer",
    "get_pass",
    "register_pass",
    "run_pipeline",
    "snapshots",
]
