"""The environment variables that choose how kernels run, read by every layer.

This module imports nothing from the rest of the package, so that the GPU
backend, the emulator's tools and the launcher can all read one setting
without importing each other.
"""

from __future__ import annotations

import os

#: ``emulator`` or ``gpu``: the backend a launch runs on when nothing else names one.
BACKEND_ENV = "MINITRITON_BACKEND"
#: Turns debug mode on for every launch (``async`` defers the GPU's reports).
DEBUG_ENV = "MINITRITON_DEBUG"
#: Turns the emulator's checks on for every launch (see minitriton.emulator.debug.tools).
CHECKS_ENV = "MINITRITON_CHECKS"
#: Set to 1, every op runs by its plain semantics (minitriton.emulator.speed) and every
#: launch binds by the plain path (minitriton.jit.fast_launch_binder).
EMULATOR_PLAIN_ENV = "MINITRITON_EMULATOR_PLAIN"
#: Set to 1 to see MiniTriton's own frames in the traceback of a user error.
TRACEBACK_ENV = "MINITRITON_TRACEBACK"


def debug_enabled() -> bool:
    """Whether ``MINITRITON_DEBUG`` turns debug mode on (set, and not ``0``), or, when it is
    not set, Triton's ``TRITON_DEBUG=1``."""
    value = os.environ.get(DEBUG_ENV)
    if value is None:
        return os.environ.get("TRITON_DEBUG", "0").strip() == "1"
    return value not in ("", "0")


def truthy(text: str) -> bool:
    """Triton's reading of a boolean variable: ``1``, ``y``, ``on``, ``yes``, ``true``
    (any case) are True, anything else False."""
    return text.lower() in ("1", "y", "on", "yes", "true")


def line_info_disabled() -> bool:
    """Whether ``TRITON_DISABLE_LINE_INFO`` is on, read as Triton reads a boolean;
    setting ``knobs.compilation.disable_line_info`` sets the variable too."""
    return truthy(os.environ.get("TRITON_DISABLE_LINE_INFO", "").strip())


#: ``MINITRITON_EMULATOR_PLAIN=1``, read once, at import: then no launch takes the
#: launcher's fast path (each binds, specializes and finds its kernel the plain way),
#: and the emulator runs without its fast paths. Both read it here, at each launch;
#: :func:`minitriton.emulator.speed.fast_paths_enabled` switches it at run time.
EMULATOR_PLAIN = os.environ.get(EMULATOR_PLAIN_ENV, "").strip() not in ("", "0")
