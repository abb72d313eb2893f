"""The course's graders fail realistic wrong solutions, naming the mistake.

Kernel mutants (``kernel_mutants.py``) are graded in this process on the
emulator (the sandbox is tested in ``test_course_sandbox.py``); compiler
mutants (``compiler_mutants.py``) run in one child process per exercise
(``compiler_mutant_runner.py``), with the exercise's own tests.

The whole suite is marked ``mutation``: it runs with ``pytest -m mutation``
(a step of its own in CI) and is skipped otherwise. A plain ``pytest`` runs
a quick subset: the first kernel mutant of every exercise and one compiler
mutant per exercise (:data:`QUICK_COMPILER`).
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


def _kernel_param(mutant: KernelMutant, quick: set[KernelMutant]) -> object:
    marks = () if mutant in quick else (pytest.mark.mutation,)
    return pytest.param(mutant, id=f"{mutant.exercise}-{mutant.name}", marks=marks)


#: The quick subset: the first mutant of each kernel exercise...
QUICK_KERNEL = set({m.exercise: m for m in reversed(KERNEL_MUTANTS)}.values())
#: ...and, per compiler exercise, one of the wrong rules the graders once let through.
QUICK_COMPILER = {
    "c1": "Python floor division",
    "c2": "a dead scf.while is deleted",
    "c3": "operands sorted for every op",
    "c4": "unsigned wins only at equal width",
    "c5": "a right fold: associative, but another order",
    "c6": "i1's signedness from its type name",
    "c7": "no swizzle",
    "c8": "always the last dim first",
}


@pytest.mark.parametrize("mutant", [_kernel_param(m, QUICK_KERNEL) for m in KERNEL_MUTANTS])
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


def _run_compiler_mutants(names: dict[str, list[str]]) -> dict[str, tuple[int, str, str]]:
    """Run the named mutants of each exercise (all if the list is empty): one process each."""
    procs = {
        ex_id: subprocess.Popen(
            [sys.executable, str(HERE / "compiler_mutant_runner.py"), ex_id, *wanted],
            env=student_env(None),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for ex_id, wanted in sorted(names.items())
    }
    results = {}
    for ex_id, proc in procs.items():
        out, err = proc.communicate(timeout=900)
        results[ex_id] = (proc.returncode, out, err)
    return results


def _check_outcomes(ex_id: str, outcome: tuple[int, str, str], mutants: list) -> None:
    rc, out, err = outcome
    assert rc == 0, out[-3000:] + err[-3000:]
    outcomes = json.loads(out.splitlines()[-1])
    assert [o["name"] for o in outcomes] == [m.name for m in mutants]
    survivors = [o["name"] for o in outcomes if not o["failing"]]
    assert not survivors, f"the tests of {ex_id} pass these mutants: {survivors}"
    for mutant, result in zip(mutants, outcomes):
        shown = "\n".join(result["failing"])
        assert re.search(mutant.expect, shown), f"{mutant.name}: {shown}"


@pytest.fixture(scope="module")
def compiler_outcomes() -> dict[str, tuple[int, str, str]]:
    """Every compiler exercise's mutants, run at once: one child process per exercise."""
    return _run_compiler_mutants({m.exercise: [] for m in COMPILER_MUTANTS})


@pytest.fixture(scope="module")
def quick_compiler_outcomes() -> dict[str, tuple[int, str, str]]:
    """The quick subset's compiler mutants: one per exercise."""
    return _run_compiler_mutants({ex_id: [name] for ex_id, name in QUICK_COMPILER.items()})


@pytest.mark.mutation
@pytest.mark.parametrize("ex_id", sorted({m.exercise for m in COMPILER_MUTANTS}))
def test_compiler_mutants_fail_their_tests(
    ex_id: str, compiler_outcomes: dict[str, tuple[int, str, str]]
) -> None:
    mutants = [m for m in COMPILER_MUTANTS if m.exercise == ex_id]
    _check_outcomes(ex_id, compiler_outcomes[ex_id], mutants)


def test_quick_compiler_mutants_fail_their_tests(
    quick_compiler_outcomes: dict[str, tuple[int, str, str]],
) -> None:
    assert set(QUICK_COMPILER) == {ex.id for ex in EXERCISES.values() if ex.track == "compiler"}
    for ex_id, name in QUICK_COMPILER.items():
        mutants = [m for m in COMPILER_MUTANTS if m.exercise == ex_id and m.name == name]
        assert len(mutants) == 1, f"no compiler mutant {name!r} for {ex_id}"
        _check_outcomes(ex_id, quick_compiler_outcomes[ex_id], mutants)
