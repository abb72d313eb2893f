"""``tl.extra.cuda``: holds ``libdevice`` (see :mod:`minitriton.language.libdevice`)."""

from minitriton.language.extra.cuda import libdevice

__all__ = ["libdevice"]
