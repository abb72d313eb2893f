"""``triton.runtime._allocation``, the module where Triton keeps its allocator types.

Triton's tests and tools import ``NullAllocator`` from here; it is
:mod:`minitriton.runtime.allocation`'s.
"""

from __future__ import annotations

from minitriton.runtime.allocation import Allocator, NullAllocator, get_allocator, set_allocator

__all__ = ["Allocator", "NullAllocator", "get_allocator", "set_allocator"]
