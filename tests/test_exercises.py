"""The course (exercises/) and its grader (minitriton.course).

* Every reference solution passes its spec (kernels on the emulator,
  compiler exercises with the project's own tests against the real source).
* Every untouched skeleton or stub fails *helpfully*: exit status 1, no
  Python traceback, and a report (a picture of the wrong elements or a
  located error) plus the first hint.
* Stubs are generated from ``# BEGIN EXERCISE`` markers in the real source,
  so the markers must exist, be well formed and stub into valid Python.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minitriton.cli import main
from minitriton.course import catalog, picture, stubs
from minitriton.course.compiler_grader import student_env
from minitriton.course.kernels import case_hint, check_kernel_file

EXERCISES = catalog.all_exercises()
KERNELS = [ex for ex in EXERCISES if ex.track == "kernels"]
COMPILER = [ex for ex in EXERCISES if ex.track == "compiler"]
REPO = catalog.repo_dir()


def _param(ex: catalog.Exercise) -> object:
    marker = ex.spec.MARKER if ex.track == "compiler" else ex.slug
    return pytest.param(ex, id=ex.id, marks=pytest.mark.exercise(marker))


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    rc = main(["exercises", *args])
    out = capsys.readouterr()
    return rc, out.out + out.err


# ---------------------------------------------------------------- the catalogue


def test_course_has_both_tracks() -> None:
    assert len(KERNELS) >= 16
    assert len(COMPILER) >= 6
    assert [ex.id for ex in KERNELS] == [f"{i:02d}" for i in range(1, len(KERNELS) + 1)]


@pytest.mark.parametrize("ex", [_param(ex) for ex in EXERCISES])
def test_exercise_folder_is_complete(ex: catalog.Exercise) -> None:
    files = ["README.md", "hints.md", "spec.py"]
    if ex.track == "kernels":
        files += ["skeleton.py", "solution.py"]
    assert all((ex.folder / f).is_file() for f in files)
    readme = (ex.folder / "README.md").read_text(encoding="utf-8")
    assert "```" in readme, "the README needs a picture of the data layout or the IR"
    if ex.track == "kernels":
        assert "## Memory traffic" in readme and "bytes" in readme
        assert len(ex.spec.cases()) >= 2
    assert len(ex.hints()) >= 2
    known = {e.id for e in EXERCISES}
    assert set(ex.requires) <= known and ex.minutes > 0 and ex.outcomes


def test_course_maps_list_every_exercise() -> None:
    readme = (REPO / "exercises" / "README.md").read_text(encoding="utf-8")
    docs = (REPO / "docs" / "course.md").read_text(encoding="utf-8")
    for ex in EXERCISES:
        assert f"| {ex.id} | [{ex.title}]({ex.track}/{ex.slug}/README.md) |" in readme
        assert f"| {ex.id} | {ex.title}" in docs


@pytest.mark.parametrize("ex", [_param(ex) for ex in KERNELS])
def test_kernel_files_use_the_triton_imports(ex: catalog.Exercise) -> None:
    for name in ("skeleton.py", "solution.py"):
        text = (ex.folder / name).read_text(encoding="utf-8")
        assert "import minitriton as triton" in text
        assert "import minitriton.language as tl" in text
        assert "TODO" in text if name == "skeleton.py" else "TODO" not in text


# ---------------------------------------------------------------- kernel track


@pytest.mark.parametrize("ex", [_param(ex) for ex in KERNELS])
def test_reference_solution_passes(ex: catalog.Exercise) -> None:
    result = check_kernel_file(ex, ex.folder / "solution.py", sandbox=False)
    assert result.passed, result.error or result.report
    assert result.score == 1.0


@pytest.mark.parametrize("ex", [_param(ex) for ex in KERNELS])
def test_untouched_skeleton_fails_helpfully(
    ex: catalog.Exercise, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = str(tmp_path)
    rc, out = _cli(capsys, "start", ex.id, "--workspace", ws)
    assert rc == 0 and f"{ex.slug}.py" in out
    rc, out = _cli(capsys, "check", ex.id, "--workspace", ws)
    assert rc == 1
    assert "Traceback" not in out
    assert "Score:" in out and "✗" in out
    # Either a picture of the wrong elements or a located error...
    assert picture.LEGEND in out or ": error: " in out
    # ...and a hint.
    assert re.search(rf"Hint \d of {len(ex.hints())} ", out)


def test_missing_mask_shows_the_located_out_of_bounds_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _cli(capsys, "start", "2", "--workspace", str(tmp_path))
    rc, out = _cli(capsys, "check", "2", "--workspace", str(tmp_path))
    assert rc == 1
    assert "02_vector_add.py:18:9: error: out-of-bounds tt.load" in out
    assert "in program (7, 0, 0)" in out
    assert "✓ n = 1024: a multiple of BLOCK = 128" in out


def test_check_via_the_installed_command_has_no_traceback(tmp_path: Path) -> None:
    env = {**student_env(None), "MINITRITON_WORKSPACE": str(tmp_path)}
    run = [sys.executable, "-m", "minitriton", "exercises"]
    subprocess.run([*run, "start", "5"], env=env, check=True, capture_output=True)
    proc = subprocess.run([*run, "check", "5"], env=env, capture_output=True, text=True)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "Hint 2 of 3 (the hint for the case that failed" in proc.stdout


def test_student_progress_hints_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = str(tmp_path)
    _cli(capsys, "start", "1", "--workspace", ws)
    _cli(capsys, "check", "1", "--workspace", ws)  # fails, reveals hint 1
    rc, out = _cli(capsys, "hint", "1", "--workspace", ws)
    assert rc == 0 and "Hint 2 of 3" in out
    # The student fixes the kernel: copy the solution in.
    solution = (KERNELS[0].folder / "solution.py").read_text(encoding="utf-8")
    (tmp_path / "kernels" / f"{KERNELS[0].slug}.py").write_text(solution, encoding="utf-8")
    rc, out = _cli(capsys, "check", "1", "--workspace", ws)
    assert rc == 0 and "Exercise 01 passed" in out
    rc, out = _cli(capsys, "list", "--workspace", ws, "--json")
    statuses = {e["id"]: e["status"] for e in json.loads(out)["exercises"]}
    assert statuses["01"] == "passed" and statuses["02"] == "not started"
    rc, out = _cli(capsys, "check", "1", "2", "--json", "--workspace", ws)
    scores = {e["id"]: e["score"] for e in json.loads(out)["exercises"]}
    assert rc == 1 and scores == {"01": 1.0, "02": 0.0}


def test_gpu_flag_without_a_gpu_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    jit_module = sys.modules["minitriton.jit"]  # `minitriton.jit` is also the decorator
    monkeypatch.setattr(jit_module, "gpu_available", lambda: False)
    rc, out = _cli(capsys, "check", "1", "--gpu")
    assert rc == 2 and "--gpu needs an NVIDIA GPU" in out


def test_gpu_grading_runs_in_debug_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    from minitriton.course import kernels as grading
    from minitriton.jit import DEBUG_ENV

    monkeypatch.delenv(DEBUG_ENV, raising=False)
    with grading._backend("gpu"):
        assert os.environ[DEBUG_ENV] == "1"
    assert DEBUG_ENV not in os.environ
    monkeypatch.setenv(DEBUG_ENV, "0")
    with grading._backend("emulator"):
        assert os.environ[DEBUG_ENV] == "0"  # the emulator's grading leaves it alone
    with grading._backend("gpu"):
        assert os.environ[DEBUG_ENV] == "1"
    assert os.environ[DEBUG_ENV] == "0"


@pytest.mark.gpu
def test_gpu_check_catches_missing_masks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Without masks, exercise 02 passes on a plain GPU (out-of-bounds reads do
    # not fault): debug mode must catch it on the GPU itself.
    _cli(capsys, "start", "2", "--workspace", str(tmp_path))
    rc, out = _cli(capsys, "check", "2", "--gpu", "--workspace", str(tmp_path))
    assert rc == 1 and "(backend: gpu)" in out
    assert "checked on the GPU in debug mode" in out and "out-of-bounds tt.load" in out


@pytest.mark.gpu
def test_gpu_check_of_a_fixed_kernel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _cli(capsys, "start", "2", "--workspace", str(tmp_path))
    solution = (KERNELS[1].folder / "solution.py").read_text(encoding="utf-8")
    (tmp_path / "kernels" / f"{KERNELS[1].slug}.py").write_text(solution, encoding="utf-8")
    rc, out = _cli(capsys, "check", "2", "--gpu", "--workspace", str(tmp_path))
    assert rc == 0 and "(backend: gpu)" in out


@pytest.mark.gpu
@pytest.mark.parametrize("ex", [_param(ex) for ex in KERNELS])
def test_reference_solution_passes_on_the_gpu(ex: catalog.Exercise) -> None:
    result = check_kernel_file(ex, ex.folder / "solution.py", backend="gpu", sandbox=False)
    assert result.passed, result.error or result.report


# ---------------------------------------------------------------- the diff picture


def test_picture_tells_never_written_from_nan() -> None:
    expected = np.arange(100, dtype=np.float32)
    got = expected.copy()
    got[96:] = np.nan  # never written: the store mask says so
    got[90] = np.inf  # written, but inf
    got[3] = -1.0  # wrong
    written = np.ones(100, dtype=bool)
    written[96:] = False
    text = picture.diff_picture(expected, got, 1e-5, 1e-5, written)
    rows = [line for line in text.splitlines() if re.fullmatch(r"\s+\d+  \S+", line)]
    assert rows[0].split()[1] == "···█" + "·" * 28
    assert rows[2].split()[1] == "·" * 26 + "!" + "·" * 5
    assert rows[3].split()[1] == "????"  # elements 100..127 do not exist: blank
    assert "6 of 100 elements wrong (6.0%): 1 inf, 4 never written" in text
    assert "at [3]: expected 3, got -1" in text
    assert "at [96]: expected 96, got never written" in text


def test_picture_without_write_tracking_calls_a_nan_a_nan() -> None:
    expected = np.ones((3, 4), np.float32)
    got = np.full((3, 4), np.nan, np.float32)  # inf / inf, say: stored, but NaN
    text = picture.diff_picture(expected, got, 1e-5, 1e-5)
    assert "12 of 12 elements wrong (100.0%): 12 NaN" in text
    assert "never written" not in text.split(picture.LEGEND)[1]
    assert "?" not in text.split(picture.LEGEND)[0]


def test_png_has_one_scale_and_a_legend_when_all_is_wrong(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib.image

    expected = np.linspace(0, 1, 64, dtype=np.float32).reshape(8, 8)
    got = expected + 5.0  # every element wrong
    path = tmp_path / "wrong.png"
    assert picture.save_png(expected, got, 1e-5, 1e-5, path)
    pixels = matplotlib.image.imread(path)
    # The wrong panel is filled with the "wrong value" colour, not blank.
    red = (pixels[..., 0] > 0.75) & (pixels[..., 1] < 0.25) & (pixels[..., 2] < 0.25)
    assert red.sum() > 1000


def test_picture_groups_large_outputs() -> None:
    expected = np.zeros((64, 256), np.float32)
    got = expected.copy()
    got[:, :128] = 1.0
    text = picture.diff_picture(expected, got, 1e-5, 1e-5)
    assert "each character is a 4x4 group" in text
    grid = [line.split()[1] for line in text.splitlines() if re.fullmatch(r"\s+\d+  \S+", line)]
    assert grid[0] == "█" * 32 + "·" * 32


# ---------------------------------------------------------------- compiler track


def test_every_compiler_exercise_has_markers() -> None:
    index = stubs.marker_index(REPO)
    for ex in COMPILER:
        assert ex.spec.MARKER in index, f"no '# BEGIN EXERCISE {ex.spec.MARKER}' in the source"


@pytest.mark.parametrize("ex", [_param(ex) for ex in COMPILER])
def test_stubs_are_valid_python_and_differ(ex: catalog.Exercise) -> None:
    for path, _ in stubs.marker_index(REPO)[ex.spec.MARKER]:
        text = path.read_text(encoding="utf-8")
        assert stubs.stub_text(text, []) == text  # markers alone change nothing
        stubbed = stubs.stub_text(text, [ex.spec.MARKER])
        assert stubbed != text and "NotImplementedError" in stubbed
        ast.parse(stubbed, str(path))


def test_malformed_markers_are_reported() -> None:
    with pytest.raises(stubs.MarkerError, match="without END"):
        stubs.find_regions("x = 1\n# BEGIN EXERCISE a\ny = 2\n")
    with pytest.raises(stubs.MarkerError, match="inside another"):
        stubs.find_regions("# BEGIN EXERCISE a\n# BEGIN EXERCISE b\n# END EXERCISE\n")
    with pytest.raises(stubs.MarkerError, match="without BEGIN"):
        stubs.find_regions("# END EXERCISE\n")


def test_stub_keeps_indentation_and_uses_stub_lines() -> None:
    text = (
        "def f(x):\n"
        "    # BEGIN EXERCISE demo\n"
        "    # STUB: return 0\n"
        "    return x + 1\n"
        "    # END EXERCISE\n"
    )
    out = stubs.stub_text(text, ["demo"])
    assert "    return 0\n" in out and "return x + 1" not in out
    namespace: dict = {}
    exec(compile(out, "<stub>", "exec"), namespace)
    assert namespace["f"](5) == 0


def test_student_copy_is_what_the_tests_import(tmp_path: Path) -> None:
    stubs.make_package_copy(REPO, tmp_path, [])
    code = (
        "import minitriton, minitriton.emulator, minitriton.grammar as g; "
        "print(minitriton.__file__); print(minitriton.emulator.__file__); print(g.__file__)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=student_env(tmp_path),
        capture_output=True,
        text=True,
        check=True,
    )
    assert all(line.startswith(str(tmp_path)) for line in proc.stdout.split())


@pytest.mark.slow
@pytest.mark.parametrize("ex", [_param(ex) for ex in COMPILER])
def test_compiler_solution_passes(ex: catalog.Exercise, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _cli(capsys, "check", ex.id, "--solution")
    assert rc == 0, out
    assert f"Exercise {ex.id} passed" in out


@pytest.mark.slow
@pytest.mark.parametrize("ex", [_param(ex) for ex in COMPILER])
def test_untouched_compiler_stub_fails_helpfully(
    ex: catalog.Exercise, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = str(tmp_path)
    rc, out = _cli(capsys, "start", ex.id, "--workspace", ws)
    assert rc == 0 and "edit:" in out
    rc, out = _cli(capsys, "check", ex.id, "--workspace", ws)
    assert rc == 1
    assert "Traceback" not in out
    assert f"{ex.spec.MARKER}: " in out  # the stub's message names the exercise
    assert re.search(rf"Hint \d of {len(ex.hints())} ", out)


@pytest.mark.parametrize("ex", [_param(ex) for ex in COMPILER])
def test_compiler_test_hints_exist(ex: catalog.Exercise) -> None:
    for key, n in getattr(ex.spec, "TEST_HINTS", {}).items():
        assert 1 <= n <= len(ex.hints()), key


def test_syntax_error_in_a_student_copy_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = str(tmp_path)
    _cli(capsys, "start", "c4", "--workspace", ws)
    target = tmp_path / "compiler" / "c4_promotion" / "minitriton" / "frontend" / "promotion.py"
    target.write_text(target.read_text(encoding="utf-8") + "\ndef broken(:\n", encoding="utf-8")
    rc, out = _cli(capsys, "check", "c4", "--workspace", ws)
    assert rc == 1 and "Traceback" not in out
    assert "promotion.py:" in out and "error: " in out


def test_verify_kernel_track(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _cli(capsys, "verify", *[ex.id for ex in KERNELS])
    assert rc == 0, out
    assert f"{len(KERNELS)} of {len(KERNELS)} reference solutions pass" in out


# ---------------------------------------------------------------- hints


def _statements(text: str) -> set[str]:
    """The code lines of ``text`` that say something, without whitespace or comments."""
    lines = (re.sub(r"\s+", "", line.split("#")[0]) for line in text.splitlines())
    return {ln for ln in lines if len(ln) > 8 and not ln.startswith(("@", "def", '"""', "import"))}


def _to_write(ex: catalog.Exercise) -> set[str]:
    """What the student must write: the solution's lines the skeleton (or stub) lacks."""
    if ex.track == "kernels":
        solution = _statements((ex.folder / "solution.py").read_text(encoding="utf-8"))
        return solution - _statements((ex.folder / "skeleton.py").read_text(encoding="utf-8"))
    regions = stubs.marker_index(REPO)[ex.spec.MARKER]
    lines: set[str] = set()
    for path, region in regions:
        text = path.read_text(encoding="utf-8").splitlines()
        lines |= _statements("\n".join(text[region.begin + 1 : region.end]))
    return lines


@pytest.mark.parametrize("ex", [_param(ex) for ex in EXERCISES])
def test_no_hint_gives_the_whole_solution(ex: catalog.Exercise) -> None:
    todo = _to_write(ex)
    assert todo
    for i, hint in enumerate(ex.hints(), 1):
        code = "".join(re.findall(r"```(?:python)?\n(.*?)```", hint, re.S))
        code += "".join(re.findall(r"`([^`\n]+)`", hint))
        shown = {line for line in todo if line in re.sub(r"\s+", "", code)}
        assert len(shown) <= len(todo) / 2, f"hint {i} shows {len(shown)} of {len(todo)} lines"
    # Nor do all of them together, read at once (`hint --all`).
    every = re.sub(r"\s+", "", (ex.folder / "hints.md").read_text(encoding="utf-8"))
    shown = {line for line in todo if line in every}
    assert len(shown) <= len(todo) / 2, f"the hints show {len(shown)} of {len(todo)} lines"


@pytest.mark.parametrize("ex", [_param(ex) for ex in KERNELS])
def test_cases_name_hints_that_exist(ex: catalog.Exercise) -> None:
    names = [case.name for case in ex.spec.cases()]
    for start in getattr(ex.spec, "CASE_HINTS", {}):
        assert any(name.startswith(start) for name in names), f"no case starts with {start!r}"
    for case in ex.spec.cases():
        hint = case_hint(ex, case)
        assert hint is None or 1 <= hint <= len(ex.hints()), case.name


def test_the_hint_shown_is_the_one_the_failing_case_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Exercise 05 without the max subtraction fails only the overflow case,
    # which teaches hint 1; with -inf padding replaced by 0 it fails the
    # padding case first, which teaches hint 2.
    ex = catalog.find_exercise("05")
    solution = (ex.folder / "solution.py").read_text(encoding="utf-8")
    _cli(capsys, "start", "5", "--workspace", str(tmp_path))
    path = tmp_path / "kernels" / f"{ex.slug}.py"
    path.write_text(solution.replace('other=-float("inf")', "other=0.0"), encoding="utf-8")
    rc, out = _cli(capsys, "check", "5", "--workspace", str(tmp_path))
    assert rc == 1 and "Hint 2 of 3 (the hint for the case that failed" in out
    rc, out = _cli(capsys, "hint", "5", "--workspace", str(tmp_path))
    assert "Hint 3 of 3" in out  # `hint` continues from the hint shown, never back to 1
    path.write_text(solution.replace("    x = x - tl.max(x, axis=0)\n", ""), encoding="utf-8")
    rc, out = _cli(capsys, "check", "5", "--workspace", str(tmp_path))
    assert rc == 1 and "Hint 1 of 3 (the hint for the case that failed" in out
    # The misdiagnosis: inf / inf is a NaN the kernel stored, not a missing store.
    assert "188 of 192 elements wrong (97.9%): 188 NaN" in out
    assert "never written" not in out.split("Hint 1")[0].split(picture.LEGEND)[1]


def test_inputs_reach_the_kernel_with_their_strides() -> None:
    from minitriton.course.kernels import copy_keeping_layout

    wide = np.arange(6 * 10, dtype=np.float32).reshape(6, 10)
    for view in (wide[:, 2:7], wide.T, wide[::2, 1:4], wide[:, 3]):
        copy = copy_keeping_layout(view)
        assert copy.strides == view.strides and not np.shares_memory(copy, wide)
        np.testing.assert_array_equal(copy, view)
    from minitriton.jit import flat_host_array  # what a kernel sees: first to last element

    seen = flat_host_array(copy_keeping_layout(wide[:, 2:7]))
    assert seen.size == 55 and np.isnan(seen).sum() == 25  # garbage between the rows


def test_tensor_core_check_explains_an_fma_fallback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Right numbers, but BLOCK_M = 32 is too few rows for a wgmma warpgroup:
    # the sandboxed run reports the compiled layouts and the check says why.
    ex = catalog.find_exercise("18")
    solution = (ex.folder / "solution.py").read_text(encoding="utf-8")
    _cli(capsys, "start", "18", "--workspace", str(tmp_path))
    path = tmp_path / "kernels" / f"{ex.slug}.py"
    path.write_text(solution.replace("BLOCK_M = 64", "BLOCK_M = 32"), encoding="utf-8")
    rc, out = _cli(capsys, "check", "18", "--workspace", str(tmp_path))
    assert rc == 1 and "Traceback" not in out
    assert "✓ K = 72: a ragged K" in out
    assert "✓ tensor cores: on sm_80 the dot gets nvidia_mma v2" in out
    assert "✗ tensor cores: on sm_90a the dot gets nvidia_mma v3" in out
    assert "got nvidia_mma<versionMajor=2" in out and "multiples of 64" in out
    assert "Hint 1 of 3 (the hint for the case that failed" in out
    path.write_text(solution.replace("tl.dot(a, b, acc)", "tl.dot(a, b)"), encoding="utf-8")
    rc, out = _cli(capsys, "check", "18", "--workspace", str(tmp_path))
    assert rc == 1  # the accumulator is dropped: the numbers are wrong, the layouts right
    assert "✓ tensor cores: on sm_90a the dot gets nvidia_mma v3" in out


# ---------------------------------------------------------------- time budgets


def test_an_endless_loop_stops_at_its_case_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from minitriton.course import kernels

    monkeypatch.setattr(kernels, "MIN_BUDGET_S", 1.0)
    ex = catalog.find_exercise("17")
    solution = (ex.folder / "solution.py").read_text(encoding="utf-8")
    looping = solution.replace(
        "    for k in range(start, end, BLOCK):\n",
        "    k = start\n    while k < end:\n",  # the student forgot `k += BLOCK`
    )
    assert looping != solution
    path = tmp_path / f"{ex.slug}.py"
    path.write_text(looping, encoding="utf-8")
    began = time.perf_counter()
    result = check_kernel_file(ex, path, sandbox=False)
    assert time.perf_counter() - began < 6.0  # one budget, not one per case
    first = ex.spec.cases()[0].name
    assert f"case '{first}' stopped with an error:" in result.report
    assert re.search(r"17_spmv_csr.py:\d+:\d+: error: kernel 'spmv_csr_kernel' ran past its "
                     r"time budget of [\d.]+ s", result.report)  # fmt: skip
    assert "at least 1 s" in result.report and "Traceback" not in result.report
    rest = [c.message for c in result.cases[1:]]
    assert rest and all(m == f"not run: case '{first}' ran past its time budget" for m in rest)


def test_case_budgets_scale_with_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    from minitriton.course import kernels

    ex = catalog.find_exercise("05")
    names = [c.name for c in ex.spec.cases()]
    fake = {names[0]: 2.0, names[1]: 0.01}  # seconds the reference took
    monkeypatch.setitem(kernels._measured, (ex.folder / "solution.py").resolve(), fake)
    budgets = kernels.case_budgets(ex, Path("student.py"))
    assert budgets[names[0]] == kernels.BUDGET_FACTOR * 2.0
    assert budgets[names[1]] == budgets[names[2]] == kernels.MIN_BUDGET_S
    assert kernels.case_budgets(ex, ex.folder / "solution.py") == {}  # verify: no budget
