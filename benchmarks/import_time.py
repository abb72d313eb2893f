"""Import time: ``import minitriton`` beside ``import triton`` and ``import numpy``.

Each statement runs in 7 fresh Python processes (after one warm-up run, so
that the bytecode is cached as in a user's installation). The script prints,
per statement, the median wall time of the whole process and the median
cumulative time ``python -X importtime`` reports for the imported package
alone, with ``python -c pass`` as the floor every process pays. Triton's row
needs ``triton`` installed (it is imported only in those child processes).
Target: ``import minitriton`` in at most 0.15 s::

    python benchmarks/import_time.py [--runs 7] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 0.15

#: Row name -> the statement a fresh process runs.
STATEMENTS = {
    "python -c pass": "pass",
    "import numpy": "import numpy",
    "import minitriton": "import minitriton",
    "import triton": "import triton",
}


def child_env() -> dict[str, str]:
    """The environment of the runs: bytecode may be written and read, as usual."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_once(statement: str) -> tuple[float, float]:
    """(wall seconds, seconds ``-X importtime`` gives the top-level package) of one process."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        capture_output=True, text=True, env=child_env(), cwd=ROOT, check=True,
    )  # fmt: skip
    wall = time.perf_counter() - start
    package = statement.split()[-1] if statement.startswith("import ") else None
    return wall, package_seconds(proc.stderr, package)


def package_seconds(importtime: str, package: str | None) -> float:
    """The cumulative time of ``package``'s own line in an ``-X importtime`` report (0: none)."""
    for line in importtime.splitlines():
        fields = line.split("|")
        if package and len(fields) == 3 and fields[2].strip() == package and fields[2][1] != " ":
            return int(fields[1]) / 1e6
    return 0.0


def measure(statement: str, runs: int) -> dict[str, float]:
    """The medians of ``runs`` fresh processes running ``statement``."""
    run_once(statement)  # warm-up: writes the bytecode caches
    results = [run_once(statement) for _ in range(runs)]
    return {
        "wall_s": statistics.median(r[0] for r in results),
        "importtime_s": statistics.median(r[1] for r in results),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure every statement and print a table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args(argv)
    rows = {}
    for name, statement in STATEMENTS.items():
        package = statement.split()[-1]
        if statement.startswith("import ") and importlib.util.find_spec(package) is None:
            continue  # triton not installed
        rows[name] = measure(statement, opts.runs)
    if opts.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"median of {opts.runs} fresh processes; target: import minitriton <= {TARGET_S} s")
    print(f"{'':20} {'wall [s]':>9} {'-X importtime [s]':>18}")
    for name, row in rows.items():
        print(f"{name:20} {row['wall_s']:9.3f} {row['importtime_s']:18.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
