"""``minitriton exercises``: the course's command line.

::

    minitriton exercises list                 # the course map and your progress
    minitriton exercises start N              # copy exercise N into your workspace
    minitriton exercises check N [--gpu]      # grade it; on failure: a picture and a hint
    minitriton exercises hint N               # reveal the next hint
    minitriton exercises verify               # grade every reference solution (instructors, CI)
    minitriton exercises make-stubs [--out D] # write the stubbed compiler sources
    minitriton exercises export DIR           # write the students' repository (no solutions)

Every subcommand takes ``--workspace DIR`` (default ``$MINITRITON_WORKSPACE``,
else ``exercises/workspace``); ``list``, ``check`` and ``verify`` take
``--json`` for autograders. Exit status: 0 when everything graded passes,
1 when something fails, 2 for usage problems.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from minitriton.cli import add_command
from minitriton.course.catalog import (
    CourseError,
    Exercise,
    all_exercises,
    find_exercise,
    repo_dir,
)
from minitriton.course.compiler_grader import check_compiler_copy, marked_files
from minitriton.course.kernels import check_kernel_file
from minitriton.course.results import CheckResult
from minitriton.course.speed import add_speed_report
from minitriton.course.stubs import make_package_copy, marker_index
from minitriton.course.workspace import Progress, Workspace

PASS, FAIL = "✓", "✗"


def add_parser(subparsers: Any) -> None:
    """Register ``minitriton exercises`` and its subcommands."""
    p = add_command(subparsers, "exercises", show_usage)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--workspace",
        metavar="DIR",
        help="where your work lives (default: $MINITRITON_WORKSPACE, else exercises/workspace)",
    )
    sub = p.add_subparsers(title="subcommands", metavar="SUBCOMMAND")
    _add_list(sub, common)
    _add_start(sub, common)
    _add_check(sub, common)
    _add_hint(sub, common)
    _add_verify(sub, common)
    _add_make_stubs(sub, common)
    _add_export(sub, common)
    p.set_defaults(course_parser=p)  # for show_usage


def show_usage(args: argparse.Namespace) -> int:
    """the MiniTriton course: list, start, check, hint, verify

    Graded exercises: kernels (exercises/kernels) and the compiler
    (exercises/compiler). Start with `minitriton exercises list`.
    """
    return _usage(args.course_parser)


def _usage(p: argparse.ArgumentParser) -> int:
    p.print_help(sys.stderr)
    return 2


def _guarded(fn: Any) -> Any:
    """Report course problems as one line with exit status 2."""

    def run(args: argparse.Namespace) -> int:
        try:
            return int(fn(args))
        except CourseError as e:
            print(f"minitriton exercises: error: {e}", file=sys.stderr)
            return 2
        except BrokenPipeError:
            # `check | head`: stop quietly, and keep Python's exit-time flush quiet too.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1

    return run


# ---------------------------------------------------------------- list


def _add_list(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("list", parents=[common], help="the course map and your progress")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_guarded(cmd_list))


def cmd_list(args: argparse.Namespace) -> int:
    """``exercises list``."""
    ws = Workspace.resolve(args.workspace)
    exercises = all_exercises()
    rows = [(ex, ws.progress(ex)) for ex in exercises]
    if args.json:
        data = [_list_json(ex, pr) for ex, pr in rows]
        print(json.dumps({"workspace": str(ws.root), "exercises": data}, indent=2))
        return 0
    print(f"MiniTriton course (workspace: {ws.root})")
    for track, heading in (("kernels", "Kernel track"), ("compiler", "Compiler track")):
        print(f"\n{heading}")
        for ex, pr in rows:
            if ex.track == track:
                print(_list_line(ex, pr))
    done = sum(pr.status == "passed" for _, pr in rows)
    print(f"\n{done} of {len(rows)} exercises passed.", end=" ")
    print(_next_step(ws, exercises))
    return 0


def _list_json(ex: Exercise, pr: Progress) -> dict[str, Any]:
    return {
        "id": ex.id,
        "track": ex.track,
        "title": ex.title,
        "minutes": ex.minutes,
        "requires": list(ex.requires),
        "status": pr.status,
        "score": pr.score,
        "hints_seen": pr.hints_seen,
    }


def _list_line(ex: Exercise, pr: Progress) -> str:
    mark = {"passed": PASS, "failed": FAIL, "started": "…"}.get(pr.status, " ")
    status = pr.status
    if pr.status == "failed":
        status = f"failed ({pr.score:.0%})"
    req = f"after {', '.join(ex.requires)}" if ex.requires else ""
    line = f"  {mark} {ex.id:>3}  {ex.title:<44} {ex.minutes:>3} min  {status:<14} {req}"
    return line.rstrip()


def _next_step(ws: Workspace, exercises: list[Exercise]) -> str:
    for ex in exercises:
        status = ws.progress(ex).status
        if status in ("started", "failed"):
            return f"Continue with {ex.id}: `minitriton exercises check {ex.id}`."
        if status == "not started":
            return f"Next: `minitriton exercises start {ex.id}` ({ex.title})."
    return "All done: well done!"


# ---------------------------------------------------------------- start


def _add_start(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("start", parents=[common], help="copy an exercise into your workspace")
    p.add_argument("id", metavar="N", help="exercise id: 1..17 (kernels) or c1..c6 (compiler)")
    p.add_argument(
        "--force",
        action="store_true",
        help="start over (your previous copy is kept with a .bak suffix)",
    )
    p.set_defaults(func=_guarded(cmd_start))


def cmd_start(args: argparse.Namespace) -> int:
    """``exercises start N``."""
    ws = Workspace.resolve(args.workspace)
    ex = find_exercise(args.id)
    target = ws.kernel_file(ex) if ex.track == "kernels" else ws.compiler_dir(ex)
    if ws.started(ex) and not args.force:
        print(f"Exercise {ex.id} is already started: your work is in {target}")
        print("(use --force to start over; your copy is kept with a .bak suffix)")
        return 0
    if target.exists():
        _backup(target)
    files = _start_kernel(ex, target) if ex.track == "kernels" else _start_compiler(ex, target)
    pr = ws.progress(ex)
    pr.status = "started"
    ws.save(ex, pr)
    print(f"Exercise {ex.id}: {ex.title}")
    _warn_prerequisites(ws, ex)
    print(f"  read:  {ex.folder / 'README.md'}")
    for f in files:
        print(f"  edit:  {f}")
    print(f"  check: minitriton exercises check {ex.id}")
    return 0


def _warn_prerequisites(ws: Workspace, ex: Exercise) -> None:
    """Say which of the exercises ``ex`` builds on are not passed yet."""
    if not ex.requires:
        return
    print(f"  after: {', '.join(ex.requires)}")
    missing = [r for r in ex.requires if ws.progress(find_exercise(r)).status != "passed"]
    if missing:
        print(
            f"  warning: {ex.id} builds on {', '.join(missing)}, not passed yet "
            f"(`minitriton exercises check {missing[0]}`); you may start anyway"
        )


def _backup(target: Path) -> None:
    backup = target.with_name(target.name + ".bak")
    if backup.is_dir():
        shutil.rmtree(backup)
    target.replace(backup)


def _start_kernel(ex: Exercise, target: Path) -> list[Path]:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ex.folder / "skeleton.py", target)
    return [target]


def _start_compiler(ex: Exercise, target: Path) -> list[Path]:
    make_package_copy(repo_dir(), target, [ex.spec.MARKER])
    return marked_files(ex, target)


# ---------------------------------------------------------------- check


def _add_check(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("check", parents=[common], help="grade your work on an exercise")
    p.add_argument("ids", nargs="*", metavar="N", help="exercise ids (default: all)")
    p.add_argument("--gpu", action="store_true", help="run kernels on the GPU (backend='gpu')")
    p.add_argument("--json", action="store_true", help="a score per exercise, as JSON")
    p.add_argument("--file", metavar="PATH", help="grade this kernel file instead")
    p.add_argument("--solution", action="store_true", help="grade the reference solution")
    p.add_argument("--png", metavar="FILE", help="also draw the wrong elements into FILE.png")
    p.set_defaults(func=_guarded(cmd_check))


def cmd_check(args: argparse.Namespace) -> int:
    """``exercises check [N ...]``."""
    ws = Workspace.resolve(args.workspace)
    backend = _backend(args.gpu)
    if backend is None:
        return 2
    exercises = _selected(args.ids)
    results = []
    own_work = not args.solution and args.file is None
    for ex in exercises:
        before = ws.snapshot()
        result = grade(ex, ws, backend, args)
        results.append(result)
        ws.restore(before)  # whatever the student's code wrote there is undone
        if own_work:
            _record(ws, ex, result)  # grading someone else's file changes no progress
        if not args.json:
            _print_result(ex, ws, result, reveal=len(exercises) == 1 and own_work)
    if args.json:
        total = sum(r.score for r in results)
        print(
            json.dumps(
                {
                    "workspace": str(ws.root),
                    "backend": backend,
                    "total": total,
                    "exercises": [r.as_json() for r in results],
                },
                indent=2,
            )
        )
    return 0 if all(r.passed for r in results) else 1


def _selected(ids: list[str]) -> list[Exercise]:
    exercises = all_exercises()
    if not ids or ids == ["all"]:
        return exercises
    return [find_exercise(i, exercises) for i in ids]


def _backend(gpu: bool) -> str | None:
    if not gpu:
        return "emulator"
    from minitriton.jit import gpu_available

    if gpu_available():
        return "gpu"
    print(
        "minitriton exercises: error: --gpu needs an NVIDIA GPU, its driver and "
        "cuda-python (pip install -e '.[gpu]'); without them, check on the emulator",
        file=sys.stderr,
    )
    return None


def grade(ex: Exercise, ws: Workspace, backend: str, args: argparse.Namespace) -> CheckResult:
    """Grade ``ex``: the workspace copy, ``--file`` or (``--solution``) the reference."""
    if ex.track == "compiler":
        return check_compiler_copy(ex, None if args.solution else ws.compiler_dir(ex))
    path = ws.kernel_file(ex)
    if args.solution:
        path = ex.folder / "solution.py"
    elif args.file:
        path = Path(args.file).resolve()
    png = Path(args.png) if getattr(args, "png", None) else None
    result = check_kernel_file(ex, path, backend, png)
    if backend == "gpu":
        # A plain GPU rarely faults on an out-of-bounds access (it reads garbage or
        # allocation padding), so kernels run in debug mode: every access is checked.
        result.note = "checked on the GPU in debug mode (every memory access is bounds-checked)"
        add_speed_report(ex, path, result)  # specs with SPEED (18): TFLOP/s vs the reference
    return result


def _record(ws: Workspace, ex: Exercise, result: CheckResult) -> None:
    pr = ws.progress(ex)
    if pr.status == "not started" and not ws.started(ex):
        return
    pr.score = max(pr.score, result.score) if pr.status == "passed" else result.score
    pr.status = "passed" if result.passed or pr.status == "passed" else "failed"
    ws.save(ex, pr)


def _print_result(ex: Exercise, ws: Workspace, result: CheckResult, reveal: bool) -> None:
    print(f"Exercise {ex.id} · {ex.title}")
    where = f" (backend: {result.backend})" if result.backend else ""
    print(f"graded: {result.target}{where}")
    if result.note:
        print(f"note: {result.note}")
    if result.output:
        print("your code printed (shown, not graded):")
        print(_indent(result.output, "  | "))
    if result.error:
        print(f"\n{FAIL} {result.error}")
        if reveal:
            _reveal_hint(ex, ws)
        return
    print()
    _print_cases(result)
    passed = sum(c.passed for c in result.cases)
    print(f"\nScore: {passed}/{len(result.cases)} ({result.score:.0%})")
    if result.passed:
        print(
            f"{PASS} Exercise {ex.id} passed."
            + (f" {_next_step(ws, all_exercises())}" if reveal else "")
        )
        return
    if result.report:
        print("\n" + result.report)
    if reveal:
        _reveal_hint(ex, ws, result.hint)


def _print_cases(result: CheckResult, limit: int = 12) -> None:
    """One line per case; with many cases (compiler tests), only the failing ones."""
    cases = result.cases
    if len(cases) > limit:
        cases = [c for c in cases if not c.passed]
    for case in cases[:limit]:
        tail = f"  -- {case.message}" if case.message else ""
        print(f"  {PASS if case.passed else FAIL} {case.name}{tail}")
    hidden_failing = len(cases) - len(cases[:limit])
    hidden_passing = len(result.cases) - len(cases)
    if hidden_failing:
        print(f"  ... and {hidden_failing} more failing")
    if hidden_passing:
        print(f"  ({hidden_passing} passing tests not shown)")


# ---------------------------------------------------------------- hints


def _add_hint(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("hint", parents=[common], help="reveal the next hint of an exercise")
    p.add_argument("id", metavar="N")
    p.add_argument("--all", action="store_true", help="show every hint at once")
    p.set_defaults(func=_guarded(cmd_hint))


def cmd_hint(args: argparse.Namespace) -> int:
    """``exercises hint N``."""
    ws = Workspace.resolve(args.workspace)
    ex = find_exercise(args.id)
    if args.all:
        hints = ex.hints()
        for i, hint in enumerate(hints, 1):
            print(f"Hint {i}:\n{_indent(hint)}\n")
        pr = ws.progress(ex)
        pr.hints_seen = len(hints)
        ws.save(ex, pr)
        return 0
    _reveal_hint(ex, ws)
    return 0


def _reveal_hint(ex: Exercise, ws: Workspace, wanted: int | None = None) -> None:
    """Show the hint the failing case names (``wanted``), else the next unseen one.

    ``hints_seen`` counts up to the furthest hint shown: after ``check`` showed
    hint 3 for a failing case, ``hint`` continues with hint 4, never back to 1.
    """
    hints = ex.hints()
    if not hints:
        return
    pr = ws.progress(ex)
    if wanted is not None and 1 <= wanted <= len(hints):
        n, why = wanted - 1, "the hint for the case that failed"
    else:
        n, why = min(pr.hints_seen, len(hints) - 1), ""
    pr.hints_seen = max(pr.hints_seen, n + 1)
    ws.save(ex, pr)
    last = (
        "this is the last one"
        if n == len(hints) - 1
        else f"more: `minitriton exercises hint {ex.id}`"
    )
    about = f"{why}; {last}" if why else last
    print(f"\nHint {n + 1} of {len(hints)} ({about}):\n{_indent(hints[n])}")


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else "" for line in text.splitlines())


# ---------------------------------------------------------------- verify


def _add_verify(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("verify", parents=[common], help="grade every reference solution")
    p.add_argument("ids", nargs="*", metavar="N", help="exercise ids (default: all)")
    p.add_argument("--gpu", action="store_true", help="run kernels on the GPU")
    p.add_argument("--json", action="store_true", help="results as JSON")
    p.set_defaults(func=_guarded(cmd_verify))


def cmd_verify(args: argparse.Namespace) -> int:
    """``exercises verify``: every reference solution must pass."""
    backend = _backend(args.gpu)
    if backend is None:
        return 2
    markers = marker_index(repo_dir())
    results = []
    for ex in _selected(args.ids):
        start = time.perf_counter()
        result = _verify_one(ex, backend, markers)
        results.append(result)
        if not args.json:
            _print_verified(ex, result, time.perf_counter() - start)
    if args.json:
        print(json.dumps([r.as_json() for r in results], indent=2))
    failed = [r.exercise for r in results if not r.passed]
    if not args.json:
        print(
            f"\n{len(results) - len(failed)} of {len(results)} reference solutions pass"
            + (f"; failing: {', '.join(failed)}" if failed else "")
        )
    return 1 if failed else 0


def _print_verified(ex: Exercise, result: CheckResult, seconds: float) -> None:
    mark = PASS if result.passed else FAIL
    print(f"{mark} {ex.id:>3} {ex.title:<46} {seconds:5.1f} s")
    if not result.passed:
        print(_indent(result.error or result.report or "failed"))


def _verify_one(ex: Exercise, backend: str, markers: dict) -> CheckResult:
    if ex.track == "kernels" and not (ex.folder / "solution.py").exists():
        result = CheckResult(ex.id, ex.title, "")
        result.error = "no solution.py: this copy of the course is a students' export"
        return result
    if ex.track == "kernels":
        # The course's own file is trusted: no child process needed.
        return check_kernel_file(ex, ex.folder / "solution.py", backend, sandbox=False)
    if ex.spec.MARKER not in markers:
        result = CheckResult(ex.id, ex.title, "")
        result.error = f"no '# BEGIN EXERCISE {ex.spec.MARKER}' marker in the source"
        return result
    return check_compiler_copy(ex, None)


# ---------------------------------------------------------------- make-stubs


def _add_make_stubs(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "make-stubs",
        parents=[common],
        help="write a copy of the package with exercise regions stubbed",
    )
    p.add_argument("ids", nargs="*", metavar="cN", help="compiler exercises (default: all)")
    p.add_argument("--out", metavar="DIR", help="default: WORKSPACE/stubs")
    p.set_defaults(func=_guarded(cmd_make_stubs))


def cmd_make_stubs(args: argparse.Namespace) -> int:
    """``exercises make-stubs``: the student's view of the compiler sources."""
    ws = Workspace.resolve(args.workspace)
    exercises = [ex for ex in _selected(args.ids) if ex.track == "compiler"]
    out = Path(args.out) if args.out else ws.root / "stubs"
    names = [ex.spec.MARKER for ex in exercises]
    stubbed = make_package_copy(repo_dir(), out, names)
    print(f"wrote {out} with {', '.join(names) or 'no'} regions stubbed in:")
    for path in stubbed:
        print(f"  {path}")
    return 0


# ---------------------------------------------------------------- export


def _add_export(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "export",
        parents=[common],
        help="write the students' repository: the course without reference solutions",
    )
    p.add_argument("dir", metavar="DIR", help="a new or empty folder")
    p.set_defaults(func=_guarded(cmd_export))


def cmd_export(args: argparse.Namespace) -> int:
    """``exercises export DIR``: see :mod:`minitriton.course.export`."""
    from minitriton.course.export import export

    dest = Path(args.dir).resolve()
    try:
        compiled = export(dest)
    except FileExistsError as e:
        raise CourseError(str(e)) from e
    print(f"wrote the students' repository to {dest}")
    print(f"  {len(compiled)} modules with exercise regions ship compiled; their stubs are in")
    print(f"  {dest / 'exercises' / 'compiler' / 'stubs'}")
    print("  no solution.py; tests for the compiler exercises included")
    print(f"next: cd {dest} && git init && git add -A && git commit -m 'MiniTriton course'")
    return 0
