"""torch tensors on the emulator, and :func:`reinterpret`.

The emulator works on NumPy arrays in host memory. A torch tensor becomes a
NumPy view of the same memory, so the kernel's stores land in the tensor:

* ``bfloat16`` (which NumPy lacks) is viewed as its raw 16 bits, and fp8
  tensors as their raw 8 bits, which is how the emulator keeps those types;
* a tensor that requires grad is viewed through ``.detach()`` (the same
  memory; autograd does not see a kernel's writes, as with Triton);
* a CUDA tensor is copied to the host before the run and back after it, as
  Triton's interpreter does.

:func:`reinterpret` is Triton's ``triton.reinterpret(tensor, dtype)``: the
kernel sees the tensor's memory as elements of another type of the same size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minitriton.ir import types as t

# torch dtypes that NumPy cannot hold, by name -> the raw-bits NumPy dtype.
_RAW_BITS = {
    "bfloat16": np.uint16,
    "float8_e5m2": np.uint8,
    "float8_e4m3fn": np.uint8,
    "float8_e4m3fnuz": np.uint8,
    "float8_e5m2fnuz": np.uint8,
}


class TensorWrapper:
    """A tensor whose elements the kernel reads as ``dtype`` (see :func:`reinterpret`)."""

    def __init__(self, base: Any, dtype: t.ScalarType) -> None:
        self.base = base
        self.dtype = dtype
        self.shape = tuple(base.shape)
        #: The base tensor's ``.data``, as Triton's wrapper has it (for NumPy, the array).
        self.data = base.data if hasattr(base, "detach") else base

    def data_ptr(self) -> int:
        """The address of the first element (that of the base tensor)."""
        if hasattr(self.base, "data_ptr"):
            return int(self.base.data_ptr())
        return int(self.base.__array_interface__["data"][0])

    @property
    def device(self) -> Any:
        """The base tensor's device (``None`` for a NumPy array)."""
        return getattr(self.base, "device", None)

    def stride(self, dim: int | None = None) -> Any:
        """The base tensor's strides, in elements."""
        if hasattr(self.base, "stride"):
            return self.base.stride() if dim is None else self.base.stride(dim)
        strides = tuple(s // self.base.itemsize for s in self.base.strides)
        return strides if dim is None else strides[dim]

    def numel(self) -> int:
        """The number of elements."""
        return int(np.prod(self.shape))

    def element_size(self) -> int:
        """Bytes per element."""
        return self.dtype.bitwidth // 8

    # Triton's TensorWrapper methods: each makes the same on the base and wraps it again.

    def cpu(self) -> TensorWrapper:
        """A host copy (for NumPy, the same array)."""
        base = self.base.cpu() if hasattr(self.base, "cpu") else self.base
        return TensorWrapper(base, self.dtype)

    def to(self, device: Any) -> TensorWrapper:
        """A copy on ``device`` (torch tensors)."""
        return TensorWrapper(self.base.to(device), self.dtype)

    def clone(self) -> TensorWrapper:
        """A copy of the elements."""
        return TensorWrapper(self.base.clone() if hasattr(self.base, "clone") else self.base.copy(),
                             self.dtype)  # fmt: skip

    def copy_(self, other: TensorWrapper) -> None:
        """Copy ``other``'s elements into this one's."""
        source = other.base if isinstance(other, TensorWrapper) else other
        if hasattr(self.base, "copy_"):
            self.base.copy_(source)
        else:
            np.copyto(self.base, source)

    def new_empty(self, sizes: Any) -> TensorWrapper:
        """An uninitialized block of ``sizes`` with the same element type."""
        if hasattr(self.base, "new_empty"):
            return TensorWrapper(self.base.new_empty(sizes), self.dtype)
        return TensorWrapper(np.empty(sizes, self.base.dtype), self.dtype)

    def __repr__(self) -> str:
        return f"TensorWrapper(dtype={self.dtype}, shape={self.shape})"

    def __str__(self) -> str:
        return f"TensorWrapper[{self.dtype.triton_name}]({self.base})"


def reinterpret(tensor: Any, dtype: Any) -> Any:
    """View ``tensor``'s memory as elements of ``dtype`` (same element size).

    ``dtype`` is a ``tl`` dtype, or a torch or NumPy dtype, as Triton takes either.
    Reinterpreting a wrapper as its base's own dtype gives the base back, as in Triton.
    """
    if isinstance(tensor, TensorWrapper):
        if dtype is getattr(tensor.base, "dtype", None):
            return tensor.base
        tensor = tensor.base
    if not isinstance(dtype, t.ScalarType):
        dtype = _tl_dtype(dtype)
    size = _element_size(tensor)
    if size is not None and size * 8 != dtype.bitwidth:
        raise ValueError(
            f"reinterpret: {dtype} has {dtype.bitwidth} bits, the tensor's elements {size * 8}"
        )
    return TensorWrapper(tensor, dtype)


def _tl_dtype(dtype: Any) -> t.ScalarType:
    """The ``tl`` dtype of a torch or NumPy dtype."""
    from minitriton.signature import dtype_to_type

    try:
        return dtype_to_type(dtype)
    except (ValueError, TypeError):
        raise TypeError(
            f"reinterpret needs a dtype such as tl.uint8 or torch.uint8, got {dtype!r}"
        ) from None


def _element_size(tensor: Any) -> int | None:
    if isinstance(tensor, np.ndarray):
        return tensor.itemsize
    if hasattr(tensor, "element_size"):
        return int(tensor.element_size())
    return None


def is_torch_tensor(value: Any) -> bool:
    """True for torch tensors, by what they offer (torch is not imported)."""
    return all(hasattr(value, a) for a in ("data_ptr", "detach", "device", "cpu", "numpy"))


def host_view(value: Any, pending: list[tuple[Any, Any]]) -> np.ndarray | None:
    """A NumPy view of a torch tensor or :class:`TensorWrapper`'s memory; ``None`` otherwise.

    A CUDA tensor is copied to the host; ``(tensor, host copy)`` is appended
    to ``pending`` for :func:`copy_back`.
    """
    if isinstance(value, TensorWrapper):
        return _reinterpreted(value, pending)
    if not is_torch_tensor(value):
        return None
    tensor = value.detach()
    if tensor.device.type != "cpu":
        host = tensor.cpu()
        pending.append((tensor, host))
        tensor = host
    return _numpy_of(tensor)


def storage_tail(tensor: Any, flat: np.ndarray) -> np.ndarray:
    """``flat`` (a CPU tensor's elements, first through last) extended to its storage's end.

    On a GPU a tensor argument is its ``data_ptr()``: the kernel may reach any
    byte of the allocation after it, not only the view's elements (FlagGems
    passes ``as_strided`` views with stride 0 and indexes the whole dimension
    through them). The emulator binds the same memory. Anything that is not a
    plain CPU tensor keeps ``flat``.
    """
    from minitriton.emulator.hostmem import torch_memory

    if not is_torch_tensor(tensor) or tensor.device.type != "cpu" or flat.size == 0:
        return flat
    host = torch_memory(tensor, "")
    if host is None:
        return flat
    tail = host.data[int(tensor.data_ptr()) - host.start :]
    count = tail.nbytes // flat.itemsize
    if count <= flat.size:
        return flat
    return tail[: count * flat.itemsize].view(flat.dtype)


def copy_back(pending: list[tuple[Any, Any]]) -> None:
    """Copy each host copy made by :func:`host_view` back into its device tensor."""
    for device_tensor, host in pending:
        device_tensor.copy_(host)  # torch copies across devices


def _numpy_of(tensor: Any) -> np.ndarray:
    """``tensor.numpy()``, with types NumPy lacks viewed as their raw bits."""
    name = str(tensor.dtype).split(".")[-1]
    if name not in _RAW_BITS:
        return tensor.numpy()
    import torch

    raw = torch.uint8 if _RAW_BITS[name] is np.uint8 else torch.int16
    return tensor.view(raw).numpy().view(_RAW_BITS[name])


def _reinterpreted(wrapper: TensorWrapper, pending: list[tuple[Any, Any]]) -> np.ndarray:
    base = wrapper.base
    arr = base if isinstance(base, np.ndarray) else host_view(base, pending)
    if arr is None:
        raise TypeError(f"reinterpret: cannot read a {type(base).__name__} on the host")
    return arr.view(wrapper.dtype.numpy)  # bf16 is stored as its raw bits
