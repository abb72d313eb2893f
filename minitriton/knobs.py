"""``minitriton.knobs``: Triton's settings object (``triton.knobs``), group by group.

Triton 3.4 gathered its environment variables into *knobs*: attributes of
a few groups, each backed by one variable. Code written for Triton sets
them from Python instead of the environment, and its test fixtures put
them back afterwards::

    from minitriton import knobs          # or: triton.knobs, after import minitriton as triton

    knobs.runtime.debug = True            # every launch from now on runs in debug mode
    with knobs.cache.scope(), knobs.runtime.scope():
        knobs.cache.dir = directory       # compiled kernels go to directory ...
    # ... and not any more: both groups are as they were before the with

How a knob is read and written
-------------------------------

A knob's value is, in this order: the value assigned to it (its
*override*); else its environment variable; else its default. Assigning
sets the override and, as in Triton, writes the variable too (``True`` as
``1``, ``False`` as ``0``, ``None`` removes it; other values only set the
override), so that child processes and the code that reads the variable
agree. A wrong value in the environment is rejected when the knob is read,
as in Triton: ``RuntimeError`` for an integer knob whose variable is not an
integer (``TRITON_PROFILE_BUFFER_SIZE=abc``), or for a class knob that is
not ``MODULE:CLASS``.

Each group (``knobs.runtime``, ``knobs.cache``, ...) has:

* ``reset()``: drops every override of the group and puts back the
  environment variables its assignments wrote, as they were before the
  first of them (Triton's ``reset()`` keeps the variables as written);
* ``scope()``: a context manager; on exit the group's overrides, the
  environment variables of all its knobs, and the functions in its hook
  chains are as they were on entry;
* ``knobs`` (a dict of every knob's value), ``knob_descriptors`` and
  ``copy()``.

``del knobs.runtime.debug`` or ``knobs.runtime.debug = knobs.env`` drops
one override (the variable keeps what the assignment wrote). With
``knobs.propagate_env = False``, assignments write no variable, so the
knobs MiniTriton honours (below) then change only what the knob reads, not
what MiniTriton does. ``refresh_knobs()`` drops the overrides of
``runtime.debug`` and ``compilation.instrumentation_mode``, which Triton
reads once at import and re-reads there; here every knob reads the
environment each time.

The knobs MiniTriton honours
----------------------------

MiniTriton reads its own environment variables (``MINITRITON_DEBUG``, ...).
For these knobs, assigning one also writes the variable MiniTriton reads,
and the knob reads that variable, so what it says is what takes effect.
Triton's own variable, named with each, is written too, but not read
where MiniTriton has a variable of its own.

``runtime.debug`` (``MINITRITON_DEBUG``; default False)
    Every launch runs in debug mode, as with ``kernel[grid](..., debug=True)``:
    ``tl.device_assert`` is checked, and on the GPU the loads and stores are
    bounds-checked, with the emulator's located error. As in Triton, it is
    or-ed with a launch's ``debug=`` (else the kernel's ``@jit(debug=...)``),
    so ``debug=False`` does not turn it off. Read at each launch.
    ``MINITRITON_DEBUG=async`` (deferred GPU reports) reads as True.
    Triton's variable: ``TRITON_DEBUG``.
``runtime.interpret`` (``MINITRITON_BACKEND``; default False)
    True runs launches on the emulator (``MINITRITON_BACKEND=emulator``),
    MiniTriton's interpreter. False removes ``MINITRITON_BACKEND``: the
    default choice, the GPU when one is present, else the emulator (so
    False does not mean "the GPU"). ``set_backend()`` and a launch's
    ``backend=`` win over both. Triton's variable: ``TRITON_INTERPRET``
    (which ``minitriton._internal_testing.is_interpreter()`` reads too).
``cache.dir`` (``MINITRITON_CACHE_DIR``; default ``~/.cache/minitriton``)
    The on-disk cache of compiled kernels (PTX, optimized IR under ``ir/``)
    and of autotuning winners. Read at each compile; a kernel already
    compiled in this process keeps its in-memory copy. Triton's variable:
    ``TRITON_CACHE_DIR`` (whose default is ``~/.triton/cache``).
``language.fp32_default`` (``TRITON_F32_DEFAULT``; default None, which is ``tf32``)
    The ``input_precision`` of fp32 ``tl.dot`` that does not name one:
    ``tf32``, ``tf32x3``, ``ieee``, ``bf16x3`` or ``bf16x6``; another value
    is a ``ValueError`` at the next launch. Read at each launch. The same
    variable as Triton's.
``language.default_fp_fusion`` (``TRITON_DEFAULT_FP_FUSION``; default True)
    Whether float multiplies and adds may fuse into FMAs on the GPU when a
    launch does not pass ``enable_fp_fusion=``. Read when a launch makes its
    options. The same variable as Triton's.
``autotuning.cache`` (``MINITRITON_AUTOTUNE_CACHE``; default True)
    Whether autotuning winners are stored on disk and taken from there.
    MiniTriton stores them unless told not to, so the default is True
    (Triton's is False); ``@autotune(cache_results=...)`` wins, and
    ``MINITRITON_CACHE=0`` turns the whole disk cache off. Triton's
    variable: ``TRITON_CACHE_AUTOTUNING``.
``compilation.front_end_debugging`` (``MINITRITON_TRACEBACK``; default False)
    A kernel or launch error's traceback shows MiniTriton's own frames too,
    not only the user's. Triton's variable: ``TRITON_FRONT_END_DEBUGGING``.
``compilation.allow_non_constexpr_globals`` (``TRITON_ALLOW_NON_CONSTEXPR_GLOBALS``; default False)
    True lets kernels read any global or closure variable, not only
    ``tl.constexpr`` values, modules, functions and dtypes (see
    :mod:`minitriton.frontend.capture`). Read at each compile. The same
    variable as Triton's.
``compilation.dump_ir`` (``MINITRITON_DUMP_DIR``; default False)
    True writes every stage of every kernel compiled from then on (the IR
    after each pass included) into ``cache.dump_dir`` as it is at the
    assignment, one folder per kernel; set ``cache.dump_dir`` first. Reads
    True while ``MINITRITON_DUMP_DIR`` is set. Triton's variable:
    ``TRITON_KERNEL_DUMP``.
``nvidia.libdevice_path`` (``MINITRITON_LIBDEVICE``; default None)
    The ``libdevice.10.bc`` that libdevice calls link on the GPU; None
    searches Triton's package and the CUDA toolkit. The GPU backend looks
    for it once, the first time a kernel needs it: set it before then.
    Triton's variable: ``TRITON_LIBDEVICE_PATH``.
``nvidia.ptxas`` (``PTXAS``)
    The ``ptxas`` that ``python -m minitriton.tools.ptxas_check`` runs.
    Triton's variable: ``TRITON_PTXAS_PATH``.

``knobs.nvidia.ptxas``, ``.cuobjdump``, ``.nvdisasm`` and ``.ptxas_blackwell``
are tools, as in Triton: ``.path`` is the path from the variable
(``PTXAS`` for ptxas; ``TRITON_CUOBJDUMP_PATH``, ``TRITON_NVDISASM_PATH``,
``TRITON_PTXAS_BLACKWELL_PATH``), else the program found on ``PATH``, else
None; ``.version`` (``"12.8"``) runs ``<tool> --version`` the first time it
is asked for one path, and is None when that fails. Assign a path (a
string) to choose another. Nothing runs when the module is imported.

The other knobs
---------------

Every other knob of Triton's groups ``build``, ``redis``, ``cache``,
``compilation``, ``autotuning``, ``runtime``, ``language``, ``nvidia``,
``amd`` and ``proton`` is here with Triton's name, variable and default, and
is read, assigned, reset and scoped as above, but MiniTriton does nothing
with it: Triton's C compiler (``build``), remote caches (``redis``,
``cache.manager_class``, ``cache.remote_manager_class``), kernel overrides
and dumps of its own formats (``cache.override_dir``, ``compilation.override``,
``nvidia.dump_nvptx``, ``nvidia.ptxas_options`` ...), AMD's backend
(``amd``) and the profiler (``proton``). In particular:

* ``autotuning.print`` (``TRITON_PRINT_AUTOTUNING``): MiniTriton reports
  every autotuning run on stderr whatever its value;
* ``compilation.always_compile``: a kernel compiles once per process and
  specialization; ``MINITRITON_CACHE=0`` turns the disk cache off;
* ``cache.home_dir`` (``TRITON_HOME``) gives ``cache.dump_dir`` and
  ``cache.override_dir`` their defaults, as in Triton, but not ``cache.dir``;
* the other hooks and listeners (``runtime.kernel_unload_hook``,
  ``runtime.add_stages_inspection_hook``, ``compilation.listener``,
  ``autotuning.listener``, ``build.impl``) are stored and never called.

These runtime hooks are called, as Triton calls them:

* ``runtime.launch_enter_hook`` and ``runtime.launch_exit_hook`` (chains: ``add``
  and ``remove`` functions) around every launch, on both backends, with an
  object whose ``get()`` is the kernel's name and stream plus what the
  kernel's ``@jit(launch_metadata=fn)`` returns, ``fn(grid, metadata, args)``;
* ``runtime.jit_cache_hook`` before each compile a launch needs, and
  ``runtime.jit_post_compile_hook`` after it, with Triton's keywords (``key``,
  ``repr``, ``fn``, ``compile``, ``is_manual_warmup``, ``already_compiled``);
  when ``jit_cache_hook`` returns True, the launch compiles and runs nothing
  and returns None. An option MiniTriton ignores (``extern_libs``) is
  reported in ``compile`` but does not make another compile;
* ``runtime.kernel_load_start_hook`` and ``runtime.kernel_load_end_hook``
  (chains) around loading a compiled kernel into the GPU, once per compile,
  with Triton's arguments ``(module, function, name, metadata_group, hash)``:
  the module handle is None (MiniTriton keeps it), ``function`` the loaded
  ``CUfunction`` (None before the load), ``metadata_group`` an empty dict
  and ``hash`` a digest of the PTX. The emulator loads nothing and calls
  neither, as Triton's interpreter.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar, cast, overload

from minitriton.autotune import AUTOTUNE_CACHE_ENV
from minitriton.cachefile import CACHE_DIR_ENV, cache_dir
from minitriton.compiler import DUMP_DIR_ENV
from minitriton.env import BACKEND_ENV, DEBUG_ENV, TRACEBACK_ENV, truthy
from minitriton.frontend.source import F32_DEFAULT_ENV


class Env:
    """The type of :data:`env`."""


#: Assigned to a knob, drops its override: ``knobs.runtime.debug = knobs.env``.
env = Env()

#: False: assigning a knob writes no environment variable.
propagate_env: bool = True

_NOTHING: Any = object()


def setenv(key: str, value: str | None) -> None:
    """Set the variable ``key`` (remove it for None), unless :data:`propagate_env` is False."""
    if propagate_env:
        _put(key, value)


def _put(key: str, value: str | None) -> None:
    if value is not None:
        os.environ[key] = value
    else:
        os.environ.pop(key, None)


def toenv(value: Any) -> tuple[str | None] | None:
    """The text of an assigned value in the environment (``(None,)``: remove the variable),
    or None for a value that has none (a class, a hook)."""
    if value is None:
        return (None,)
    kind = type(value)
    if kind is bool:
        return ("1" if value else "0",)
    if kind is str:
        return (value,)
    if kind is int:
        return (str(value),)
    return None


# --------------------------------------------------------------- the variables MiniTriton reads


@dataclass(frozen=True)
class Mirror:
    """The variable MiniTriton reads for a knob: ``parse`` its text into a value to assign
    (``_NOTHING``: the knob's default), ``render`` an assigned value as its text (None:
    remove it)."""

    name: str
    parse: Callable[[str], Any]
    render: Callable[[Any], str | None]


def _flag(name: str, off: tuple[str, ...] = ("", "0")) -> Mirror:
    """A switch that MiniTriton reads as on unless its text is one of ``off``."""
    return Mirror(name, lambda text: text not in off, lambda on: "1" if on else "0")


def _path(name: str) -> Mirror:
    """A path; empty reads as unset, as MiniTriton reads it."""
    return Mirror(name, lambda text: text or _NOTHING, lambda p: None if p is None else str(p))


_BACKEND = Mirror(
    BACKEND_ENV,
    lambda text: text.strip().lower() == "emulator" if text.strip() else _NOTHING,
    lambda on: "emulator" if on else None,
)
cache: cache_knobs  # the group, defined below

_DUMP = Mirror(DUMP_DIR_ENV, bool, lambda on: cache.dump_dir if on else None)


# ---------------------------------------------------------------------------- knobs

S = TypeVar("S")  # what may be assigned
G = TypeVar("G")  # what reading gives


class env_base(Generic[S, G]):
    """A knob: a descriptor on a group's class, backed by the variable ``key``."""

    def __init__(self, key: str, mirror: Mirror | None = None) -> None:
        self.key = key
        self.mirror = mirror
        self.name = key

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @property
    def variables(self) -> tuple[str, ...]:
        """The environment variables this knob writes."""
        if self.mirror is None or self.mirror.name == self.key:
            return (self.key,)
        return (self.key, self.mirror.name)

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> env_base[S, G]: ...
    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> G: ...
    def __get__(self, obj: object | None, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__.get(self.name, _NOTHING)
        return self.get() if value is _NOTHING else self.transform(value)

    def get(self) -> G:
        """The knob's value when nothing is assigned: its variable's, else its default."""
        if self.mirror is None:
            return self.read(os.environ.get(self.key))
        text = os.environ.get(self.mirror.name)
        value = _NOTHING if text is None else self.mirror.parse(text)
        return self.read(None) if value is _NOTHING else self.transform(value)

    def read(self, text: str | None) -> G:
        """The value of the variable's ``text`` (None: unset, so the default)."""
        raise NotImplementedError

    def transform(self, value: S) -> G:
        """The value read for an assigned ``value`` (the same, but for tools)."""
        return cast(G, value)

    def __set__(self, obj: base_knobs, value: S | Env) -> None:
        if isinstance(value, Env):
            obj.__dict__.pop(self.name, None)
            return
        obj.__dict__[self.name] = value
        if not propagate_env:
            return
        writes = []
        text = toenv(value)
        if text is not None:
            writes.append((self.key, text[0]))
        if self.mirror is not None:
            writes.append((self.mirror.name, self.mirror.render(value)))
        for name, new in writes:
            obj._saved_env.setdefault(name, os.environ.get(name))
            _put(name, new)

    def __delete__(self, obj: object) -> None:
        obj.__dict__.pop(self.name, None)


class env_str(env_base[str, str]):
    def __init__(self, key: str, default: str, mirror: Mirror | None = None) -> None:
        super().__init__(key, mirror)
        self.default = default

    def read(self, text: str | None) -> str:
        return self.default if text is None else text


class env_str_callable_default(env_base[str, str]):
    """A string whose default is computed when it is read (it depends on another knob)."""

    def __init__(
        self, key: str, default_factory: Callable[[], str], mirror: Mirror | None = None
    ) -> None:
        super().__init__(key, mirror)
        self.default_factory = default_factory

    def read(self, text: str | None) -> str:
        return self.default_factory() if text is None else text


class env_opt_str(env_base[str | None, str | None]):
    def read(self, text: str | None) -> str | None:
        return text


class env_bool(env_base[bool, bool]):
    def __init__(self, key: str, default: bool = False, mirror: Mirror | None = None) -> None:
        super().__init__(key, mirror)
        self.default = default

    def read(self, text: str | None) -> bool:
        return self.default if text is None else truthy(text)


class env_opt_bool(env_base[bool | None, bool | None]):
    """A boolean whose default, None, lets the backend decide."""

    def read(self, text: str | None) -> bool | None:
        return None if text is None else truthy(text)


class env_int(env_base[int, int]):
    def __init__(self, key: str, default: int = 0) -> None:
        super().__init__(key)
        self.default = default

    def read(self, text: str | None) -> int:
        if text is None:
            return self.default
        try:
            return int(text)
        except ValueError as exc:
            raise RuntimeError(f"Unable to use {self.key}={text}: expected int") from exc


class env_class(env_base[type | None, type | None]):
    """A class named ``MODULE:CLASS`` in the variable, one of whose bases is named ``type``."""

    def __init__(self, key: str, type: str) -> None:
        super().__init__(key)
        self.type = type

    def read(self, text: str | None) -> type | None:
        if text is None:
            return None
        module, colon, name = text.partition(":")
        if not colon:
            form = f"'{text}' isn't of the form MODULE:CLASS"
            raise RuntimeError(f"Unable to read {self.key}: {form}")
        cls = getattr(importlib.import_module(module), name)
        if not any(c.__name__ == self.type for c in cls.mro()):
            raise RuntimeError(f"Unable to use '{text}' from {self.key}: not of type '{self.type}'")
        return cast(type, cls)


@functools.cache
def _tool_version(path: str) -> str | None:
    """``12.8`` from ``<path> --version`` (``release 12.8``), or None when it does not run."""
    try:
        done = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=60, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"release (\d+\.\d+)", done.stdout + done.stderr)
    return found.group(1) if found else None


@dataclass(frozen=True)
class NvidiaTool:
    """One of NVIDIA's programs: its ``path`` (None: not found) and, on first use, ``version``."""

    binary: str
    path: str | None

    @property
    def version(self) -> str | None:
        """The CUDA release of the program (``"12.8"``), or None when it does not run."""
        return None if self.path is None else _tool_version(self.path)

    @staticmethod
    def from_path(path: str) -> NvidiaTool | None:
        """The tool at ``path``, or None when it does not run (Triton's constructor)."""
        tool = NvidiaTool(os.path.basename(path), path)
        return tool if tool.version is not None else None


class env_nvidia_tool(env_base[str | None, NvidiaTool]):
    """``TRITON_<BINARY>_PATH`` (or ``mirror``), else the program on ``PATH``."""

    def __init__(self, binary: str, mirror: Mirror | None = None) -> None:
        super().__init__(f"TRITON_{binary.upper().replace('-', '_')}_PATH", mirror)
        self.binary = binary

    def read(self, text: str | None) -> NvidiaTool:
        return self.transform(text)

    def transform(self, value: str | None) -> NvidiaTool:
        return NvidiaTool(self.binary, value or shutil.which(self.binary))


# ---------------------------------------------------------------------------- groups

F = TypeVar("F", bound=Callable[..., Any])


class HookChain(Generic[F]):
    """Functions called in order (``reversed``: last added first), as Triton's hooks."""

    def __init__(self, reversed: bool = False) -> None:
        self.calls: list[F] = []
        self.reversed = reversed

    def add(self, func: F) -> None:
        if func not in self.calls:
            self.calls.append(func)

    def remove(self, func: F) -> None:
        if func in self.calls:
            self.calls.remove(func)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        for call in reversed(self.calls) if self.reversed else list(self.calls):
            call(*args, **kwargs)


K = TypeVar("K", bound="base_knobs")


class base_knobs:
    """A group of knobs: the class holds the knobs, the instance their overrides."""

    def __init__(self) -> None:
        #: The variables that assignments wrote, with their values before the first one.
        self._saved_env: dict[str, str | None] = {}

    @property
    def knob_descriptors(self) -> dict[str, env_base[Any, Any]]:
        found: dict[str, env_base[Any, Any]] = {}
        for cls in reversed(type(self).__mro__):
            found.update((k, v) for k, v in vars(cls).items() if isinstance(v, env_base))
        return found

    @property
    def knobs(self) -> dict[str, Any]:
        """Every knob's value."""
        return {name: getattr(self, name) for name in self.knob_descriptors}

    def variables(self) -> list[str]:
        """The environment variables of the group's knobs."""
        return [v for knob in self.knob_descriptors.values() for v in knob.variables]

    def hook_chains(self) -> dict[str, HookChain[Any]]:
        """The group's hook chains, by name (read without reading any knob)."""
        found: dict[str, HookChain[Any]] = {}
        for space in [*(vars(cls) for cls in reversed(type(self).__mro__)), self.__dict__]:
            found.update((k, v) for k, v in space.items() if isinstance(v, HookChain))
        return found

    def copy(self: K) -> K:
        """Another group with the same overrides."""
        other = type(self)()
        other.__dict__.update(self.__dict__)
        other._saved_env = dict(self._saved_env)
        return other

    def reset(self: K) -> K:
        """Drop every override and put back the variables that assignments wrote."""
        for name in self.knob_descriptors:
            self.__dict__.pop(name, None)
        for name, value in self._saved_env.items():
            _put(name, value)
        self._saved_env.clear()
        return self

    @contextmanager
    def scope(self) -> Iterator[None]:
        """On exit, the overrides, the variables and the hook chains are as on entry."""
        before = {name: os.environ.get(name) for name in self.variables()}
        state, saved = dict(self.__dict__), dict(self._saved_env)
        chains = [(chain, list(chain.calls)) for chain in self.hook_chains().values()]
        try:
            yield
        finally:
            self.__dict__.clear()
            self.__dict__.update(state)
            self._saved_env = saved
            for chain, calls in chains:
                chain.calls[:] = calls
            for name, value in before.items():
                _put(name, value)


class build_knobs(base_knobs):
    """Triton's C compiler for its launchers (not used here)."""

    cc = env_opt_str("CC")
    cudacrt_path = env_opt_str("TRITON_CUDACRT_PATH")
    cudart_path = env_opt_str("TRITON_CUDART_PATH")
    impl: Callable[..., str] | None = None

    @property
    def backend_dirs(self) -> set[str]:
        return {p for p in (self.cudacrt_path, self.cudart_path) if p is not None}


class redis_knobs(base_knobs):
    """Triton's Redis cache (not used here)."""

    key_format = env_str("TRITON_REDIS_KEY_FORMAT", "triton:{key}:{filename}")
    host = env_str("TRITON_REDIS_HOST", "localhost")
    port = env_int("TRITON_REDIS_PORT", 6379)


class cache_knobs(base_knobs):
    """Where compiled kernels and dumps go (``dir``, and ``dump_dir`` for ``dump_ir``)."""

    home_dir = env_str("TRITON_HOME", os.path.expanduser("~/"))
    dump_dir: env_str_callable_default = env_str_callable_default(
        "TRITON_DUMP_DIR", lambda: cache.get_triton_dir("dump")
    )
    override_dir: env_str_callable_default = env_str_callable_default(
        "TRITON_OVERRIDE_DIR", lambda: cache.get_triton_dir("override")
    )
    dir: env_str_callable_default = env_str_callable_default(
        "TRITON_CACHE_DIR", lambda: str(cache_dir()), _path(CACHE_DIR_ENV)
    )
    manager_class = env_class("TRITON_CACHE_MANAGER", "CacheManager")
    remote_manager_class = env_class("TRITON_REMOTE_CACHE_BACKEND", "RemoteCacheBackend")

    def get_triton_dir(self, dirname: str) -> str:
        return os.path.join(self.home_dir, ".triton", dirname)


class compilation_knobs(base_knobs):
    """The compiler (``dump_ir``, ``front_end_debugging``, ``allow_non_constexpr_globals``
    and ``disable_line_info``, for ``asm["cubin"]``, take effect)."""

    override = env_bool("TRITON_KERNEL_OVERRIDE")
    dump_ir = env_bool("TRITON_KERNEL_DUMP", mirror=_DUMP)
    dump_ir_extract_di_local_variables = env_bool("LLVM_EXTRACT_DI_LOCAL_VARIABLES")
    store_binary_only = env_bool("TRITON_STORE_BINARY_ONLY")
    always_compile = env_bool("TRITON_ALWAYS_COMPILE")
    use_ir_loc = env_opt_str("USE_IR_LOC")
    enable_asan = env_bool("TRITON_ENABLE_ASAN")
    disable_line_info = env_bool("TRITON_DISABLE_LINE_INFO")
    front_end_debugging = env_bool("TRITON_FRONT_END_DEBUGGING", mirror=_flag(TRACEBACK_ENV))
    allow_non_constexpr_globals = env_bool(
        "TRITON_ALLOW_NON_CONSTEXPR_GLOBALS",
        mirror=Mirror(
            "TRITON_ALLOW_NON_CONSTEXPR_GLOBALS",
            lambda text: text.strip().lower() in ("1", "true", "yes", "on", "y"),
            lambda on: "1" if on else "0",
        ),
    )
    instrumentation_mode = env_str("TRITON_INSTRUMENTATION_MODE", "")
    fpsan_homomorphic_casts = env_bool("TRITON_FPSAN_HOMOMORPHIC_CASTS")
    listener: Callable[..., None] | None = None


class autotuning_knobs(base_knobs):
    """The autotuner (``cache`` takes effect)."""

    cache = env_bool(
        "TRITON_CACHE_AUTOTUNING", True, _flag(AUTOTUNE_CACHE_ENV, off=("0", "false", "off"))
    )
    print = env_bool("TRITON_PRINT_AUTOTUNING")
    listener: Callable[..., None] | None = None


class runtime_knobs(base_knobs):
    """Launches (``debug`` and ``interpret`` take effect)."""

    interpret = env_bool("TRITON_INTERPRET", mirror=_BACKEND)
    debug = env_bool("TRITON_DEBUG", mirror=_flag(DEBUG_ENV))
    override_arch = env_opt_str("TRITON_OVERRIDE_ARCH")

    launch_enter_hook: HookChain[Callable[..., None]] = HookChain()
    launch_exit_hook: HookChain[Callable[..., None]] = HookChain(reversed=True)
    kernel_load_start_hook: HookChain[Callable[..., None]] = HookChain()
    kernel_load_end_hook: HookChain[Callable[..., None]] = HookChain(reversed=True)
    kernel_unload_hook: HookChain[Callable[..., None]] = HookChain()
    jit_cache_hook: Callable[..., bool | None] | None = None
    jit_post_compile_hook: Callable[..., bool | None] | None = None
    add_stages_inspection_hook: Callable[..., Any] | None = None


class language_knobs(base_knobs):
    """The language (``fp32_default`` and ``default_fp_fusion`` take effect)."""

    fp32_default = env_opt_str(F32_DEFAULT_ENV)
    default_fp_fusion = env_bool("TRITON_DEFAULT_FP_FUSION", True)


class nvidia_knobs(base_knobs):
    """NVIDIA's tools and libraries (``libdevice_path`` and ``ptxas`` take effect)."""

    cuobjdump = env_nvidia_tool("cuobjdump")
    nvdisasm = env_nvidia_tool("nvdisasm")
    ptxas = env_nvidia_tool("ptxas", _path("PTXAS"))
    ptxas_blackwell = env_nvidia_tool("ptxas-blackwell")

    dump_nvptx = env_bool("NVPTX_ENABLE_DUMP")
    disable_ptxas_opt = env_bool("DISABLE_PTXAS_OPT")
    ptxas_options = env_opt_str("PTXAS_OPTIONS")
    mock_ptx_version = env_opt_str("TRITON_MOCK_PTX_VERSION")
    dump_ptxas_log = env_bool("TRITON_DUMP_PTXAS_LOG")

    libdevice_path = env_opt_str("TRITON_LIBDEVICE_PATH", _path("MINITRITON_LIBDEVICE"))
    libcuda_path = env_opt_str("TRITON_LIBCUDA_PATH")


class amd_knobs(base_knobs):
    """AMD's backend (not used here)."""

    use_buffer_ops = env_bool("AMDGCN_USE_BUFFER_OPS", True)
    use_buffer_atomics = env_bool("AMDGCN_USE_BUFFER_ATOMICS", True)
    buffer_ops_analyze_small_tensor_range = env_bool("AMDGCN_ANALYZE_SMALL_TENSOR_RANGE")
    dump_amdgcn = env_bool("AMDGCN_ENABLE_DUMP")
    libhip_path = env_opt_str("TRITON_LIBHIP_PATH")
    use_block_pingpong = env_opt_bool("TRITON_HIP_USE_BLOCK_PINGPONG")
    use_in_thread_transpose = env_opt_bool("TRITON_HIP_USE_IN_THREAD_TRANSPOSE")
    use_async_copy = env_opt_bool("TRITON_HIP_USE_ASYNC_COPY")
    use_coexec_scheduler = env_opt_bool("TRITON_HIP_USE_COEXEC_SCHEDULER")
    use_expert_scheduling = env_opt_bool("TRITON_HIP_USE_EXPERT_SCHEDULING")
    scalarize_packed_fops = env_bool("AMDGCN_SCALARIZE_PACKED_FOPS")
    dump_mir = env_opt_str("TRITON_DUMP_MIR")
    swap_mir = env_opt_str("TRITON_SWAP_MIR")
    swap_mir_enable_misched = env_bool("TRITON_SWAP_MIR_ENABLE_MISCHED")


_NVIDIA_LIB = Path(__file__).resolve().parent / "backends" / "nvidia" / "lib"


class proton_knobs(base_knobs):
    """Triton's profiler (not used here)."""

    disable = env_bool("TRITON_PROTON_DISABLE")
    cupti_lib_dir = env_str("TRITON_CUPTI_LIB_PATH", str(_NVIDIA_LIB / "cupti"))
    cupti_lib_blackwell_dir = env_str(
        "TRITON_CUPTI_LIB_BLACKWELL_PATH", str(_NVIDIA_LIB / "cupti-blackwell")
    )
    hsa_runtime_path = env_opt_str("TRITON_HSA_RUNTIME_PATH")
    hsa_runtime_library = env_opt_str("TRITON_HSA_RUNTIME_LIBRARY")
    rocprofiler_sdk_include_path = env_opt_str("TRITON_ROCPROFILER_SDK_INCLUDE_PATH")
    rocprofiler_sdk_lib_path = env_opt_str("TRITON_ROCPROFILER_SDK_LIB_PATH")
    rocprofiler_sdk_library = env_opt_str("TRITON_ROCPROFILER_SDK_LIBRARY")
    roctracer_lib_path = env_opt_str("TRITON_ROCTRACER_LIB_PATH")
    roctracer_library = env_opt_str("TRITON_ROCTRACER_LIBRARY")
    roctx_lib_path = env_opt_str("TRITON_ROCTX_LIB_PATH")
    roctx_library = env_str("TRITON_ROCTX_LIBRARY", "libroctx64.so")
    profile_buffer_size = env_int("TRITON_PROFILE_BUFFER_SIZE", 64 * 1024 * 1024)
    profile_metric_buffer_size = env_int("TRITON_PROFILE_METRIC_BUFFER_SIZE", 64 * 1024 * 1024)
    enable_nvtx = env_bool("TRITON_ENABLE_NVTX", True)
    enable_hw_trace = env_bool("TRITON_ENABLE_HW_TRACE")


build = build_knobs()
redis = redis_knobs()
cache = cache_knobs()
compilation = compilation_knobs()
autotuning = autotuning_knobs()
runtime = runtime_knobs()
language = language_knobs()
nvidia = nvidia_knobs()
amd = amd_knobs()
proton = proton_knobs()


def refresh_knobs() -> None:
    """Drop the overrides of the two knobs Triton reads once (every knob here reads each time)."""
    runtime.debug = env
    compilation.instrumentation_mode = env
