"""Where a student's work and progress live.

The workspace is ``--workspace DIR``, else ``$MINITRITON_WORKSPACE``, else
``exercises/workspace/`` in the repository (git ignores it). It holds::

    kernels/02_vector_add.py        # copied from the skeleton by `start 2`
    compiler/c2_dce/minitriton/...  # a stubbed copy of the package, by `start c2`
    progress.json                   # status, score and hints seen, per exercise

The course folder itself is never edited, so ``git pull`` never conflicts
with a student's work.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from minitriton.course.catalog import Exercise, course_dir

WORKSPACE_ENV = "MINITRITON_WORKSPACE"


@dataclass
class Progress:
    """What the workspace remembers about one exercise."""

    status: str = "not started"  # "started", "failed", "passed"
    score: float = 0.0
    hints_seen: int = 0


class Workspace:
    """A student's folder: copies of exercises and ``progress.json``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def resolve(cls, path: str | None = None) -> Workspace:
        """``path``, else ``$MINITRITON_WORKSPACE``, else ``exercises/workspace``."""
        chosen = path or os.environ.get(WORKSPACE_ENV)
        root = Path(chosen) if chosen else course_dir() / "workspace"
        return cls(root.resolve())

    def kernel_file(self, ex: Exercise) -> Path:
        """The student's copy of a kernel exercise's skeleton."""
        return self.root / "kernels" / f"{ex.slug}.py"

    def compiler_dir(self, ex: Exercise) -> Path:
        """The folder holding the student's stubbed copy of the package."""
        return self.root / "compiler" / ex.slug

    def started(self, ex: Exercise) -> bool:
        """True once ``start`` has made the student's copy."""
        if ex.track == "kernels":
            return self.kernel_file(ex).exists()
        return (self.compiler_dir(ex) / "minitriton").is_dir()

    # -- progress.json ----------------------------------------------------

    @property
    def _progress_file(self) -> Path:
        return self.root / "progress.json"

    def _load_all(self) -> dict[str, Any]:
        try:
            return json.loads(self._progress_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # no workspace yet, or a damaged file: start afresh

    def progress(self, ex: Exercise) -> Progress:
        """The saved progress of ``ex`` (started is checked on disk)."""
        saved = self._load_all().get(ex.id, {})
        known = {k: v for k, v in saved.items() if k in Progress.__dataclass_fields__}
        progress = Progress(**known)
        if progress.status == "not started" and self.started(ex):
            progress.status = "started"
        return progress

    def snapshot(self) -> str | None:
        """The raw text of ``progress.json`` (None when there is none)."""
        try:
            return self._progress_file.read_text(encoding="utf-8")
        except OSError:
            return None

    def restore(self, text: str | None) -> None:
        """Put back a :meth:`snapshot`: only the grader writes ``progress.json``."""
        if text is None:
            self._progress_file.unlink(missing_ok=True)
            return
        self.root.mkdir(parents=True, exist_ok=True)
        self._progress_file.write_text(text, encoding="utf-8")

    def save(self, ex: Exercise, progress: Progress) -> None:
        """Remember ``progress`` for ``ex``."""
        data = self._load_all()
        data[ex.id] = asdict(progress)
        self.root.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        self._progress_file.write_text(text, encoding="utf-8")
