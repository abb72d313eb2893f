"""Running a student's kernel file in a child process.

``check`` never imports the student's code into the grader. The child,
``python -m minitriton.course.sandbox EXERCISE FILE BACKEND OUTDIR``,
imports the file, runs its kernels on the spec's cases
(:func:`~minitriton.course.kernels.run_cases`) and writes only *data*
into ``OUTDIR``: the output arrays (``outputs.npz``, read back without
pickles) and ``runs.json`` (case names, error texts). The grader then
computes the references from its own inputs, compares and scores in its
own process, and writes ``progress.json`` itself. A file that patches
grader functions, exits early or prints a fake score changes only the
child: what it prints is shown as the student's output and never graded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from minitriton.course.catalog import COURSE_ENV, Exercise, find_exercise
from minitriton.course.kernels import CaseRun, StudentRun, run_cases
from minitriton.emulator.budget import TIMEOUT_ENV

TIMEOUT_S = 300
OUTPUT_LINES = 40  # of the student's own prints shown back


def run_in_child(ex: Exercise, path: Path, backend: str) -> StudentRun:
    """Run ``path``'s kernels on ``ex``'s cases in a child process; read back the data."""
    with tempfile.TemporaryDirectory(prefix="minitriton-grade-") as tmp:
        out = Path(tmp)
        cmd = [sys.executable, "-m", __name__, ex.id, str(path), backend, str(out)]
        env = {**os.environ, COURSE_ENV: str(ex.folder.parents[1]), "MPLBACKEND": "Agg"}
        # Each case's own time budget applies (kernels.case_budgets), not a wider one
        # from the student's shell: a launch's budget would be the innermost.
        env.pop(TIMEOUT_ENV, None)
        try:
            proc = subprocess.run(
                cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            return StudentRun(error=f"the kernels ran for more than {TIMEOUT_S} s: stopped")
        printed = _tail(proc.stdout + proc.stderr)
        run = _read_back(out)
        if run is None:
            why = f"your file stopped the grading run (exit status {proc.returncode})"
            return StudentRun(error=f"{why}; nothing is graded" + _quoted(printed))
        run.output = printed
        return run


def _read_back(out: Path) -> StudentRun | None:
    """The child's results, or None when it did not finish writing them."""
    try:
        meta = json.loads((out / "runs.json").read_text(encoding="utf-8"))
        with np.load(out / "outputs.npz", allow_pickle=False) as arrays:
            data = {k: arrays[k] for k in arrays.files}
    except (OSError, ValueError, KeyError):
        return None
    if not isinstance(meta, dict) or meta.get("done") is not True:
        return None
    run = StudentRun(error=str(meta.get("error", "")))
    compiled = meta.get("compiled", {})
    if isinstance(compiled, dict):
        run.compiled = {str(k): str(v) for k, v in compiled.items()}
    for i, case in enumerate(meta.get("cases", [])):
        names = [str(n) for n in case.get("outputs", [])]
        cr = CaseRun(str(case.get("name", "")), error=str(case.get("error", "")))
        cr.outputs = {n: data[f"c{i}_o{j}"] for j, n in enumerate(names) if f"c{i}_o{j}" in data}
        written = {n: data.get(f"c{i}_w{j}") for j, n in enumerate(names)}
        cr.written = {n: w.astype(bool) for n, w in written.items() if w is not None}
        run.cases.append(cr)
    return run


def _tail(text: str) -> str:
    lines = text.rstrip().splitlines()
    return "\n".join(lines[-OUTPUT_LINES:])


def _quoted(text: str) -> str:
    if not text:
        return ""
    return "\nit printed:\n" + "\n".join("  | " + ln for ln in text.splitlines())


def write_back(run: StudentRun, out: Path) -> None:
    """The child's side: write ``run`` as plain data into ``out``."""
    arrays: dict[str, np.ndarray] = {}
    cases = []
    for i, case in enumerate(run.cases):
        names = list(case.outputs)
        for j, name in enumerate(names):
            arrays[f"c{i}_o{j}"] = np.ascontiguousarray(case.outputs[name])
            if name in case.written:
                arrays[f"c{i}_w{j}"] = case.written[name]
        cases.append({"name": case.name, "outputs": names, "error": case.error})
    # numpy's stubs read a str -> array mapping as if it could fill allow_pickle.
    np.savez(out / "outputs.npz", **arrays)  # type: ignore[arg-type]
    meta = {"done": True, "error": run.error, "cases": cases, "compiled": run.compiled}
    (out / "runs.json").write_text(json.dumps(meta), encoding="utf-8")


def main(argv: list[str]) -> int:
    """The child: ``EXERCISE FILE BACKEND OUTDIR``."""
    ex_id, path, backend, out = argv
    run = run_cases(find_exercise(ex_id), Path(path), backend)
    write_back(run, Path(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
