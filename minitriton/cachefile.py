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

Both caches' keys also cover the compiler's own sources, by the size and
modification time of each file (:func:`source_stamps`): an edited pass or
backend file never reuses an old entry.
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


def source_stamps(
    path: Path, suffixes: tuple[str, ...] = (".py",), relative_to: Path | None = None
) -> list[str]:
    """``name size mtime`` for the file ``path``, or for each file under the folder ``path``
    whose name ends with one of ``suffixes``, in path order.

    A file given alone is named by its name; files found under a folder by their path,
    relative to ``relative_to`` when given. Folders named ``_*`` or ``.*`` (``__pycache__``)
    are skipped: they hold no source.
    """
    if path.is_file():
        return [_stamp(path.name, path.stat())]
    if not path.is_dir():
        return []
    out: list[str] = []
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if entry.is_dir() and not entry.name.startswith(("_", ".")):
            out += source_stamps(Path(entry.path), suffixes, relative_to)
        elif entry.name.endswith(suffixes):
            name = os.path.relpath(entry.path, relative_to) if relative_to else entry.path
            out.append(_stamp(name, entry.stat()))
    return out


def _stamp(name: str, st: os.stat_result) -> str:
    # Size and mtime, not the content: stamping stays cheap on every first compile.
    return f"{name} {st.st_size} {st.st_mtime_ns}"
