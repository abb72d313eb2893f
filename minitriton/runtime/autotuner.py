"""``triton.runtime.autotuner``: the autotuner under the module name Triton gives it.

Code written for Triton (PyTorch Inductor among it) imports ``Autotuner``,
``Config``, ``Heuristics``, ``autotune``, ``heuristics`` and
``OutOfResources`` from here.
"""

from minitriton.autotune import Autotuner, Config, Heuristics, autotune, heuristics
from minitriton.runtime.errors import OutOfResources

__all__ = ["Autotuner", "Config", "Heuristics", "OutOfResources", "autotune", "heuristics"]
