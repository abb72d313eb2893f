"""Grading compiler exercises with MiniTriton's own tests.

A compiler exercise's ``spec.py`` names its marker and the tests that grade
it::

    TITLE = "Dead-code elimination"
    MARKER = "c2-dce"                          # see minitriton.course.stubs
    TESTS = ("tests/passes/test_goldens.py",)  # relative to the repository
    SELECT = "dce or pipeline"                 # a pytest -k expression, or ""
    TEST_HINTS = {"while": 1}                  # optional: the hint a failing test points to

``start`` writes a copy of the package with the marked regions stubbed into
the workspace; ``check`` runs the tests in a fresh pytest process whose
``minitriton`` is the *real* package, with the exercise's functions replaced
by proxies to a child process that runs the student's copy
(:mod:`.compiler_sandbox`). The score comes from that pytest's JUnit XML
report, and only when the child answered to the end: a child that exits
early, hangs or breaks the protocol scores 0. A skipped test counts as
failed (only GPU tests may skip).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from minitriton.course import compiler_sandbox as sandbox
from minitriton.course.catalog import Exercise, repo_dir
from minitriton.course.results import CaseResult, CheckResult
from minitriton.course.stubs import installed_path, marker_index

TIMEOUT_S = 600
PLUGIN = "_minitriton_sandbox_plugin"


def marked_files(ex: Exercise, package_root: Path) -> list[Path]:
    """The student's files that hold ``ex``'s regions, inside ``package_root``."""
    repo = repo_dir()
    files = [
        package_root / installed_path(repo, path)
        for path, _ in marker_index(repo).get(ex.spec.MARKER, [])
    ]
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
        proc = _run_pytest(ex, copy, report, Path(tmp))
        if not report.exists():
            result.error = "the tests did not run:\n" + _tail(proc.stdout + proc.stderr)
            return result
        result.cases = _read_junit(report)
        if copy is not None:
            result.error = sandbox.read_status(Path(tmp) / "status.json")
            result.output = _printed(Path(tmp) / "printed.txt")
            if result.error:
                result.cases = []  # nothing of a stopped run counts
    for case in result.cases:
        case.hint = failing_test_hint(ex, case.name)
    return result


def failing_test_hint(ex: Exercise, test_name: str) -> int | None:
    """The hint a failing test points to: the spec's ``TEST_HINTS``, first key in the name."""
    table = getattr(ex.spec, "TEST_HINTS", {})
    return next((n for key, n in table.items() if key in test_name), None)


def _syntax_errors(files: list[Path]) -> str:
    for path in files:
        try:
            compile(path.read_text(encoding="utf-8"), str(path), "exec")
        except SyntaxError as e:
            line = (e.text or "").rstrip("\n")
            caret = " " * max((e.offset or 1) - 1, 0) + "^"
            return f"{path}:{e.lineno}:{e.offset}: error: {e.msg}\n    {line}\n    {caret}"
    return ""


def pytest_command(ex: Exercise, report: Path | None) -> list[str]:
    """The pytest command line that grades ``ex`` (``report``: the JUnit file, if on it)."""
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
        *(["--junitxml", str(report)] if report is not None else []),
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


def _run_pytest(
    ex: Exercise, copy: Path | None, report: Path, tmp: Path
) -> subprocess.CompletedProcess:
    # The tests run with the real package (the repository first on sys.path);
    # with a copy, the plugin sends the exercise's functions to a child.
    env = student_env(None)
    if copy is not None:
        plugin_dir = tmp / "plugin"
        plugin_dir.mkdir()
        (plugin_dir / f"{PLUGIN}.py").write_text(sandbox.PLUGIN_SOURCE, encoding="utf-8")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(plugin_dir), env.get("PYTHONPATH")]))
        env[sandbox.SETTINGS_ENV] = json.dumps(
            {
                "marker": ex.spec.MARKER,
                "copy": str(copy),
                "log": str(tmp / "printed.txt"),
                "status": str(tmp / "status.json"),
            }
        )
    return subprocess.run(
        [*pytest_command(ex, report), *(["-p", PLUGIN] if copy is not None else [])],
        cwd=repo_dir(),
        env=env,
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
        skipped = tc.find("skipped")
        if skipped is not None:
            why = skipped.get("message", "")
            if "GPU" in why:
                continue  # GPU tests skip without a device, for everybody
            cases.append(CaseResult(name, False, f"skipped ({_one_line(why)}): a skip fails"))
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


def _printed(path: Path) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").rstrip().splitlines()[-40:])
    except OSError:
        return ""


def _tail(text: str, n: int = 15) -> str:
    lines = [ln for ln in text.splitlines() if "Traceback" not in ln]
    return "\n".join(lines[-n:])
