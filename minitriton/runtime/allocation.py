"""``triton.set_allocator``: the function that gives kernels global scratch memory.

Triton calls the allocator at launch, ``allocator(size, alignment, stream)``,
for kernels that need scratch memory in global memory. The common case is an
in-kernel ``tl.make_tensor_descriptor``: Triton encodes its TMA tensor map on
the device, into 128 bytes of scratch per descriptor, so tutorial 09 sets an
allocator before its launches.

MiniTriton encodes such tensor maps on the host at launch, and no kernel
needs scratch memory. The allocator is checked and kept, and
:func:`get_allocator` gives it back, but it is never called. Setting one is
still right in code that also runs on Triton.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

Allocator = Callable[[int, int, Any], Any]


class NullAllocator:
    """The allocator in force until one is set; calling it is an error, as in Triton."""

    def __call__(self, size: int, alignment: int, stream: Any) -> Any:
        raise RuntimeError(
            "kernels requiring device memory allocation must call triton.set_allocator first"
        )


_NULL = NullAllocator()  # stateless, so one instance serves every context
_allocator: ContextVar[Allocator] = ContextVar("allocator", default=_NULL)  # noqa: B039


def set_allocator(allocator: Allocator) -> None:
    """Set the scratch-memory allocator for launches in this context (a thread or task).

    ``allocator(size, alignment, stream)`` returns a buffer of at least
    ``size`` bytes, typically ``torch.empty(size, dtype=torch.int8,
    device="cuda")``. MiniTriton keeps it but does not call it (see above).
    """
    if not callable(allocator):
        raise TypeError(
            f"triton.set_allocator expects a function (size, alignment, stream) -> buffer, "
            f"got {type(allocator).__name__}"
        )
    _allocator.set(allocator)


def get_allocator() -> Allocator:
    """The allocator last set in this context, else a :class:`NullAllocator`."""
    return _allocator.get()
