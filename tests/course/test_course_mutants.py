"""The course's graders fail realistic wrong solutions, naming the mistake.

Kernel mutants (``kernel_mutants.py``) are graded in this process on the
emulator (the sandbox is tested in ``test_course_sandbox.py``); compiler
mutants (``compiler_mutants.py``) run in one child process per exercise
(``compiler_mutant_runner.py``), with the exercise's own tests.
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from compiler_mutants import MUTANTS as COMPILER_MUTANTS
from kernel_mutants import MUTANTS as KERNEL_MUTANTS
from kernel_mutants import KernelMutant

from minitriton.course import catalog, kernels
from minitriton.course.compiler_grader import student_env
from minitriton.course.kernels import check_kernel_file
from minitriton.course.results import CheckResult

EXERCISES = {ex.id: ex for ex in catalog.all_exercises()}
HERE = Path(__file__).parent
MIN_KERNEL, MIN_COMPILER = 5, 6


def first_failure(result: CheckResult) -> str:
    """What the student sees first: the error, or the first failing case and its message."""
    if result.error:
        return result.error
    failing = [c for c in result.cases if not c.passed]
    if not failing:
        return ""
    return f"{failing[0].name} -- {failing[0].message}\n{result.report}"


def test_every_exercise_has_enough_mutants() -> None:
    counts = collections.Counter(m.exercise for m in KERNEL_MUTANTS)
    counts.update(m.exercise for m in COMPILER_MUTANTS)
    for ex in EXERCISES.values():
        wanted = MIN_KERNEL if ex.track == "kernels" else MIN_COMPILER
        assert counts[ex.id] >= wanted, f"exercise {ex.id} has {counts[ex.id]} mutants"


@pytest.mark.parametrize(
    "mutant", [pytest.param(m, id=f"{m.exercise}-{m.name}") for m in KERNEL_MUTANTS]
)
def test_kernel_mutant_fails_on_the_case_that_names_it(
    mutant: KernelMutant, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kernels, "MIN_BUDGET_S", 1.0)  # an endless loop stops sooner
    ex = EXERCISES[mutant.exercise]
    solution = (ex.folder / "solution.py").read_text(encoding="utf-8")
    path = tmp_path / f"{ex.slug}.py"
    path.write_text(mutant.apply(solution), encoding="utf-8")
    result = check_kernel_file(ex, path, sandbox=False)
    assert not result.passed, f"the grader passed the mutant '{mutant.name}'"
    shown = first_failure(result)
    assert re.search(mutant.expect, shown), shown
    assert "Traceback" not in shown


@pytest.fixture(scope="module")
def compiler_outcomes() -> dict[str, tuple[int, str, str]]:
    """Every compiler exercise's mutants, run at once: one child process per exercise."""
    procs = {
        ex_id: subprocess.Popen(
            [sys.executable, str(HERE / "compiler_mutant_runner.py"), ex_id],
            env=student_env(None),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for ex_id in sorted({m.exercise for m in COMPILER_MUTANTS})
    }
    results = {}
    for ex_id, proc in procs.items():
        out, err = proc.communicate(timeout=900)
        results[ex_id] = (proc.returncode, out, err)
    return results


@pytest.mark.slow
@pytest.mark.parametrize("ex_id", sorted({m.exercise for m in COMPILER_MUTANTS}))
def test_compiler_mutants_fail_their_tests(
    ex_id: str, compiler_outcomes: dict[str, tuple[int, str, str]]
) -> None:
    rc, out, err = compiler_outcomes[ex_id]
    assert rc == 0, out[-3000:] + err[-3000:]
    outcomes = json.loads(out.splitlines()[-1])
    mutants = [m for m in COMPILER_MUTANTS if m.exercise == ex_id]
    assert [o["name"] for o in outcomes] == [m.name for m in mutants]
    survivors = [o["name"] for o in outcomes if not o["failing"]]
    assert not survivors, f"the tests of {ex_id} pass these mutants: {survivors}"
    for mutant, outcome in zip(mutants, outcomes):
        shown = "\n".join(outcome["failing"])
        assert re.search(mutant.expect, shown), f"{mutant.name}: {shown}"
