"""``triton.runtime.autotuner``: autotuning and its error, under Triton's module name."""

from __future__ import annotations

from minitriton.autotune import Autotuner, Config, Heuristics, autotune, heuristics
from minitriton.runtime.errors import OutOfResources

__all__ = ["Autotuner", "Config", "Heuristics", "OutOfResources", "autotune", "heuristics"]
