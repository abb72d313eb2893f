"""The CUDA runtime side: context, modules, device memory, launches, errors.

Everything goes through ``cuda.bindings.driver`` (cuda-python), imported
lazily so that the rest of MiniTriton works without it.

Context: the first use calls ``cuInit``, retains device 0's *primary*
context (the one PyTorch and CuPy use too) and makes it current.

Arguments of a launch: NumPy arrays are copied to the device before the
launch and back afterwards (only arrays passed for pointer parameters;
read-only arrays are not copied back); the copies in run on the launch's
stream, ahead of the kernel, and the copies back wait for the whole device.
Device arrays are passed as they are:
:class:`DeviceArray`, anything with ``__cuda_array_interface__`` (PyTorch
CUDA tensors, CuPy) or with DLPack on a CUDA device. Plain ints are taken as
raw device addresses.

Errors: every failing driver call raises :class:`CUDAError`, naming the
kernel and the call. A fault inside a kernel (``CUDA_ERROR_ILLEGAL_ADDRESS``
after an out-of-bounds access, a failed ``device_assert``,
``CUDA_ERROR_LAUNCH_FAILED`` ...) is *sticky*: the CUDA context is unusable
for the rest of the process, every later call fails with the same error,
and only a new process recovers. :attr:`CUDAError.context_usable` says which
case it is. Such faults surface at the next synchronizing call — right after
the launch when NumPy arrays are copied back, otherwise at
:func:`synchronize` or the next copy.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from minitriton.backend.lltypes import bf16_bits
from minitriton.resources import DeviceLimits, Usage, check_fits

_STICKY = {
    "CUDA_ERROR_ILLEGAL_ADDRESS",
    "CUDA_ERROR_LAUNCH_TIMEOUT",
    "CUDA_ERROR_ASSERT",
    "CUDA_ERROR_HARDWARE_STACK_ERROR",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUDA_ERROR_INVALID_ADDRESS_SPACE",
    "CUDA_ERROR_INVALID_PC",
    "CUDA_ERROR_LAUNCH_FAILED",
    "CUDA_ERROR_ECC_UNCORRECTABLE",
}
_DLPACK_CUDA = (2, 13)  # kDLCUDA, kDLCUDAManaged
#: ``ctypes`` (default) or ``bindings``: how :class:`Launcher` calls cuLaunchKernel.
LAUNCH_ENV = "MINITRITON_LAUNCH"
_lock = threading.Lock()
#: Per thread: whether :func:`ensure_context` made the context current in it.
_this_thread = threading.local()
_state: dict[str, Any] = {}
_last_kernel = ["<none>"]


class CUDAError(RuntimeError):
    """A CUDA driver call failed.

    ``code`` is the driver's error name (``CUDA_ERROR_ILLEGAL_ADDRESS``),
    ``kernel`` the kernel concerned, ``context_usable`` whether the CUDA
    context survived (False after any fault inside a kernel).
    """

    def __init__(self, code: str, description: str, call: str, kernel: str | None) -> None:
        self.code = code
        self.kernel = kernel
        self.context_usable = code not in _STICKY
        where = f" (kernel '{kernel}')" if kernel else ""
        msg = f"{code}: {description} — in {call}{where}."
        if not self.context_usable:
            msg += (
                " This error is sticky: the CUDA context is no longer usable and every"
                " later CUDA call in this process will fail; restart the process."
            )
            if code == "CUDA_ERROR_ILLEGAL_ADDRESS":
                msg += " Check the kernel's masks and offsets for out-of-bounds accesses."
        super().__init__(msg)


def _cu() -> Any:
    from cuda.bindings import driver

    return driver


def check(result: tuple, call: str, kernel: str | None = None) -> Any:
    """Unpack a cuda-python result tuple, raising :class:`CUDAError` on failure."""
    err = result[0]
    if int(err) != 0:
        raise _error(err, call, kernel)
    if len(result) == 1:
        return None
    return result[1] if len(result) == 2 else result[1:]


def _error(err: Any, call: str, kernel: str | None) -> CUDAError:
    cu = _cu()
    name = cu.cuGetErrorName(err)[1]
    desc = cu.cuGetErrorString(err)[1]
    name = name.decode() if isinstance(name, bytes) else str(err)
    desc = desc.decode() if isinstance(desc, bytes) else ""
    return CUDAError(name, desc, call, kernel)


def gpu_available() -> bool:
    """True when cuda-python imports and a CUDA device is present; never raises."""
    if "available" not in _state:
        try:
            ensure_context()
            _state["available"] = True
        except Exception:  # no cuda-python, no driver, no device: all mean "no GPU"
            _state["available"] = False
    return _state["available"]


def ensure_context() -> Any:
    """Initialize CUDA once, and make device 0's primary context current in this thread.

    A context is current per thread: a script whose first launch ran in one
    thread may launch from another, which then needs the context made
    current there too.
    """
    ctx = _state.get("ctx")
    if ctx is None:
        with _lock:
            if "ctx" not in _state:
                cu = _cu()
                check(cu.cuInit(0), "cuInit")
                dev = check(cu.cuDeviceGet(0), "cuDeviceGet")
                _state["dev"] = dev
                _state["ctx"] = check(cu.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
        ctx = _state["ctx"]
    if not getattr(_this_thread, "has_context", False):
        check(_cu().cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        _this_thread.has_context = True
    return ctx


def device_arch() -> str:
    """``sm_XY`` of device 0."""
    ensure_context()
    cu = _cu()
    attr = cu.CUdevice_attribute
    major = check(
        cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, _state["dev"]),
        "cuDeviceGetAttribute",
    )
    minor = check(
        cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, _state["dev"]),
        "cuDeviceGetAttribute",
    )
    return f"sm_{major}{minor}"


def device_name() -> str:
    """The name of device 0 (``"NVIDIA H200"``)."""
    ensure_context()
    raw = check(_cu().cuDeviceGetName(256, _state["dev"]), "cuDeviceGetName")
    return raw.split(b"\0", 1)[0].decode(errors="replace").strip()


def synchronize(kernel: str | None = None) -> None:
    """Wait for all work; a kernel fault raises :class:`CUDAError` here."""
    ensure_context()
    check(_cu().cuCtxSynchronize(), "cuCtxSynchronize", kernel or _last_kernel[0])


# ------------------------------------------------------------------ memory


class DeviceArray:
    """A contiguous array in device memory (freed when garbage-collected)."""

    def __init__(self, ptr: int, shape: tuple[int, ...], dtype: np.dtype, owner: bool = True):
        self.ptr = int(ptr)
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self._owner = owner

    @property
    def nbytes(self) -> int:
        """Size in bytes."""
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    @classmethod
    def empty(cls, shape: int | tuple[int, ...], dtype: Any = np.float32) -> DeviceArray:
        """Uninitialized device memory."""
        ensure_context()
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        nbytes = max(1, int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize)
        ptr = check(_cu().cuMemAlloc(nbytes), "cuMemAlloc")
        return cls(int(ptr), shape, np.dtype(dtype))

    @classmethod
    def from_numpy(cls, arr: np.ndarray, stream: Any = None) -> DeviceArray:
        """A device copy of ``arr`` (made on ``stream``, if given, ahead of its later work)."""
        arr = np.ascontiguousarray(arr)
        out = cls.empty(arr.shape, arr.dtype)
        out.copy_from(arr, stream)
        return out

    def copy_from(self, arr: np.ndarray, stream: Any = None) -> None:
        """Copy a host array of the same size into this one.

        With a ``stream`` the copy is ordered on it (``cuMemcpyHtoDAsync``):
        a kernel queued there afterwards sees the data even when the stream
        does not wait for the legacy default stream (torch's side streams).
        The host array has been read when this returns.
        """
        arr = np.ascontiguousarray(arr)
        if not arr.nbytes:
            return
        ensure_context()  # a thread's first driver call may be this copy
        cu = _cu()
        if stream is None:
            result = cu.cuMemcpyHtoD(self.ptr, arr.ctypes.data, arr.nbytes)
        else:
            handle = cu.CUstream(_stream_handle(stream))
            # From pageable memory the driver stages the data before returning.
            result = cu.cuMemcpyHtoDAsync(self.ptr, arr.ctypes.data, arr.nbytes, handle)
        check(result, "cuMemcpyHtoD", _last_kernel[0])

    def copy_to(self, arr: np.ndarray) -> None:
        """Copy into a contiguous host array of the same size."""
        if arr.nbytes:
            ensure_context()  # a thread's first driver call may be this copy
            check(
                _cu().cuMemcpyDtoH(arr.ctypes.data, self.ptr, arr.nbytes),
                "cuMemcpyDtoH",
                _last_kernel[0],
            )

    def to_numpy(self) -> np.ndarray:
        """A host copy."""
        out = np.empty(self.shape, self.dtype)
        self.copy_to(out)
        return out

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ptr, False),
            "version": 3,
            "strides": None,
        }

    def __del__(self) -> None:
        if self._owner and self.ptr and _state.get("ctx") is not None:
            # At interpreter shutdown or with a dead context there is nothing to do.
            with contextlib.suppress(Exception):
                _cu().cuMemFree(self.ptr)
            self.ptr = 0

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, ptr=0x{self.ptr:x})"


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("dtype", ctypes.c_uint32),
        ("shape", ctypes.c_void_p),
        ("strides", ctypes.c_void_p),
        ("byte_offset", ctypes.c_uint64),
    ]


def _dlpack_pointer(obj: Any) -> int:
    capsule = obj.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    tensor = _DLTensor.from_address(get(capsule, b"dltensor"))
    return int(tensor.data or 0) + int(tensor.byte_offset)


def pinned_host(tensor: Any) -> bool:
    """Whether ``tensor`` is a torch CPU tensor in pinned (page-locked) memory.

    The GPU reads pinned host memory through its own address (unified
    addressing), so Triton, and MiniTriton, pass such a tensor as it is.
    Anything else (an array, a CUDA tensor) answers False.
    """
    is_pinned = getattr(tensor, "is_pinned", None)
    device = getattr(tensor, "device", None)
    return callable(is_pinned) and getattr(device, "type", None) == "cpu" and bool(is_pinned())


def device_pointer(obj: Any) -> int | None:
    """The device address of a device array, or ``None`` if ``obj`` is not one."""
    if isinstance(obj, DeviceArray):
        return obj.ptr
    if getattr(obj, "is_cuda", False) and hasattr(obj, "data_ptr"):
        return int(obj.data_ptr())  # PyTorch fast path
    if pinned_host(obj):
        return int(obj.data_ptr())  # the GPU reads pinned host memory at the same address
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0])
    dev = getattr(obj, "__dlpack_device__", None)
    if dev is not None and dev()[0] in _DLPACK_CUDA:
        return _dlpack_pointer(obj)
    return None


# ------------------------------------------------------------------ launching

_CTYPES: dict[str, type[ctypes._SimpleCData[Any]]] = {
    "i1": ctypes.c_uint8,
    "i8": ctypes.c_int8,
    "i16": ctypes.c_int16,
    "i32": ctypes.c_int32,
    "i64": ctypes.c_int64,
    "u8": ctypes.c_uint8,
    "u16": ctypes.c_uint16,
    "u32": ctypes.c_uint32,
    "u64": ctypes.c_uint64,
    "f16": ctypes.c_uint16,
    "bf16": ctypes.c_uint16,
    "f32": ctypes.c_float,
    "f64": ctypes.c_double,
    "ptr": ctypes.c_uint64,
}


def _convert_scalar(kind: str, value: Any) -> Any:
    if kind in ("f32", "f64"):
        return float(value)
    if kind == "f16":
        return int(np.array(value, np.float16).view(np.uint16))
    if kind == "bf16":
        return bf16_bits(float(value))
    if kind == "i1":
        return int(bool(value))
    return int(value)


class Launcher:
    """Launches one loaded kernel with precomputed parameter storage.

    The hot path is short on purpose (launch overhead is measured in
    microseconds): the parameter slots and the pointer array are built once.
    ``cuLaunchKernel`` is called either through cuda-bindings or, by default,
    through ctypes on the driver's own function pointer (from
    ``cuGetProcAddress``) with prebuilt pointer arguments, which skips
    cuda-bindings' per-call argument conversion. ``MINITRITON_LAUNCH=bindings``
    (or :meth:`use`) selects the former.
    """

    def __init__(
        self, func: Any, name: str, params: list[str], num_warps: int, shared: int,
        tma: Sequence[dict] = (),
    ) -> None:  # fmt: skip
        self.func = func
        self.name = name
        self.kinds = params
        self.block = 32 * num_warps
        self.shared = shared
        self.slots = [_CTYPES[k]() for k in params]
        self.array = (ctypes.c_void_p * max(1, len(params)))(
            *[ctypes.addressof(s) for s in self.slots]
        )
        self.maps = None
        if tma:  # TMA tensor maps: built per launch from the arguments, after them
            from minitriton.backend.tensormap import TensorMaps

            self.maps = TensorMaps(tma, name)
            addrs = [ctypes.addressof(s) for s in self.slots] + self.maps.addresses
            self.array = (ctypes.c_void_p * len(addrs))(*addrs)
        self.array_addr = ctypes.addressof(self.array)
        self._launch = _cu().cuLaunchKernel
        # Prebuilt pointer arguments: ctypes passes them without conversion.
        self._c_func = ctypes.c_void_p(int(func))
        self._c_params = ctypes.c_void_p(self.array_addr)
        self._c_launch: Any = None
        self.impl = ""
        self.use(os.environ.get(LAUNCH_ENV, "ctypes"))

    def use(self, impl: str) -> str:
        """Call ``cuLaunchKernel`` through ``"ctypes"`` or ``"bindings"``; returns the one used."""
        self._c_launch = _c_launch_kernel() if impl == "ctypes" else None
        self.impl = "ctypes" if self._c_launch is not None else "bindings"
        return self.impl

    def __call__(self, grid: Sequence[int], args: Sequence[Any], stream: Any = None) -> None:
        """Launch on ``stream`` (None: the legacy default stream; a handle or a torch stream)."""
        copies = self.fill_slots(args, self.kinds, stream=stream)
        gx, gy, gz = (tuple(int(g) for g in grid) + (1, 1, 1))[:3]
        self.launch_raw(gx, gy, gz, stream)
        if copies:
            self._copy_back(copies)

    def fill_slots(
        self, args: Sequence[Any], kinds: Sequence[str], pointers: list | None = None,
        stream: Any = None,
    ) -> list | None:  # fmt: skip
        """Put ``args`` (of ``kinds``, the first slots) into the slots.

        Returns the ``(array, device copy)`` pairs of NumPy arguments, or None;
        the copies are made on ``stream``. With ``pointers``, ``(index,
        argument, address)`` of each pointer argument is appended to it
        (debug mode needs their buffers).
        """
        if len(args) != len(kinds):
            raise TypeError(f"kernel '{self.name}' takes {len(kinds)} arguments, got {len(args)}")
        copies = None
        for i, (slot, kind, arg) in enumerate(zip(self.slots, kinds, args)):
            if kind != "ptr":
                slot.value = _convert_scalar(kind, arg)
                continue
            ptr = device_pointer(arg)
            if ptr is None:
                ptr, copies = self._host_arg(i, arg, copies, stream)
            slot.value = ptr
            if pointers is not None:
                pointers.append((i, arg, ptr))
        return copies

    def launch_raw(self, gx: int, gy: int, gz: int, stream: Any = None) -> None:
        """Launch with the arguments already in the slots."""
        _last_kernel[0] = self.name
        if self.maps is not None:
            self.maps.fill(self.slots)
        err = self._launch_once(gx, gy, gz, stream)
        if err:
            self._launch_failed(err, gx, gy, gz, stream)

    def _launch_once(self, gx: int, gy: int, gz: int, stream: Any) -> int:
        """``cuLaunchKernel`` through ctypes or cuda-bindings; its ``CUresult`` as an int."""
        c_launch = self._c_launch
        if c_launch is not None:
            # Plain ints travel as C ints: grid, block and shared sizes are all < 2**31.
            # A stream is a pointer: None is NULL (the legacy default stream, torch's default).
            if not stream:
                handle = None
            elif type(stream) is int:
                handle = ctypes.c_void_p(stream)
            else:
                handle = ctypes.c_void_p(_stream_handle(stream))
            return c_launch(
                self._c_func, gx, gy, gz, self.block, 1, 1, self.shared, handle,
                self._c_params, None,
            )  # fmt: skip
        err = self._launch(
            self.func, gx, gy, gz, self.block, 1, 1, self.shared, _stream(stream),
            self.array_addr, 0,
        )[0]  # fmt: skip
        return int(err)

    def _launch_failed(self, err: int, gx: int, gy: int, gz: int, stream: Any) -> None:
        """Raise the launch's error, unless it only found no context current in this thread.

        A launch of device arrays needs no other driver call, so a thread's
        first one meets the missing context here; a failed launch has done
        nothing, so it runs again once the context is current.
        """
        if err == INVALID_CONTEXT and _context_made_current():
            err = self._launch_once(gx, gy, gz, stream)
        if err:
            raise _error(_cu().CUresult(err), "cuLaunchKernel", self.name)

    def _host_arg(
        self, index: int, arg: Any, copies: list | None, stream: Any = None
    ) -> tuple[int, list]:
        if isinstance(arg, int) and not isinstance(arg, bool):
            return arg, copies or []
        if not isinstance(arg, np.ndarray):
            raise TypeError(
                f"argument {index} of kernel '{self.name}' must be a NumPy array or a device"
                " array (CUDA tensor, DeviceArray, __cuda_array_interface__), got"
                f" {type(arg).__name__}"
            )
        copies = copies or []
        for host, dev in copies:
            if _same_array(host, arg):  # one array passed twice: one device copy
                return dev.ptr, copies
        dev = DeviceArray.from_numpy(arg, stream)
        copies.append((arg, dev))
        return dev.ptr, copies

    def _copy_back(self, copies: list) -> None:
        synchronize(self.name)
        for host, dev in copies:
            if not host.flags.writeable:
                continue
            if host.flags.c_contiguous:
                dev.copy_to(host)
            else:
                host[...] = dev.to_numpy()


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two host arguments are views of the same elements (``f(x, x)``).

    Each gets one device copy, written back once: two copies would each be
    written back, and the one copied last would undo the kernel's stores
    through the other.
    """
    if a is b:
        return True
    same_start = a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    return same_start and (a.dtype, a.shape, a.strides) == (b.dtype, b.shape, b.strides)


#: ``CUDA_ERROR_INVALID_CONTEXT``: no context is current in the launching thread.
INVALID_CONTEXT = 201


def _context_made_current() -> bool:
    """Make our context current in this thread; False if it was already (the error is another's)."""
    if getattr(_this_thread, "has_context", False) or "ctx" not in _state:
        return False
    ensure_context()
    return True


def _c_launch_kernel() -> Any:
    """``cuLaunchKernel`` as a ctypes function without argtypes, or None."""
    return c_driver_function("cuLaunchKernel")


def c_driver_function(symbol: str, exported: str | None = None) -> Any:
    """The driver's ``symbol`` as a ctypes function without argtypes, or None.

    The pointer comes from ``cuGetProcAddress`` (legacy default stream, the
    stream PyTorch uses), so it is the entry point cuda-bindings calls too;
    the library's exported symbol (``exported``, e.g. a ``_v2`` name) is the
    fallback. Calling it skips cuda-bindings' per-call argument conversion,
    which matters where a call is measured in microseconds.
    """
    key = "c:" + symbol
    if key in _state:
        return _state[key]
    fn = None
    with contextlib.suppress(Exception):  # no libcuda, no symbol: cuda-bindings is used
        lib = ctypes.CDLL("libcuda.so.1")  # the library cuda-bindings has loaded already
        address = _proc_address(symbol)
        fn = lib._FuncPtr(address) if address else lib[exported or symbol]
        fn.restype = ctypes.c_int
    _state[key] = fn
    return fn


def _proc_address(symbol: str) -> int:
    """The driver's function pointer for ``symbol`` (0 if it cannot be had)."""
    cu = _cu()
    for name in (symbol, symbol.encode()):
        with contextlib.suppress(Exception):
            ensure_context()
            flags = cu.CUdriverProcAddress_flags.CU_GET_PROC_ADDRESS_LEGACY_STREAM
            result = cu.cuGetProcAddress(name, 12000, flags)
            if int(result[0]) == 0 and result[1]:
                return int(result[1])
    return 0


def _stream_handle(stream: Any) -> int:
    """A stream as an integer handle (0: the legacy default stream)."""
    handle = getattr(stream, "cuda_stream", None)  # torch.cuda.Stream
    return int(handle if handle is not None else stream)


def _stream(stream: Any) -> Any:
    if stream is None:
        return 0
    handle = getattr(stream, "cuda_stream", None)  # torch.cuda.Stream
    return handle if handle is not None else stream


def device_limits() -> DeviceLimits:
    """What one block may use on device 0 (read once)."""
    limits = _state.get("limits")
    if limits is None:
        ensure_context()
        cu = _cu()
        a = cu.CUdevice_attribute

        def attribute(which: Any) -> int:
            return int(check(cu.cuDeviceGetAttribute(which, _state["dev"]), "cuDeviceGetAttribute"))

        limits = _state["limits"] = DeviceLimits(
            device_name(),
            attribute(a.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
            attribute(a.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK),
            attribute(a.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
        )
    return limits


def load_kernel(ptx: str, name: str, shared: int, num_warps: int | None = None) -> Any:
    """Load PTX into the current context; returns the ``CUfunction``.

    With ``num_warps``, the kernel is first checked against the device's
    limits (:mod:`minitriton.resources`): shared memory and threads before
    loading, registers once loaded. Over a limit it raises
    :class:`~minitriton.runtime.errors.OutOfResources`, before any
    ``cuFuncSetAttribute`` or launch could fail inside the driver.
    """
    ensure_context()
    cu = _cu()
    limits = device_limits() if num_warps is not None else None
    if limits is not None:
        check_fits(name, Usage(shared, 32 * int(num_warps or 1)), limits)
    module = check(cu.cuModuleLoadData(ptx.encode() + b"\0"), "cuModuleLoadData", name)
    func = check(cu.cuModuleGetFunction(module, name.encode()), "cuModuleGetFunction", name)
    if limits is not None:
        try:
            check_fits(name, _loaded_usage(func, name, shared, 32 * int(num_warps or 1)), limits)
        except Exception:
            check(cu.cuModuleUnload(module), "cuModuleUnload", name)  # nothing will run it
            raise
    if shared > 48 * 1024:
        attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        check(cu.cuFuncSetAttribute(func, attr, shared), "cuFuncSetAttribute", name)
        # As Triton's launcher: the SM's largest shared-memory carveout (the rest is L1).
        prefer = cu.CUfunc_cache.CU_FUNC_CACHE_PREFER_SHARED
        check(cu.cuFuncSetCacheConfig(func, prefer), "cuFuncSetCacheConfig", name)
    _state.setdefault("modules", []).append(module)  # keep modules loaded for the process
    return func


def load_fuller(
    candidates: Sequence[tuple[str, int]], name: str, num_warps: int
) -> tuple[Any, int]:
    """Load each ``(ptx, shared)`` of one kernel; keep the one that fits most programs per SM.

    Two schedules of a loop can differ in registers enough that one fits
    fewer programs on a multiprocessor (see ``MINITRITON_DEFER_LAST_DOT`` in
    :mod:`~minitriton.backend.passes.software_pipeline`). The first wins a
    tie; one over the device's limits is passed over while another loads.
    Returns the ``CUfunction`` and its shared bytes.
    """
    from minitriton.runtime.errors import OutOfResources

    loaded: list[tuple[Any, int]] = []
    refused: OutOfResources | None = None
    for ptx, shared in candidates:
        try:
            loaded.append((load_kernel(ptx, name, shared, num_warps), shared))
        except OutOfResources as e:
            refused = refused or e
    if not loaded:
        assert refused is not None, "a kernel has at least one candidate"
        raise refused
    counts = [_programs_per_sm(func, name, 32 * num_warps, shared) for func, shared in loaded]
    return loaded[fullest(counts)]


def fullest(counts: Sequence[int]) -> int:
    """The index of the largest of ``counts``, the first one on a tie."""
    return max(range(len(counts)), key=lambda i: (counts[i], -i))


def _programs_per_sm(func: Any, name: str, threads: int, shared: int) -> int:
    """How many programs of ``func`` one multiprocessor holds at once."""
    cu = _cu()
    result = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, threads, shared)
    return int(check(result, "cuOccupancyMaxActiveBlocksPerMultiprocessor", name))


def _loaded_usage(func: Any, name: str, shared: int, threads: int) -> Usage:
    """What a loaded function needs: its registers, static shared memory and thread limit."""
    cu = _cu()
    a = cu.CUfunction_attribute

    def attribute(which: Any) -> int:
        return int(check(cu.cuFuncGetAttribute(which, func), "cuFuncGetAttribute", name))

    return Usage(
        shared + attribute(a.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
        threads,
        attribute(a.CU_FUNC_ATTRIBUTE_NUM_REGS),
        attribute(a.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
    )
