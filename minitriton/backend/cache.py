"""The kernel cache: compiled kernels in memory and on disk.

Key: sha256 of (IR text after the pass pipeline, with locations — it covers
the source, inlined helpers and the specialization —, target arch,
``num_warps``, ``num_stages``, compiler version incl. llvmlite/LLVM). The directory is
``$MINITRITON_CACHE_DIR`` or ``~/.cache/minitriton``; ``MINITRITON_CACHE=0``
turns the disk cache off.

Each entry is one file ``<key>.json``: a header line
``MINITRITON-CACHE 1 <sha256 of the body>`` followed by a JSON body. Files are
written to a temporary name and moved into place with ``os.replace``, so a
reader never sees half a file; an entry whose checksum, JSON or field types
do not match is ignored and rebuilt, and a directory where an entry belongs
is replaced. The file rules live in :mod:`minitriton.cachefile`, shared with
the optimized-IR cache. The autotuner keeps its winners in the same directory
and format (``autotune-<sha256>.json``, through :func:`load_json` and
:func:`store_json`).

The cache is *trusted input*: what an entry holds is loaded on the GPU as it
is. Never point ``MINITRITON_CACHE_DIR`` at a directory that others can write
to (a shared temporary folder, a world-writable mount).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

from minitriton.backend.build import PTXModule, version_tag
from minitriton.backend.passes.software_pipeline import schedule_tag
from minitriton.backend.tma import tma_tag
from minitriton.cachefile import HEADER, cache_dir, disk_cache_enabled, read_entry, write_entry
from minitriton.ir.ops import Module
from minitriton.ir.printer import print_module

__all__ = [
    "HEADER",
    "cache_dir",
    "cache_key",
    "disk_cache_enabled",
    "load",
    "load_json",
    "module_text",
    "store",
    "store_json",
]


def module_text(module: Module) -> str:
    """The text a cache key is made of: the IR with its locations, which reach the PTX."""
    return print_module(module, with_locs=True)


def cache_key(
    ir_text: str, arch: str, num_warps: int, num_stages: int = 3, maxnreg: int | None = None
) -> str:
    """The sha256 key of one compilation."""
    h = hashlib.sha256()
    for part in (
        ir_text,
        arch,
        str(num_warps),
        str(num_stages),
        str(maxnreg),
        version_tag(),
        tma_tag(),
        schedule_tag(),
    ):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _path(key: str) -> Path:
    return cache_dir() / f"{key}.json"


def load(key: str) -> PTXModule | None:
    """The cached kernel for ``key``, or ``None`` (missing or corrupt)."""
    fields = load_json(key)
    return PTXModule(**fields) if _well_typed(fields) else None


#: The JSON type of each field of a cache entry.
_FIELD_TYPES = {"name": str, "ttgir": str, "llir": str, "ptx": str, "shared": int,
                "num_warps": int, "arch": str, "params": list, "tma": list, "alt_ptx": str,
                "alt_shared": int}  # fmt: skip


def _well_typed(fields: object) -> bool:
    """An entry with the right checksum may still hold the wrong fields: it is rebuilt."""
    if not isinstance(fields, dict) or set(fields) != set(_FIELD_TYPES):
        return False
    for name, kind in _FIELD_TYPES.items():
        value = fields[name]
        if not isinstance(value, kind) or isinstance(value, bool):
            return False
    return all(isinstance(p, str) for p in fields["params"])


def store(key: str, kernel: PTXModule) -> None:
    """Write ``kernel`` under ``key`` atomically (errors are ignored: it is a cache)."""
    store_json(key, asdict(kernel))


def load_json(name: str) -> Any:
    """The JSON body of entry ``<name>.json``, or ``None`` (missing, corrupt or cache off).

    Other caches (the autotuner's winners) share the directory and the entry
    format through this and :func:`store_json`.
    """
    if not disk_cache_enabled():
        return None
    body = read_entry(_path(name))
    if body is None:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def store_json(name: str, value: Any) -> None:
    """Write ``value`` as entry ``<name>.json`` atomically (errors are ignored)."""
    if not disk_cache_enabled():
        return
    path = _path(name)
    if path.is_dir() and not path.is_symlink():
        # Else every run would compile again, and never say why.
        shutil.rmtree(path, ignore_errors=True)
    write_entry(path, json.dumps(value))
