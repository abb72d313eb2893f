"""Compiler-exercise stubs, generated from markers in the real source.

In MiniTriton's own code, the lines a student re-implements sit between two
marker comments; optional ``# STUB:`` comments inside give the code that
replaces them in the student's copy::

    def is_effect_free(op):
        # BEGIN EXERCISE <name>
        # STUB: raise NotImplementedError("<name>: is_effect_free")
        if op.is_terminator or op.name in _REMOVABLE_IMPURE:
            return True
        ...
        # END EXERCISE

(``<name>`` is the exercise's marker name, such as ``c2-dce``.)

Without ``# STUB:`` lines the region becomes ``raise NotImplementedError``.
The markers are comments, so the real code runs (and is tested) unchanged:
stubs and solutions never drift apart.

:func:`make_package_copy` writes the student's copy of the whole installed
package (``minitriton/`` with ``emulator/`` and ``grammar/`` mapped inside
it, as ``pyproject.toml`` installs them), with the chosen regions stubbed.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

BEGIN = re.compile(r"^(?P<indent>[ \t]*)# BEGIN EXERCISE (?P<name>[\w-]+)\s*$")
END = re.compile(r"^[ \t]*# END EXERCISE\s*$")
STUB = re.compile(r"^(?P<indent>[ \t]*)# STUB: ?(?P<code>.*)$")

#: Source folders of the package, and where they are installed inside it
#: (pyproject.toml's [tool.setuptools.package-dir]).
PACKAGE_DIRS = {
    "minitriton": "minitriton",
    "emulator": "minitriton/emulator",
    "grammar": "minitriton/grammar",
}


#: In an export (see :mod:`.export`), the stubbed sources of the modules that
#: ship compiled, at their paths inside the installed package.
STUBS_DIR = Path("exercises") / "compiler" / "stubs"


class MarkerError(Exception):
    """Malformed markers: a BEGIN without END, nested regions, ..."""


@dataclass(frozen=True)
class Region:
    """One marked region: ``lines[begin]`` is the BEGIN marker, ``lines[end]`` the END."""

    name: str
    begin: int
    end: int
    indent: str
    stub: tuple[str, ...]  # code lines (with their indentation) that replace the region


def find_regions(text: str, filename: str = "<text>") -> list[Region]:
    """Every marked region of ``text``, in order."""
    regions: list[Region] = []
    open_at: tuple[int, str, str] | None = None
    stub: list[str] = []
    for i, line in enumerate(text.splitlines()):
        begin, end = BEGIN.match(line), END.match(line)
        if begin:
            if open_at is not None:
                raise MarkerError(f"{filename}:{i + 1}: BEGIN EXERCISE inside another region")
            open_at, stub = (i, begin["name"], begin["indent"]), []
        elif end:
            if open_at is None:
                raise MarkerError(f"{filename}:{i + 1}: END EXERCISE without BEGIN")
            regions.append(Region(open_at[1], open_at[0], i, open_at[2], tuple(stub)))
            open_at = None
        elif open_at is not None and (m := STUB.match(line)):
            stub.append(m["indent"] + m["code"])
    if open_at is not None:
        raise MarkerError(f"{filename}:{open_at[0] + 1}: BEGIN EXERCISE without END")
    return regions


def stub_text(text: str, names: Iterable[str]) -> str:
    """``text`` with the regions called ``names`` replaced by their stubs."""
    wanted = set(names)
    lines = text.splitlines(keepends=True)
    for region in reversed(find_regions(text)):
        if region.name not in wanted:
            continue
        default = f'raise NotImplementedError("TODO(exercise {region.name})")'
        body = region.stub or (region.indent + default,)
        note = f"{region.indent}# TODO(exercise {region.name}): replace the stub below\n"
        lines[region.begin + 1 : region.end] = [note] + [b + "\n" for b in body]
    return "".join(lines)


def source_files(repo: Path) -> Iterable[tuple[Path, Path]]:
    """``(source file, path inside the installed package)`` for every package file."""
    for src_dir, dest_dir in PACKAGE_DIRS.items():
        root = repo / src_dir
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                yield path, Path(dest_dir) / path.relative_to(root)


def installed_path(repo: Path, path: Path) -> Path:
    """Where a marked source file (a package source, or an export's stub) is installed."""
    stubs = repo / STUBS_DIR
    if path.is_relative_to(stubs):
        return path.relative_to(stubs)
    rel = path.relative_to(repo)
    return Path(PACKAGE_DIRS[rel.parts[0]]) / rel.relative_to(rel.parts[0])


def _marked_candidates(repo: Path) -> Iterable[Path]:
    """Package sources (the grader excepted), then an export's stubbed sources."""
    for path, rel in source_files(repo):
        if path.suffix == ".py" and rel.parts[:2] != ("minitriton", "course"):
            yield path
    yield from sorted((repo / STUBS_DIR).rglob("*.py"))


def marker_index(repo: Path) -> dict[str, list[tuple[Path, Region]]]:
    """Exercise name -> the ``(file, region)`` pairs that carry its markers."""
    index: dict[str, list[tuple[Path, Region]]] = {}
    for path in _marked_candidates(repo):
        text = path.read_text(encoding="utf-8")
        if "# BEGIN EXERCISE" not in text:
            continue
        for region in find_regions(text, str(path)):
            index.setdefault(region.name, []).append((path, region))
    return index


def make_package_copy(repo: Path, dest: Path, names: Iterable[str]) -> list[Path]:
    """Copy the package into ``dest`` with regions ``names`` stubbed; returns the stubbed files."""
    wanted = set(names)
    stubbed = []
    for path, rel in source_files(repo):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8") if path.suffix == ".py" else None
        if text is None or not any(f"# BEGIN EXERCISE {n}" in text for n in wanted):
            shutil.copyfile(path, target)
            continue
        target.write_text(stub_text(text, wanted), encoding="utf-8")
        stubbed.append(target)
    # An export ships these modules compiled: the student's copy gets the stub instead.
    for path in sorted((repo / STUBS_DIR).rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if any(f"# BEGIN EXERCISE {n}" in text for n in wanted):
            target = dest / path.relative_to(repo / STUBS_DIR)
            target.write_text(text, encoding="utf-8")
            target.with_suffix(".pyc").unlink(missing_ok=True)
            stubbed.append(target)
    return stubbed
