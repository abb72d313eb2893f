"""Finding the course: the exercise folders and their specs.

Kernel exercises live in ``exercises/kernels/NN_name/`` (id ``"NN"``) and
compiler exercises in ``exercises/compiler/cN_name/`` (id ``"cN"``). Each
folder has a ``spec.py`` whose module-level constants describe it (see
:mod:`minitriton.course.spec`). The course folder is the repository's
``exercises/``, or ``$MINITRITON_COURSE`` when set.
"""

from __future__ import annotations

import base64
import binascii
import importlib.util
import os
import re
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import minitriton

COURSE_ENV = "MINITRITON_COURSE"


class CourseError(Exception):
    """A problem the student can fix (unknown id, missing course, ...)."""


@dataclass
class Exercise:
    """One exercise folder and what its ``spec.py`` says about it."""

    id: str
    track: str  # "kernels" or "compiler"
    folder: Path
    title: str
    minutes: int
    requires: tuple[str, ...]
    outcomes: tuple[str, ...]
    _spec: ModuleType | None = field(default=None, repr=False)

    @property
    def slug(self) -> str:
        """The folder name, e.g. ``02_vector_add``."""
        return self.folder.name

    @property
    def spec(self) -> ModuleType:
        """The imported ``spec.py`` (imported once)."""
        if self._spec is None:
            try:
                self._spec = import_file(self.folder / "spec.py", f"_minitriton_spec_{self.slug}")
            except Exception as e:  # a broken course file: say which one
                raise CourseError(f"{self.folder / 'spec.py'}: {type(e).__name__}: {e}") from e
        return self._spec

    def hints(self) -> list[str]:
        """The hints, in order: from ``hints.md`` (in clear) or the export's encoded copy."""
        path = self.folder / "hints.md"
        if path.exists():
            return parse_hints(path.read_text(encoding="utf-8"))
        encoded = self.folder / ENCODED_HINTS
        if encoded.exists():
            return parse_hints(decode_hints(encoded.read_text(encoding="ascii"), encoded))
        return []


def course_dir() -> Path:
    """The ``exercises/`` folder of the course."""
    env = os.environ.get(COURSE_ENV)
    folder = Path(env) if env else Path(minitriton.__file__).resolve().parents[1] / "exercises"
    if not (folder / "kernels").is_dir():
        raise CourseError(
            f"no course found at {folder}: the exercises ship with the MiniTriton "
            f"repository (pip install -e .), or set {COURSE_ENV} to its exercises/ folder"
        )
    return folder


def repo_dir() -> Path:
    """The repository root: the folder that holds ``exercises/`` and ``tests/``."""
    return course_dir().parent


def import_file(path: Path, name: str) -> ModuleType:
    """Import the Python file ``path`` as module ``name`` (a fresh import each time)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CourseError(f"{path}: cannot import this file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up here
    spec.loader.exec_module(module)
    return module


def all_exercises() -> list[Exercise]:
    """Every exercise: the kernel track first, then the compiler track."""
    root = course_dir()
    kernels = sorted(p.parent for p in (root / "kernels").glob("[0-9][0-9]_*/spec.py"))
    compiler = sorted(
        (p.parent for p in (root / "compiler").glob("c[0-9]*_*/spec.py")),
        key=lambda p: int(re.match(r"c(\d+)", p.name).group(1)),  # type: ignore[union-attr]
    )
    return [_load("kernels", p) for p in kernels] + [_load("compiler", p) for p in compiler]


def _load(track: str, folder: Path) -> Exercise:
    ex_id = folder.name.split("_", 1)[0]
    ex = Exercise(ex_id, track, folder, folder.name, 0, (), ())
    spec = ex.spec
    ex.title = spec.TITLE
    ex.minutes = int(getattr(spec, "MINUTES", 30))
    ex.requires = tuple(getattr(spec, "REQUIRES", ()))
    ex.outcomes = tuple(getattr(spec, "OUTCOMES", ()))
    return ex


def normalize_id(text: str) -> str:
    """``"2"``, ``"02"``, ``"k2"`` -> ``"02"``; ``"C1"`` -> ``"c1"``; else unchanged."""
    text = text.strip().lower()
    m = re.fullmatch(r"k?(\d{1,2})", text)
    if m:
        return f"{int(m.group(1)):02d}"
    m = re.fullmatch(r"c(\d+)(?:[-_].*)?", text)
    return f"c{int(m.group(1))}" if m else text


def find_exercise(text: str, exercises: list[Exercise] | None = None) -> Exercise:
    """The exercise named by an id (``2``, ``02``, ``c3``) or a folder name."""
    exercises = exercises if exercises is not None else all_exercises()
    key = normalize_id(text)
    for ex in exercises:
        if key in (ex.id, ex.slug, ex.slug.split("_", 1)[1]):
            return ex
    known = ", ".join(ex.id for ex in exercises)
    raise CourseError(f"no exercise {text!r}; the exercises are {known}")


#: The students' export ships each ``hints.md`` as this file (see :func:`encode_hints`).
ENCODED_HINTS = "hints.enc"
_ENCODED_HEADER = (
    "# The hints of this exercise, encoded so that they are read one at a time:\n"
    "# minitriton exercises hint ID\n"
)


def encode_hints(text: str) -> str:
    """``hints.md`` in a form nobody reads by accident: zlib-compressed, then base64.

    This keeps a student from reading ahead with ``cat``; it is no secret
    (the decoder is :func:`decode_hints`, and it ships with the course).
    """
    data = base64.b64encode(zlib.compress(text.encode("utf-8"), 9)).decode("ascii")
    lines = [data[i : i + 76] for i in range(0, len(data), 76)]
    return _ENCODED_HEADER + "\n".join(lines) + "\n"


def decode_hints(text: str, path: Path | None = None) -> str:
    """The ``hints.md`` text that :func:`encode_hints` encoded."""
    data = "".join(ln.strip() for ln in text.splitlines() if not ln.startswith("#"))
    try:
        return zlib.decompress(base64.b64decode(data, validate=True)).decode("utf-8")
    except (binascii.Error, zlib.error, UnicodeDecodeError) as e:
        raise CourseError(f"{path or ENCODED_HINTS}: damaged hints ({e})") from e


def parse_hints(text: str) -> list[str]:
    """Split ``hints.md`` at its ``## Hint`` headings; text before the first is dropped."""
    parts = re.split(r"^## .*$", text, flags=re.MULTILINE)
    return [p.strip() for p in parts[1:] if p.strip()]
