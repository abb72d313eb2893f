"""``minitriton exercises export DIR``: the repository a class of students gets.

The export holds what the course needs and no reference solution in source
form:

* ``exercises/``: the course README, the notebooks, every kernel exercise
  without its ``solution.py``, and every compiler exercise; each
  ``hints.md`` ships encoded as ``hints.enc``
  (:func:`~minitriton.course.catalog.encode_hints`), so that ``hint N``
  reveals the hints in order and nobody reads them ahead by accident;
* the package (``minitriton/``, ``emulator/``, ``grammar/``) in which each
  module that holds a compiler exercise's region is *sourceless*: its
  real code ships compiled (``folding.pyc`` beside the package's other
  ``.py`` files), so kernels compile and run, while its stubbed source
  (:mod:`.stubs`) lies in ``exercises/compiler/stubs/`` for ``start cN``
  to put into the student's copy;
* beside each kernel spec, ``reference_times.json``: the reference
  solution's seconds per case, from which ``check`` sets each case's time
  budget (:func:`~minitriton.course.kernels.case_budgets`);
* the tests that grade the compiler exercises (the folders of the specs'
  ``TESTS``), ``pyproject.toml`` and ``setup.py``.

Compiled modules run only on the Python version that exported them
(``python3.X``), so export with the version the class uses. Bytecode can be
disassembled and the hints decoded: the export keeps solutions and hints out
of sight, not secret.
"""

from __future__ import annotations

import json
import py_compile
import shutil
import sys
from pathlib import Path

from minitriton.course.catalog import ENCODED_HINTS, Exercise, all_exercises, encode_hints, repo_dir
from minitriton.course.stubs import (
    STUBS_DIR,
    find_regions,
    marker_index,
    source_files,
    stub_text,
)

_COURSE_SKIP = {"workspace", "TRANSCRIPT.md", "__pycache__"}  # the transcript shows solutions
_GITIGNORE = "__pycache__/\n.venv/\n*.egg-info/\nexercises/workspace/\n"


def export(dest: Path) -> list[Path]:
    """Write the student repository into ``dest`` (new or empty); returns the compiled modules."""
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty: export into a new folder")
    repo = repo_dir()
    exercises = all_exercises()
    marked = {path for regions in marker_index(repo).values() for path, _ in regions}
    compiled = _package(repo, dest, marked)
    _course(repo, dest, exercises)
    _reference_times(dest, exercises)
    _tests(repo, dest, exercises)
    for name in ("pyproject.toml", "setup.py"):
        shutil.copyfile(repo / name, dest / name)
    (dest / ".gitignore").write_text(_GITIGNORE, encoding="utf-8")
    (dest / "README.md").write_text(_readme(), encoding="utf-8")
    return compiled


def _package(repo: Path, dest: Path, marked: set[Path]) -> list[Path]:
    """Copy the package folders; compile the marked modules and keep their stubs aside."""
    compiled = []
    for path, rel in source_files(repo):
        target = dest / path.relative_to(repo)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path not in marked:
            shutil.copyfile(path, target)
            continue
        pyc = target.with_suffix(".pyc")
        py_compile.compile(str(path), cfile=str(pyc), dfile=str(rel), doraise=True)
        stub = dest / STUBS_DIR / rel
        stub.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8")
        names = {region.name for region in find_regions(text, str(path))}
        stub.write_text(stub_text(text, names), encoding="utf-8")
        compiled.append(pyc)
    return compiled


def _course(repo: Path, dest: Path, exercises: list[Exercise]) -> None:
    """``exercises/`` without solutions, transcripts or anybody's workspace."""
    src = repo / "exercises"
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if not path.is_file() or _COURSE_SKIP & set(rel.parts) or path.name == "solution.py":
            continue
        target = dest / "exercises" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.name == "hints.md":  # revealed one at a time by `hint`, not read ahead
            text = encode_hints(path.read_text(encoding="utf-8"))
            target.with_name(ENCODED_HINTS).write_text(text, encoding="ascii")
            continue
        if path.suffix == ".md":
            text = _without_skipped_links(path.read_text(encoding="utf-8"))
            target.write_text(text, encoding="utf-8")
            continue
        shutil.copyfile(path, target)


def _reference_times(dest: Path, exercises: list[Exercise]) -> None:
    """Beside each kernel spec, the reference solution's seconds per case (for the time budgets).

    Measured on this machine: the budget is a multiple of them, at least a few
    seconds, so a slower machine of the class still has room.
    """
    from minitriton.course.kernels import REFERENCE_TIMES, reference_times

    for ex in exercises:
        if ex.track != "kernels":
            continue
        times = {name: round(t, 4) for name, t in reference_times(ex).items()}
        target = dest / "exercises" / ex.folder.relative_to(ex.folder.parents[1]) / REFERENCE_TIMES
        target.write_text(json.dumps(times, indent=2) + "\n", encoding="utf-8")


def _without_skipped_links(text: str) -> str:
    """``text`` without the paragraphs that link to files the export leaves out."""
    paragraphs = text.split("\n\n")
    kept = [p for p in paragraphs if not any(f"({name})" in p for name in _COURSE_SKIP)]
    return "\n\n".join(kept)


def _tests(repo: Path, dest: Path, exercises: list[Exercise]) -> None:
    """The test files that grade compiler exercises, with their helpers and goldens."""
    files = {
        repo / test
        for ex in exercises
        if ex.track == "compiler"
        for test in ex.spec.TESTS
        if test.startswith("tests/")
    }
    for folder in {f.parent for f in files}:
        files |= set(folder.glob("*helpers*.py"))
        if (folder / "goldens").is_dir():
            _copy_tree(folder / "goldens", dest / (folder / "goldens").relative_to(repo))
    files.add(repo / "tests" / "conftest.py")
    for path in sorted(files):
        target = dest / path.relative_to(repo)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def _copy_tree(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)


def _readme() -> str:
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    return f"""# The MiniTriton course

Write Triton kernels, then re-implement parts of the compiler that runs them.

```bash
python{version} -m venv .venv && . .venv/bin/activate && pip install -e ".[test]"
minitriton exercises list
```

Use Python {version}: parts of the package ship compiled for it. The course
map, the workflow and the notebooks are described in
[exercises/README.md](exercises/README.md).
"""
