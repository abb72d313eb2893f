"""Grading kernel exercises: run the student's kernels on the spec's cases.

Grading has two halves that run in different processes:

* :func:`run_cases` imports the student's file and runs its kernels (through
  the spec's ``launch``) on every :class:`~minitriton.course.spec.Case`.
  It records the outputs, which elements the kernels stored (the emulator's
  write tracking) and any located error. The grader runs it in a child
  process (:mod:`.sandbox`), so that the student's code cannot touch the
  grader.
* :func:`grade_runs`, in the grader's own process, computes the NumPy
  references from its own copy of the inputs, compares, and explains the
  first failure: a picture of the wrong elements, or the located compile or
  emulator error (out of bounds, ...).

Inputs keep their memory layout: a strided view in a spec reaches the kernel
as a strided view (with garbage between the rows), never as a contiguous copy.
Nothing here lets a Python traceback reach the student.

On the emulator every case runs under the emulator's time budget
(:mod:`minitriton.emulator.budget`, the same one ``MINITRITON_TIMEOUT`` sets):
:data:`BUDGET_FACTOR` times the reference solution's time on that case, at
least :data:`MIN_BUDGET_S`. A kernel that loops forever stops there with the
located "ran past its time budget" error, named by its case; the cases after
it are not run, so the verdict comes after one budget, not one per case.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from minitriton.course.catalog import Exercise, import_file
from minitriton.course.picture import diff_picture, save_png, wrong_mask
from minitriton.course.results import CaseResult, CheckResult
from minitriton.course.spec import Case
from minitriton.course.tracking import WriteTracker


@dataclass
class CaseRun:
    """What the student's kernels produced for one case."""

    name: str
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    written: dict[str, np.ndarray] = field(default_factory=dict)  # only where tracked
    error: str = ""  # the located error that stopped the case


@dataclass
class StudentRun:
    """Every case of one run, or the error that kept the file from running."""

    cases: list[CaseRun] = field(default_factory=list)
    error: str = ""
    output: str = ""  # what the student's code printed (never graded)
    #: What the spec's ``compiled`` hook found in the GPU compile (plain strings).
    compiled: dict[str, str] = field(default_factory=dict)


def check_kernel_file(
    ex: Exercise,
    path: Path,
    backend: str = "emulator",
    png: Path | None = None,
    sandbox: bool = True,
) -> CheckResult:
    """Grade the kernels in ``path`` against ``ex``'s spec on ``backend``.

    With ``sandbox`` (the default) the student's code runs in a child
    process; without it, in this one (for trusted files: reference
    solutions and the course's own tests).
    """
    if sandbox:
        from minitriton.course.sandbox import run_in_child

        run = run_in_child(ex, path, backend)
    else:
        run = run_cases(ex, path, backend)
    return grade_runs(ex, path, backend, run, png)


# ---------------------------------------------------------------- running (student side)


#: A case may run this many times as long as the reference solution does on it...
BUDGET_FACTOR = 20.0
#: ...and at least this many seconds (compiling the kernel counts too).
MIN_BUDGET_S = 5.0
#: The students' export has no solution to time: it ships the times measured at export.
REFERENCE_TIMES = "reference_times.json"


def run_cases(ex: Exercise, path: Path, backend: str = "emulator") -> StudentRun:
    """Import ``path`` and run its kernels on every case of ``ex``.

    On the emulator each case runs under its time budget
    (:func:`case_budgets`); after a case runs past it, the rest are not run.
    """
    run = StudentRun()
    # Timed before the student's code is imported: it cannot slow the reference down.
    budgets = case_budgets(ex, path) if backend == "emulator" else {}
    module, run.error = _import_student(path, ex)
    if module is None:
        return run
    missing = [name for name in ex.spec.KERNELS if not hasattr(module, name)]
    if missing:
        run.error = f"{path} defines no {', '.join(missing)}: keep the kernel names of the skeleton"
        return run
    stopped = ""  # the case that ran past its time budget: the rest are not run
    with _backend(backend):
        for case in ex.spec.cases():
            if stopped:
                why = f"not run: case '{stopped}' ran past its time budget"
                run.cases.append(CaseRun(case.name, error=why))
                continue
            case_run = _run_case(ex, module, case, path, backend, budgets.get(case.name))
            run.cases.append(case_run)
            stopped = case.name if _TIME_BUDGET in case_run.error else ""
    run.compiled = _compiled(ex, module, path)
    return run


_TIME_BUDGET = "ran past its time budget"


def case_budgets(ex: Exercise, path: Path | None = None) -> dict[str, float]:
    """Each case's time budget in seconds: ``max(MIN_BUDGET_S, BUDGET_FACTOR * reference)``.

    Empty when ``path`` is the reference solution itself (``verify``).
    """
    solution = ex.folder / "solution.py"
    if path is not None and solution.exists() and path.resolve() == solution.resolve():
        return {}
    times = reference_times(ex)
    return {
        case.name: max(MIN_BUDGET_S, BUDGET_FACTOR * times.get(case.name, 0.0))
        for case in ex.spec.cases()
    }


_measured: dict[Path, dict[str, float]] = {}


def reference_times(ex: Exercise) -> dict[str, float]:
    """Seconds the reference solution takes on each case, on the emulator.

    Measured once per process where ``solution.py`` exists, under the same
    checks as a student's run; in the students' export, read from the
    :data:`REFERENCE_TIMES` file that ``export`` wrote. Empty if neither.
    """
    solution = ex.folder / "solution.py"
    if not solution.exists():
        try:
            data = json.loads((ex.folder / REFERENCE_TIMES).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}
    key = solution.resolve()
    if key not in _measured:
        module = import_file(solution, f"_minitriton_reference_{ex.slug}")
        times = {}
        with _backend("emulator"):
            for case in ex.spec.cases():
                start = time.perf_counter()
                _run_case(ex, module, case, solution, "emulator")
                times[case.name] = time.perf_counter() - start
        _measured[key] = times
    return _measured[key]


def _compiled(ex: Exercise, module: Any, path: Path) -> dict[str, str]:
    """The spec's ``compiled(kernels)`` hook, if it has one: facts about the GPU compile.

    A spec that grades how a kernel compiles (exercise 18: does the dot reach
    the tensor cores?) compiles it here, with the student's code, and hands
    back plain strings; ``check_compiled`` judges them on the grader's side.
    """
    from minitriton.jit import is_user_error

    hook = getattr(ex.spec, "compiled", None)
    if hook is None:
        return {}
    try:
        return {str(k): str(v) for k, v in hook(module).items()}
    except Exception as e:
        error = str(e) if is_user_error(e) else _located(e, path, ex.folder / "spec.py")
        return {"error": error or type(e).__name__}


def _run_case(
    ex: Exercise, module: Any, case: Case, path: Path, backend: str, seconds: float | None = None
) -> CaseRun:
    """Run one case; on the emulator within a time budget of ``seconds`` (None: none)."""
    from minitriton.emulator import budget
    from minitriton.emulator.debug.checks import Checks
    from minitriton.emulator.debug.tools import using
    from minitriton.jit import is_user_error

    run = CaseRun(case.name)
    tracker = WriteTracker()
    # On the emulator, the checks report what a GPU hides: data races (a
    # missing atomic), reads of unwritten memory, index overflow.
    tools = using(tracker, Checks()) if backend == "emulator" else contextlib.nullcontext()
    try:
        with tools, budget.time_budget(seconds if backend == "emulator" else None):
            got = named_outputs(ex.spec.launch(module, *copy_inputs(case.args)))
    except Exception as e:
        run.error = str(e) if is_user_error(e) else _located(e, path, ex.folder / "spec.py")
        run.error = run.error or type(e).__name__
        if _TIME_BUDGET in run.error and seconds is not None:
            run.error += (
                f"\nnote: each case may run {BUDGET_FACTOR:g} times as long as the reference "
                f"solution, at least {MIN_BUDGET_S:g} s; this one had {seconds:.3g} s"
            )
        return run
    run.outputs = {name: np.array(a) for name, a in got.items()}
    masks = tracker.written(list(got.values())) if backend == "emulator" else []
    run.written = {name: m for name, m in zip(got, masks) if m is not None}
    return run


def _import_student(path: Path, ex: Exercise) -> tuple[Any, str]:
    """The student's module, or None and why it could not be imported."""
    if not path.exists():
        return None, f"{path} does not exist: run `minitriton exercises start {ex.id}` first"
    try:
        return import_file(path, f"_minitriton_student_{ex.slug}"), ""
    except SyntaxError as e:
        return None, _syntax_error(e)
    except Exception as e:
        return None, f"importing {path} failed: {_located(e, path)}"


def _syntax_error(e: SyntaxError) -> str:
    line = (e.text or "").rstrip("\n")
    caret = " " * max((e.offset or 1) - 1, 0) + "^"
    return f"{e.filename}:{e.lineno}:{e.offset}: error: {e.msg}\n    {line}\n    {caret}"


def _located(exc: BaseException, *files: Path) -> str:
    """``ExcType: message``, with the last line of ``files`` that was running."""
    where = ""
    wanted = {f.resolve() for f in files}
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() in wanted:
            where = f"{frame.filename}:{frame.lineno}: in {frame.name}: {frame.line}\n"
    return f"{where}{type(exc).__name__}: {exc}"


@contextlib.contextmanager
def _backend(name: str) -> Iterator[None]:
    """Run on ``name``; on the GPU in debug mode, so that every access is bounds-checked."""
    from minitriton.jit import DEBUG_ENV, _selected_backend, set_backend

    before, debug_before = _selected_backend, os.environ.get(DEBUG_ENV)
    set_backend(name)
    if name == "gpu":
        os.environ[DEBUG_ENV] = "1"
    try:
        yield
    finally:
        set_backend(before)
        if debug_before is None:
            os.environ.pop(DEBUG_ENV, None)
        else:
            os.environ[DEBUG_ENV] = debug_before


def copy_inputs(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Fresh copies of a case's arrays that keep each array's memory layout."""
    return tuple(copy_keeping_layout(a) if isinstance(a, np.ndarray) else a for a in args)


def copy_keeping_layout(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` with the same strides (``a.copy()`` would make it contiguous).

    The gaps between a strided view's elements hold NaN (0 for integers), so a
    kernel that ignores a stride reads garbage and fails.
    """
    if a.ndim == 0 or a.flags.c_contiguous or a.flags.f_contiguous:
        return a.copy(order="K")
    if any(s <= 0 or s % a.itemsize for s in a.strides):
        return a.copy()  # negative or odd strides cannot be passed to a kernel anyway
    span = sum((n - 1) * s for n, s in zip(a.shape, a.strides)) // a.itemsize + 1
    base = np.zeros(span, a.dtype)
    if a.dtype.kind == "f":
        base[:] = np.nan
    view = np.lib.stride_tricks.as_strided(base, a.shape, a.strides)
    view[...] = a
    return view


def named_outputs(out: Any) -> dict[str, np.ndarray]:
    """A spec's output (array, tuple or dict) as ``{name: array}``."""
    if isinstance(out, dict):
        return {str(k): np.asarray(v) for k, v in out.items()}
    if isinstance(out, (tuple, list)):
        return {f"output {i}": np.asarray(v) for i, v in enumerate(out)}
    return {"output": np.asarray(out)}


# ---------------------------------------------------------------- grading (grader side)


def grade_runs(
    ex: Exercise, path: Path, backend: str, run: StudentRun, png: Path | None = None
) -> CheckResult:
    """Score ``run`` against references computed here, from the grader's own inputs."""
    result = CheckResult(ex.id, ex.title, str(path), backend=backend, output=run.output)
    if run.error:
        result.error = run.error
        return result
    cases = ex.spec.cases()
    if [c.name for c in run.cases] != [c.name for c in cases]:
        result.error = (
            "the student's run did not report every case of the spec "
            "(did the file exit early, or change the spec?): nothing is graded"
        )
        return result
    for case, case_run in zip(cases, run.cases):
        result.cases.append(_grade_case(ex, case, case_run, result, png))
    for case, graded in zip(cases, result.cases):
        graded.hint = case_hint(ex, case)
    _grade_compiled(ex, run, result)
    return result


def _grade_compiled(ex: Exercise, run: StudentRun, result: CheckResult) -> None:
    """Add the spec's ``check_compiled`` verdicts on ``run.compiled`` as cases."""
    check = getattr(ex.spec, "check_compiled", None)
    if check is None:
        return
    info = run.compiled or {"error": "the grading run did not report the compiled kernel"}
    table = getattr(ex.spec, "COMPILED_HINTS", {})
    for name, ok, why in check(info):
        hint = next((n for start, n in table.items() if name.startswith(start)), None)
        result.cases.append(CaseResult(name, ok, "" if ok else _short(why), hint))
        if not ok and not result.report:
            result.report = f"case '{name}' failed:\n{why}"


def case_hint(ex: Exercise, case: Case) -> int | None:
    """The hint a case teaches: its own ``hint``, else the spec's ``CASE_HINTS``."""
    if case.hint is not None:
        return case.hint
    table = getattr(ex.spec, "CASE_HINTS", {})
    return next((n for start, n in table.items() if case.name.startswith(start)), None)


def _grade_case(
    ex: Exercise, case: Case, run: CaseRun, result: CheckResult, png: Path | None
) -> CaseResult:
    if run.error:
        if not result.report:
            result.report = f"case '{case.name}' stopped with an error:\n{run.error}"
        return CaseResult(case.name, False, _short(run.error))
    expected = named_outputs(ex.spec.reference(*copy_inputs(case.args)))
    return _compare(case, expected, run, result, png)


def _short(text: str) -> str:
    """The first line of an error, with ``file:line:col: error:`` cut to ``line N:``."""
    first = text.splitlines()[0] if text else ""
    return re.sub(r"^.*?:(\d+):\d+: error: ", r"line \1: ", first)


def _compare(
    case: Case,
    expected: dict[str, np.ndarray],
    run: CaseRun,
    result: CheckResult,
    png: Path | None,
) -> CaseResult:
    for name, exp in expected.items():
        out = run.outputs.get(name)
        if out is None or out.shape != exp.shape:
            shape = None if out is None else out.shape
            msg = f"{name}: shape {shape}, expected {exp.shape}"
            return CaseResult(case.name, False, msg)
        wrong = wrong_mask(exp, out, case.atol, case.rtol)
        if not wrong.any():
            continue
        written = run.written.get(name)
        if not result.report:
            picture = diff_picture(exp, out, case.atol, case.rtol, written)
            result.report = f"case '{case.name}': {name} differs from the NumPy reference\n"
            result.report += picture
            if png is not None and save_png(exp, out, case.atol, case.rtol, png, written):
                result.report += f"\n    (picture saved to {png})"
        msg = f"{name}: {int(wrong.sum())} of {wrong.size} elements wrong"
        return CaseResult(case.name, False, msg)
    return CaseResult(case.name, True)
