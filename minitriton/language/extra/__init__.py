"""``tl.extra``: vendor libraries (``tl.extra.libdevice``, ``tl.extra.cuda.libdevice``)."""

from minitriton.language.extra import cuda, libdevice

__all__ = ["cuda", "libdevice"]
