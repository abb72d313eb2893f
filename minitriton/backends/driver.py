"""``triton.backends.driver``: the driver classes (``DriverBase``, ``GPUDriver``)."""

from __future__ import annotations

from minitriton.runtime.driver import ActiveDriver as GPUDriver
from minitriton.runtime.driver import DriverBase

__all__ = ["DriverBase", "GPUDriver"]
