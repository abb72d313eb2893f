"""Grading cannot be fooled by the code it grades.

Kernel files run in a child process that returns only data; the grader
scores in its own process and alone writes ``progress.json``. A compiler
copy runs in a child that answers the grader's tests with plain data
(:mod:`minitriton.course.compiler_sandbox`); the tests, the report and
the score stay in processes that never import it, and a child that stops
before the end scores nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minitriton.cli import main
from minitriton.course import catalog

EXERCISES = {ex.id: ex for ex in catalog.all_exercises()}

# Appended to an untouched skeleton: patch the grader, fake the progress, print a score.
TAMPER = """
import json as _json, os as _os, pathlib as _pathlib
import minitriton.course.kernels as _k
import minitriton.course.results as _r
_r.CheckResult.score = property(lambda self: 1.0)
_r.CheckResult.passed = property(lambda self: True)
_k.grade_runs = lambda *a, **k: None
_ws = _pathlib.Path(_os.environ["MINITRITON_WORKSPACE"])
_fake = {"05": {"status": "passed", "score": 1.0, "hints_seen": 0}}
(_ws / "progress.json").write_text(_json.dumps(_fake))
print(_json.dumps({"total": 1.0, "exercises": [{"id": "05", "score": 1.0, "passed": True}]}))
"""

# Writes "results" where the grader's child would, then leaves before any case runs.
FORGE = """
import json as _json, os as _os, pathlib as _pathlib, sys as _sys
_out = _pathlib.Path(_sys.argv[-1])
(_out / "runs.json").write_text(_json.dumps({"done": True, "error": "", "cases": []}))
_os._exit(0)
"""


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    rc = main(["exercises", *args])
    out = capsys.readouterr()
    return rc, out.out + out.err


def _start(ex_id: str, ws: Path, capsys: pytest.CaptureFixture[str], extra: str = "") -> Path:
    _cli(capsys, "start", ex_id, "--workspace", str(ws))
    path = ws / "kernels" / f"{EXERCISES[ex_id].slug}.py"
    if extra:
        path.write_text(path.read_text(encoding="utf-8") + extra, encoding="utf-8")
    return path


def _progress(ws: Path) -> dict:
    return json.loads((ws / "progress.json").read_text(encoding="utf-8"))


def test_a_file_that_patches_the_grader_scores_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINITRITON_WORKSPACE", str(tmp_path))
    _start("05", tmp_path, capsys, TAMPER)
    rc, out = _cli(capsys, "check", "5", "--json")
    report = json.loads(out)
    assert rc == 1 and report["total"] == pytest.approx(1 / 7)  # the skeleton passes 1 case of 7
    assert report["exercises"][0]["passed"] is False
    progress = _progress(tmp_path)["05"]
    assert progress["status"] == "failed" and progress["score"] == pytest.approx(1 / 7)


def test_the_grader_in_this_process_is_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINITRITON_WORKSPACE", str(tmp_path))
    _start("05", tmp_path, capsys, TAMPER)
    rc, out = _cli(capsys, "check", "5")
    assert rc == 1 and "Score: 1/7 (14%)" in out
    assert "your code printed (shown, not graded):" in out and '"total": 1.0' in out


def test_a_file_that_exits_early_scores_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    solution = (EXERCISES["02"].folder / "solution.py").read_text(encoding="utf-8")
    _start("02", tmp_path, capsys)
    path = tmp_path / "kernels" / f"{EXERCISES['02'].slug}.py"
    path.write_text(solution + "\nimport os\nos._exit(0)\n", encoding="utf-8")
    rc, out = _cli(capsys, "check", "2", "--json", "--workspace", str(tmp_path))
    report = json.loads(out)["exercises"][0]
    assert rc == 1 and report["score"] == 0.0
    assert "stopped the grading run" in report["error"]


def test_a_file_that_forges_the_results_scores_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _start("02", tmp_path, capsys, FORGE)
    rc, out = _cli(capsys, "check", "2", "--json", "--workspace", str(tmp_path))
    report = json.loads(out)["exercises"][0]
    assert rc == 1 and report["score"] == 0.0 and "nothing is graded" in report["error"]


def test_a_correct_file_passes_through_the_sandbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    solution = (EXERCISES["03"].folder / "solution.py").read_text(encoding="utf-8")
    path = _start("03", tmp_path, capsys)
    path.write_text(solution + "\nprint('debugging output')\n", encoding="utf-8")
    rc, out = _cli(capsys, "check", "3", "--workspace", str(tmp_path))
    assert rc == 0 and "Exercise 03 passed" in out and "| debugging output" in out
    assert _progress(tmp_path)["03"]["status"] == "passed"


# ---------------------------------------------------------------- compiler track

# Appended to the stubbed promotion.py (it runs in the child when the grader
# first asks for integer_promote): patch every grader function it can reach,
# fake the progress and the JUnit report, print a score.
COMPILER_TAMPER = """
import atexit as _atexit, json as _json, os as _os, pathlib as _pathlib, sys as _sys
import minitriton.course.compiler_grader as _c
import minitriton.course.results as _r
_r.CheckResult.score = property(lambda self: 1.0)
_r.CheckResult.passed = property(lambda self: True)
_c._read_junit = lambda *a, **k: []
_ws = _pathlib.Path(_os.environ["MINITRITON_WORKSPACE"])
(_ws / "progress.json").write_text(_json.dumps({"c4": {"status": "passed", "score": 1.0}}))
for _arg in _sys.argv:
    if _arg.endswith(".xml"):
        _pathlib.Path(_arg).write_text('<testsuite><testcase classname="t" name="x"/></testsuite>')
print(_json.dumps({"total": 1.0, "exercises": [{"id": "c4", "score": 1.0, "passed": True}]}))
print("Score: 11/11 (100%)")
"""

# The right answer for the first calls, then the child leaves, with "success".
EXIT_MIDWAY = """
_answers = 0


def integer_promote(a, b):
    global _answers
    _answers += 1
    if _answers > 3:
        import os

        os._exit(0)
    a_unsigned, b_unsigned = a.kind == "uint", b.kind == "uint"
    if a_unsigned == b_unsigned:
        return a if a.bitwidth > b.bitwidth else b
    if a_unsigned:
        return a if a.bitwidth >= b.bitwidth else b
    return b if b.bitwidth >= a.bitwidth else a
"""

# Skips the test from inside the student's function (pytest's Skipped).
SKIP = """
def integer_promote(a, b):
    import pytest

    pytest.skip("not today")
"""


def _promotion_file(ws: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    _cli(capsys, "start", "c4", "--workspace", str(ws))
    return ws / "compiler" / "c4_promotion" / "minitriton" / "frontend" / "promotion.py"


def _check_c4(ws: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    rc, out = _cli(capsys, "check", "c4", "--json", "--workspace", str(ws))
    report = json.loads(out)  # what the student printed never reaches this output
    return rc, report["exercises"][0]


def _append(path: Path, code: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + code, encoding="utf-8")


@pytest.mark.slow
def test_a_compiler_copy_that_patches_the_grader_scores_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINITRITON_WORKSPACE", str(tmp_path))
    _append(_promotion_file(tmp_path, capsys), COMPILER_TAMPER)
    rc, report = _check_c4(tmp_path, capsys)
    assert rc == 1 and report["score"] == 0.0 and report["passed"] is False
    assert report["cases"] and all("c4-promotion" in c["message"] for c in report["cases"])
    progress = _progress(tmp_path)["c4"]
    assert progress["status"] == "failed" and progress["score"] == 0.0


@pytest.mark.slow
def test_what_a_compiler_copy_prints_is_shown_not_graded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINITRITON_WORKSPACE", str(tmp_path))
    _append(_promotion_file(tmp_path, capsys), COMPILER_TAMPER)
    rc, out = _cli(capsys, "check", "c4")
    assert rc == 1 and "Score: 0/83 (0%)" in out
    assert "your code printed (shown, not graded):" in out and "| Score: 11/11 (100%)" in out


@pytest.mark.slow
def test_a_compiler_copy_that_exits_early_scores_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _append(_promotion_file(tmp_path, capsys), "\nimport os as _os\n_os._exit(0)\n")
    rc, report = _check_c4(tmp_path, capsys)
    assert rc == 1 and report["score"] == 0.0 and not report["cases"]
    assert "stopped" in report["error"] and "nothing is graded" in report["error"]


@pytest.mark.slow
def test_a_compiler_copy_that_exits_midway_scores_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _append(_promotion_file(tmp_path, capsys), EXIT_MIDWAY)
    rc, report = _check_c4(tmp_path, capsys)
    assert rc == 1 and report["score"] == 0.0 and "nothing is graded" in report["error"]


@pytest.mark.slow
def test_a_compiler_copy_that_skips_scores_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _append(_promotion_file(tmp_path, capsys), SKIP)
    rc, report = _check_c4(tmp_path, capsys)
    assert rc == 1 and report["score"] == 0.0 and "nothing is graded" in report["error"]


@pytest.mark.slow
def test_a_solved_compiler_copy_passes_through_the_sandbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = _promotion_file(tmp_path, capsys)
    solved = (catalog.repo_dir() / "minitriton" / "frontend" / "promotion.py").read_text("utf-8")
    target.write_text(solved + "\nprint('debugging output')\n", encoding="utf-8")
    rc, out = _cli(capsys, "check", "c4", "--workspace", str(tmp_path))
    assert rc == 0 and "Exercise c4 passed" in out and "| debugging output" in out
    assert _progress(tmp_path)["c4"]["status"] == "passed"


def test_a_compiler_copy_that_hangs_is_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from minitriton.course import compiler_sandbox

    _append(
        _promotion_file(tmp_path, capsys),
        "\n\ndef integer_promote(a, b):\n    while True:\n        pass\n",
    )
    monkeypatch.setattr(compiler_sandbox, "CALL_TIMEOUT_S", 3)
    copy = tmp_path / "compiler" / "c4_promotion"
    worker = compiler_sandbox.Worker(copy, tmp_path / "printed.txt")
    with pytest.raises(compiler_sandbox.StudentStopped, match="more than 3 s"):
        worker.call("integer_promote", "i8", "u8")
    with pytest.raises(compiler_sandbox.StudentStopped, match="nothing is graded"):
        worker.call("integer_promote", "i8", "u8")  # a stopped child answers nothing more
    worker.close()
    assert worker.stopped and worker.proc.returncode is not None


def test_a_compiler_answer_that_is_not_plain_data_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from minitriton.course import compiler_sandbox

    _cli(capsys, "start", "c7", "--workspace", str(tmp_path))
    copy = tmp_path / "compiler" / EXERCISES["c7"].folder.name
    layout = copy / "minitriton" / "backend" / "shared_layout.py"
    _append(layout, "\n\nSharedTile.linear = lambda self, row, col: object()\n")
    worker = compiler_sandbox.Worker(copy, tmp_path / "printed.txt")
    try:
        with pytest.raises(TypeError, match="not JSON serializable"):
            worker.call("linear", [[64, 64], 1, 2, 128], 0, 0)
        assert not worker.stopped  # a wrong answer fails the call, not the run
    finally:
        worker.close()


def _solved_copy(ex_id: str, ws: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The student's copy of ``ex_id`` with the real code in every marked file."""
    from minitriton.course.stubs import installed_path, marker_index

    _cli(capsys, "start", ex_id, "--workspace", str(ws))
    copy = ws / "compiler" / EXERCISES[ex_id].folder.name
    repo = catalog.repo_dir()
    for path, _ in marker_index(repo)[EXERCISES[ex_id].spec.MARKER]:
        target = copy / installed_path(repo, path)
        target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    return copy


def _first_mutants() -> list:
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from compiler_mutants import MUTANTS

    firsts: dict[str, object] = {}
    for m in MUTANTS:
        firsts.setdefault(m.exercise, m)
    return list(firsts.values())


@pytest.mark.slow
@pytest.mark.parametrize("mutant", _first_mutants(), ids=lambda m: m.exercise)
def test_a_wrong_copy_fails_through_the_sandbox_naming_the_mistake(
    mutant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The child's wrong answers reach the grader's tests: the same failures as in-process."""
    import re

    from minitriton.course.stubs import installed_path, marker_index

    copy = _solved_copy(mutant.exercise, tmp_path, capsys)
    module, _, name = mutant.target.partition(":")
    repo = catalog.repo_dir()
    marker = EXERCISES[mutant.exercise].spec.MARKER
    path = next(
        copy / installed_path(repo, p)
        for p, _ in marker_index(repo)[marker]
        if installed_path(repo, p).with_suffix("").as_posix().replace("/", ".") == module
    )
    owner, _, attr = name.rpartition(".")
    code = mutant.code + (f"\n{owner}.{attr} = {attr}\n" if owner else "")
    _append(path, "\n" + code)
    rc, report = _check_json(mutant.exercise, tmp_path, capsys)
    failing = [f"{c['name']} -- {c['message']}" for c in report["cases"] if not c["passed"]]
    assert rc == 1 and not report["error"] and failing, report
    assert re.search(mutant.expect, "\n".join(failing)), failing


def _check_json(ex_id: str, ws: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    rc, out = _cli(capsys, "check", ex_id, "--json", "--workspace", str(ws))
    return rc, json.loads(out)["exercises"][0]
