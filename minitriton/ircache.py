"""The on-disk cache of optimized IR: a second process launching the same kernel
does not parse, lower or optimize it.

``@jit`` launches look a specialization up here before compiling it
(:func:`load_kernel`) and store what they compiled (:func:`store_kernel`).
An entry is the optimized IR's text with locations (it round-trips through
:mod:`minitriton.ir.parser`, and emulator errors keep pointing into the
user's file) and the module itself, pickled (:func:`freeze_module`: loading
it is five times faster than parsing the text, which serves when the pickle
is missing or unusable), in the same folder as the GPU backend's PTX cache and with the
same file rules (:mod:`minitriton.cachefile`): atomic writes, a checksum,
and a corrupt entry read as missing and rebuilt.

The key (:func:`kernel_key`) covers everything the optimized IR depends on:

* the kernel's source text, file and first line (locations), and the same for
  every ``@jit`` helper it may call, found through the names its code uses;
* the values of plain globals those names reach (``BLOCK = 128``);
* the specialization (every :class:`~minitriton.frontend.source.ArgSpec`);
* every :class:`~minitriton.compiler.CompileOptions` field (the pass
  pipeline included), so that a new option takes part without a change here;
* :data:`COMPILER_VERSION`, MiniTriton's version and a fingerprint of the
  compiler's own source files (their sizes and modification times), so that
  an edited pass or frontend never reuses an old entry.

The cache is skipped when someone watches the compile: ``MINITRITON_DUMP_DIR``,
``print_after`` (or ``MINITRITON_PRINT_AFTER``), and ``MINITRITON_CACHE=0``.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import inspect
import io
import json
import os
import pickle
import sys
import types
from collections.abc import Iterator, Sequence
from dataclasses import fields
from functools import cache
from pathlib import Path
from typing import Any

from minitriton import cachefile
from minitriton.compiler import (
    DUMP_DIR_ENV,
    PRINT_AFTER_ENV,
    CompiledKernel,
    CompileOptions,
    Stages,
    ast_dump,
    finish_backend,
    ir_text,
    lower,
)
from minitriton.frontend.source import ArgSpec, JITBase, KernelSource
from minitriton.ir.core import OP_REGISTRY, Operation
from minitriton.language.core import constexpr

#: Bump when the frontend or the passes change what they produce: part of every key.
COMPILER_VERSION = "minitriton-ir-1"
#: Entries are ``ir/<source digest>/<key>.json`` in the PTX cache's folder.
SUBDIR = "ir"
#: The compiler's own sources (relative to the package) that the fingerprint covers.
COMPILER_SOURCES = ("frontend", "ir", "passes", "language", "compiler", "signature.py")
#: The files the fingerprint stamps: Python and the grammar.
_SOURCE_SUFFIXES = (".py", ".lark")
#: Global values that take part in the key by their repr.
_PLAIN = (int, float, bool, str, bytes, type(None), complex)
#: Top-level packages whose functions and classes take part by name only.
_LIBRARIES = ("minitriton", "triton", "builtins", "numpy", "math", "torch", "typing")


# ---------------------------------------------------------------------------
# Looking up and storing
# ---------------------------------------------------------------------------


def usable(options: CompileOptions) -> bool:
    """True unless the disk cache is off or someone watches the passes run."""
    if not cachefile.disk_cache_enabled() or options.print_after:
        return False
    return not os.environ.get(DUMP_DIR_ENV) and not os.environ.get(PRINT_AFTER_ENV, "").strip()


def load_kernel(
    src: KernelSource, specs: Sequence[ArgSpec], options: CompileOptions, stop_after: str,
    key: str | None = None,
) -> CompiledKernel | None:  # fmt: skip
    """The cached kernel for this specialization, compiled on to ``stop_after``; else None.

    ``key`` is its :func:`kernel_key` when the caller has it already (a
    launch passes the same one to :func:`store_kernel` after a miss).
    """
    if not usable(options):
        return None
    key = key or kernel_key(src, specs, options)
    module = read_module(entry_path(src, key))
    if module is None:
        return None
    out = CompiledKernel(src.name, module, list(specs), Stages(), options, source=src)
    out.from_disk = True
    _lazy_stages(out, src, list(specs))
    finish_backend(out, stop_after)
    return out


def store_kernel(compiled: Any, key: str | None = None) -> None:
    """Write ``compiled``'s optimized IR to the cache (nothing if it came from there).

    ``key``, when given, is its :func:`kernel_key` (computed for the lookup).
    """
    src = getattr(compiled, "source", None)
    if not isinstance(compiled, CompiledKernel) or compiled.from_disk or src is None:
        return
    if compiled.module is None or not usable(compiled.options):
        return
    key = key or kernel_key(src, compiled.arg_specs, compiled.options)
    text = ir_text_with_locs(compiled.module)
    entry = {"name": compiled.name, "ir": text}
    frozen = freeze_module(compiled.module)
    if frozen is not None:
        entry["module"] = frozen
    body = json.dumps(entry)
    cachefile.write_entry(entry_path(src, key), body)
    for helper in helper_sources(src):  # marks them as known (see has_entries)
        with contextlib.suppress(OSError):
            source_folder(helper).mkdir(parents=True, exist_ok=True)


def entry_key(
    src: KernelSource, specs: Sequence[ArgSpec], options: CompileOptions, gpu: bool = False
) -> str | None:
    """:func:`kernel_key`, or None when the cache is not used for ``options``.

    One entry serves both backends, except for a kernel that reads globals
    Triton's compiler refuses: the emulator reads them and a GPU compile
    refuses them (:mod:`minitriton.frontend.capture`), so ``gpu`` gets its own.
    """
    if not usable(options):
        return None
    reached: dict[int, KernelSource] = {}  # the key's walk finds the helpers: walk them once
    key = kernel_key(src, specs, options, reached)
    return key + "-gpu" if gpu and reads_refused_globals(src, list(reached.values())) else key


def reads_refused_globals(src: KernelSource, reached: list[KernelSource] | None = None) -> bool:
    """Whether ``src`` or a helper it reaches names a global or closure variable that
    Triton's compiler refuses (found as :func:`source_closure` finds names: generously).

    ``reached``, when given, is ``src`` and its helpers, as :func:`source_closure` found them.
    """
    from minitriton.frontend.capture import readable

    for fn in reached if reached is not None else [src, *helper_sources(src)]:
        names = getattr(getattr(fn.fn, "__code__", None), "co_names", ())
        values = [fn.globals[n] for n in names if n in fn.globals]
        if not all(map(readable, [*values, *fn.nonlocals().values()])):
            return True
    return False


def read_module(path: Path) -> Any:
    """The module stored at ``path``, or None when it is missing or unreadable."""
    body = cachefile.read_entry(path)
    if body is None:
        return None
    from minitriton.diagnostics import CompileError
    from minitriton.ir.core import VerifyError
    from minitriton.ir.parser import parse_module

    try:
        entry = json.loads(body)
        module = thaw_module(entry.get("module"))
        if module is None:
            module = parse_module(entry["ir"], str(path))
        name = module.kernel.sym_name
    except (ValueError, KeyError, TypeError, IndexError, CompileError, VerifyError):
        return None  # written by another version: rebuilt and rewritten
    return module if name == entry["name"] else None


def freeze_module(module: Any) -> str | None:
    """``module`` pickled (as base64 text), or None when it cannot be.

    Unpickling the module takes a fifth of the time of parsing its text
    again. The text stays in the entry as well: it is what a person reads,
    and what is parsed when the pickle is missing or unusable. Only this
    user's own cache folder is ever unpickled, as Python's own bytecode cache
    is only ever imported from the user's folders.
    """
    buffer = io.BytesIO()
    try:
        _IRPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(module)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return None  # a deep module or an attribute pickle cannot take: the text serves
    return base64.b64encode(buffer.getvalue()).decode("ascii")


class _IRPickler(pickle.Pickler):
    """Op classes by their registered name: many are made by a factory
    (``arith.add``, ``math.exp2``), so no module attribute names them."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, type) and issubclass(obj, Operation) and _registered(obj):
            return _op_class, (obj.name,)
        return NotImplemented


def _registered(cls: type) -> bool:
    name = getattr(cls, "name", None)
    return isinstance(name, str) and OP_REGISTRY.get(name) is cls


def _op_class(name: str) -> type:
    """The op class registered as ``name`` (what :class:`_IRPickler` stores)."""
    import minitriton.ir.ops  # noqa: F401 - registers the op classes (``minitriton.ir`` is lazy)

    return OP_REGISTRY[name]


def thaw_module(frozen: Any) -> Any:
    """The module :func:`freeze_module` made, or None when ``frozen`` is not usable."""
    if not isinstance(frozen, str):
        return None
    try:
        module = pickle.loads(base64.b64decode(frozen, validate=True))
    except Exception:  # noqa: BLE001 - any unusable pickle falls back to the text
        return None
    return module if hasattr(getattr(module, "kernel", None), "sym_name") else None


def has_entries(src: KernelSource) -> bool:
    """True when the cache knows ``src``: as a kernel with entries, or as a helper of one.

    The first ``@jit`` definitions of a process ask this to decide whether
    the first launch will need the frontend (:func:`minitriton.jit.preload`).
    """
    return cachefile.disk_cache_enabled() and source_folder(src).is_dir()


def source_folder(src: KernelSource) -> Path:
    """The folder of ``src``'s entries: named by a digest of its text, file and line."""
    return cachefile.cache_dir() / SUBDIR / _source_digest(src.filename, src.first_line, src.source)


@functools.lru_cache(maxsize=1024)
def _source_digest(filename: str, first_line: int, source: str) -> str:
    """Computed once per function (its ``@jit`` definition asks first: :func:`has_entries`)."""
    return hashlib.sha256(f"{filename}\0{first_line}\0{source}".encode()).hexdigest()[:32]


def entry_path(src: KernelSource, key: str) -> Path:
    """The file of the entry ``key`` of kernel ``src``."""
    return source_folder(src) / f"{key}.json"


def ir_text_with_locs(module: Any) -> str:
    """The IR text an entry holds: locations included."""
    from minitriton.ir.printer import print_module

    return print_module(module, with_locs=True)


def _lazy_stages(out: CompiledKernel, src: KernelSource, specs: list[ArgSpec]) -> None:
    """The ``ast``, ``ir`` and ``ir-opt`` texts, made again only if someone reads them."""
    module = out.module
    out.asm.lazy("ast", lambda: ast_dump(src.parsed()))
    out.asm.lazy("ir", lambda: ir_text(lower(src, specs)))
    out.asm.lazy("ir-opt", lambda: ir_text(module))


# ---------------------------------------------------------------------------
# The key
# ---------------------------------------------------------------------------


def kernel_key(
    src: KernelSource,
    specs: Sequence[ArgSpec],
    options: CompileOptions,
    reached: dict[int, KernelSource] | None = None,
) -> str:
    """The sha256 key of one specialization of ``src`` with ``options``.

    ``reached``, when given, receives ``src`` and the helpers it reaches (:func:`source_closure`).
    """
    h = hashlib.sha256()
    for part in _key_parts(src, specs, options, reached):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


def _key_parts(
    src: KernelSource,
    specs: Sequence[ArgSpec],
    options: CompileOptions,
    reached: dict[int, KernelSource] | None = None,
) -> Iterator[str]:
    yield COMPILER_VERSION
    yield compiler_digest()
    yield from _pass_sources(options)
    yield repr([s.key() for s in specs])
    yield repr([(f.name, getattr(options, f.name)) for f in fields(options)
                if f.name != "print_after"])  # fmt: skip
    yield from source_closure(src, reached)


def source_closure(src: KernelSource, reached: dict[int, KernelSource] | None = None) -> list[str]:
    """The source texts of ``src`` and the helpers it reaches, and the globals it reads.

    ``reached``, when given (empty), receives ``src`` and those helpers, by ``id``.
    """
    parts: list[str] = []
    _describe_function(src, parts, {} if reached is None else reached)
    return parts


def helper_sources(src: KernelSource) -> list[KernelSource]:
    """The ``@jit`` functions ``src`` may call (found as :func:`source_closure` finds them)."""
    seen: dict[int, KernelSource] = {}
    _describe_function(src, [], seen)
    return [s for s in seen.values() if s is not src]


def _describe_function(src: KernelSource, parts: list[str], seen: dict[int, KernelSource]) -> None:
    if id(src) in seen:
        return
    seen[id(src)] = src
    parts += ["function", src.filename, str(src.first_line), src.source]
    code = getattr(src.fn, "__code__", None)
    if code is None:
        return
    names = code.co_names
    for name in names:
        if name in src.globals:
            parts.append(f"{name}={_describe(src.globals[name], names, parts, seen)}")
    # Closure variables: a kernel defined in a function reads that function's locals.
    for name, value in src.nonlocals().items():
        parts.append(f"nonlocal {name}={_describe(value, names, parts, seen)}")


def _describe(
    value: Any, names: Sequence[str], parts: list[str], seen: dict[int, KernelSource]
) -> str:
    """A stable description of a global; ``@jit`` helpers add their own closure."""
    if isinstance(value, JITBase):
        _describe_function(value.source, parts, seen)
        return f"jit {value.source.name}"
    if isinstance(value, types.ModuleType):
        for attr in names:  # `helpers.fn` and `cfg.BLOCK`: attributes the code names
            found = getattr(value, attr, None)
            if isinstance(found, JITBase) or _is_plain(found):
                parts.append(f"{value.__name__}.{attr}={_describe(found, names, parts, seen)}")
        return f"module {value.__name__}"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type)):
        name = f"{type(value).__name__} {getattr(value, '__module__', '')}.{value.__qualname__}"
        return name + _user_source(value)
    text = repr(value)
    return type(value).__qualname__ if " at 0x" in text else text


def _user_source(value: Any) -> str:
    """The source of a function or class from the user's code (a compile-time helper
    or an aggregate may change the IR); nothing for library code, which the
    versions and the fingerprint cover."""
    module = getattr(value, "__module__", None) or ""
    if module.split(".")[0] in _LIBRARIES:
        return ""
    try:
        return "\n" + inspect.getsource(value)
    except (OSError, TypeError):
        return ""


def _is_plain(value: Any) -> bool:
    inner = value.value if isinstance(value, constexpr) else value
    return isinstance(inner, _PLAIN)


@cache
def compiler_fingerprint() -> str:
    """MiniTriton's version and the size and mtime of every compiler source file."""
    from minitriton.version import __version__

    root = Path(__file__).resolve().parent
    stamps = [__version__]
    for name in COMPILER_SOURCES:
        stamps += cachefile.source_stamps(root / name, _SOURCE_SUFFIXES)
    stamps += cachefile.source_stamps(_grammar_path(root), _SOURCE_SUFFIXES)
    return "\n".join(stamps)


@cache
def compiler_digest() -> str:
    """The sha256 of :func:`compiler_fingerprint` (a key hashes this, not the whole list)."""
    return hashlib.sha256(compiler_fingerprint().encode()).hexdigest()


def _grammar_path(root: Path) -> Path:
    """The grammar file, installed as package data or in the source tree."""
    installed = root / "grammar"
    return installed if installed.is_dir() else root.parent / "grammar"


def _pass_sources(options: CompileOptions) -> list[str]:
    """For a custom pipeline, where each pass class lives (a pass may come from outside)."""
    if options.passes is None:
        return []
    from minitriton.passes import PASSES

    out = []
    for name in options.passes:
        cls = PASSES.get(name)
        module = getattr(cls, "__module__", "?")
        out.append(f"pass {name} {module}.{getattr(cls, '__qualname__', '?')}")
        path = getattr(sys.modules.get(module), "__file__", None)
        if path:
            out += cachefile.source_stamps(Path(path), _SOURCE_SUFFIXES)
    return out
