"""``triton._internal_testing``: the helpers Triton's own test suite imports.

Triton's unit tests (``test_core.py`` and its neighbours) start with
``from triton._internal_testing import numpy_random, to_triton, is_interpreter,
...``. With their imports rewritten to MiniTriton's, they find the same names
here, so such a suite runs on either backend:

* on the emulator (no GPU, or ``set_backend("emulator")``, or
  ``TRITON_INTERPRET=1``), :func:`is_interpreter` is True, as under Triton's
  interpreter, and the tests skip what only a GPU checks;
* on the GPU backend, :func:`is_cuda` is True and the architecture
  predicates read the device.

The helpers follow the behaviour of Triton's: the dtype lists, a seeded
``numpy_random`` whose integers are never 0 (tests divide by them),
``to_triton`` (unsigned and fp8 arrays become ``reinterpret`` wrappers) and
``to_numpy``. torch is needed, as for Triton's suite.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
from numpy.random import RandomState

import minitriton.language as tl
from minitriton.torch_interop import TensorWrapper, reinterpret

int_dtypes = ["int8", "int16", "int32", "int64"]
uint_dtypes = ["uint8", "uint16", "uint32", "uint64"]
integral_dtypes = int_dtypes + uint_dtypes
float_dtypes = ["float16", "float32", "float64"]
float_dtypes_with_bfloat16 = float_dtypes + ["bfloat16"]
dtypes = integral_dtypes + float_dtypes
dtypes_with_bfloat16 = dtypes + ["bfloat16"]
torch_float8_dtypes = ["float8_e4m3fn", "float8_e5m2"]
torch_dtypes = ["bool"] + int_dtypes + ["uint8"] + float_dtypes + ["bfloat16"]
tma_dtypes = sorted(set(dtypes_with_bfloat16) - {"int64", "uint64", "float64"})

#: Triton's test names for dtypes that differ from the ``tl`` attribute names.
_TL_NAMES = {"bool": "int1", "float8_e4m3fn": "float8e4nv", "float8_e5m2": "float8e5"}
#: ``tl`` dtype -> the NumPy / torch name of the same type.
_ARRAY_NAMES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
                "int1": "bool", "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2"}  # fmt: skip


def is_interpreter() -> bool:
    """True when kernels run on the emulator (MiniTriton's interpreter)."""
    from minitriton.jit import get_backend

    return os.environ.get("TRITON_INTERPRET", "0") == "1" or get_backend() == "emulator"


def get_current_target() -> Any:
    """The GPU's target, or None on the emulator (as under Triton's interpreter)."""
    if is_interpreter():
        return None
    from minitriton.runtime.driver import active

    return active.get_current_target()


def is_cuda() -> bool:
    """True when kernels run on an NVIDIA GPU."""
    target = get_current_target()
    return target is not None and target.backend == "cuda"


def _capability() -> tuple[int, int]:
    import torch

    return tuple(torch.cuda.get_device_capability())  # type: ignore[return-value]


def is_ampere_or_newer() -> bool:
    """An NVIDIA GPU of compute capability 8.0 or later."""
    return is_cuda() and _capability()[0] >= 8


def is_hopper_or_newer() -> bool:
    """An NVIDIA GPU of compute capability 9.0 or later."""
    return is_cuda() and _capability()[0] >= 9


def is_hopper() -> bool:
    """An NVIDIA Hopper GPU (compute capability 9.x)."""
    return is_cuda() and _capability()[0] == 9


def is_blackwell() -> bool:
    """An NVIDIA Blackwell GPU (compute capability 10.x)."""
    return is_cuda() and _capability()[0] == 10


def is_rubin() -> bool:
    """An NVIDIA Rubin GPU (compute capability 10.7, as Triton tells it)."""
    return is_cuda() and _capability() == (10, 7)


def is_sm12x() -> bool:
    """An NVIDIA GPU of compute capability 12.x."""
    return is_cuda() and _capability()[0] == 12


def _false() -> bool:
    """MiniTriton targets NVIDIA GPUs only."""
    return False


is_hip = is_hip_cdna = is_hip_cdna2 = is_hip_cdna3 = is_hip_cdna4 = _false
is_hip_rdna3 = is_hip_rdna4 = is_hip_mi300 = is_hip_mi350 = is_xpu = _false
is_hip_rdna4m = is_hip_gfx1250 = _false


def is_compile_warmup() -> bool:
    """Whether a test runs only to compile its kernels ahead (Triton's warm-up runs; never here)."""
    return False


def random_int(low: int, high: int, *, warmup_value: int | None = None, **kwargs: Any) -> int:
    """A random int in ``[low, high)``, drawn with torch (Triton's test helper)."""
    import torch

    return int(torch.randint(low, high, size=(), **kwargs).item())


def random_float(*, warmup_value: float = 0.5, **kwargs: Any) -> float:
    """A random float in ``[0, 1)``, drawn with torch (Triton's test helper)."""
    import torch

    return float(torch.rand((), **kwargs).item())


def get_arch() -> str:
    """The target's architecture as a string ("" on the emulator)."""
    target = get_current_target()
    return "" if target is None else str(target.arch)


def numpy_random(
    shape: int | tuple[int, ...], dtype_str: str, rs: RandomState | None = None,
    low: int | None = None, high: int | None = None,
) -> np.ndarray:  # fmt: skip
    """Random values of ``dtype_str``: integers in ``[low, high)`` but never 0, normal floats,
    bf16-exact fp32 for ``bfloat16``, small codes for fp8, coin flips for ``bool``."""
    shape = (shape,) if isinstance(shape, int) else shape
    rs = RandomState(seed=17) if rs is None else rs
    if dtype_str in integral_dtypes:
        info = np.iinfo(getattr(np, dtype_str))
        low = info.min if low is None else max(low, info.min)
        high = info.max if high is None else min(high, info.max)
        x = rs.randint(low, high, shape, dtype=getattr(np, dtype_str))
        x[x == 0] = 1  # never 0: the tests divide by these values
        return x
    if "float8" in dtype_str:
        return rs.randint(20, 40, shape, dtype=np.int8)
    if dtype_str in float_dtypes:
        return rs.normal(0, 1, shape).astype(dtype_str)
    if dtype_str == "bfloat16":
        bits = rs.normal(0, 1, shape).astype("float32").view("uint32") & np.uint32(0xFFFF0000)
        return bits.view("float32")
    if dtype_str in ("bool", "int1", "bool_"):
        return rs.normal(0, 1, shape) > 0.0
    raise RuntimeError(f"Unknown dtype {dtype_str}")


def to_triton(x: np.ndarray, device: Any, dst_type: str | None = None) -> Any:
    """A torch tensor of ``x`` on ``device``: unsigned and fp8 data as ``reinterpret``
    wrappers, fp32 as bf16 when ``dst_type`` says so."""
    import torch

    name = x.dtype.name
    if name in uint_dtypes:
        signed = x.astype(getattr(np, name[1:]))
        return reinterpret(torch.tensor(signed, device=device), getattr(tl, name))
    if dst_type and "float8" in dst_type:
        return reinterpret(torch.tensor(x, device=device), getattr(tl, dst_type))
    if name == "float32" and dst_type == "bfloat16":
        return torch.tensor(x, device=device).bfloat16()
    return torch.tensor(x, device=device)


def str_to_triton_dtype(x: str) -> Any:
    """The ``tl`` dtype of a NumPy or torch dtype name (``"bool"``, ``"float8_e5m2"`` ...)."""
    return getattr(tl, _TL_NAMES.get(x, x))


def torch_dtype_name(dtype: Any) -> str:
    """``"int64"`` for ``torch.int64`` and for ``tl.int64``; ``"float32"`` for ``tl.float32``."""
    if isinstance(dtype, tl.dtype):
        return _ARRAY_NAMES.get(dtype.triton_name, dtype.triton_name)
    text = str(dtype)
    if text.startswith("torch."):
        return text.removeprefix("torch.")
    raise TypeError(f"not a triton or torch dtype: {type(dtype)}")


def to_numpy(x: Any) -> np.ndarray:
    """A NumPy copy of a tensor or ``reinterpret`` wrapper (bf16 as fp32)."""
    import torch

    if isinstance(x, TensorWrapper):
        return x.base.cpu().numpy().astype(getattr(np, torch_dtype_name(x.dtype)))
    if isinstance(x, torch.Tensor):
        return (x.cpu().float() if x.dtype is torch.bfloat16 else x.cpu()).numpy()
    raise ValueError(f"Not a triton-compatible tensor: {x}")


def supports_tma(byval_only: bool = False) -> bool:
    """Tensor descriptors run: always on the emulator, on sm_90 and later GPUs."""
    return is_interpreter() or is_hopper_or_newer()


def supports_ws() -> bool:
    """Warp specialization runs: always on the emulator, on sm_90 and later GPUs."""
    return is_interpreter() or is_hopper_or_newer()


def tma_skip_msg(byval_only: bool = False) -> str:
    """Why a TMA test is skipped."""
    return "Requires TMA support (NVIDIA Hopper or later)"


def default_alloc_fn(size: int, align: int, _: Any) -> Any:
    """A scratch allocator for ``triton.set_allocator`` (MiniTriton never calls it)."""
    import torch

    return torch.empty(size, dtype=torch.int8, device="cuda" if is_cuda() else "cpu")


@dataclass
class ProcessResult:
    """What :func:`run_in_process` returns: the exception the function raised, if any."""

    exc: BaseException | None
    driver_stderr_output: str


def run_in_process(
    client_fn: Callable[..., Any],
    args: Sequence[Any] = (),
    kwargs: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
) -> ProcessResult:
    """Call ``client_fn(*args, **kwargs)`` with ``env`` added to the environment.

    Triton runs it in a child process, because a failed device assertion ends
    the CUDA context. Here it runs in this process (MiniTriton's errors leave
    the GPU usable, and a child would import the real Triton, not the alias):
    the environment is restored afterwards, and the exception is returned.
    """
    saved = {name: os.environ.get(name) for name in env or {}}
    os.environ.update(env or {})
    try:
        client_fn(*args, **(kwargs or {}))
        return ProcessResult(None, "")
    except Exception as e:  # noqa: BLE001 - the caller inspects it
        return ProcessResult(e, "")
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextmanager
def use_process_pool(preload_module: str) -> Iterator[None]:
    """Triton's pool of child processes for :func:`run_in_process`; here there is none,
    since it runs its function in this process."""
    yield None


def unwrap_tensor(t: Any) -> Any:
    """The tensor under a ``reinterpret`` wrapper."""
    return t.base if isinstance(t, TensorWrapper) else t


def _fresh_knobs_impl(
    skipped_attr: set[str] | None = None,
) -> tuple[Callable[[], ModuleType], Callable[[], None]]:
    """``(fresh, reset)`` for Triton's ``fresh_knobs`` fixtures.

    ``fresh()`` replaces every knob group of :mod:`minitriton.knobs` but those
    named in ``skipped_attr`` by a new one (no overrides, empty hook chains),
    removes the groups' environment variables, turns ``propagate_env`` on
    and returns the module. ``reset()`` puts back the groups, the variables
    and ``propagate_env`` as they were before ``fresh()``.
    """
    from minitriton import knobs

    skipped = skipped_attr or set()
    groups = {
        name: group
        for name, group in vars(knobs).items()
        if isinstance(group, knobs.base_knobs) and name not in skipped
    }
    propagate = knobs.propagate_env
    saved_env: dict[str, str | None] = {}

    def fresh() -> ModuleType:
        for name, group in groups.items():
            new = type(group)()
            for attr, chain in group.hook_chains().items():
                setattr(new, attr, knobs.HookChain(reversed=chain.reversed))
            setattr(knobs, name, new)
            for var in group.variables():
                saved_env.setdefault(var, os.environ.get(var))
                os.environ.pop(var, None)
        knobs.propagate_env = True
        return knobs

    def reset() -> None:
        for name, group in groups.items():
            setattr(knobs, name, group)
        for var, value in saved_env.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
        saved_env.clear()
        knobs.propagate_env = propagate

    return fresh, reset


try:  # a pytest mark, as Triton's module has it (pytest is a test tool, not a dependency)
    import pytest

    requires_tma = pytest.mark.skipif(not supports_tma(), reason=tma_skip_msg())
except ImportError:  # pragma: no cover - without pytest there is nothing to mark
    pass
