"""``@jit`` kernels and their launches: ``kernel[grid](*args, **meta)``.

A launch does what Triton's launcher does:

1. bind the arguments to the kernel's parameters (defaults apply) and split
   off launch options (``num_warps``, ``num_stages``, ``num_ctas``,
   ``maxnreg``, ``debug``, and MiniTriton's ``backend``);
2. turn each argument into an :class:`~minitriton.frontend.source.ArgSpec`
   by Triton's rules (:func:`minitriton.signature.spec_for_value`);
3. look the specialization key (every ArgSpec's key plus the options) up in
   the kernel's in-memory cache, then in the on-disk IR cache
   (:mod:`minitriton.ircache`), compiling on a miss
   (:func:`minitriton.compiler.compile_kernel`);
4. evaluate the grid (a tuple, or a callable taking the meta dict) and run
   the kernel on the selected backend: the NumPy emulator or the GPU. On
   the GPU a launch runs on the stream :mod:`minitriton.streams` picks:
   ``stream=``, else torch's current stream for PyTorch CUDA tensors, else
   the legacy default stream.

The backend is, in order of precedence: a launch's ``backend=`` keyword,
:func:`set_backend`, the ``MINITRITON_BACKEND`` environment variable
(``emulator`` or ``gpu``), Triton's ``TRITON_INTERPRET=1`` (the emulator),
and otherwise the GPU when one is available.

``import minitriton`` imports this module, and a ``@jit`` definition runs
it, without NumPy: the modules that need NumPy (the argument checks, the
host copies, the streams) are imported by the functions that launch.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import inspect
import operator
import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NoReturn

from minitriton import compiled_api, env, ircache
from minitriton.compiler import CompiledKernel, CompileOptions, compile_kernel
from minitriton.compiler import preload as preload_components
from minitriton.diagnostics import CompileError, UserError, error, full_traceback, trimmed
from minitriton.env import BACKEND_ENV, CHECKS_ENV, DEBUG_ENV, debug_enabled
from minitriton.frontend.source import ArgSpec, JITBase, KernelSource
from minitriton.ir.types import BF16, PointerType, ScalarType
from minitriton.language.core import constexpr
from minitriton.runtime.errors import OutOfResources, as_interpreter_error
from minitriton.signature import (
    Param,
    annotated_spec,
    const_spec,
    kernel_params,
    spec_for_value,
)

if TYPE_CHECKING:
    import numpy as np

    from minitriton.launch_checks import LaunchTypeError

# ---------------------------------------------------------------------------
# Backend selection
# ---------------------------------------------------------------------------

BACKENDS = ("emulator", "gpu")

#: Set by the debugging tools (:func:`minitriton.emulator.debug.tools.using`): emulator
#: launches then call ``EMULATOR_HOOK(compiled, grid, values)`` instead.
EMULATOR_HOOK: Callable[[Any, tuple[int, int, int], list[Any]], None] | None = None

_selected_backend: str | None = None


def set_backend(name: str | None) -> None:
    """Run kernels on ``"emulator"`` or ``"gpu"``; ``None`` restores the default."""
    global _selected_backend
    if name is not None:
        _check_backend_name(name, "set_backend()")
    _selected_backend = name


def get_backend() -> str:
    """The backend launches use unless they pass ``backend=``."""
    if _selected_backend is not None:
        return _selected_backend
    env = os.environ.get(BACKEND_ENV, "").strip().lower()
    if env:
        _check_backend_name(env, BACKEND_ENV)
        return env
    if os.environ.get("TRITON_INTERPRET", "0").strip() == "1":
        return "emulator"  # Triton's switch to its interpreter
    return "gpu" if gpu_available() else "emulator"


def resolve_backend(override: str | None = None) -> str:
    """``override`` if given (checked), else :func:`get_backend`."""
    if override is None:
        return get_backend()
    _check_backend_name(override, "backend=")
    return override


def _check_backend_name(name: str, where: str) -> None:
    if name not in BACKENDS:
        raise ValueError(f"{where}: unknown backend {name!r}; expected 'emulator' or 'gpu'")


@functools.cache
def gpu_available() -> bool:
    """True when the GPU backend loads, cuda-python is importable and a device is present.

    Without cuda-python or without NVIDIA's driver (a laptop, CI) the answer
    comes without importing the GPU backend and llvmlite: choosing the
    emulator costs the first launch nothing.
    """
    if not _cuda_python_installed() or not _driver_library_loads():
        return False
    try:
        from minitriton.backend import gpu_available as backend_gpu_available
    except ImportError:
        return False
    return bool(backend_gpu_available())


@functools.cache
def _cuda_python_installed() -> bool:
    try:
        return importlib.util.find_spec("cuda.bindings") is not None
    except (ImportError, ValueError):  # no `cuda` package at all, or a stand-in
        return False


#: The CUDA driver's library, which cuda-python loads (its name on Windows, elsewhere).
DRIVER_LIBRARY = "nvcuda.dll" if os.name == "nt" else "libcuda.so.1"


def _driver_library_loads() -> bool:
    import ctypes

    try:
        ctypes.CDLL(DRIVER_LIBRARY)  # loading it initializes nothing
    except OSError:  # no NVIDIA driver on this machine
        return False
    return True


# ---------------------------------------------------------------------------
# The launch syntax shared by @jit, @autotune and @heuristics
# ---------------------------------------------------------------------------

Grid = Sequence[int] | Callable[[dict[str, Any]], Sequence[int]]

#: Launch keywords that are not kernel arguments (``stream`` too, see :mod:`minitriton.streams`).
LAUNCH_OPTIONS: tuple[str, ...] = ("num_warps", "num_stages", "num_ctas", "maxnreg", "debug")
LAUNCH_OPTIONS += ("backend", "arch", "default_dot_input_precision", "enable_fp_fusion")
LAUNCH_OPTIONS += ("enable_reflect_ftz",)
#: Triton launch keywords accepted for compatibility; they change nothing here.
IGNORED_OPTIONS: tuple[str, ...] = ("launch_cooperative_grid",)
IGNORED_OPTIONS += ("sanitize_overflow",)
# launch_pdl: programmatic dependent launch lets the next launch start early; without it the
# launches run one after another, and tl.extra.cuda.gdc_wait() has nothing to wait for.
IGNORED_OPTIONS += ("launch_pdl", "ptx_options", "clc")
# cluster_dims (1, 1, 1), warp_size 32, ptx_version and instrumentation_mode: Triton's defaults.
IGNORED_OPTIONS += ("cluster_dims", "warp_size", "ptx_version", "instrumentation_mode")
# extern_libs: libdevice is found on its own (MINITRITON_LIBDEVICE names another copy).
IGNORED_OPTIONS += ("extern_libs",)


# ---------------------------------------------------------------------------
# torch.compile: a launch runs eagerly, between two graphs
# ---------------------------------------------------------------------------

#: Why TorchDynamo stops at a launch (shown by ``torch._dynamo.explain``).
DYNAMO_BREAK_REASON = (
    "a MiniTriton kernel launch runs eagerly between graphs; register the function that "
    "launches it with minitriton.torch_ops.custom_op to keep one graph"
)

#: While a thread runs a custom op's fake implementation, it launches through this hook.
_hooks = threading.local()
#: How many threads have a launch hook now (a launch tests only this: ~10 ns).
_hook_users = 0


def graph_break(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``fn`` so that TorchDynamo calls it eagerly, in a graph break, never inlined.

    This is the attribute ``torch.compiler.disable`` sets, set without importing
    torch: MiniTriton never imports torch on its own.
    """
    fn._torchdynamo_disable = True  # type: ignore[attr-defined]
    fn._torchdynamo_disable_msg = DYNAMO_BREAK_REASON  # type: ignore[attr-defined]
    return fn


def _hooked(kernel: Any, grid: Any) -> Callable[..., Any] | None:
    """This thread's launch hook's launcher for ``kernel[grid]``, if it has a hook."""
    hook = getattr(_hooks, "launch", None)
    return hook(kernel, grid) if hook is not None else None


def notice_dynamo() -> None:
    """If TorchDynamo is loaded, make sure it skips MiniTriton's launch machinery.

    Called once TorchDynamo is imported (see :class:`_DynamoImportWatcher`) and
    by ``@jit`` (TorchDynamo may have come first): a call into a skipped module
    is a graph break that runs as plain Python, never traced.
    """
    if "torch._dynamo" in sys.modules:
        from minitriton.torch_ops import skip_in_dynamo

        skip_in_dynamo()


class _DynamoImportWatcher:
    """A ``sys.meta_path`` entry that finds nothing itself: after ``torch._dynamo`` is
    imported (``torch.compile`` does it), it calls :func:`notice_dynamo`, then leaves.

    So TorchDynamo skips MiniTriton from its first trace on, whatever the import
    order, even when the first launch it meets is a ``kernel.run(...)`` call.
    """

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "torch._dynamo":
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _NoticeAfterLoading(spec.loader)  # type: ignore[assignment]
        return spec


class _NoticeAfterLoading:
    """A module loader that runs the wrapped one, then :func:`notice_dynamo`."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        # Should a later torch move its skip list, launches still break the graph.
        with contextlib.suppress(ImportError, AttributeError):
            notice_dynamo()

    def __getattr__(self, name: str) -> Any:  # get_source, is_package, ...
        return getattr(self.loader, name)


if "torch._dynamo" not in sys.modules:
    sys.meta_path.insert(0, _DynamoImportWatcher())


@contextlib.contextmanager
def launch_hook(hook: Callable[[Any, Any], Callable[..., Any]]) -> Any:
    """In this thread, ``kernel[grid]`` returns ``hook(kernel, grid)`` instead of a launcher."""
    global _hook_users
    previous = getattr(_hooks, "launch", None)
    _hooks.launch = hook
    _hook_users += 1
    try:
        yield
    finally:
        _hooks.launch = previous
        _hook_users -= 1


#: Every kernel object by ``id``: a launch captured into a torch graph names its kernel so.
KERNELS: weakref.WeakValueDictionary[int, KernelInterface] = weakref.WeakValueDictionary()


class KernelInterface:
    """``kernel[grid](*args, **kwargs)`` calls ``kernel.run(*args, grid=grid, **kwargs)``."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        kernel = super().__new__(cls)
        KERNELS[id(kernel)] = kernel
        return kernel

    @graph_break
    def run(self, *args: Any, grid: Grid | None, warmup: bool = False, **kwargs: Any) -> Any:
        """Launch (or with ``warmup=True`` only compile) the kernel."""
        raise NotImplementedError

    @graph_break
    def __getitem__(self, grid: Grid) -> Callable[..., Any]:
        if _hook_users:
            hooked = _hooked(self, grid)
            if hooked is not None:
                return hooked

        def launcher(*args: Any, **kwargs: Any) -> Any:
            return self.run(*args, grid=grid, warmup=False, **kwargs)

        return launcher


class LaunchMetadata:
    """What Triton's ``launch_enter_hook`` and ``launch_exit_hook`` receive: ``get()`` is
    the kernel's name and stream, plus what the kernel's ``launch_metadata(grid,
    metadata, args)`` function returns (computed on first use)."""

    def __init__(
        self, fn: JITFunction, compiled: Any, grid: tuple[int, int, int], bound: dict, stream: Any
    ) -> None:
        self._fn, self._compiled, self._grid = fn, compiled, grid
        self._bound, self._stream = bound, stream
        self._data: dict[str, Any] | None = None

    def get(self) -> dict[str, Any]:
        """The metadata as a dict."""
        if self._data is None:
            data = {"name": self._compiled.name, "function": None, "stream": self._stream}
            if self._fn.launch_metadata is not None:
                args = {
                    k: v.value if isinstance(v, constexpr) else v for k, v in self._bound.items()
                }
                data.update(self._fn.launch_metadata(self._grid, self._compiled.metadata, args))
            self._data = data
        return self._data


def _runtime_knobs() -> Any:
    """``minitriton.knobs.runtime`` once a program has imported the knobs (setting a hook
    does), else None: the launch path then checks for no hook at all."""
    knobs = sys.modules.get("minitriton.knobs")
    return knobs.runtime if knobs is not None else None


def _launch_hooks(runtime: Any) -> bool:
    """Whether a launch hook is set (the fast launch path calls none)."""
    return runtime is not None and bool(
        runtime.launch_enter_hook.calls or runtime.launch_exit_hook.calls
    )


class MockTensor:
    """A stand-in for a tensor when only its dtype matters (Triton's ``MockTensor``):
    ``kernel.warmup(MockTensor(torch.float32), ...)``.

    Triton's ``triton.runtime.jit.MockTensor``: its address is 0 (so taken as 16-byte
    aligned) and its strides are those of a contiguous tensor of ``shape``.
    """

    def __init__(self, dtype: Any, shape: Sequence[int] | None = None) -> None:
        self.dtype = dtype
        self.shape = list(shape) if shape is not None else [1]

    @staticmethod
    def wrap_dtype(arg: Any) -> Any:
        """A torch dtype becomes a :class:`MockTensor` of it; anything else is kept."""
        if type(arg).__name__ == "dtype" and type(arg).__module__ == "torch":
            return MockTensor(arg)
        return arg

    @staticmethod
    def wrap_arguments(
        args: Sequence[Any], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``warmup``'s arguments with each torch dtype a :class:`MockTensor` (Triton's rule)."""
        wrapped = tuple(MockTensor.wrap_dtype(a) for a in args)
        return wrapped, {k: MockTensor.wrap_dtype(v) for k, v in kwargs.items()}

    def stride(self) -> tuple[int, ...]:
        """Row-major strides, in elements."""
        strides = [1]
        for size in reversed(self.shape[1:]):
            strides.append(strides[-1] * size)
        return tuple(reversed(strides))

    @staticmethod
    def data_ptr() -> int:
        """0: a multiple of 16, as Triton assumes."""
        return 0

    @staticmethod
    def ptr_range() -> int:
        """0: within a 32-bit range, as Triton assumes."""
        return 0


def base_jit_function(fn: Any) -> JITFunction:
    """The :class:`JITFunction` under any stack of ``@autotune``/``@heuristics``."""
    while not isinstance(fn, JITFunction):
        if not hasattr(fn, "fn"):
            raise TypeError(f"{fn!r} is not a @minitriton.jit function")
        fn = fn.fn
    return fn


# ---------------------------------------------------------------------------
# @jit
# ---------------------------------------------------------------------------


def _specialization_proxy(specs: list[ArgSpec]) -> Any:
    """What Triton passes to ``@jit(repr=fn)``: ``.signature`` and ``.constants`` by name.

    ``signature`` maps each parameter to its type (``"i32"``, ``"ptr<f32>"``,
    ``"constexpr"``); ``constants`` maps the compile-time ones, integers
    specialized as equal to 1 included, to their values.
    """
    from types import SimpleNamespace

    signature, constants = {}, {}
    for s in specs:
        if s.kind == "constexpr" or s.equal_to_1:
            signature[s.name] = "constexpr"
            constants[s.name] = 1 if s.equal_to_1 else s.value
        else:
            signature[s.name] = str(s.type) if s.type is not None else s.kind
    return SimpleNamespace(signature=signature, constants=constants)


class KernelCache(Mapping[tuple[Any, ...], CompiledKernel]):
    """A kernel's compiled specializations, read-only but for :meth:`clear`."""

    def __init__(self, fn: JITFunction) -> None:
        self._fn = fn

    def __getitem__(self, key: tuple[Any, ...]) -> CompiledKernel:
        return self._fn.cache[key]

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self._fn.cache)

    def __len__(self) -> int:
        return len(self._fn.cache)

    def clear(self) -> None:
        """Drop them all: the next launch compiles again."""
        self._fn.forget_compiled()


class DeviceCaches(Mapping[Any, tuple[KernelCache]]):
    """Triton's ``JITFunction.device_caches``: every device maps to ``(compiled kernels,)``."""

    def __init__(self, fn: JITFunction) -> None:
        self._fn = fn

    def __getitem__(self, device: Any) -> tuple[KernelCache]:
        return (KernelCache(self._fn),)

    def __iter__(self) -> Iterator[Any]:
        return iter([0] if self._fn.cache else [])

    def __len__(self) -> int:
        return 1 if self._fn.cache else 0

    def clear(self) -> None:
        """Drop every compiled kernel."""
        self._fn.forget_compiled()


class JITFunction(KernelInterface, JITBase):
    """A ``@jit`` kernel: compiled per specialization, cached in memory.

    Attributes: ``fn`` (the Python function), ``source``
    (:class:`~minitriton.frontend.source.KernelSource`), ``params``,
    ``arg_names``, ``cache`` (specialization key -> :class:`CompiledKernel`)
    and ``compile_count`` (how many specializations were compiled, or loaded
    from the on-disk cache).
    """

    __name__: str  # the kernel function's, set by functools.update_wrapper

    def __init__(
        self,
        fn: Callable[..., Any],
        version: Any = None,
        do_not_specialize: Sequence[int | str] | None = None,
        do_not_specialize_on_alignment: Sequence[int | str] | None = None,
        debug: bool | None = None,
        noinline: bool | None = None,
        repr: Callable[[Any], str] | None = None,  # noqa: A002 - Triton's parameter names
        launch_metadata: Callable[..., Any] | None = None,
    ) -> None:
        # Triton's parameters, in Triton's order: libraries that build kernels copy
        # them from one JITFunction to the next by these names (triton_kernels' specialize).
        self.fn = fn
        self.source = _capture_source(fn)
        # Triton's record of the function's own text: lines (decorators included),
        # the first one's file line, the ``def``'s 1-based column.
        self.raw_src: list[str] = self.source.source.splitlines(keepends=True)
        self.starting_line_number = self.source.first_line
        def_line = self.raw_src[self.source.def_index()]
        self.def_file_col_number = len(def_line) - len(def_line.lstrip()) + 1
        self.params: list[Param] = kernel_params(fn)
        self.arg_names = [p.name for p in self.params]
        self.debug = debug
        self.version, self.noinline, self.launch_metadata = version, noinline, launch_metadata
        self.do_not_specialize = do_not_specialize or ()
        self.do_not_specialize_on_alignment = do_not_specialize_on_alignment or ()
        self.repr: Callable[[Any], str] = repr or (lambda _: fn.__name__)
        #: ``repr`` names each compiled kernel (Triton's ``@jit(repr=...)``).
        self._named_by_repr = repr is not None
        self._no_spec = set(self._param_names(self.do_not_specialize))
        self._no_align_spec = set(self._param_names(self.do_not_specialize_on_alignment))
        self.params = [replace(p, do_not_specialize=p.name in self._no_spec,
                               do_not_specialize_on_alignment=p.name in self._no_align_spec)
                       for p in self.params]  # fmt: skip
        #: The Python function's signature (Triton's ``JITFunction.signature``).
        self.signature = inspect.signature(fn)
        self.cache: dict[tuple[Any, ...], CompiledKernel] = {}
        self.compile_count = 0
        #: Called with a launch's arguments before it runs (Triton's ``pre_run_hooks``).
        self.pre_run_hooks: list[Callable[..., Any]] = []
        self._fast = FastLaunchCache(self)
        functools.update_wrapper(self, fn)
        notice_dynamo()  # TorchDynamo may have been imported before MiniTriton
        preload(self.source)

    @property
    def rewriter(self) -> Any:
        """Where the kernel's ``def`` line is (``filename``, ``def_file_lineno``): the names of
        Triton's interpreter, whose ``rewrite()`` moves a kernel's line numbers there."""
        from types import SimpleNamespace

        line = self.source.first_line + self.source.def_index()
        return SimpleNamespace(filename=self.source.filename, def_file_lineno=line)

    def rewrite(self) -> Callable[..., Any]:
        """Triton's interpreter step that makes the kernel's code report file line numbers;
        MiniTriton's diagnostics always do, so this returns the function unchanged."""
        return self.fn

    def add_pre_run_hook(self, hook: Callable[..., Any]) -> None:
        """Call ``hook(*args, **kwargs)`` with each launch's arguments before it runs
        (and before a ``warmup``'s compile), as Triton's ``add_pre_run_hook`` does."""
        if not callable(hook):
            raise TypeError(f"add_pre_run_hook takes a callable, not {hook!r}")
        self.pre_run_hooks.append(hook)

    def _param_names(self, items: Sequence[int | str]) -> list[str]:
        return [self.arg_names[i] if isinstance(i, int) else i for i in items]

    @property
    def src(self) -> str:
        """The kernel's source text from its ``def`` line (Triton's ``JITFunction.src``:
        libraries paste it into code they generate, without the decorators)."""
        return self.source.from_def()

    @property
    def __globals__(self) -> dict[str, Any]:
        """The function's globals (Triton's ``JITFunction.__globals__``)."""
        return self.source.globals

    def get_capture_scope(self) -> dict[str, Any]:
        """The names the kernel's body can see: its globals, then its closure's variables
        (Triton 3.8's ``JITFunction.get_capture_scope``)."""
        fn = self.fn
        if fn.__closure__ is None:
            return self.__globals__
        cells = zip(fn.__code__.co_freevars, fn.__closure__)
        return self.__globals__ | {name: cell.cell_contents for name, cell in cells}

    def is_gluon(self) -> bool:
        """Always false: MiniTriton has no Gluon (Triton's check before it writes ``tl.``
        or ``gl.`` into the source of a kernel it generates)."""
        return False

    # Triton's names for where the kernel's text is. Code generators that
    # compile a generated text (triton_kernels' specialize) set ``file_name``
    # and ``def_file_line_number`` to their template's, so that diagnostics
    # point into the template: here, as in Triton, these two move the lines
    # the frontend reports (``raw_src`` and ``starting_line_number`` are
    # plain attributes, which Triton does not compile from either).
    @property
    def file_name(self) -> str:
        """The file diagnostics name (Triton's ``JITFunction.file_name``)."""
        return self.source.filename

    @file_name.setter
    def file_name(self, name: str) -> None:
        self.source = replace(self.source, filename=name)

    @property
    def def_file_line_number(self) -> int:
        """The file line of the ``def`` (Triton's ``def_file_line_number``)."""
        return self.source.first_line + self.source.def_index()

    @def_file_line_number.setter
    def def_file_line_number(self, line: int) -> None:
        self.source = replace(self.source, first_line=line - self.source.def_index())

    @property
    def cache_key(self) -> str:
        """A hash of the kernel's source, the helpers it calls and the globals it reads
        (Triton's ``JITFunction.cache_key``, which code generators name files by)."""
        text = "\0".join(ircache.source_closure(self.source))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def _unsafe_update_src(self, new_src: str) -> None:
        """Compile ``new_src`` from now on instead of the function's own text.

        Triton's hook for tests that patch a kernel's text, e.g.
        ``k._unsafe_update_src(k.src.replace("OP", "x + y"))``. Compiled
        specializations are dropped; the parameters stay the function's.
        """
        self.source = self.source.with_text(new_src)
        self.forget_compiled()

    def preload(self, specialization_data: str) -> CompiledKernel:
        """Compile the specialization that ``specialization_data`` describes (Triton's).

        The text is what a compile hook received as ``compile["specialization_data"]``
        (:mod:`minitriton.runtime.specialization`); the kernel is compiled, or
        found in the caches, for the backend it was compiled for then.
        """
        from minitriton.runtime import specialization

        specs, options, backend = specialization.loads(specialization_data, self.__name__)
        return self.compile(specs, options, backend)

    def forget_compiled(self) -> None:
        """Drop every compiled specialization: the next launch compiles again."""
        self.cache.clear()
        self._fast = FastLaunchCache(self)

    @property
    def device_caches(self) -> DeviceCaches:
        """Triton's per-device caches, for tests that clear them to force a recompile.

        ``kernel.device_caches[device][0]`` is the compiled kernels (one table
        for every device here); ``.clear()`` on it or on ``device_caches`` drops
        them all.
        """
        return DeviceCaches(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"@jit kernel '{self.__name__}' cannot be called directly outside a kernel: "
            f"launch it with {self.__name__}[grid](...)"
        )

    def __repr__(self) -> str:
        return f"JITFunction({self.fn.__module__}:{self.fn.__qualname__})"

    # -- launching -------------------------------------------------------
    @graph_break
    def __getitem__(self, grid: Grid) -> Callable[..., Any]:
        if _hook_users:
            hooked = _hooked(self, grid)
            if hooked is not None:
                return hooked
        fast = self._fast

        def launcher(*args: Any, **kwargs: Any) -> Any:
            if self.pre_run_hooks or _launch_hooks(_runtime_knobs()):  # run() calls them
                return self.run(*args, grid=grid, **kwargs)
            compiled = fast.launch(args, kwargs, grid)  # None: take the full path
            return compiled if compiled is not None else self.run(*args, grid=grid, **kwargs)

        return launcher

    @graph_break
    def run(self, *args: Any, grid: Grid | None, warmup: bool = False, **kwargs: Any) -> Any:
        """Bind, specialize, compile if needed and (unless ``warmup``) launch."""
        for hook in self.pre_run_hooks:
            hook(*args, **kwargs)
        hooks = _runtime_knobs()
        if not warmup and not _launch_hooks(hooks):
            compiled = self._fast.launch(args, kwargs, grid)
            if compiled is not None:
                return compiled
        call_kwargs = kwargs
        timeout = None  # the emulator's time budget, unless the kernel has such a parameter
        if "timeout" in kwargs and "timeout" not in self.arg_names:
            kwargs = dict(kwargs)
            timeout = kwargs.pop("timeout")
        max_steps = None  # and its step budget
        if "max_steps" in kwargs and "max_steps" not in self.arg_names:
            kwargs = dict(kwargs)
            max_steps = kwargs.pop("max_steps")
        stream = None  # a GPU launch's stream= (the emulator has none)
        if "stream" in kwargs and "stream" not in self.arg_names:
            kwargs = dict(kwargs)
            stream = kwargs.pop("stream")
        from minitriton import launch_checks

        given_options = {k: kwargs[k] for k in IGNORED_OPTIONS if k in kwargs}
        options, backend, kwargs = self._split_options(kwargs)
        bound = self.bind(args, kwargs)
        launch_checks.check_arguments(self.__name__, self.params, bound)
        specs = self.specialize(bound)
        try:
            # Triton's compile hooks (triton.knobs.runtime), around a compile that is needed.
            fresh = hooks is not None and not self.is_compiled(specs, options, backend)
            info = (
                self._hook_info(specs, options, warmup, given_options, backend) if fresh else None
            )
            if (
                info is not None
                and hooks.jit_cache_hook is not None
                and hooks.jit_cache_hook(**info)
            ):
                return None  # Triton's contract: the hook took the compile over
            mode = async_compile_mode() if warmup else None
            if mode is not None:
                key = (id(self), tuple(s.key() for s in specs), options.key(), backend)
                # A compile this block started stays its future, even once it has ended.
                if key in mode.future_kernels or not self.is_compiled(specs, options, backend):
                    return self._compile_later(mode, key, specs, options, backend, hooks, info)
            compiled = self.compile(specs, options, backend)
            if info is not None and hooks.jit_post_compile_hook is not None:
                hooks.jit_post_compile_hook(**info)
        except (CompileError, OutOfResources) as e:
            raise_for_user(e, specs, options, backend)
        if warmup:
            return compiled
        meta = {k: v.value if isinstance(v, constexpr) else v for k, v in bound.items()}
        grid3 = launch_checks.check_grid(self.__name__, grid, meta)
        launch_checks.check_outputs(self.__name__, compiled, bound)
        metadata = LaunchMetadata(self, compiled, grid3, bound, stream)
        if hooks is not None and hooks.launch_enter_hook.calls:
            hooks.launch_enter_hook(metadata)
        with (
            _time_budget(self.__name__, timeout, backend),
            _step_budget(self.__name__, max_steps, backend),
        ):
            launch(compiled, grid3, kernel_args(compiled, bound), backend, stream)
        if hooks is not None and hooks.launch_exit_hook.calls:
            hooks.launch_exit_hook(metadata)
        if backend == "gpu":
            self._fast.remember(args, call_kwargs, bound, compiled, stream)
        return compiled

    def _compile_later(
        self, mode: Any, key: tuple, specs: list[ArgSpec], options: CompileOptions,
        backend: str, hooks: Any, info: dict[str, Any] | None,
    ) -> Any:  # fmt: skip
        """A warm-up inside ``AsyncCompileMode``: the compile goes to its executor."""

        def compile_now() -> CompiledKernel:
            try:
                return self.compile(specs, options, backend)
            except (CompileError, OutOfResources) as e:
                raise_for_user(e, specs, options, backend)

        def finalize(_: CompiledKernel) -> None:
            if info is not None and hooks.jit_post_compile_hook is not None:
                hooks.jit_post_compile_hook(**info)

        return mode.submit(key, compile_now, finalize)

    def warmup(self, *args: Any, grid: Grid | None = None, **kwargs: Any) -> CompiledKernel:
        """Compile for these arguments without running; returns the :class:`CompiledKernel`.

        As in Triton, a torch dtype stands for a tensor of that dtype (a :class:`MockTensor`).
        """
        args, kwargs = MockTensor.wrap_arguments(args, kwargs)
        return self.run(*args, grid=grid, warmup=True, **kwargs)

    def _split_options(self, kwargs: dict[str, Any]) -> tuple[CompileOptions, str, dict]:
        from minitriton import launch_checks

        launch_opts = {k: kwargs[k] for k in LAUNCH_OPTIONS if k in kwargs}
        launch_checks.check_options(self.__name__, launch_opts)
        # As in Triton, a kernel parameter may share an option's name (the softmax
        # tutorial's num_stages): it then is both an argument and an option.
        kwargs = {k: v for k, v in kwargs.items() if k not in launch_opts or k in self.arg_names}
        for k in IGNORED_OPTIONS:
            if k not in self.arg_names:
                kwargs.pop(k, None)
        backend = resolve_backend(launch_opts.pop("backend", None))
        if backend == "gpu" and "arch" not in launch_opts:
            launch_opts["arch"] = _override_arch() or _device_arch()
        if launch_opts.get("arch") is not None:  # Triton spells it "sm90"; we "sm_90"
            launch_opts["arch"] = launch_checks.normalize_arch(launch_opts["arch"])
            launch_checks.check_num_ctas(launch_opts["arch"], launch_opts.get("num_ctas"))
        # Triton's rule: the launch's debug= (else the kernel's) or the environment's.
        given = launch_opts.get("debug")
        launch_opts["debug"] = bool(given if given is not None else self.debug) or debug_enabled()
        launch_opts = {k: v for k, v in launch_opts.items() if v is not None}
        return CompileOptions(**launch_opts), backend, kwargs

    def bind(self, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Map every parameter name to its value (defaults applied)."""
        if len(args) > len(self.params):
            given = f"{len(self.params)} arguments, {len(args)} were given"
            raise self._bind_error(f"takes {given}") from None
        bound = dict(zip(self.arg_names, args))
        for name, value in kwargs.items():
            if name not in self.arg_names:
                raise self._bind_error(f"unexpected keyword argument '{name}'") from None
            if name in bound:
                raise self._bind_error(f"got multiple values for argument '{name}'") from None
            bound[name] = value
        for p in self.params:
            if p.name not in bound and p.has_default:
                bound[p.name] = p.default
        missing = [p.name for p in self.params if p.name not in bound]
        if missing:
            names = ", ".join(f"'{n}'" for n in missing)
            word = "argument" if len(missing) == 1 else "arguments"
            raise self._bind_error(f"missing {word} {names}") from None
        return {name: bound[name] for name in self.arg_names}

    def _bind_error(self, problem: str) -> LaunchTypeError:
        """A located ``TypeError`` at the user's launch line, with the kernel's signature."""
        from minitriton import launch_checks

        return launch_checks.argument_error(self.__name__, self.params, problem)

    def specialize(self, bound: dict[str, Any]) -> list[ArgSpec]:
        """One :class:`ArgSpec` per parameter, by Triton's rules."""
        specs = []
        for p in self.params:
            spec = spec_for_value(p.name, bound[p.name], p.is_constexpr)
            spec = const_spec(annotated_spec(spec, p.annotation_type), p.is_const)
            specs.append(self._drop_hints(spec))
        return specs

    def _drop_hints(self, spec: ArgSpec) -> ArgSpec:
        """Honour ``do_not_specialize`` and ``do_not_specialize_on_alignment``."""
        if spec.name in self._no_spec:
            return ArgSpec(spec.name, spec.kind, spec.type, spec.value)
        if spec.name in self._no_align_spec and spec.kind == "pointer":
            return ArgSpec(spec.name, spec.kind, spec.type, spec.value)
        return spec

    def is_compiled(self, specs: list[ArgSpec], options: CompileOptions, backend: str) -> bool:
        """Whether this specialization is in the in-memory cache already."""
        return (tuple(s.key() for s in specs), options.key(), backend) in self.cache

    def _hook_info(
        self, specs: list[ArgSpec], options: CompileOptions, warmup: bool, given: dict[str, Any],
        backend: str | None,
    ) -> dict[str, Any]:  # fmt: skip
        """The keywords Triton's ``jit_cache_hook`` and ``jit_post_compile_hook`` take."""
        from types import SimpleNamespace

        from minitriton.runtime import specialization

        signature = {s.name: str(s.type) if s.type is not None else "constexpr" for s in specs}
        constants = {s.name: s.value for s in specs if s.kind == "constexpr"}
        libs = given.get("extern_libs")
        compile_info = {
            "signature": signature, "device": 0, "constants": constants,
            "num_warps": options.num_warps, "num_ctas": options.num_ctas,
            "num_stages": options.num_stages,
            "enable_fp_fusion": options.enable_fp_fusion,
            "launch_cooperative_grid": given.get("launch_cooperative_grid", False),
            "extern_libs": tuple(libs.items()) if isinstance(libs, dict) else libs,
            "configs": [], "is_warmup": warmup,
            "specialization_data": specialization.dumps(
                self.__name__, specs, options, resolve_backend(backend)
            ),
        }  # fmt: skip
        key = (tuple(s.key() for s in specs), options.key())
        args = ", ".join(f"{s.name}: {signature[s.name]}" for s in specs)
        text = (f"{self.fn.__qualname__}[num_warps={options.num_warps}, "
                f"num_stages={options.num_stages}]({args})")  # fmt: skip
        fn = SimpleNamespace(
            module=self.fn.__module__, name=self.fn.__qualname__, jit_function=self
        )
        return {"key": key, "repr": text, "fn": fn, "compile": {"key": key, **compile_info},
                "is_manual_warmup": warmup, "already_compiled": False}  # fmt: skip

    def compile(
        self, specs: list[ArgSpec], options: CompileOptions, backend: str = "emulator"
    ) -> CompiledKernel:
        """The compiled kernel for this specialization, from the cache if possible."""
        key = (tuple(s.key() for s in specs), options.key(), backend)
        compiled = self.cache.get(key)
        if compiled is None:
            self.check_specialization_lists()
            if backend == "gpu" and not gpu_available():
                raise RuntimeError(
                    "the GPU backend was chosen but no GPU is available "
                    "(it needs cuda-python and an NVIDIA device); use backend='emulator'"
                )
            compiled = self._compile_or_load(specs, options, backend)
            if self._named_by_repr:
                compiled.name = self.repr(_specialization_proxy(specs))
            self.compile_count += 1
            self.cache[key] = compiled
        return compiled

    def check_specialization_lists(self) -> None:
        """Triton's rule: a ``tl.constexpr`` parameter is always specialized.

        Naming one in ``do_not_specialize`` (or ``..._on_alignment``) contradicts
        that, and Triton refuses it when the kernel compiles; so do we, at the parameter.
        """
        for p in self.params:
            if p.is_constexpr and (p.do_not_specialize or p.do_not_specialize_on_alignment):
                node = next(q for q in self.source.parsed().params if q.name == p.name)
                raise error(
                    node.loc,
                    f"{p.name} marked as constexpr and listed in do_not_specialize/"
                    "do_not_specialize_on_alignment. Remove constexpr designation to skip "
                    "specialization.",
                    help=f"drop the tl.constexpr annotation of {p.name}, or leave {p.name} "
                    "out of do_not_specialize",
                )

    def _compile_or_load(
        self, specs: list[ArgSpec], options: CompileOptions, backend: str
    ) -> CompiledKernel:
        """From the on-disk IR cache (:mod:`minitriton.ircache`), else compiled and stored."""
        stop_after = "gpu" if backend == "gpu" else "ir-opt"
        key = ircache.entry_key(self.source, specs, options, gpu=backend == "gpu")
        compiled = ircache.load_kernel(self.source, specs, options, stop_after, key)
        if compiled is None:
            compiled = compile_kernel(self.source, specs, options, stop_after=stop_after)
            ircache.store_kernel(compiled, key)
        return compiled


# ---------------------------------------------------------------------------
# The launch fast path (GPU launches of an already compiled specialization)
# ---------------------------------------------------------------------------

_I32_MIN, _I32_MAX, _I64_MIN, _U64_END = -(2**31), 2**31 - 1, -(2**63), 2**64
#: Valid tuple grids, padded to 3-D: a dict hit is cheaper than validating again.
_GRIDS: dict[tuple[Any, ...], tuple[int, int, int]] = {}
#: Names the generated binder uses for itself (a kernel parameter must not shadow them).
_BINDER_NAMES = ("_mt_rk", "_mt_ck", "_mt_env", "_mt_options", "_mt_defaults")


class _FullPath(Exception):
    """Raised inside the fast path's binder: this call needs the full launch path."""


def _runtime_key(value: Any) -> Any:
    """What specialization sees of a non-constexpr argument.

    It must separate every pair of values that :func:`spec_for_value` would
    specialize differently: int width, ``== 1`` and divisibility by 16, the
    dtype and 16-byte alignment of a tensor. NumPy arrays (copied to the
    device at each launch) and other kinds of argument take the full path.
    """
    tp = type(value)
    if tp is int:
        if _I32_MIN <= value <= _I32_MAX:
            return (value == 1, value % 16 == 0)
        if _I64_MIN <= value < _U64_END:
            return (64 if value < 2**63 else 65, value % 16 == 0)  # i64 or u64
        raise _FullPath
    if tp is float:
        return float
    kind = _ARG_KINDS.get(tp)
    if kind is None:
        kind = _ARG_KINDS[tp] = _arg_kind(tp)
    if kind == "tensor" or (kind == "other" and hasattr(value, "data_ptr")):
        return (tp, value.dtype, value.data_ptr() % 16 == 0)
    if kind == "descriptor":
        return descriptor_key(value)
    raise _FullPath  # NumPy arrays among them


#: :func:`_arg_kind` of each argument type seen. Asking the type itself costs
#: more than the rest of the key: a missing class attribute of ``torch.Tensor``
#: takes about 190 ns to look up; a launch with three tensors took 0.75 µs less.
_ARG_KINDS: dict[type, str] = {}


def _arg_kind(tp: type) -> str:
    """``descriptor`` (a host TensorDescriptor), ``tensor`` (has ``data_ptr``), or ``other``."""
    if getattr(tp, "fast_launch", False):
        return "descriptor"
    return "tensor" if callable(getattr(tp, "data_ptr", None)) else "other"


def descriptor_key(desc: Any) -> tuple[Any, ...]:
    """What a host descriptor's specialization and its checks depend on.

    :func:`~minitriton.signature.descriptor_spec` specializes on the element
    type, the block shape, the padding and which sizes and strides are
    multiples of 16; the full path's layout check looks at the rank, the
    signs, the strides in bytes and the base's alignment. Two descriptors
    with the same key get the same kernel and pass the same checks, so the
    full path's check of the first one holds for the second.
    """
    base = desc.base
    if not hasattr(base, "data_ptr") or not hasattr(base, "element_size"):
        raise _FullPath  # a NumPy array (copied at each launch), or not a torch tensor
    shape, strides = desc.shape, desc.strides
    item = base.element_size()
    return (
        type(desc), base.dtype, base.data_ptr() % 16 == 0, tuple(desc.block_shape), desc.padding,
        len(shape), tuple(s > 0 for s in shape), tuple(s * item % 16 == 0 for s in strides[:-1]),
        tuple(v % 16 == 0 for v in (*shape, *strides[:-1])), tuple(strides[-1:]),
    )  # fmt: skip


def _constexpr_key(value: Any) -> Any:
    """A constexpr's value as a key (floats by repr, as the compile cache: 0.0 vs -0.0)."""
    tp = type(value)
    return (tp, repr(value)) if tp is float else (tp, value)


def _env_state() -> tuple[Any, ...]:
    """The global settings a launch depends on (backend choice, debug default, and
    ``TRITON_F32_DEFAULT``, the default precision of fp32 dots).

    Part of the fast path's key, so asked at every launch. The plain
    equivalent is the ``os.environ.get`` of the names, below; but that
    encodes each name and raises and catches a ``KeyError`` for a missing
    one, about a microsecond a name, against tens of nanoseconds for the
    environment's underlying dict of bytes (``os.environ._data``, which
    ``os.environ`` itself reads and writes; there is no public way as fast).
    """
    data = getattr(os.environ, "_data", None)
    if isinstance(data, dict) and os.name == "posix":
        return (_selected_backend, data.get(b"MINITRITON_BACKEND"), data.get(b"MINITRITON_DEBUG"),
                data.get(b"TRITON_F32_DEFAULT"), data.get(b"TRITON_INTERPRET"),
                data.get(b"TRITON_DEBUG"))  # fmt: skip
    return (_selected_backend, os.environ.get(BACKEND_ENV), os.environ.get(DEBUG_ENV),
            os.environ.get("TRITON_F32_DEFAULT"), os.environ.get("TRITON_INTERPRET"),
            os.environ.get("TRITON_DEBUG"))  # fmt: skip


def fast_launch_binder(params: Sequence[Param]) -> Callable[..., Any] | None:
    """The seam of the launch fast path: a function with the kernel's parameters
    returning ``(key, values)``, generated for them.

    What it speeds up: a launch of a specialization already compiled for
    the GPU (:class:`FastLaunchCache`). Python's own call binds positional
    and keyword arguments and applies defaults (Triton's launcher is
    generated the same way); the key is what specialization depends on,
    the values are in parameter order, in about a microsecond.

    The plain equivalent, which every first launch (and every emulator
    launch) takes: :meth:`JITFunction.bind`, :meth:`JITFunction.specialize`
    and the compile cache's key, tens of microseconds. With
    ``MINITRITON_EMULATOR_PLAIN=1`` every launch takes it
    (:data:`minitriton.env.EMULATOR_PLAIN`). None when a parameter name would clash with
    the binder's own names.
    """
    names = [p.name for p in params]
    if any(n in _BINDER_NAMES or not n.isidentifier() for n in names):
        return None
    sig = [f"{p.name}=_mt_defaults[{i}]" if p.has_default else p.name
           for i, p in enumerate(params)]  # fmt: skip
    keys = [f"_mt_ck({p.name})" if p.is_constexpr else f"_mt_rk({p.name})" for p in params]
    # Trailing commas keep a kernel without parameters valid Python: `(_mt_env(), *...)`.
    source = (
        f"def binder({', '.join(sig + ['**_mt_options'])}):\n"
        f"    return ((_mt_env(), {''.join(k + ', ' for k in keys)}*_mt_options.items()),"
        f" ({''.join(n + ', ' for n in names)}))\n"
    )
    scope: dict[str, Any] = {
        "_mt_rk": _runtime_key,
        "_mt_ck": _constexpr_key,
        "_mt_env": _env_state,
        "_mt_defaults": [p.default for p in params],
    }
    exec(compile(source, "<minitriton launch binder>", "exec"), scope)  # noqa: S102
    return scope["binder"]


class FastLaunchCache:
    """Launches a cached GPU specialization without binding or specializing again.

    The full path (binding, :func:`spec_for_value` per argument, the options,
    the cache key) costs tens of microseconds. Here a generated binder
    (:func:`fast_launch_binder`) computes a key from the raw arguments: for constexpr
    parameters and launch options the value itself, for the others
    :func:`_runtime_key`. An entry is made after a full-path GPU launch; it
    remembers which parameter fills each kernel argument's slot. Anything
    unusual (NumPy arrays, unhashable values, CPU tensors, emulator launches)
    takes the full path.
    """

    def __init__(self, fn: JITFunction) -> None:
        self.fn = fn
        self.entries: dict[tuple[Any, ...], _FastEntry] = {}
        self.cache_size = -1  # len(fn.cache) when the entries were made
        self.binder = fast_launch_binder(fn.params)

    def launch(self, args: tuple[Any, ...], kwargs: dict[str, Any], grid: Any) -> Any:
        """Launch through a cached entry and return its CompiledKernel, else None."""
        if not self.entries or self.binder is None:
            return None
        if len(self.fn.cache) != self.cache_size:  # the kernel cache was cleared or grew
            self.entries.clear()
            return None
        try:
            key, values = self.binder(*args, **kwargs)
            entry = self.entries.get(key)
        except (_FullPath, TypeError):  # unusual or unhashable arguments, binding errors
            return None
        if entry is None:
            return None
        grid3 = _GRIDS.get(grid) if type(grid) is tuple else None
        if grid3 is None:
            grid3 = self._grid(grid, values)
            if 0 in grid3:
                return entry.compiled
        return entry.compiled if entry.launch(grid3, values) else None

    def _grid(self, grid: Any, values: tuple[Any, ...]) -> tuple[int, int, int]:
        if callable(grid):
            return resolve_grid(grid, dict(zip(self.fn.arg_names, values)))
        grid3 = resolve_grid(grid, {})
        if type(grid) is tuple and 0 not in grid3:
            if len(_GRIDS) > 4096:
                _GRIDS.clear()
            _GRIDS[grid] = grid3
        return grid3

    def remember(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], bound: dict[str, Any],
        compiled: CompiledKernel, stream: Any = None,
    ) -> None:  # fmt: skip
        """Make an entry for a call that just launched ``compiled`` on the GPU.

        ``stream`` is the call's ``stream=``: part of the key (a launch
        option), so the entry keeps its handle; without one, the entry asks
        torch for its current stream at each launch.
        """
        if env.EMULATOR_PLAIN:
            return  # plain mode: no entry, so every launch takes the full path
        binary = getattr(compiled, "binary", None)
        if self.binder is None or binary is None or not hasattr(binary, "load"):
            return
        try:
            key, _ = self.binder(*args, **kwargs)
            take, fields = _slot_sources(compiled, bound, self.fn.arg_names)
            entry = _FastEntry(compiled, binary.load(), take, fields)
        except (_FullPath, TypeError, KeyError):  # unusual arguments or kernel
            return
        if stream is not None:
            from minitriton import streams

            entry.stream, entry.current = streams.stream_handle(stream), None
        self.entries[key] = entry
        self.cache_size = len(self.fn.cache)


#: How a slot's value comes out of a host descriptor argument (None: the argument itself).
Field = Callable[[Any], Any] | None


def _slot_sources(
    compiled: CompiledKernel, bound: dict[str, Any], arg_names: Sequence[str]
) -> tuple[list[int], list[Field]]:
    """For each kernel argument, the parameter it comes from and how (a descriptor's field)."""
    position = {name: i for i, name in enumerate(arg_names)}
    specs = getattr(compiled, "arg_specs", ())
    descriptors = {s.name: s for s in specs if s.kind == "descriptor"}
    fields: dict[str, tuple[str, Field]] = {}
    for name, spec in descriptors.items():
        rank = len(spec.value[0])
        # The order of ArgSpec.kernel_params (and of _param_values): base, sizes, strides.
        getters: list[Field] = [operator.attrgetter("base")]
        getters += [_item("shape", d) for d in range(rank)]
        getters += [_item("strides", d) for d in range(rank - 1)]
        for param, get in zip(spec.kernel_params(), getters):
            fields[param.name] = (name, get)
    take, how = [], []
    for spec, _ in kernel_args(compiled, bound):
        source, field = fields.get(spec.name, (spec.name, None))
        take.append(position[source])
        how.append(field)
    return take, how


def _item(attr: str, d: int) -> Callable[[Any], Any]:
    """``lambda desc: desc.<attr>[d]``."""
    return lambda desc: getattr(desc, attr)[d]


def _no_device() -> int:
    """The device index of a value without ``get_device`` (torch's answer for the CPU)."""
    return -1


class _FastEntry:
    """One cached launch: which parameter fills each of the launcher's slots.

    Its stream: ``stream``, the handle of the call's ``stream=``, or (when
    ``current`` is set) torch's current stream of device 0, asked at each
    launch through torch's C function (Triton's launcher does the same).
    """

    __slots__ = ("capturing", "checked", "compiled", "current", "launcher", "plan", "stream")

    def __init__(
        self,
        compiled: CompiledKernel,
        launcher: Any,
        take: list[int],
        fields: Sequence[Field] | None = None,
    ) -> None:
        from minitriton import streams

        self.compiled = compiled
        self.launcher = launcher
        kinds = launcher.kinds
        self.plan = [
            (slot, i, kind == "ptr", field)
            for slot, i, kind, field in zip(
                launcher.slots, take, kinds, fields or [None] * len(take)
            )
        ]
        # A debug-mode kernel's launcher also fills the extents and reads the error record.
        self.checked = getattr(compiled.binary, "checks", None) is not None
        self.stream: int | None = None
        # Pointer arguments here are CUDA tensors: torch's stream, as the full path chose.
        has_pointers = any(is_ptr for _, _, is_ptr, _ in self.plan)
        self.current = streams.current_stream_function() if has_pointers else None
        # Bound once: the checked launch asks it each time, and the import is not hot-path work.
        self.capturing = streams.capturing

    def launch(self, grid3: tuple[int, int, int], values: tuple[Any, ...]) -> bool:
        """Fill the slots and launch; False (nothing launched) unless each tensor is on cuda:0."""
        if self.checked:
            return self._launch_checked(grid3, values)
        for slot, i, is_ptr, field in self.plan:
            value = values[i] if field is None else field(values[i])
            if is_ptr:
                # -1 for CPU tensors, another index for another GPU: the full path says why.
                if getattr(value, "get_device", _no_device)() != 0:
                    return False
                value = value.data_ptr()
            slot.value = value
        current = self.current
        self.launcher.launch_raw(*grid3, self.stream if current is None else current(0))
        return True

    def _launch_checked(self, grid3: tuple[int, int, int], values: tuple[Any, ...]) -> bool:
        args = [values[i] if field is None else field(values[i]) for _, i, _, field in self.plan]
        for (_, _, is_ptr, _), value in zip(self.plan, args):
            if is_ptr and getattr(value, "get_device", _no_device)() != 0:
                return False
        stream = self.stream if self.current is None else self.current(0)
        if self.capturing(stream):
            return False  # the full path refuses it, and says why
        try:
            self.launcher(grid3, args, stream)
        except Exception as e:
            if is_user_error(e):  # debug mode's located error: no internal frames
                raise trimmed(e) from None
            raise
        return True


def _override_arch() -> str | None:
    """``knobs.runtime.override_arch`` (``TRITON_OVERRIDE_ARCH``): compile for this arch
    instead of the GPU's."""
    knobs = _runtime_knobs()
    found = knobs.override_arch if knobs is not None else os.environ.get("TRITON_OVERRIDE_ARCH")
    return found or None


def _device_arch() -> str | None:
    """The GPU's ``sm_XY`` (None without a GPU: the default arch then applies)."""
    if not gpu_available():
        return None
    from minitriton.backend.driver import device_arch

    return device_arch()


#: What :func:`preload` has done in this process ("digest", "emulator", "frontend").
_PRELOADED: set[str] = set()


def preload(source: KernelSource) -> None:
    """Import, once per process, what the first launch of ``source`` will need.

    Every ``@jit`` definition calls this, so that the first launch costs no
    import (:func:`minitriton.compiler.preload`): the emulator, the IR
    parser and the launch's checks, and the frontend, its grammar and the
    passes unless the disk cache already knows this function
    (:func:`minitriton.ircache.has_entries`). Always, it takes the
    compiler's fingerprint and asks whether cuda-python is installed, which
    choosing the default backend asks first.

    The emulator and the passes need NumPy, which neither ``import
    minitriton`` nor a definition imports: until the program has imported
    NumPy itself (its arrays need it, so a script imports it first), only
    the fingerprint and the question are done here, and the first launch
    imports the rest.
    """
    if "digest" not in _PRELOADED:
        _PRELOADED.add("digest")
        ircache.compiler_digest()  # part of every disk-cache key: stat the sources once
        _cuda_python_installed()  # the default backend's first question: a search of sys.path
    if "numpy" not in sys.modules:
        return
    if "emulator" not in _PRELOADED:
        _PRELOADED.add("emulator")
        preload_components(frontend=False)
        # The launch's own modules, which the functions that launch import.
        from minitriton import launch_checks, resources, streams, torch_interop  # noqa: F401
    if "frontend" not in _PRELOADED and not ircache.has_entries(source):
        _PRELOADED.add("frontend")
        preload_components(frontend=True)


def _capture_source(fn: Callable[..., Any]) -> KernelSource:
    try:
        return KernelSource.from_function(fn)
    except (OSError, TypeError):
        name = getattr(fn, "__name__", repr(fn))
        raise RuntimeError(
            f"@jit: cannot read the source of '{name}'; kernels must be defined in a .py file, "
            "or by exec() of a text that the calling code keeps in a variable"
        ) from None


def jit(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """Decorator: make ``fn`` a :class:`JITFunction` (``@jit`` or ``@jit(debug=True)``).

    Triton's keyword arguments are accepted: ``debug``, ``do_not_specialize``,
    ``do_not_specialize_on_alignment``, ``version``, ``repr``,
    ``launch_metadata``, ``noinline``.
    """

    def decorator(f: Callable[..., Any]) -> JITFunction:
        return JITFunction(f, **options)

    return decorator(fn) if fn is not None else decorator


# ---------------------------------------------------------------------------
# Running a compiled kernel
# ---------------------------------------------------------------------------


def async_compile_mode() -> Any:
    """The ``AsyncCompileMode`` this thread is in, if any (its module loads only when used)."""
    module = sys.modules.get("minitriton.runtime._async_compile")
    return None if module is None else module.active_mode.get()


def raise_for_user(
    e: CompileError | OutOfResources, specs: list[ArgSpec], options: CompileOptions, backend: str
) -> NoReturn:
    """Raise a compile's error as users see it: no traceback from the compiler's insides.

    A diagnostic says it all; its message alone is chained as the cause, as
    Triton chains a CompilationError's (tests read ``str(err.__cause__)``),
    except when ``MINITRITON_TRACEBACK`` asks for the traceback, which then
    starts with it. An emulator launch's error is Triton's ``InterpreterError``
    too. A kernel too big for the GPU (found when it loads) says what was
    asked for.
    """
    if isinstance(e, OutOfResources):
        from minitriton import resources

        e.config = e.config or resources.config_text(options, specs)
        raise trimmed(e) from None
    err = e if resolve_backend(backend) != "emulator" else as_interpreter_error(e)
    raise trimmed(err) from (None if full_traceback() else e.cause())


def must_use_result(fn: Any, note: str | bool = True) -> Any:
    """Decorator: a call of ``fn`` whose result a kernel drops is a compile error (Triton's).

    ``@must_use_result`` above ``@jit`` (or ``@constexpr_function``), or
    ``@must_use_result("what to write instead")``, whose words end the message
    ``The result of f is not being used.``
    """
    if isinstance(fn, str):
        return lambda f: must_use_result(f, fn)
    fn._must_use_result = note
    return fn


def aggregate(cls: type) -> type:
    """Decorator: a class whose instances kernels build and pass around (Triton's ``aggregate``).

    Its annotated attributes are its fields, run-time blocks (``x: tl.tensor``)
    or compile-time values (``n: tl.constexpr``); ``__init__`` is a
    ``@triton.constexpr_function`` that sets them, and ``@triton.jit`` methods
    take the instance as ``self``. An instance flows into helpers, out of them
    and through loops like a tuple of its fields::

        @triton.aggregate
        class Pair:
            a: tl.tensor
            b: tl.tensor

            @triton.constexpr_function
            def __init__(self, a, b):
                self.a = a
                self.b = b

            @triton.jit
            def total(self):
                return self.a + self.b
    """
    from minitriton.language import core

    names: list[str] = []
    defaults: dict[str, Any] = {}
    for klass in reversed(cls.__mro__[1:]):
        if klass is not object and not hasattr(klass, "__minitriton_fields__"):
            raise TypeError(
                "Aggregates can only inherit from other aggregates, but got non-aggregate "
                f"base: {klass}"
            )
        defaults.update(getattr(klass, "__minitriton_defaults__", {}))
    for klass in reversed(cls.__mro__):
        for name in vars(klass).get("__annotations__", {}):
            if name not in names:
                names.append(name)
    for name in vars(cls).get("__annotations__", {}):
        value = vars(cls).get(name, _MISSING)
        # A class attribute of a field's name is its default (methods are not).
        if value is not _MISSING and (not callable(value) or isinstance(value, constexpr)):
            defaults[name] = value
    cls.__minitriton_fields__ = tuple(names)  # type: ignore[attr-defined]
    cls.__minitriton_defaults__ = defaults  # type: ignore[attr-defined]
    if "__init__" not in vars(cls):
        cls.__init__ = core.aggregate_auto_init  # type: ignore[misc]
    if "__setattr__" not in vars(cls):
        cls.__setattr__ = core.aggregate_setattr  # type: ignore[method-assign,assignment]
    return cls


_MISSING = object()


def resolve_grid(grid: Grid | None, meta: dict[str, Any]) -> tuple[int, int, int]:
    """A 3-D grid from a tuple of 1-3 ints or a callable of the meta dict."""
    import numpy as np

    if grid is None:
        raise TypeError("launch a kernel with kernel[grid](...): the grid is missing")
    if callable(grid):
        grid = grid({k: v.value if isinstance(v, constexpr) else v for k, v in meta.items()})
    # A bare int (or a callable returning one) is a 1-D grid.
    dims = (grid,) if isinstance(grid, (int, np.integer)) else tuple(grid)
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"the grid must have 1 to 3 dimensions, got {dims!r}")
    if not all(isinstance(d, (int, np.integer)) and d >= 0 for d in dims):
        raise ValueError(f"grid dimensions must be non-negative ints, got {dims!r}")
    return tuple(int(d) for d in dims) + (1,) * (3 - len(dims))  # type: ignore[return-value]


def kernel_args(compiled: CompiledKernel, bound: dict[str, Any]) -> list[Any]:
    """The values for the kernel function's block arguments, in order.

    Constexprs are folded into the IR, so the kernel takes fewer arguments
    than the Python function; its block arguments carry the parameter names.
    """
    pairs = {
        f.name: (f, value)
        for s in compiled.arg_specs
        if s.kind != "constexpr" and s.name in bound
        for f, value in _param_values(s, bound[s.name])
    }
    names = [a.name_hint for a in compiled.module.kernel.body.args]
    if not all(n in pairs for n in names):
        names = list(pairs)
    if len(names) != len(compiled.module.kernel.body.args):
        raise RuntimeError(
            f"internal error: kernel '{compiled.name}' takes "
            f"{len(compiled.module.kernel.body.args)} arguments, the launcher has {len(names)}"
        )
    return [pairs[n] for n in names]


def _param_values(spec: ArgSpec, value: Any) -> list[tuple[ArgSpec, Any]]:
    """The kernel parameters of one argument and their values (a descriptor's fields,
    a tuple's items)."""
    if spec.kind == "tuple":
        items = spec.value[1]
        if not isinstance(value, tuple) or len(value) != len(items):
            raise TypeError(f"argument '{spec.name}': expected a tuple of {len(items)} items")
        return [pair for item, v in zip(items, value) if item.kind != "constexpr"
                for pair in _param_values(item, v)]  # fmt: skip
    if spec.kind != "descriptor":
        return [(spec, value)]
    from minitriton.tools import tensor_descriptor as TD

    problem = TD.check_layout(value) or TD.check_block_shape(value)
    if problem or tuple(value.block_shape) != spec.value[0]:
        problem = problem or f"block_shape {list(value.block_shape)} is not the compiled one"
        raise TypeError(f"argument '{spec.name}': {problem}")
    values = [value.base, *value.shape, *value.strides[:-1]]
    return list(zip(spec.kernel_params(), values))


def run_compiled(compiled: CompiledKernel, grid: Grid, bound: dict[str, Any]) -> None:
    """``compiled[grid](*args)``: launch a compiled kernel on the backend it was built for."""
    backend = "gpu" if compiled._on_gpu else "emulator"
    launch(compiled, resolve_grid(grid, bound), kernel_args(compiled, bound), backend)


compiled_api.RUN_COMPILED = run_compiled


def launch(
    compiled: CompiledKernel, grid: tuple[int, int, int], args: list[tuple[ArgSpec, Any]],
    backend: str, stream: Any = None,
) -> None:  # fmt: skip
    """Run ``compiled`` over ``grid`` on ``backend``; ``args`` pairs specs and values.

    ``stream`` is a GPU launch's ``stream=`` (None: :func:`minitriton.streams.launch_stream`
    picks one); the emulator ignores it.
    """
    if 0 in grid:
        return  # Triton launches nothing for an empty grid
    if backend == "gpu":
        _launch_gpu(compiled, grid, args, stream)
        return
    from minitriton import launch_checks, streams, torch_interop

    if any(getattr(streams.tensor_of(v), "is_cuda", False) is True for _, v in args):
        streams.check_emulator_capture(compiled.name)  # before the copies to the host
    from minitriton.emulator import launch as emulate
    from minitriton.emulator.memory import watching_reads
    from minitriton.emulator.schedule import fails_before_writing

    pending: list[tuple[Any, Any]] = []  # CUDA tensors and their host copies
    values = [_host_value(s, v, pending) for s, v in args]
    hook = EMULATOR_HOOK
    if hook is None and os.environ.get(CHECKS_ENV, "") not in ("", "0"):
        from minitriton.emulator.debug.tools import run_launch as hook
    names = [s.name for s, _ in args]
    if hook is None and fails_before_writing(compiled.module, grid):
        # Nothing to undo: only strided views are copied, for the warning below.
        views = [n for (_, v), n in zip(args, names) if launch_checks.strided_view(v)]
        saved = launch_checks.save_outputs(compiled, names, values, only=views)
    else:
        saved = launch_checks.save_outputs(compiled, names, values)
    # Strided views: which of their elements loads read, for the warning below.
    strided = [n for (_, v), n in zip(args, names) if launch_checks.strided_layout(v)]
    try:
        with watching_reads(strided) as reads:
            if hook is not None:
                hook(compiled, grid, values)
            else:
                emulate(compiled.module, grid, values, debug=compiled.options.debug)
    except BaseException as e:  # interrupts too: the arrays are as before the launch
        launch_checks.restore_outputs(saved)
        if is_user_error(e):
            raise trimmed(e) from None  # located in the kernel: no internals
        raise
    finally:
        torch_interop.copy_back(pending)
    given = {s.name: v for s, v in args}
    launch_checks.warn_stores_outside_views(compiled.name, given, saved)
    launch_checks.warn_loads_outside_views(compiled.name, given, reads)


def _launch_gpu(
    compiled: CompiledKernel, grid: tuple[int, int, int], args: list[tuple[ArgSpec, Any]],
    stream: Any,
) -> None:  # fmt: skip
    from minitriton import resources, streams

    handle = streams.launch_stream(compiled.name, args, stream)
    streams.check_capturable(compiled.name, args, compiled.options.debug, handle)
    try:
        compiled.binary.launch(grid, [_gpu_value(s, v) for s, v in args], handle)
    except Exception as e:
        if isinstance(e, OutOfResources) and not e.config:
            e.config = resources.config_text(compiled.options, compiled.arg_specs)
        if is_user_error(e):  # debug mode's located error, OutOfResources: no internal frames
            raise trimmed(e) from None
        raise


def _time_budget(kernel: str, timeout: Any, backend: str) -> Any:
    """The emulator's time budget for one launch: ``timeout=`` or ``MINITRITON_TIMEOUT``."""
    if backend != "emulator":
        return contextlib.nullcontext()
    from minitriton import launch_checks
    from minitriton.emulator import budget

    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not timeout > 0):  # fmt: skip
        raise launch_checks.LaunchError(
            f"kernel '{kernel}': timeout={timeout!r}: expected a number of seconds above 0"
        )
    try:
        seconds = timeout if timeout is not None else budget.env_timeout()
    except ValueError as e:
        raise launch_checks.LaunchError(str(e)) from None
    return budget.time_budget(seconds)


def _step_budget(kernel: str, max_steps: Any, backend: str) -> Any:
    """The emulator's step budget for one launch: ``max_steps=`` or ``MINITRITON_MAX_STEPS``."""
    if backend != "emulator":
        return contextlib.nullcontext()
    from minitriton import launch_checks
    from minitriton.emulator import budget

    if max_steps is not None and (isinstance(max_steps, bool) or not isinstance(max_steps, int)
                                  or max_steps <= 0):  # fmt: skip
        raise launch_checks.LaunchError(
            f"kernel '{kernel}': max_steps={max_steps!r}: expected a whole number above 0"
        )
    try:
        steps = max_steps if max_steps is not None else budget.env_max_steps()
    except ValueError as e:
        raise launch_checks.LaunchError(f"kernel '{kernel}': {e}") from None
    return budget.step_budget(steps)


def is_user_error(exc: BaseException) -> bool:
    """True for errors that describe the user's kernel (diagnostics, emulator errors)."""
    return isinstance(exc, UserError)


def _scalar_value(spec: ArgSpec, value: Any) -> Any:
    """A NumPy scalar of the argument's type (u64 values above 2**63 included)."""
    assert isinstance(spec.type, ScalarType)  # a scalar argument's spec
    return spec.type.numpy.type(value)


def _host_value(spec: ArgSpec, value: Any, pending: list[tuple[Any, Any]]) -> Any:
    import numpy as np

    from minitriton import torch_interop

    if spec.kind == "scalar":
        return _scalar_value(spec, value)
    view = torch_interop.host_view(value, pending)
    arr = flat_host_array(view if view is not None else value)
    if view is not None:
        arr = torch_interop.storage_tail(value, arr)  # a CPU tensor: as far as its storage goes
    bf16 = isinstance(spec.type, PointerType) and spec.type.pointee == BF16
    if bf16 and arr.dtype != np.uint16:
        arr = arr.view(np.uint16)  # the emulator keeps bf16 as its 16 raw bits
    return arr


def _gpu_value(spec: ArgSpec, value: Any) -> Any:
    import numpy as np

    from minitriton.launch_checks import BF16View
    from minitriton.streams import tensor_of

    if spec.kind == "scalar":
        return _scalar_value(spec, value)
    # triton.reinterpret's wrapper: the kernel's pointer type already has its dtype, and
    # the launch passes the memory underneath (a device tensor, or a NumPy array to copy)
    value = tensor_of(value)
    if isinstance(value, (np.ndarray, BF16View)):
        return flat_host_array(value)  # copied to the device and back, views included
    return value


def flat_host_array(value: Any) -> np.ndarray:
    """A 1-D NumPy view from an argument's first element through its last.

    The kernel indexes memory with its own strides, so a strided view must
    stay a view of the same memory (a copy would lose the kernel's stores).
    """
    import numpy as np

    arr = _as_numpy(value)
    if arr.flags.c_contiguous:
        return arr.reshape(-1)
    if any(s < 0 for s in arr.strides):
        raise ValueError("arrays with negative strides cannot be passed to a kernel")
    if arr.size == 0:
        return arr.reshape(-1)
    last = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides)) // arr.itemsize
    return np.lib.stride_tricks.as_strided(arr, shape=(last + 1,), strides=(arr.itemsize,))


def _as_numpy(value: Any) -> np.ndarray:
    import numpy as np

    from minitriton.launch_checks import BF16View

    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, BF16View):
        return value.bits
    device = getattr(getattr(value, "device", None), "type", None)
    if device == "cpu" and hasattr(value, "numpy"):
        return value.numpy()  # a CPU torch tensor shares its memory
    if device in (None, "cpu") and hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        memory = _memory_from(value)
        if memory is not None:
            return memory
    raise TypeError(
        f"the emulator runs on host memory: pass NumPy arrays, not {type(value).__name__}"
    )


def _memory_from(value: Any) -> np.ndarray | None:
    """A pointer-like argument's memory: the live host array holding its ``data_ptr()``,
    from that address on, seen as its ``dtype`` (as FlagGems' ``StridedBuffer`` is passed;
    Triton takes any object with ``data_ptr()`` and ``dtype``)."""
    from minitriton.emulator.hostmem import find_array
    from minitriton.signature import dtype_to_type

    address = int(value.data_ptr())
    host = find_array(address)
    if host is None:
        return None
    dtype = dtype_to_type(value.dtype).numpy
    raw = host.data[address - host.start :]
    return raw[: raw.nbytes // dtype.itemsize * dtype.itemsize].view(dtype)
