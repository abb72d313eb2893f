"""Grading cannot be fooled by the code it grades.

Kernel files run in a child process that returns only data; the grader
scores in its own process and alone writes ``progress.json``. Compiler
copies run the project's tests in a child pytest whose report path is not
on its command line; early exits and skips score nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minitriton.cli import main
from minitriton.exercises import catalog

EXERCISES = {ex.id: ex for ex in catalog.all_exercises()}

# Appended to an untouched skeleton: patch the grader, fake the progress, print a score.
TAMPER = """
import json as _json, os as _os, pathlib as _pathlib
import minitriton.exercises.kernels as _k
import minitriton.exercises.results as _r
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
    assert rc == 1 and report["total"] == 0.25  # the skeleton passes 1 case of 4, as before
    assert report["exercises"][0]["passed"] is False
    progress = _progress(tmp_path)["05"]
    assert progress["status"] == "failed" and progress["score"] == 0.25


def test_the_grader_in_this_process_is_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINITRITON_WORKSPACE", str(tmp_path))
    _start("05", tmp_path, capsys, TAMPER)
    rc, out = _cli(capsys, "check", "5")
    assert rc == 1 and "Score: 1/4 (25%)" in out
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

# Appended to the stubbed promotion.py: skip the tests that would fail, and
# write a passing report wherever --junitxml points.
SKIP_AND_FORGE = """
import atexit as _atexit, sys as _sys


def _forge():
    if "--junitxml" in _sys.argv:
        path = _sys.argv[_sys.argv.index("--junitxml") + 1]
        with open(path, "w") as f:
            f.write('<testsuite><testcase classname="t" name="x"/></testsuite>')


_atexit.register(_forge)
_real = integer_promote


def integer_promote(a, b):
    import pytest

    pytest.skip("not today")
"""


@pytest.mark.slow
def test_a_compiler_copy_that_skips_and_forges_scores_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _cli(capsys, "start", "c4", "--workspace", str(tmp_path))
    target = tmp_path / "compiler" / "c4_promotion" / "minitriton" / "frontend" / "promotion.py"
    target.write_text(target.read_text(encoding="utf-8") + SKIP_AND_FORGE, encoding="utf-8")
    rc, out = _cli(capsys, "check", "c4", "--json", "--workspace", str(tmp_path))
    report = json.loads(out)["exercises"][0]
    assert rc == 1 and report["score"] < 0.5
    skipped = [c for c in report["cases"] if "a skip fails" in c["message"]]
    assert skipped and not any(c["passed"] for c in skipped)


@pytest.mark.slow
def test_a_compiler_copy_that_exits_early_scores_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _cli(capsys, "start", "c4", "--workspace", str(tmp_path))
    target = tmp_path / "compiler" / "c4_promotion" / "minitriton" / "frontend" / "promotion.py"
    text = target.read_text(encoding="utf-8")
    target.write_text(text + "\nimport os as _os\n_os._exit(0)\n", encoding="utf-8")
    rc, out = _cli(capsys, "check", "c4", "--json", "--workspace", str(tmp_path))
    report = json.loads(out)["exercises"][0]
    assert rc == 1 and report["score"] == 0.0 and "did not run" in report["error"]
