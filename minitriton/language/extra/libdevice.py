"""``from triton.language.extra import libdevice``: see :mod:`minitriton.language.libdevice`."""

from minitriton.language.libdevice import *  # noqa: F403
