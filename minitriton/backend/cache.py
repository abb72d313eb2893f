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
is ignored and rebuilt. The autotuner keeps its winners in the same directory
and format (``autotune-<sha256>.json``, through :func:`load_json` and
:func:`store_json`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from minitriton.backend.compiler import CompiledKernel, version_tag

HEADER = "MINITRITON-CACHE 1"


def cache_dir() -> Path:
    """The on-disk cache directory."""
    env = os.environ.get("MINITRITON_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "minitriton"


def disk_cache_enabled() -> bool:
    """False when ``MINITRITON_CACHE=0``."""
    return os.environ.get("MINITRITON_CACHE", "1") not in ("0", "false", "off")


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
    try:
        text = _path(name).read_text(encoding="utf-8")
        header, body = text.split("\n", 1)
        if header != f"{HEADER} {hashlib.sha256(body.encode()).hexdigest()}":
            return None
        return json.loads(body)
    except (OSError, ValueError):
        return None


def store_json(name: str, value: Any) -> None:
    """Write ``value`` as entry ``<name>.json`` atomically (errors are ignored)."""
    if not disk_cache_enabled():
        return
    body = json.dumps(value)
    text = f"{HEADER} {hashlib.sha256(body.encode()).hexdigest()}\n{body}"
    try:
        directory = cache_dir()
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, _path(name))
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
