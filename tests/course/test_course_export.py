"""``exercises export``: a students' repository in which the course works and
that holds no reference solution in source form.

The export is "installed" the way ``pip install -e`` lays it out (the
package folders mapped into ``minitriton/``), then driven through the
command line: kernels compile and run (through the compiled modules),
skeletons fail helpfully, and ``start cN`` hands out the stub.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from minitriton.cli import main
from minitriton.course import catalog, stubs

REPO = catalog.repo_dir()
EXERCISES = catalog.all_exercises()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the export, a folder where its package is laid out as installed)."""
    root = tmp_path_factory.mktemp("export")
    dest = root / "course"
    assert main(["exercises", "export", str(dest)]) == 0
    site = root / "site"
    stubs.make_package_copy(dest, site, [])
    return dest, site


def _run(exported: tuple[Path, Path], ws: Path, *args: str) -> subprocess.CompletedProcess:
    dest, site = exported
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "MINITRITON_COURSE": str(dest / "exercises"),
        "MINITRITON_WORKSPACE": str(ws),
        "MPLBACKEND": "Agg",
    }
    cmd = [sys.executable, "-m", "minitriton", "exercises", *args]
    return subprocess.run(cmd, cwd=site, env=env, capture_output=True, text=True, timeout=600)


def _text_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and p.suffix != ".pyc"]


def _code_lines(text: str) -> set[str]:
    lines = (re.sub(r"\s+", "", line.split("#")[0]) for line in text.splitlines())
    return {ln for ln in lines if len(ln) > 8 and not ln.startswith(("@", "def", '"""', "import"))}


def _solutions() -> dict[str, set[str]]:
    """Per exercise, the lines a student must write (as in the hint test)."""
    out = {}
    for ex in EXERCISES:
        if ex.track == "kernels":
            solution = _code_lines((ex.folder / "solution.py").read_text(encoding="utf-8"))
            skeleton = _code_lines((ex.folder / "skeleton.py").read_text(encoding="utf-8"))
            out[ex.id] = solution - skeleton
            continue
        lines: set[str] = set()
        for path, region in stubs.marker_index(REPO)[ex.spec.MARKER]:
            text = path.read_text(encoding="utf-8").splitlines()
            lines |= _code_lines("\n".join(text[region.begin + 1 : region.end]))
        out[ex.id] = lines
    return out


def test_the_export_holds_no_reference_solution(exported: tuple[Path, Path]) -> None:
    dest, _ = exported
    assert not list(dest.rglob("solution.py"))
    assert not (dest / "tests" / "course").exists() and not (dest / "examples").exists()
    solutions = _solutions()
    for path in _text_files(dest):
        code = re.sub(r"\s+", "", path.read_text(encoding="utf-8", errors="replace"))
        for ex_id, lines in solutions.items():
            shown = [ln for ln in lines if ln in code]
            assert len(shown) <= len(lines) / 2, f"{path} holds {ex_id}'s solution: {shown}"


def test_the_exported_links_resolve(exported: tuple[Path, Path]) -> None:
    dest, _ = exported
    for page in (dest / "exercises").rglob("*.md"):
        for link in re.findall(r"\]\(([^)#:]+)\)", page.read_text(encoding="utf-8")):
            assert (page.parent / link).exists(), f"{page}: broken link {link}"


def test_the_compiler_regions_ship_compiled_with_their_stubs_aside(
    exported: tuple[Path, Path],
) -> None:
    dest, _ = exported
    for ex in (e for e in EXERCISES if e.track == "compiler"):
        for path, _ in stubs.marker_index(REPO)[ex.spec.MARKER]:
            rel = path.relative_to(REPO)
            assert not (dest / rel).exists() and (dest / rel).with_suffix(".pyc").exists()
            installed = stubs.installed_path(REPO, path)
            stub = (dest / stubs.STUBS_DIR / installed).read_text(encoding="utf-8")
            assert "NotImplementedError" in stub and f"# BEGIN EXERCISE {ex.spec.MARKER}" in stub


def test_kernels_run_in_the_export(exported: tuple[Path, Path], tmp_path: Path) -> None:
    # Exercise 05 needs the compiled modules: reductions (c5), promotion (c4), DCE, CSE...
    assert _run(exported, tmp_path, "start", "5").returncode == 0
    solution = (catalog.find_exercise("05").folder / "solution.py").read_text(encoding="utf-8")
    (tmp_path / "kernels" / "05_softmax.py").write_text(solution, encoding="utf-8")
    proc = _run(exported, tmp_path, "check", "5")
    assert proc.returncode == 0 and "Exercise 05 passed" in proc.stdout, proc.stdout + proc.stderr


def test_the_export_ships_the_reference_times_for_the_budgets(
    exported: tuple[Path, Path],
) -> None:
    from minitriton.course import kernels

    dest, _ = exported
    ex = catalog.find_exercise("07")
    folder = dest / "exercises" / "kernels" / ex.slug
    copy = catalog.Exercise(ex.id, ex.track, folder, "", 0, (), ())
    times = kernels.reference_times(copy)  # no solution.py there: read from the file
    assert set(times) == {c.name for c in ex.spec.cases()} and all(t > 0 for t in times.values())


def test_a_skeleton_fails_helpfully_in_the_export(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    _run(exported, tmp_path, "start", "2")
    proc = _run(exported, tmp_path, "check", "2")
    assert proc.returncode == 1 and "out-of-bounds tt.load" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.slow
def test_a_compiler_exercise_works_in_the_export(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    proc = _run(exported, tmp_path, "start", "c4")
    assert proc.returncode == 0 and "promotion.py" in proc.stdout
    copy = tmp_path / "compiler" / "c4_promotion" / "minitriton" / "frontend"
    assert (copy / "promotion.py").exists() and not (copy / "promotion.pyc").exists()
    proc = _run(exported, tmp_path, "check", "c4")
    assert proc.returncode == 1 and "c4-promotion: " in proc.stdout
    # The student writes rule 8 (here: the course's own code) and passes.
    real = (REPO / "minitriton" / "frontend" / "promotion.py").read_text(encoding="utf-8")
    (copy / "promotion.py").write_text(real, encoding="utf-8")
    proc = _run(exported, tmp_path, "check", "c4")
    assert proc.returncode == 0 and "Exercise c4 passed" in proc.stdout, proc.stdout[-2000:]


def test_export_refuses_a_folder_in_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["exercises", "export", str(tmp_path)]) == 2
    assert "is not empty" in capsys.readouterr().err


def test_hints_ship_encoded_and_are_revealed_in_order(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    dest, _ = exported
    assert not list(dest.rglob("hints.md"))
    for ex in EXERCISES:
        encoded = dest / ex.folder.relative_to(REPO) / catalog.ENCODED_HINTS
        text = encoded.read_text(encoding="ascii")
        first_words = ex.hints()[0].split("\n")[0][:40]
        assert first_words not in text, f"{encoded} shows its first hint in clear"
        assert catalog.decode_hints(text) == (ex.folder / "hints.md").read_text(encoding="utf-8")
    hints = catalog.find_exercise("05").hints()
    for n in (1, 2):
        proc = _run(exported, tmp_path, "hint", "5")
        assert f"Hint {n} of {len(hints)}" in proc.stdout
        assert hints[n - 1].splitlines()[0] in proc.stdout


def test_damaged_hints_are_a_course_error(tmp_path: Path) -> None:
    bad = tmp_path / catalog.ENCODED_HINTS
    bad.write_text("# header\nnot base64 at all!\n", encoding="ascii")
    with pytest.raises(catalog.CourseError, match="damaged hints"):
        catalog.decode_hints(bad.read_text(encoding="ascii"), bad)
    text = "# Hints\n\n## Hint 1\n\nfirst\n\n## Hint 2\n\nsecond\n"
    assert catalog.parse_hints(catalog.decode_hints(catalog.encode_hints(text))) == [
        "first",
        "second",
    ]
