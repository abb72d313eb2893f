"""Results of grading one exercise, shared by both tracks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class CaseResult:
    """One test case (kernel track) or one test (compiler track)."""

    name: str
    passed: bool
    message: str = ""  # one line: why it failed
    hint: int | None = None  # the hint (1-based) the failing case teaches, if it names one


@dataclass
class CheckResult:
    """The grade of one exercise: its cases, the score and what to show on failure."""

    exercise: str
    title: str
    target: str  # the graded file or folder
    cases: list[CaseResult] = field(default_factory=list)
    report: str = ""  # the picture, or the located error, of the first failure
    error: str = ""  # set when nothing could run (import or compile error)
    backend: str = ""  # where kernels ran: "emulator" or "gpu" ("" for compiler exercises)
    note: str = ""  # a remark printed under the header
    output: str = ""  # what the student's code printed: shown, never graded

    @property
    def hint(self) -> int | None:
        """The hint named by the first failing case, if any."""
        return next((c.hint for c in self.cases if not c.passed), None)

    @property
    def passed(self) -> bool:
        """True when every case passed."""
        return not self.error and bool(self.cases) and all(c.passed for c in self.cases)

    @property
    def score(self) -> float:
        """The fraction of cases that passed, 0.0 to 1.0."""
        if self.error or not self.cases:
            return 0.0
        return sum(c.passed for c in self.cases) / len(self.cases)

    def as_json(self) -> dict[str, Any]:
        """The result for autograders (``--json``)."""
        return {
            "id": self.exercise,
            "title": self.title,
            "passed": self.passed,
            "score": round(self.score, 4),
            "cases": [
                {"name": c.name, "passed": c.passed, "message": c.message} for c in self.cases
            ],
            "error": self.error,
            "backend": self.backend,
            "note": self.note,
        }
