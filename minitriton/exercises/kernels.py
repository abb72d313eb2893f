"""Grading kernel exercises: run the student's kernels on the spec's cases.

For each :class:`~minitriton.exercises.spec.Case`, the spec's NumPy
``reference`` and the student's kernels (through the spec's ``launch``)
get their own copies of the inputs; the outputs are compared with the
case's tolerances. The first failure is explained: a picture of the wrong
elements, or the located compile or emulator error (out of bounds, ...).
Nothing here lets a Python traceback reach the student.
"""

from __future__ import annotations

import contextlib
import re
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from minitriton.exercises.catalog import Exercise, import_file
from minitriton.exercises.picture import diff_picture, save_png, wrong_mask
from minitriton.exercises.results import CaseResult, CheckResult
from minitriton.exercises.spec import Case


def check_kernel_file(
    ex: Exercise, path: Path, backend: str = "emulator", png: Path | None = None
) -> CheckResult:
    """Grade the kernels in ``path`` against ``ex``'s spec on ``backend``."""
    result = CheckResult(ex.id, ex.title, str(path), backend=backend)
    module = _import_student(path, ex, result)
    if module is None:
        return result
    missing = [name for name in ex.spec.KERNELS if not hasattr(module, name)]
    if missing:
        result.error = (
            f"{path} defines no {', '.join(missing)}: keep the kernel names of the skeleton"
        )
        return result
    with _backend(backend):
        for case in ex.spec.cases():
            result.cases.append(_run_case(ex, module, case, result, path, png))
    return result


def _import_student(path: Path, ex: Exercise, result: CheckResult) -> Any:
    """Import the student's file; on failure set ``result.error`` and return None."""
    if not path.exists():
        result.error = f"{path} does not exist: run `minitriton exercises start {ex.id}` first"
        return None
    try:
        return import_file(path, f"_minitriton_student_{ex.slug}")
    except SyntaxError as e:
        result.error = _syntax_error(e)
    except Exception as e:
        result.error = f"importing {path} failed: {_located(e, path)}"
    return None


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
    from minitriton.jit import _selected_backend, set_backend

    before = _selected_backend
    set_backend(name)
    try:
        yield
    finally:
        set_backend(before)


def _copy(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def named_outputs(out: Any) -> dict[str, np.ndarray]:
    """A spec's output (array, tuple or dict) as ``{name: array}``."""
    if isinstance(out, dict):
        return {str(k): np.asarray(v) for k, v in out.items()}
    if isinstance(out, (tuple, list)):
        return {f"output {i}": np.asarray(v) for i, v in enumerate(out)}
    return {"output": np.asarray(out)}


def _run_case(
    ex: Exercise, module: Any, case: Case, result: CheckResult, path: Path, png: Path | None
) -> CaseResult:
    from minitriton.jit import is_user_error

    expected = named_outputs(ex.spec.reference(*_copy(case.args)))
    try:
        got = named_outputs(ex.spec.launch(module, *_copy(case.args)))
    except Exception as e:
        text = str(e) if is_user_error(e) else _located(e, path, ex.folder / "spec.py")
        if not result.report:
            result.report = f"case '{case.name}' stopped with an error:\n{text}"
        return CaseResult(case.name, False, _short(text) or type(e).__name__)
    return _compare(case, expected, got, result, png)


def _short(text: str) -> str:
    """The first line of an error, with ``file:line:col: error:`` cut to ``line N:``."""
    first = text.splitlines()[0] if text else ""
    return re.sub(r"^.*?:(\d+):\d+: error: ", r"line \1: ", first)


def _compare(
    case: Case,
    expected: dict[str, np.ndarray],
    got: dict[str, np.ndarray],
    result: CheckResult,
    png: Path | None,
) -> CaseResult:
    for name, exp in expected.items():
        out = got.get(name)
        if out is None or out.shape != exp.shape:
            shape = None if out is None else out.shape
            return CaseResult(case.name, False, f"{name}: shape {shape}, expected {exp.shape}")
        wrong = wrong_mask(exp, out, case.atol, case.rtol)
        if not wrong.any():
            continue
        if not result.report:
            picture = diff_picture(exp, out, case.atol, case.rtol)
            result.report = f"case '{case.name}': {name} differs from the NumPy reference\n"
            result.report += picture
            if png is not None and save_png(exp, out, case.atol, case.rtol, png):
                result.report += f"\n    (picture saved to {png})"
        msg = f"{name}: {int(wrong.sum())} of {wrong.size} elements wrong"
        return CaseResult(case.name, False, msg)
    return CaseResult(case.name, True)
