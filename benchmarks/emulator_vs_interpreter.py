"""MiniTriton's emulator against Triton's own interpreter, same kernels, same sizes.

Each kernel in ``benchmarks/kernels_src/`` is written once, against Triton's
API, and every row runs in fresh child processes:

* ``triton``: real Triton with ``TRITON_INTERPRET=1`` (its NumPy interpreter,
  on the CPU), arguments as CPU torch tensors;
* ``minitriton``: ``import minitriton as triton``, on the NumPy emulator,
  twice: with an empty disk cache (``cold``: the first launch compiles) and
  again with the cache the first process filled (``warm``).

A child imports the row's kernel, launches it once (the *first launch in a
fresh process*, compile included, imports excluded), checks the outputs
against NumPy, then times further launches (until ``--min-time`` seconds have
passed, at most ``--max-reps`` launches) and checks again. The tables show
the median time per launch, the first launches, and the "many small
scripts" row (:mod:`small_scripts`): the end-to-end tests run as a student
runs scripts, one fresh process each, from the first launch to the last
result. Run it with a Python that has MiniTriton, and Triton's in a separate
venv::

    python benchmarks/emulator_vs_interpreter.py --triton-python PATH/TO/VENV/bin/python

Without Triton (``import triton`` fails, as in CI) only MiniTriton's columns
are measured. ``--rows softmax,matmul`` picks rows; ``--no-scripts`` leaves
the scripts row out.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()  # the child's imports count from here

import argparse  # noqa: E402
import functools  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import traceback  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FLAVORS = ("triton", "minitriton")
#: Targets of the first-launch and scripts figures (see benchmarks/README.md).
FIRST_COLD_MS, FIRST_WARM_MS, SECOND_SPEC_MS = 15.0, 3.0, 5.0
SCRIPTS_COLD_X, SCRIPTS_WARM_X = 4.0, 10.0

# Both paths go first so a child finds `kernels_src` and this checkout's
# `minitriton` without an install.
sys.path[:0] = [str(HERE), str(ROOT)]

import small_scripts  # noqa: E402 - found through the path set above
from kernels_src import ROWS  # noqa: E402

ROW_BY_MODULE = {row.module: row for row in ROWS}
RESULT_TAG = small_scripts.RESULT_TAG  # the tag of a child's one result line

# ---------------------------------------------------------------------------
# Child: run one row of one flavor, print one JSON line
# ---------------------------------------------------------------------------


def time_launches(launch: Any, min_time: float, max_reps: int) -> list[float]:
    """Seconds per launch, until ``min_time`` has passed or ``max_reps`` launches."""
    times: list[float] = []
    while len(times) < max_reps and sum(times) < min_time:
        start = time.perf_counter()
        launch()
        times.append(time.perf_counter() - start)
    return times


def instrument_minitriton() -> list[float]:
    """Time MiniTriton's compiles exactly (a disk-cache hit compiles nothing).

    ``minitriton.jit`` calls ``compile_kernel`` when neither its memory nor
    its disk cache has the specialization; wrapping that name lets the child
    report compile time apart from run time.
    """
    import importlib

    # `minitriton.jit` the attribute is the decorator; the module is in sys.modules.
    jit_module = importlib.import_module("minitriton.jit")
    spent: list[float] = []
    original = jit_module.compile_kernel

    def timed_compile(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    jit_module.compile_kernel = timed_compile
    return spent


def run_row(
    name: str, min_time: float, max_reps: int, compiles: list[float], first_only: bool
) -> dict[str, Any]:
    """Import, set up, launch once, check; then (unless ``first_only``) time and check.

    ``compiles`` collects MiniTriton's compile times (it stays empty for
    Triton, whose interpreter does not compile, and for disk-cache hits).
    """
    import importlib

    import numpy as np

    module = importlib.import_module(f"kernels_src.{name}")
    imported = time.perf_counter()
    case = module.setup(np.random.default_rng(0))
    compiles.clear()
    pauses = CollectorPauses()
    gc.callbacks.append(pauses)
    start, start_cpu = time.perf_counter(), time.thread_time()
    case.launch()
    first, first_cpu = time.perf_counter() - start, time.thread_time() - start_cpu
    gc.callbacks.remove(pauses)
    case.check()
    record = {
        "import_ms": (imported - STARTED) * 1e3,
        "first_ms": first * 1e3,
        "first_cpu_ms": first_cpu * 1e3,
        "first_gc_ms": sum(w for w, _ in pauses.spent) * 1e3,
        "compile_ms": sum(compiles) * 1e3 if compiles else None,
    }
    if first_only:
        return record
    times = time_launches(case.launch, min_time, max_reps)
    case.check()
    record |= {
        "median_ms": statistics.median(times) * 1e3,
        "min_ms": min(times) * 1e3,
        "reps": len(times),
    }
    if case.respecialize is not None:
        wall, cpu, collector = time_respecialization(case.respecialize)
        record |= {"second_spec_ms": wall, "second_spec_cpu_ms": cpu}
        record["second_spec_gc_ms"], record["second_spec_gc_cpu_ms"] = collector
    return record


def time_respecialization(launch: Any) -> tuple[float, float, tuple[float, float]]:
    """What a new specialization adds: its first launch minus the fastest of three more.

    In wall-clock milliseconds, in CPU milliseconds of this thread, and the
    milliseconds (wall, CPU) of the first launch spent in Python's cyclic
    garbage collector (a collection falls wherever the process's allocations
    since the last one reach its threshold, mostly the imports' doing).
    """
    walls, cpus = [], []
    pauses = CollectorPauses()
    for i in range(4):
        if i == 0:
            gc.callbacks.append(pauses)
        start, start_cpu = time.perf_counter(), time.thread_time()
        launch()
        walls.append(time.perf_counter() - start)
        cpus.append(time.thread_time() - start_cpu)
        if i == 0:
            gc.callbacks.remove(pauses)
    wall = (walls[0] - min(walls[1:])) * 1e3
    collector = (sum(w for w, _ in pauses.spent) * 1e3, sum(c for _, c in pauses.spent) * 1e3)
    return wall, (cpus[0] - min(cpus[1:])) * 1e3, collector


class CollectorPauses:
    """A ``gc.callbacks`` entry that keeps each collection's seconds (wall, thread CPU)."""

    def __init__(self) -> None:
        self.spent: list[tuple[float, float]] = []
        self._start = (0.0, 0.0)

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        now = (time.perf_counter(), time.thread_time())
        if phase == "start":
            self._start = now
        else:
            self.spent.append((now[0] - self._start[0], now[1] - self._start[1]))


def child_main(flavor: str, rows: list[str], args: argparse.Namespace) -> int:
    """Run ``rows`` with ``flavor``; an error fails its row, not the others."""
    compiles = instrument_minitriton() if flavor == "minitriton" else []
    for name in rows:
        try:
            result = run_row(name, args.min_time, args.max_reps, compiles, args.first_only)
        except Exception as e:  # reported in the table, with the traceback on stderr
            traceback.print_exc()
            result = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
        print(RESULT_TAG + json.dumps({"row": name, "flavor": flavor, **result}), flush=True)
    return 0


# ---------------------------------------------------------------------------
# Parent: start the children and print the tables
# ---------------------------------------------------------------------------


def child_env(flavor: str, cache_dir: str | None = None) -> dict[str, str]:
    """The environment of a child; Triton reads TRITON_INTERPRET at import.

    Bytecode caching stays on, as for any user (``PYTHONDONTWRITEBYTECODE``
    is dropped); MiniTriton's children get their own disk cache folder.
    """
    env = dict(os.environ, BENCH_FLAVOR=flavor)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if flavor == "triton":
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
    if cache_dir is not None:
        env["MINITRITON_CACHE_DIR"] = cache_dir
        env.pop("MINITRITON_CACHE", None)
    # A student's script names no backend: without a GPU the children take
    # that default path (finding out that there is no GPU is part of the
    # first launch); with one, they are sent to the emulator.
    env.pop("MINITRITON_BACKEND", None)
    if gpu_present():
        env["MINITRITON_BACKEND"] = "emulator"
    return env


@functools.cache
def gpu_present() -> bool:
    """True when MiniTriton would choose the GPU backend on this machine."""
    from minitriton.jit import gpu_available

    return gpu_available()


def triton_available(python: str) -> str | None:
    """``None`` if ``python`` can import Triton and torch, else why not."""
    probe = "import torch, triton; print(triton.__version__, torch.__version__)"
    try:
        result = subprocess.run(
            [python, "-c", probe], capture_output=True, text=True, env=child_env("triton")
        )
    except OSError as e:
        return f"cannot run {python}: {e}"
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines()
        return lines[-1] if lines else f"{python} exited with {result.returncode}"
    return None


def versions(python: str, flavor: str) -> str:
    """A one-line description of the child's software, for the table's header."""
    code = {
        "triton": "import triton, torch, numpy; "
        "print(f'triton {triton.__version__}, torch {torch.__version__}, "
        "numpy {numpy.__version__}')",
        "minitriton": "import minitriton, numpy; "
        "print(f'minitriton {minitriton.__version__}, numpy {numpy.__version__}')",
    }[flavor]
    env = child_env(flavor)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    result = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)
    return result.stdout.strip() or "unknown versions"


def run_child(
    python: str, flavor: str, row: str, args: argparse.Namespace,
    cache_dir: str | None = None, first_only: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """One fresh child process for one row; its record.

    The child's stderr passes through, so tracebacks of failing rows show.
    """
    cmd = [python, str(Path(__file__).resolve()), "--child", flavor, "--rows", row]
    cmd += ["--min-time", str(args.min_time), "--max-reps", str(args.max_reps)]
    cmd += ["--first-only"] if first_only else []
    env = child_env(flavor, cache_dir)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env)
    return small_scripts.tagged_record(proc.stdout) or {
        "error": f"child exited with {proc.returncode}"
    }


def run_minitriton_row(row: str, args: argparse.Namespace) -> dict[str, Any]:
    """A row's cold child (empty disk cache) and its warm child (the cache it filled)."""
    cache_dir = tempfile.mkdtemp(prefix="minitriton-bench-cache-")
    try:
        cold = run_child(sys.executable, "minitriton", row, args, cache_dir)
        warm = run_child(sys.executable, "minitriton", row, args, cache_dir, first_only=True)
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    if "error" in warm and "error" not in cold:
        cold = {**cold, "error": f"warm: {warm['error']}"}
    return {**cold, "warm": warm}


#: Runs a gallery script as ``python SCRIPT`` would, timing its first kernel launch.
SCRIPT_WRAPPER = """
import importlib, json, runpy, sys, time
import minitriton  # the script's own first import, made a line early
jit = importlib.import_module("minitriton.jit")
first = []
real_getitem = jit.JITFunction.__getitem__

def timed_getitem(self, grid):
    launcher = real_getitem(self, grid)
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return launcher(*args, **kwargs)
        finally:
            first.append((time.perf_counter() - start) * 1e3)
    return timed

jit.JITFunction.__getitem__ = timed_getitem
sys.argv = [sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
print(RESULT_TAG + json.dumps({"first_ms": first[0], "backend": minitriton.get_backend()}))
"""
TUTORIAL_SCRIPT = ROOT / "examples" / "vector_add.py"


def run_tutorial_script() -> dict[str, Any]:
    """Tutorial 01 (``examples/vector_add.py``) as a student runs it: twice, cold then warm.

    The script runs unchanged, in a fresh process with nothing imported
    before it but MiniTriton, on the default backend (no GPU here: the
    emulator); only its first launch is timed.
    """
    cache_dir = tempfile.mkdtemp(prefix="minitriton-bench-cache-")
    try:
        return {side: run_script_once(cache_dir) for side in ("cold", "warm")}
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)


def run_script_once(cache_dir: str) -> dict[str, Any]:
    """One fresh ``python`` running :data:`TUTORIAL_SCRIPT` under :data:`SCRIPT_WRAPPER`."""
    code = SCRIPT_WRAPPER.replace("RESULT_TAG", repr(RESULT_TAG))
    cmd = [sys.executable, "-c", code, str(TUTORIAL_SCRIPT)]
    env = child_env("minitriton", cache_dir)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    return small_scripts.tagged_record(proc.stdout) or {
        "error": f"{TUTORIAL_SCRIPT.name} exited with {proc.returncode}"
    }


def repeated(run: Any, times: int) -> dict[str, Any]:
    """``run()``'s record, or with ``times`` > 1 the median of each figure over that many runs.

    On a machine shared with other work one fresh process can be slowed by
    tens of percent; the median of a few is steadier. A failed run fails the row.
    """
    records = [run() for _ in range(max(times, 1))]
    failed = [r for r in records if "error" in r]
    return failed[0] if failed else median_record(records)


def median_record(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Every number the median over ``records``; nested records (``warm``) likewise."""
    out: dict[str, Any] = {}
    for key, first in records[0].items():
        values = [r.get(key) for r in records]
        if isinstance(first, dict):
            out[key] = median_record([v for v in values if isinstance(v, dict)])
        elif isinstance(first, (int, float)) and not isinstance(first, bool):
            numbers = [v for v in values if isinstance(v, (int, float))]
            out[key] = statistics.median(numbers)
        else:
            out[key] = first
    return out


def run_all_scripts(args: argparse.Namespace, with_triton: bool) -> dict[str, Any]:
    """The scripts row: MiniTriton cold then warm (one disk cache), then Triton."""
    ids = small_scripts.script_ids()
    print(f"running {len(ids)} small scripts...", file=sys.stderr, flush=True)
    cache_dir = tempfile.mkdtemp(prefix="minitriton-bench-cache-")
    try:
        runs = {
            "cold": small_scripts.run_scripts(sys.executable, "minitriton", ids, cache_dir),
            "warm": small_scripts.run_scripts(sys.executable, "minitriton", ids, cache_dir),
        }
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    if with_triton:
        runs["triton"] = small_scripts.run_scripts(args.triton_python, "triton", ids)
    return runs


def summarize_scripts(runs: dict[str, dict[str, dict]]) -> dict[str, Any]:
    """Totals over the scripts that ran on every side (a script without a launch is left out)."""
    ids = list(runs["cold"])
    timed = [i for i in ids if all("ms" in run.get(i, {}) for run in runs.values())]
    failed = {side: sorted(i for i, r in run.items() if "error" in r) for side, run in runs.items()}
    totals = {side: sum(run[i]["ms"] for i in timed) / 1e3 for side, run in runs.items()}
    cpu = {side: sum(run[i]["cpu_ms"] for i in timed) / 1e3 for side, run in runs.items()}
    return {"scripts": len(timed), "total_s": totals, "cpu_s": cpu, "failed": failed}


def fmt_ms(record: dict[str, Any] | None, key: str = "median_ms") -> str:
    """A time cell: milliseconds, ``FAIL``, or ``-`` when not measured."""
    if record is None or ("error" not in record and record.get(key) is None):
        return "-"
    if "error" in record:
        return "FAIL"
    return f"{record[key]:.1f}"


def ratio(triton: dict[str, Any] | None, mini: dict[str, Any], key: str = "median_ms") -> str:
    """Triton's time over MiniTriton's, as ``12.3x``, or ``-`` unless both were measured."""
    if triton is None or "error" in triton or "error" in mini or mini.get(key) is None:
        return "-"
    return f"{triton[key] / mini[key]:.1f}x"


def table_line(cells: tuple[str, ...], widths: tuple[int, ...], n_text: int = 2) -> str:
    """The first ``n_text`` cells (text) left-aligned, the rest (numbers) right-aligned."""
    parts = [
        c.ljust(w) if i < n_text else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
    ]
    return "  ".join(parts).rstrip()


def met(value: float | None, ok: bool) -> str:
    """``yes``/``NO`` for a measured figure, ``-`` for a missing one."""
    return "-" if value is None else ("yes" if ok else "NO")


def print_steady_table(results: dict[str, dict[str, dict]]) -> None:
    """The median launch, as before: the first launch excluded."""
    triton_rows = results.get("triton", {})
    widths = (22, 17, 16, 13, 8, 6, 4)
    heads = ("row", "size", "Triton interp ms", "MiniTriton ms", "speedup", "target", "met")
    print(table_line(heads, widths))
    for name, mini in results["minitriton"].items():
        row = ROW_BY_MODULE[name]
        tri = triton_rows.get(name)
        cell = ratio(tri, mini)
        value = None if cell == "-" else float(cell[:-1])
        cells = (row.name, row.size, fmt_ms(tri), fmt_ms(mini), cell, f"{row.target:g}x")
        print(table_line(cells + (met(value, (value or 0) >= row.target),), widths))


def print_first_table(results: dict[str, dict[str, dict]]) -> None:
    """First launches in fresh processes (compile included, imports excluded)."""
    triton_rows = results.get("triton", {})
    print("First launch in a fresh process, compile included, imports excluded (ms):")
    widths = (22, 13, 8, 8, 11, 8, 8)
    heads = ("row", "Triton first", "MT cold", "MT warm", "MT compile", "x cold", "x warm")
    print(table_line(heads, widths, n_text=1))
    for name, mini in results["minitriton"].items():
        tri, warm = triton_rows.get(name), mini.get("warm", {})
        cells = (ROW_BY_MODULE[name].name, fmt_ms(tri, "first_ms"), fmt_ms(mini, "first_ms"))
        cells += (fmt_ms(warm, "first_ms"), fmt_ms(mini, "compile_ms"))
        cells += (ratio(tri, mini, "first_ms"), ratio(tri, warm, "first_ms"))
        print(table_line(cells, widths, n_text=1))
    print_first_targets(results)


def print_first_targets(results: dict[str, dict[str, dict]]) -> None:
    """The vector add's first launches and second specialization against their targets."""
    mini = results["minitriton"].get("vector_add")
    if mini is None or "error" in mini:
        return
    cold, warm = mini["first_ms"], mini["warm"]["first_ms"]
    second = mini.get("second_spec_ms")
    print(f"vector add first launch: cold {cold:.1f} ms (target <= {FIRST_COLD_MS:g}: "
          f"{met(cold, cold <= FIRST_COLD_MS)}), warm disk cache {warm:.1f} ms "
          f"(target <= {FIRST_WARM_MS:g}: {met(warm, warm <= FIRST_WARM_MS)})")  # fmt: skip
    script = results.get("tutorial_script", {})
    if script and not any("error" in r for r in script.values()):
        cold_s, warm_s = script["cold"]["first_ms"], script["warm"]["first_ms"]
        print(f"  as a script ({TUTORIAL_SCRIPT.relative_to(ROOT)}, run by python, on the "
              f"default backend, {script['warm']['backend']}): cold {cold_s:.1f} ms (target: "
              f"{met(cold_s, cold_s <= FIRST_COLD_MS)}), warm disk cache {warm_s:.1f} ms "
              f"(target: {met(warm_s, warm_s <= FIRST_WARM_MS)})")  # fmt: skip
    cpu_cold, cpu_warm = mini["first_cpu_ms"], mini["warm"]["first_cpu_ms"]
    print(f"  the same in CPU time of the launching thread (without time the machine gave"
          f" others): cold {cpu_cold:.1f} ms, warm {cpu_warm:.1f} ms")  # fmt: skip
    if "first_gc_ms" in mini:
        print(f"  of which in Python's garbage collector: cold {mini['first_gc_ms']:.1f} ms, "
              f"warm {mini['warm']['first_gc_ms']:.1f} ms")  # fmt: skip
    if second is not None:
        ok = met(second, second <= SECOND_SPEC_MS)
        print(f"vector add second specialization (BLOCK 512) adds {second:.1f} ms "
              f"(target <= {SECOND_SPEC_MS:g}: {ok}); CPU time "
              f"{mini['second_spec_cpu_ms']:.1f} ms")  # fmt: skip
        if mini.get("second_spec_gc_ms") is not None:
            gc_wall, gc_cpu = mini["second_spec_gc_ms"], mini["second_spec_gc_cpu_ms"]
            print(f"  of its first launch, {gc_wall:.1f} ms (CPU {gc_cpu:.1f} ms) "
                  "in Python's garbage collector")  # fmt: skip
    tri = results.get("triton", {}).get("vector_add", {})
    imports = [f"MiniTriton {mini['import_ms']:.0f} ms cold, {mini['warm']['import_ms']:.0f} warm"]
    if "import_ms" in tri:
        imports.append(f"Triton {tri['import_ms']:.0f} ms")
    print("imports before the first launch (vector add child): " + "; ".join(imports))


def print_scripts_table(summary: dict[str, Any]) -> None:
    """The "many small scripts" row."""
    totals = summary["total_s"]
    tri = totals.get("triton")
    print(f"Many small scripts: {summary['scripts']} end-to-end test cases, one fresh process")
    print("each, from the first launch to the last result, summed (s):")
    widths = (20, 9, 8, 8, 12, 12)
    heads = ("row", "Triton", "MT cold", "MT warm", "x cold (4x)", "x warm (10x)")
    print(table_line(heads, widths, n_text=1))
    cells = ["many small scripts", "-" if tri is None else f"{tri:.2f}"]
    cells += [f"{totals['cold']:.2f}", f"{totals['warm']:.2f}"]
    for side, target in (("cold", SCRIPTS_COLD_X), ("warm", SCRIPTS_WARM_X)):
        x = None if tri is None or not totals[side] else tri / totals[side]
        cells.append("-" if x is None else f"{x:.1f}x {met(x, x >= target)}")
    print(table_line(tuple(cells), widths, n_text=1))
    cpu = summary.get("cpu_s", {})
    if cpu:
        parts = ", ".join(f"{side} {value:.2f}" for side, value in cpu.items())
        print(f"  the same in CPU time of the scripts' threads (s): {parts}")
    for side, failed in summary["failed"].items():
        if failed:
            print(f"failed on {side} (left out of every total): {', '.join(failed)}")


def print_tables(results: dict[str, dict[str, dict]], scripts: dict[str, Any] | None) -> None:
    """Every table, then the errors."""
    print_steady_table(results)
    print()
    print_first_table(results)
    if scripts is not None:
        print()
        print_scripts_table(scripts)
    for flavor, rows in results.items():
        for name, record in rows.items():
            if "error" in record:
                print(f"ERROR {flavor} {name}: {record['error']}")


def main(argv: list[str] | None = None) -> int:
    """Parse arguments; run as the parent or as one flavor's child."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows",
        default=",".join(ROW_BY_MODULE),
        help="comma-separated, of: " + ", ".join(ROW_BY_MODULE),
    )
    parser.add_argument(
        "--min-time", type=float, default=1.0, help="seconds of timed launches per row"
    )
    parser.add_argument("--max-reps", type=int, default=5, help="most timed launches per row")
    parser.add_argument("--triton-python", default=os.environ.get("TRITON_PYTHON", sys.executable))
    parser.add_argument("--no-scripts", action="store_true", help="leave the scripts row out")
    parser.add_argument(
        "--repeat", type=int, default=1, metavar="N",
        help="run every row's children N times and report the median of each figure",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the raw results as JSON")
    parser.add_argument("--json-out", metavar="FILE", help="also write the raw results to FILE")
    parser.add_argument("--child", choices=FLAVORS, help=argparse.SUPPRESS)
    parser.add_argument("--first-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = [r for r in args.rows if r not in ROW_BY_MODULE]
    if unknown:
        parser.error(f"unknown rows {unknown}; choose from {', '.join(ROW_BY_MODULE)}")
    if args.child:
        return child_main(args.child, args.rows, args)
    return parent_main(args)


def parent_main(args: argparse.Namespace) -> int:
    """Run every row's children and the scripts, then print the tables."""
    header = [
        "MiniTriton's emulator vs Triton's interpreter (TRITON_INTERPRET=1), on the CPU:",
        f"median of up to {args.max_reps} launches ({args.min_time:g} s) after one first launch.",
        f"  MiniTriton: {versions(sys.executable, 'minitriton')}",
        "  backend: " + ("the emulator, chosen by MINITRITON_BACKEND (a GPU is present)"
                         if gpu_present() else "the default one (no GPU here: the emulator)"),
    ]  # fmt: skip
    missing = triton_available(args.triton_python)
    results: dict[str, dict[str, dict]] = {"minitriton": {}}
    if args.repeat > 1:
        header.append(f"every figure: the median of {args.repeat} runs of the row's children.")
    print(f"running minitriton ({len(args.rows)} rows)...", file=sys.stderr, flush=True)
    for row in args.rows:
        results["minitriton"][row] = repeated(partial(run_minitriton_row, row, args), args.repeat)
    if "vector_add" in args.rows:
        results["tutorial_script"] = repeated(run_tutorial_script, args.repeat)
    if missing is None:
        header.append(f"  Triton:     {versions(args.triton_python, 'triton')}")
        print(f"running triton ({len(args.rows)} rows)...", file=sys.stderr, flush=True)
        triton_row = partial(run_child, args.triton_python, "triton")
        results["triton"] = {row: repeated(partial(triton_row, row, args), args.repeat)
                             for row in args.rows}  # fmt: skip
    else:
        header.append(
            f"NOTE: Triton's interpreter is not available ({missing}): only MiniTriton's"
            " columns are measured. Install triton and torch to compare (benchmarks/README.md)."
        )
    runs = None if args.no_scripts else run_all_scripts(args, missing is None)
    scripts = None if runs is None else summarize_scripts(runs)
    raw = json.dumps({**results, "scripts": scripts, "script_runs": runs}, indent=2)
    if args.json_out:
        Path(args.json_out).write_text(raw + "\n", encoding="utf-8")
    if args.json:
        print(raw)
    else:
        print("\n".join(header) + "\n")
        print_tables(results, scripts)
    failed = any("error" in r for rows in results.values() for r in rows.values())
    failed = failed or bool(scripts and (scripts["failed"]["cold"] or scripts["failed"]["warm"]))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
