"""Cache entries on disk: the folder, checksummed files, atomic writes.

Shared by the GPU backend's PTX cache (:mod:`minitriton.backend.cache`) and
the optimized-IR cache (:mod:`minitriton.ircache`); it imports nothing
heavy, so reading an entry costs no import of the compiler.

The folder is ``$MINITRITON_CACHE_DIR`` or ``~/.cache/minitriton``;
``MINITRITON_CACHE=0`` turns the disk cache off. An entry is one file: a
header line ``MINITRITON-CACHE 1 <sha256 of the body>`` followed by the body.
Files are written to a temporary name and moved into place with
``os.replace``, so a reader never sees half a file and two processes writing
the same entry at once both succeed (the last one wins, with the same
content). An entry whose checksum does not match reads as missing, so the
caller rebuilds and rewrites it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from pathlib import Path

HEADER = "MINITRITON-CACHE 1"
CACHE_DIR_ENV = "MINITRITON_CACHE_DIR"
CACHE_ENV = "MINITRITON_CACHE"


def cache_dir() -> Path:
    """The on-disk cache directory."""
    return _cache_dir(os.environ.get(CACHE_DIR_ENV), os.environ.get("HOME"))


@functools.lru_cache(maxsize=8)
def _cache_dir(env: str | None, home: str | None) -> Path:
    """Made once per setting: a launch asks for it, and pathlib is slow to build paths."""
    return Path(env) if env else Path.home() / ".cache" / "minitriton"


def disk_cache_enabled() -> bool:
    """False when ``MINITRITON_CACHE=0`` (or ``false``, ``off``)."""
    return os.environ.get(CACHE_ENV, "1") not in ("0", "false", "off")


def read_entry(path: Path) -> str | None:
    """The body of the entry at ``path``, or ``None`` (missing, unreadable or corrupt)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    header, _, body = text.partition("\n")
    if header != f"{HEADER} {hashlib.sha256(body.encode()).hexdigest()}":
        return None
    return body


def write_entry(path: Path, body: str) -> None:
    """Write ``body`` as the entry at ``path`` atomically (errors are ignored: it is a cache)."""
    import tempfile  # only a compile writes: a launch of a cached kernel never loads it

    text = f"{HEADER} {hashlib.sha256(body.encode()).hexdigest()}\n{body}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
