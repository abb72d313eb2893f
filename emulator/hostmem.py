"""Host addresses cast to pointers: finding the live array that holds an address.

Host code may pass a kernel the *addresses* of arrays instead of the arrays,
as Triton's grouped-GEMM tutorial does::

    ptrs = torch.tensor([a.data_ptr() for a in group_A])   # the host passes only this
    ...
    a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))   # the kernel

On the GPU such an address is a device address, and the hardware follows it.
The emulator never follows a raw address: it only reads and writes memory
that a live NumPy array or torch CPU tensor owns, with the bounds of that
array, so a wrong address is a located error and never a crash. To turn an
address into an array, :func:`find_array` looks, in order, at

1. arrays it found before (a process-wide cache of weak references, checked
   to be alive and unchanged);
2. the local variables of the frames that called the launch, and the items
   of the lists, tuples and dicts they hold (``group_A`` above);
3. every object Python's garbage collector tracks, and the items of its
   containers: module globals, object attributes, torch tensors.

The first array whose memory (its whole allocation: a view resolves to the
array that owns the memory) contains the address is used. Steps 2 and 3
run only for an address that no array argument of the launch holds, once
per array and launch.
"""

from __future__ import annotations

import contextlib
import gc
import sys
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class HostArray:
    """The memory of one live array: its bytes, where they start, and a name for messages."""

    data: np.ndarray  # 1-D uint8 view of the whole allocation
    start: int
    name: str

    def contains(self, address: int) -> bool:
        """Whether ``address`` is one of the array's bytes."""
        return self.start <= address < self.start + self.data.nbytes


#: (start, nbytes) -> weak reference to the owner, of the arrays found so far.
_FOUND: dict[tuple[int, int], tuple[weakref.ref[Any], str]] = {}

#: How deep a container is searched for arrays (``[[a, b], [c, d]]`` is two).
_DEPTH = 2


def find_array(address: int) -> HostArray | None:
    """The live NumPy array or torch CPU tensor whose memory holds ``address``, if any."""
    for (start, nbytes), (ref, name) in list(_FOUND.items()):
        owner = ref()
        if owner is None:
            del _FOUND[(start, nbytes)]
            continue
        if start <= address < start + nbytes:
            found = _host_array(owner, name)
            if found is not None and found.contains(address):
                return found
    for obj, name in _candidates():
        found = _host_array(obj, name)
        if found is not None and found.contains(address):
            with contextlib.suppress(TypeError):  # not weakly referenceable: found again
                _FOUND[(found.start, found.data.nbytes)] = (weakref.ref(obj), name)
            return found
    return None


def _candidates() -> Iterator[tuple[Any, str]]:
    """Objects that may be arrays, with names: the callers' locals first, then the heap.

    Types are tested with ``type()``, never ``isinstance``: the heap holds
    lazy objects whose ``__class__`` warns or imports when read.
    """
    array_types = _array_types()
    frame = sys._getframe(1)
    while frame is not None:
        for var, value in list(frame.f_locals.items()):
            yield from _walk(value, var, _DEPTH, array_types)
        frame = frame.f_back  # type: ignore[assignment]
    for obj in gc.get_objects():  # the hot loop of a failed search: kept lean
        kind = type(obj)
        if kind is dict:
            items: Any = obj.values()
        elif kind is list or kind is tuple:
            items = obj
        elif issubclass(kind, array_types):
            yield obj, ""
            continue
        else:
            continue
        for item in items:
            if issubclass(type(item), array_types):
                yield item, ""


def _walk(
    value: Any, name: str, depth: int, array_types: tuple[type, ...]
) -> Iterator[tuple[Any, str]]:
    kind = type(value)
    if issubclass(kind, array_types):
        yield value, name
        return
    if depth <= 0:
        return
    if kind is list or kind is tuple:
        for i, item in enumerate(value[:4096]):
            yield from _walk(item, f"{name}[{i}]" if name else "", depth - 1, array_types)
    elif kind is dict:
        for key, item in list(value.items())[:4096]:
            yield from _walk(item, f"{name}[{key!r}]" if name else "", depth - 1, array_types)


def _array_types() -> tuple[type, ...]:
    torch = sys.modules.get("torch")  # only if the program uses torch: never imported here
    return (np.ndarray, torch.Tensor) if torch is not None else (np.ndarray,)


def _host_array(obj: Any, name: str) -> HostArray | None:
    """The whole allocation of a NumPy array or torch CPU tensor, as bytes."""
    try:
        if isinstance(obj, np.ndarray):
            return _numpy_memory(obj, name)
        return torch_memory(obj, name)
    except Exception:  # noqa: BLE001 - a tensor subclass without memory (fake, meta ...)
        return None


def _numpy_memory(array: np.ndarray, name: str) -> HostArray | None:
    owner = array
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    if not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        owner = array  # a strided owner: only the (contiguous) view itself
        if not (owner.flags.c_contiguous or owner.flags.f_contiguous):
            return None
    data = owner.reshape(-1, order="A").view(np.uint8)
    start = int(owner.__array_interface__["data"][0])
    return HostArray(data, start, name or f"an array at {start:#x}")


def torch_memory(tensor: Any, name: str) -> HostArray | None:
    """The whole storage of a torch CPU tensor, as bytes (None for other devices, sparse)."""
    if tensor.device.type != "cpu" or tensor.is_sparse:
        return None
    import torch

    storage = tensor.untyped_storage()
    whole = torch.empty(0, dtype=torch.uint8).set_(storage, 0, (storage.nbytes(),), (1,))
    start = int(storage.data_ptr())
    return HostArray(whole.numpy(), start, name or f"a tensor at {start:#x}")
