"""The kernel cache: compiled kernels in memory and on disk.

Key: sha256 of (IR text after the pass pipeline, with locations — it covers
the source, inlined helpers and the specialization —, target arch,
``num_warps``, compiler version incl. llvmlite/LLVM). The directory is
``$MINITRITON_CACHE_DIR`` or ``~/.cache/minitriton``; ``MINITRITON_CACHE=0``
turns the disk cache off.

Each entry is one file ``<key>.json``: a header line
``MINITRITON-CACHE 1 <sha256 of the body>`` followed by a JSON body. Files are
written to a temporary name and moved into place with ``os.replace``, so a
reader never sees half a file; an entry whose checksum, JSON or field types
do not match is ignored and rebuilt, and a directory where an entry belongs
is replaced.

The cache is *trusted input*: what an entry holds is loaded on the GPU as it
is. Never point ``MINITRITON_CACHE_DIR`` at a directory that others can write
to (a shared ``/tmp`` folder, a world-writable mount).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path

from minitriton.backend.compiler import CompiledKernel, version_tag

HEADER = "MINITRITON-CACHE 1"


def cache_dir() -> Path:
    """The on-disk cache directory."""
    env = os.environ.get("MINITRITON_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "minitriton"


def disk_cache_enabled() -> bool:
    """False when ``MINITRITON_CACHE=0``."""
    return os.environ.get("MINITRITON_CACHE", "1") not in ("0", "false", "off")


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
    try:
        text = _path(key).read_text(encoding="utf-8")
        header, body = text.split("\n", 1)
        if header != f"{HEADER} {hashlib.sha256(body.encode()).hexdigest()}":
            return None
        fields = json.loads(body)
    except (OSError, ValueError, TypeError):
        return None
    return CompiledKernel(**fields) if _well_typed(fields) else None


#: The JSON type of each field of a cache entry.
_FIELD_TYPES = {"name": str, "ttgir": str, "llir": str, "ptx": str, "shared": int,
                "num_warps": int, "arch": str, "params": list}  # fmt: skip


def _well_typed(fields: object) -> bool:
    """An entry with the right checksum may still hold the wrong fields: it is rebuilt."""
    if not isinstance(fields, dict) or set(fields) != set(_FIELD_TYPES):
        return False
    for name, kind in _FIELD_TYPES.items():
        value = fields[name]
        if not isinstance(value, kind) or isinstance(value, bool):
            return False
    return all(isinstance(p, str) for p in fields["params"])


def store(key: str, kernel: CompiledKernel) -> None:
    """Write ``kernel`` under ``key`` atomically (errors are ignored: it is a cache)."""
    if not disk_cache_enabled():
        return
    body = json.dumps(asdict(kernel))
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
        path = _path(key)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)  # else every run would compile again, and never say why
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
