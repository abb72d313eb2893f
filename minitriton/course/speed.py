"""The speed report of ``check N --gpu``, for exercises whose spec asks for one.

A spec with ``SPEED = {"shape": (M, N, K), "floor": 0.5}`` (exercise 18)
is timed on the GPU once its cases pass: the student's kernel, the
reference solution, and, when installed, torch's ``a @ b`` (cuBLAS) and the
reference solution compiled by Triton itself. The speed case passes when
the student's kernel reaches ``floor`` times the reference solution's
TFLOP/s.

Each kernel runs in a child process (``python -m minitriton.course.speed
EXERCISE FILE OUT [--baselines]``), like the cases: the student's file is
never imported by the grader. The child checks the result against torch on
the same inputs before it times, and writes only numbers (``speed.json``).
A timing comes from the student's process, so unlike the cases it could be
forged; it is a report for the student, and an instructor who grades on
speed reads the kernel and times it with a script of their own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

from minitriton.course.catalog import COURSE_ENV, Exercise, find_exercise
from minitriton.course.results import CaseResult, CheckResult

TIMEOUT_S = 300
#: Largest relative error (Frobenius norm) accepted before timing: fp16 inputs, fp32 sums.
MAX_REL_ERROR = 1e-2


def add_speed_report(ex: Exercise, path: Path, result: CheckResult) -> None:
    """Time ``path`` and the reference on the GPU; add the speed case and the table."""
    config = getattr(ex.spec, "SPEED", None)
    if config is None or not result.passed:
        return
    reference = ex.folder / "solution.py"
    student = _in_child(ex, path, baselines=not reference.exists())
    ref = _in_child(ex, reference, baselines=True) if reference.exists() else {}
    if "No module named 'torch'" in student.get("error", ""):
        result.note = "\n".join(filter(None, [result.note, "no speed report: it needs torch"]))
        return
    rows = [("your kernel", student)]
    rows += [("reference solution", ref)] if ref else []
    base = ref if ref else student
    rows += [(label, base.get(key, {})) for key, label in _BASELINES.items()]
    result.note = "\n".join(filter(None, [result.note, speed_table(config["shape"], rows)]))
    result.cases.append(speed_case(student, ref, float(config["floor"])))


_BASELINES = {"torch": "torch a @ b (cuBLAS)", "triton": "Triton, the reference's source"}


def speed_case(student: dict[str, Any], ref: dict[str, Any], floor: float) -> CaseResult:
    """The case "speed on the GPU": ``student`` reaches ``floor`` times ``ref``'s TFLOP/s."""
    name = f"speed on the GPU: at least {floor:.0%} of the reference solution's TFLOP/s"
    mine = student.get("tflops")
    if mine is None:
        return CaseResult(name, False, student.get("error") or "your kernel was not timed")
    theirs = ref.get("tflops")
    if theirs is None:
        why = ref.get("error") or "there is no reference solution here"
        return CaseResult(name, True, f"{mine:.1f} TFLOP/s; not compared ({why})")
    ratio = mine / theirs
    message = f"{mine:.1f} TFLOP/s, {ratio:.2f} x the reference's {theirs:.1f}"
    if ratio >= floor:
        return CaseResult(name, True, message)
    return CaseResult(
        name,
        False,
        f"{message}: larger tiles (BLOCK_M, BLOCK_N 128) and BLOCK_K 64 keep the tensor "
        "cores busy; check the ttgir's tt.dot layout (`minitriton exercises check 18`)",
    )


def speed_table(shape: tuple[int, int, int], rows: list[tuple[str, dict[str, Any]]]) -> str:
    """Side by side: who, TFLOP/s, milliseconds (or why there is no number)."""
    m, n, k = shape
    lines = [f"speed on the GPU, fp16 {m} x {n} x {k} (median of do_bench):"]
    for label, row in rows:
        if row.get("tflops") is None:
            lines.append(f"  {label:<34} {'n/a':>8}             {row.get('error', '')}")
        else:
            lines.append(f"  {label:<34} {row['tflops']:8.1f} TFLOP/s {row['ms']:8.3f} ms")
    return "\n".join(lines)


def _in_child(ex: Exercise, path: Path, baselines: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="minitriton-speed-") as tmp:
        cmd = [sys.executable, "-m", __name__, ex.id, str(path), tmp]
        cmd += ["--baselines"] if baselines else []
        env = {**os.environ, COURSE_ENV: str(ex.folder.parents[1])}
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return {"error": f"timing ran for more than {TIMEOUT_S} s"}
        try:
            data = json.loads((Path(tmp) / "speed.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"error": f"the timing run stopped (exit status {proc.returncode})"}
    return _numbers(data) if isinstance(data, dict) else {"error": "no timing"}


def _numbers(data: dict[str, Any]) -> dict[str, Any]:
    """Only the expected keys, with the expected types."""
    out: dict[str, Any] = {}
    for key in ("tflops", "ms"):
        if isinstance(data.get(key), (int, float)) and data[key] > 0:
            out[key] = float(data[key])
    if "tflops" not in out or "ms" not in out:
        out = {"error": str(data.get("error", "no timing"))[:200]}
    for key in _BASELINES:
        if isinstance(data.get(key), dict):
            out[key] = _numbers(data[key])
    return out


# ---------------------------------------------------------------- the child


def _time(kernel_module: Any, shape: tuple[int, int, int], num_warps: int, bench: Any) -> dict:
    import torch

    m, n, k = shape
    torch.manual_seed(18)
    a = torch.randn((m, k), device="cuda", dtype=torch.float16)
    b = torch.randn((k, n), device="cuda", dtype=torch.float16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
    bm, bn, bk = kernel_module.BLOCK_M, kernel_module.BLOCK_N, kernel_module.BLOCK_K
    grid = ((m + bm - 1) // bm, (n + bn - 1) // bn)

    def run() -> None:
        kernel_module.matmul_kernel[grid](
            a, b, c, m, n, k, *a.stride(), *b.stride(), *c.stride(),
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=num_warps,
        )  # fmt: skip

    run()
    torch.cuda.synchronize()
    ref = a.float() @ b.float()
    err = (torch.linalg.norm(c - ref) / torch.linalg.norm(ref)).item()
    if not err <= MAX_REL_ERROR:
        return {"error": f"wrong result at this size (relative error {err:.2g}): not timed"}
    ms = _median_ms(bench, run)
    return {"tflops": 2 * m * n * k / (ms * 1e-3) / 1e12, "ms": ms}


def _median_ms(bench: Any, fn: Any) -> float:
    """The median time of ``fn`` in ms (both do_bench return one float for one quantile)."""
    out = bench(fn, quantiles=[0.5])
    return float(out[0] if isinstance(out, (list, tuple)) else out)


def _torch(shape: tuple[int, int, int], bench: Any) -> dict:
    import torch

    m, n, k = shape
    a = torch.randn((m, k), device="cuda", dtype=torch.float16)
    b = torch.randn((k, n), device="cuda", dtype=torch.float16)
    ms = _median_ms(bench, lambda: a @ b)
    return {"tflops": 2 * m * n * k / (ms * 1e-3) / 1e12, "ms": ms}


def _as_triton(path: Path) -> Any:
    """The file's source compiled by Triton: its imports of minitriton become triton's."""
    source = path.read_text(encoding="utf-8")
    source = source.replace("import minitriton.language as tl", "import triton.language as tl")
    source = source.replace("import minitriton as triton", "import triton")
    folder = Path(tempfile.mkdtemp(prefix="minitriton-triton-"))
    target = folder / "triton_reference.py"  # @triton.jit reads the source from a file
    target.write_text(source, encoding="utf-8")
    module = types.ModuleType("triton_reference")
    module.__file__ = str(target)
    exec(compile(source, str(target), "exec"), module.__dict__)  # noqa: S102 - the reference
    return module


def _guarded(fn: Any, *args: Any) -> dict:
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - a missing baseline is reported, not fatal
        return {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:160]}


def main(argv: list[str]) -> int:
    """The child: ``EXERCISE FILE OUTDIR [--baselines]``."""
    from minitriton.course.kernels import _import_student
    from minitriton.jit import set_backend
    from minitriton.testing import do_bench

    set_backend("gpu")
    ex_id, path, out = argv[:3]
    ex = find_exercise(ex_id)
    shape = tuple(ex.spec.SPEED["shape"])
    warps = getattr(ex.spec, "NUM_WARPS", 4)
    module, error = _import_student(Path(path), ex)
    data = {"error": error} if module is None else _guarded(_time, module, shape, warps, do_bench)
    if "--baselines" in argv[3:]:
        data["torch"] = _guarded(_torch, shape, do_bench)
        try:
            import triton.testing

            triton_module = _as_triton(Path(path))
            data["triton"] = _guarded(_time, triton_module, shape, warps, triton.testing.do_bench)
        except Exception as e:  # noqa: BLE001 - Triton missing, or it rejects the source
            data["triton"] = {"error": f"{type(e).__name__}: {e}"[:160]}
    (Path(out) / "speed.json").write_text(json.dumps(data), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
