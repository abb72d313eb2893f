"""Grading compiler exercises with MiniTriton's own tests.

A compiler exercise's ``spec.py`` names its marker and the tests that grade
it::

    TITLE = "Dead-code elimination"
    MARKER = "c2-dce"                          # see minitriton.exercises.stubs
    TESTS = ("tests/passes/test_goldens.py",)  # relative to the repository
    SELECT = "dce or pipeline"                 # a pytest -k expression, or ""

``start`` writes a copy of the package with the marked regions stubbed into
the workspace; ``check`` runs the tests in a fresh Python whose
``minitriton`` is that copy (it comes first on ``sys.path``), and reads the
outcome from pytest's JUnit XML report.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from minitriton.exercises.catalog import Exercise, repo_dir
from minitriton.exercises.results import CaseResult, CheckResult
from minitriton.exercises.stubs import marker_index

TIMEOUT_S = 600


def marked_files(ex: Exercise, package_root: Path) -> list[Path]:
    """The student's files that hold ``ex``'s regions, inside ``package_root``."""
    repo = repo_dir()
    files = []
    for path, _ in marker_index(repo).get(ex.spec.MARKER, []):
        rel = path.relative_to(repo)
        if rel.parts[0] != "minitriton":
            rel = Path("minitriton") / rel  # emulator/ and grammar/ install inside the package
        files.append(package_root / rel)
    return sorted(set(files))


def check_compiler_copy(ex: Exercise, copy: Path | None) -> CheckResult:
    """Run ``ex``'s tests against the package copy in ``copy`` (None: the real source)."""
    target = copy if copy is not None else repo_dir()
    result = CheckResult(ex.id, ex.title, str(target))
    if copy is not None and not (copy / "minitriton").is_dir():
        result.error = f"{copy} does not exist: run `minitriton exercises start {ex.id}` first"
        return result
    if copy is not None:
        result.error = _syntax_errors(marked_files(ex, copy))
        if result.error:
            return result
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        proc = _run_pytest(ex, copy, report)
        if not report.exists():
            result.error = "the tests did not run:\n" + _tail(proc.stdout + proc.stderr)
            return result
        result.cases = _read_junit(report)
    return result


def _syntax_errors(files: list[Path]) -> str:
    for path in files:
        try:
            compile(path.read_text(encoding="utf-8"), str(path), "exec")
        except SyntaxError as e:
            line = (e.text or "").rstrip("\n")
            caret = " " * max((e.offset or 1) - 1, 0) + "^"
            return f"{path}:{e.lineno}:{e.offset}: error: {e.msg}\n    {line}\n    {caret}"
    return ""


def pytest_command(ex: Exercise, report: Path) -> list[str]:
    """The pytest command line that grades ``ex``."""
    repo = repo_dir()
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(repo),
        "-c",
        str(repo / "pyproject.toml"),
        "--junitxml",
        str(report),
        "-o",
        "junit_family=xunit1",
    ]
    select = getattr(ex.spec, "SELECT", "")
    if select:
        cmd += ["-k", select]
    return cmd + [str(repo / t) for t in ex.spec.TESTS]


def student_env(copy: Path | None) -> dict[str, str]:
    """The environment whose ``import minitriton`` finds ``copy``."""
    env = dict(os.environ)
    if copy is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(copy), env.get("PYTHONPATH")]))
    env.setdefault("MPLBACKEND", "Agg")
    return env


def _run_pytest(ex: Exercise, copy: Path | None, report: Path) -> subprocess.CompletedProcess:
    # `python -m` puts the working directory first on sys.path: run in the
    # copy, so that its `minitriton` wins over the installed one.
    cwd = copy if copy is not None else repo_dir()
    return subprocess.run(
        pytest_command(ex, report),
        cwd=cwd,
        env=student_env(copy),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def _read_junit(report: Path) -> list[CaseResult]:
    cases = []
    for tc in ET.parse(report).getroot().iter("testcase"):
        module = tc.get("classname", "").split(".")[-1]
        name = f"{module}::{tc.get('name', '')}"
        problem = tc.find("failure")
        if problem is None:
            problem = tc.find("error")
        if tc.find("skipped") is not None:
            continue
        message = "" if problem is None else _one_line(problem.get("message", ""))
        cases.append(CaseResult(name, problem is None, message))
    return cases


def _one_line(message: str) -> str:
    """The first line of a failure, without module paths and directories."""
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    text = lines[0] if lines else "failed"
    text = re.sub(r"^(?:\w+\.)+(\w+(?:Error|Exception)):", r"\1:", text)
    text = re.sub(r"(?:/[^\s:/]+)+/([^\s:/]+:\d+)", r"\1", text)
    # The golden fixture suggests regenerating; a student must match the file instead.
    text = text.replace("(pytest --update-goldens)", "(the expected output: match it)")
    return text if len(text) <= 160 else text[:157] + "..."


def _tail(text: str, n: int = 15) -> str:
    lines = [ln for ln in text.splitlines() if "Traceback" not in ln]
    return "\n".join(lines[-n:])
