"""The kernel cache: compiled kernels in memory and on disk.

Key: sha256 of (IR text after the pass pipeline, with locations — it covers
the source, inlined helpers and the specialization —, target arch,
``num_warps``, ``num_stages``, compiler version incl. llvmlite/LLVM). The directory is
``$MINITRITON_CACHE_DIR`` or ``~/.cache/minitriton``; ``MINITRITON_CACHE=0``
turns the disk cache off.

Each entry is one file ``<key>.json``: a header line
``MINITRITON-CACHE 1 <sha256 of the body>`` followed by a JSON body. Files are
written to a temporary name and moved into place with ``os.replace``, so a
reader never sees half a file; an entry whose checksum or JSON does not match
is ignored and rebuilt. The file rules live in :mod:`minitriton.cachefile`,
shared with the optimized-IR cache. The autotuner keeps its winners in the
same directory and format (``autotune-<sha256>.json``, through
:func:`load_json` and :func:`store_json`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from minitriton.backend.compiler import CompiledKernel, version_tag
from minitriton.cachefile import HEADER, cache_dir, disk_cache_enabled, read_entry, write_entry

__all__ = [
    "HEADER",
    "cache_dir",
    "cache_key",
    "disk_cache_enabled",
    "load",
    "load_json",
    "store",
    "store_json",
]


def cache_key(ir_text: str, arch: str, num_warps: int, num_stages: int = 3) -> str:
    """The sha256 key of one compilation."""
    h = hashlib.sha256()
    for part in (ir_text, arch, str(num_warps), str(num_stages), version_tag()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _path(key: str) -> Path:
    return cache_dir() / f"{key}.json"


def load(key: str) -> CompiledKernel | None:
    """The cached kernel for ``key``, or ``None`` (missing or corrupt)."""
    body = load_json(key)
    if not isinstance(body, dict):
        return None
    try:
        return CompiledKernel(**body)
    except TypeError:
        return None


def store(key: str, kernel: CompiledKernel) -> None:
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
    if disk_cache_enabled():
        write_entry(_path(name), json.dumps(value))
