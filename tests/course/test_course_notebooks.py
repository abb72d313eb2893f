"""The course notebooks execute (nbclient, on the emulator) and show the grade inline.

Each notebook runs as shipped (the student's cell holds the skeleton or the
stub, so the check fails and shows its picture and hint), then once more
with that cell filled in by the course's own code, which must pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from minitriton.course import catalog, stubs

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = catalog.course_dir() / "notebooks"
STUDENT_CELL = 4  # the cell the student edits, in both notebooks


def _execute(name: str, ws: Path, student_code: str | None = None) -> list:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    if student_code is not None:
        nb.cells[STUDENT_CELL].source = student_code
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3")
    client.execute(cwd=str(ws))
    return nb.cells


def _text(cell: dict) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", ""))
        parts.append(out.get("data", {}).get("text/plain", ""))
        if out.get("output_type") == "error":
            parts.append(f"ERROR {out['ename']}: {out['evalue']}")
    return "".join(parts)


def _has_image(cell: dict) -> bool:
    return any("image/png" in out.get("data", {}) for out in cell.get("outputs", []))


def _cell(cells: list, source_start: str) -> dict:
    return next(c for c in cells if c.cell_type == "code" and c.source.startswith(source_start))


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MINITRITON_WORKSPACE", str(tmp_path))  # the kernel inherits it
    monkeypatch.setenv("MPLBACKEND", "Agg")
    return tmp_path


def test_the_kernel_notebook_holds_the_skeleton() -> None:
    nb = nbformat.read(NOTEBOOKS / "kernels.ipynb", as_version=4)
    skeleton = (catalog.find_exercise("05").folder / "skeleton.py").read_text(encoding="utf-8")
    assert nb.cells[STUDENT_CELL].source.strip() in skeleton
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


@pytest.mark.slow
def test_the_kernel_notebook_shows_grade_picture_and_hint(workspace: Path) -> None:
    cells = _execute("kernels.ipynb", workspace)
    checked = _cell(cells, "check(5")
    text = _text(checked)
    assert "Score: 1/7 (14%)" in text and "Hint 2 of 3 (the hint for the case that failed" in text
    assert _has_image(checked), "the wrong-elements picture is shown inline"
    assert _has_image(_cell(cells, "trace_picture")), "the trace picture is shown inline"
    views = [
        o.get("data", {}).get("text/html", "") for o in _cell(cells, "trace_picture")["outputs"]
    ]
    assert any("<iframe srcdoc=" in v and "trace-data" in v for v in views), "the HTML view too"
    block = _cell(cells, "from minitriton.emulator import Debugger")
    assert any("<table" in o.get("data", {}).get("text/html", "") for o in block.outputs)
    assert not any("ERROR" in _text(c) for c in cells if c.cell_type == "code")


@pytest.mark.slow
def test_the_kernel_notebook_passes_when_solved(workspace: Path) -> None:
    solution = (catalog.find_exercise("05").folder / "solution.py").read_text(encoding="utf-8")
    cells = _execute("kernels.ipynb", workspace, solution[solution.index("@triton.jit") :])
    text = _text(_cell(cells, "check(5"))
    assert "Exercise 05 passed" in text and "Grade(status='passed', score=1.0)" in text


@pytest.mark.slow
def test_the_compiler_notebook_grades_the_cell(workspace: Path) -> None:
    cells = _execute("compiler.ipynb", workspace)
    text = _text(_cell(cells, 'check("c4"'))
    assert "Score: 0/83 (0%)" in text and "c4-promotion: rule 8" in text and "Hint 1 of 2" in text
    path, region = stubs.marker_index(catalog.repo_dir())["c4-promotion"][0]
    lines = path.read_text(encoding="utf-8").splitlines()
    start = max(i for i in range(region.begin) if lines[i].startswith("def integer_promote"))
    real = "\n".join(lines[start : region.end + 1]) + "\n"
    cells = _execute("compiler.ipynb", workspace, real)
    text = _text(_cell(cells, 'check("c4"'))
    assert "Exercise c4 passed" in text and "Score: 83/83 (100%)" in text
