"""The kernel cache: compiled kernels in memory and on disk.

Key: sha256 of (IR text after the pass pipeline, with locations — it covers
the source, inlined helpers and the specialization —, target arch,
``num_warps``, compiler version incl. llvmlite/LLVM). The directory is
``$MINITRITON_CACHE_DIR`` or ``~/.cache/minitriton``; ``MINITRITON_CACHE=0``
turns the disk cache off.

Each entry is one file ``<key>.json``: a header line
``MINITRITON-CACHE 1 <sha256 of the body>`` followed by a JSON body. Files are
written to a temporary name and moved into place with ``os.replace``, so a
reader never sees half a file; an entry whose checksum or JSON does not match
is ignored and rebuilt. The file rules live in :mod:`minitriton.cachefile`,
shared with the optimized-IR cache.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from minitriton.backend.compiler import CompiledKernel, version_tag
from minitriton.cachefile import HEADER, cache_dir, disk_cache_enabled, read_entry, write_entry

__all__ = ["HEADER", "cache_dir", "cache_key", "disk_cache_enabled", "load", "store"]


def cache_key(ir_text: str, arch: str, num_warps: int) -> str:
    """The sha256 key of one compilation."""
    h = hashlib.sha256()
    for part in (ir_text, arch, str(num_warps), version_tag()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _path(key: str) -> Path:
    return cache_dir() / f"{key}.json"


def load(key: str) -> CompiledKernel | None:
    """The cached kernel for ``key``, or ``None`` (missing or corrupt)."""
    if not disk_cache_enabled():
        return None
    body = read_entry(_path(key))
    if body is None:
        return None
    try:
        return CompiledKernel(**json.loads(body))
    except (ValueError, TypeError):
        return None


def store(key: str, kernel: CompiledKernel) -> None:
    """Write ``kernel`` under ``key`` atomically (errors are ignored: it is a cache)."""
    if not disk_cache_enabled():
        return
    write_entry(_path(key), json.dumps(asdict(kernel)))
