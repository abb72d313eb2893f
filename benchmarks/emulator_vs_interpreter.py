"""MiniTriton's emulator against Triton's own interpreter, same kernels, same sizes.

Each kernel in ``benchmarks/kernels_src/`` is written once, against Triton's
API, and runs twice, each time in a fresh child process:

* ``triton``: real Triton with ``TRITON_INTERPRET=1`` (its NumPy interpreter,
  on the CPU), arguments as CPU torch tensors;
* ``minitriton``: ``import minitriton as triton``, on the NumPy emulator.

For every row the child launches the kernel once as a warm-up (this first
launch includes MiniTriton's compile), checks the outputs against NumPy,
then times further launches (until ``--min-time`` seconds have passed, at
most ``--max-reps`` launches) and checks again. The table shows the median
time per launch, the speedup and its target: 5x on every row, 20x on the
large-grid row. Run it with a Python that has both Triton and MiniTriton::

    /work/bench-venv/bin/python benchmarks/emulator_vs_interpreter.py

Without Triton (``import triton`` fails, as in CI) only MiniTriton's column is
measured. ``--triton-python`` (or ``$TRITON_PYTHON``) runs the Triton side
with another interpreter; ``--rows softmax,matmul`` picks rows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULT_TAG = "BENCH-RESULT "
FLAVORS = ("triton", "minitriton")

# Both paths go first so a child finds `kernels_src` and this checkout's
# `minitriton` without an install.
sys.path[:0] = [str(HERE), str(ROOT)]

from kernels_src import ROWS  # noqa: E402 - found through the path set above

ROW_BY_MODULE = {row.module: row for row in ROWS}

# ---------------------------------------------------------------------------
# Child: run the rows of one flavor, print one JSON line per row
# ---------------------------------------------------------------------------


def time_launches(launch: Any, min_time: float, max_reps: int) -> list[float]:
    """Seconds per launch, until ``min_time`` has passed or ``max_reps`` launches."""
    times: list[float] = []
    while len(times) < max_reps and sum(times) < min_time:
        start = time.perf_counter()
        launch()
        times.append(time.perf_counter() - start)
    return times


def instrument_minitriton() -> tuple[list[float], float]:
    """Time MiniTriton's compiles exactly; build its grammar up front.

    ``minitriton.jit`` calls ``compile_kernel`` on a cache miss; wrapping that
    name lets the child report compile time apart from run time. The Lark
    grammar is built once per process, so it is built (and timed) here rather
    than inside the first row's compile.
    """
    import importlib

    from minitriton.frontend.parser import lark_parser

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
    start = time.perf_counter()
    lark_parser()
    return spent, time.perf_counter() - start


def run_row(name: str, min_time: float, max_reps: int, compiles: list[float]) -> dict[str, Any]:
    """Set up, warm up, check, time and check one row.

    ``compiles`` collects MiniTriton's compile times (it stays empty for
    Triton, whose interpreter does not compile).
    """
    import importlib

    import numpy as np

    module = importlib.import_module(f"kernels_src.{name}")
    case = module.setup(np.random.default_rng(0))
    compiles.clear()
    start = time.perf_counter()
    case.launch()
    first = time.perf_counter() - start
    case.check()
    times = time_launches(case.launch, min_time, max_reps)
    case.check()
    return {
        "first_ms": first * 1e3,
        "compile_ms": sum(compiles) * 1e3 if compiles else None,
        "median_ms": statistics.median(times) * 1e3,
        "min_ms": min(times) * 1e3,
        "reps": len(times),
    }


def child_main(flavor: str, rows: list[str], min_time: float, max_reps: int) -> int:
    """Run ``rows`` with ``flavor``; an error fails its row, not the others."""
    compiles: list[float] = []
    if flavor == "minitriton":
        compiles, grammar_s = instrument_minitriton()
        print(RESULT_TAG + json.dumps({"grammar_ms": grammar_s * 1e3}), flush=True)
    for name in rows:
        try:
            result = run_row(name, min_time, max_reps, compiles)
        except Exception as e:  # reported in the table, with the traceback on stderr
            traceback.print_exc()
            result = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
        print(RESULT_TAG + json.dumps({"row": name, "flavor": flavor, **result}), flush=True)
    return 0


# ---------------------------------------------------------------------------
# Parent: start the children and print the table
# ---------------------------------------------------------------------------


def child_env(flavor: str) -> dict[str, str]:
    """The environment of a child; Triton reads TRITON_INTERPRET at import."""
    env = dict(os.environ, BENCH_FLAVOR=flavor)
    if flavor == "triton":
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
    return env


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
    python: str, flavor: str, args: argparse.Namespace
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """One child process's results by row name, and its other records.

    The child's stderr passes through, so tracebacks of failing rows show.
    """
    cmd = [python, str(Path(__file__).resolve()), "--child", flavor, "--rows", ",".join(args.rows)]
    cmd += ["--min-time", str(args.min_time), "--max-reps", str(args.max_reps)]
    print(f"running {flavor} ({len(args.rows)} rows)...", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=child_env(flavor))
    rows: dict[str, dict[str, Any]] = {}
    extras: dict[str, Any] = {}
    for line in proc.stdout.splitlines():
        if not line.startswith(RESULT_TAG):
            continue
        record = json.loads(line[len(RESULT_TAG) :])
        if "row" in record:
            rows[record["row"]] = record
        else:
            extras.update(record)
    for name in args.rows:
        rows.setdefault(name, {"error": f"child exited with {proc.returncode}"})
    return rows, extras


def fmt_ms(record: dict[str, Any] | None, key: str = "median_ms") -> str:
    """A time cell: milliseconds, ``FAIL``, or ``-`` when not measured."""
    if record is None or ("error" not in record and record.get(key) is None):
        return "-"
    if "error" in record:
        return "FAIL"
    return f"{record[key]:.1f}"


def speedup(triton: dict[str, Any] | None, mini: dict[str, Any]) -> float | None:
    """Triton's median over MiniTriton's, or ``None`` unless both were measured."""
    if triton is None or "error" in triton or "error" in mini:
        return None
    return triton["median_ms"] / mini["median_ms"]


def table_line(cells: tuple[str, ...], widths: tuple[int, ...], n_text: int = 2) -> str:
    """The first ``n_text`` cells (text) left-aligned, the rest (numbers) right-aligned."""
    parts = [
        c.ljust(w) if i < n_text else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
    ]
    return "  ".join(parts).rstrip()


def print_table(results: dict[str, dict[str, dict]], grammar_ms: float | None) -> None:
    """The comparison table, then first launches and compiles, then errors."""
    triton_rows = results.get("triton", {})
    widths = (22, 17, 16, 13, 8, 6, 4)
    heads = ("row", "size", "Triton interp ms", "MiniTriton ms", "speedup", "target", "met")
    print(table_line(heads, widths))
    for name, mini in results["minitriton"].items():
        row = ROW_BY_MODULE[name]
        tri = triton_rows.get(name)
        ratio = speedup(tri, mini)
        met = "-" if ratio is None else ("yes" if ratio >= row.target else "NO")
        cells = (row.name, row.size, fmt_ms(tri), fmt_ms(mini))
        cells += ("-" if ratio is None else f"{ratio:.1f}x", f"{row.target:g}x", met)
        print(table_line(cells, widths))
    print()
    print("Excluded above: the first (warm-up) launch. Triton's interpreter does not compile;")
    print("MiniTriton's first launch includes its compile, timed on its own in the last column.")
    widths = (22, 16, 13, 14)
    heads = ("row", "Triton first ms", "MT first ms", "MT compile ms")
    print(table_line(heads, widths, n_text=1))
    for name, mini in results["minitriton"].items():
        tri = triton_rows.get(name)
        cells = (ROW_BY_MODULE[name].name, fmt_ms(tri, "first_ms"))
        cells += (fmt_ms(mini, "first_ms"), fmt_ms(mini, "compile_ms"))
        print(table_line(cells, widths, n_text=1))
    if grammar_ms is not None:
        print(f"MiniTriton's grammar build, once per process before the rows: {grammar_ms:.1f} ms")
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
    parser.add_argument("--json", action="store_true", help="print the raw results as JSON")
    parser.add_argument("--child", choices=FLAVORS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = [r for r in args.rows if r not in ROW_BY_MODULE]
    if unknown:
        parser.error(f"unknown rows {unknown}; choose from {', '.join(ROW_BY_MODULE)}")
    if args.child:
        return child_main(args.child, args.rows, args.min_time, args.max_reps)

    results: dict[str, dict[str, dict]] = {}
    results["minitriton"], extras = run_child(sys.executable, "minitriton", args)
    header = [
        "MiniTriton's emulator vs Triton's interpreter (TRITON_INTERPRET=1), on the CPU:",
        f"median of up to {args.max_reps} launches ({args.min_time:g} s) after one warm-up launch.",
        f"  MiniTriton: {sys.executable}: {versions(sys.executable, 'minitriton')}",
    ]
    missing = triton_available(args.triton_python)
    if missing is None:
        results["triton"], _ = run_child(args.triton_python, "triton", args)
        header.append(
            f"  Triton:     {args.triton_python}: {versions(args.triton_python, 'triton')}"
        )
    else:
        header.append(
            f"NOTE: Triton's interpreter is not available ({missing}): only MiniTriton's"
            " column is measured. Install triton and torch to compare (benchmarks/README.md)."
        )
    if args.json:
        print(json.dumps({**results, "minitriton_grammar_ms": extras.get("grammar_ms")}, indent=2))
    else:
        print("\n".join(header) + "\n")
        print_table(results, extras.get("grammar_ms"))
    failed = any("error" in r for rows in results.values() for r in rows.values())
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
