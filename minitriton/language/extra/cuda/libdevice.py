"""``from triton.language.extra.cuda import libdevice``: see ``minitriton.language.libdevice``."""

from minitriton.language.libdevice import *  # noqa: F403
