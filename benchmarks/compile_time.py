"""Cold compile time: the vector add, source to optimized IR, in a fresh process.

Each run starts a new Python process (nothing cached in memory) that

1. imports MiniTriton and the compiler's components (``import``),
2. compiles the kernel library's ``add_kernel`` (``tests/kernels/vector_add.py``) for
   ``*fp32:16, *fp32:16, *fp32:16, i32:16, 1024`` to optimized IR
   (``compile``), timing each stage as it finishes, and
3. compiles the same kernel again (``warm``: grammar and imports cached).

The script prints the median of several runs for each number. Target: under
50 ms for the cold compile (Triton takes about 1.3 s cold)::

    python benchmarks/compile_time.py [--runs 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL_FILE = ROOT / "tests" / "kernels" / "vector_add.py"
SIGNATURE = "*fp32:16, *fp32:16, *fp32:16, i32:16, 1024"

# Runs in the fresh process; prints one JSON object of milliseconds.
CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import minitriton
from minitriton import compiler
import minitriton.frontend.parser, minitriton.frontend.lower, minitriton.passes  # noqa
from minitriton.signature import kernel_params, parse_signature
t1 = time.perf_counter()

import importlib.util
spec = importlib.util.spec_from_file_location("_bench_kernel", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
kernel = module.add_kernel
specs = parse_signature(sys.argv[2], kernel_params(kernel.fn))

stages = {}
def on_stage(name, text, start=time.perf_counter()):
    if not name.startswith("after:"):
        stages[name] = (time.perf_counter() - start) * 1e3

t2 = time.perf_counter()
compiler.compile_kernel(kernel.source, specs, stop_after="ir-opt", on_stage=on_stage)
t3 = time.perf_counter()
compiler.compile_kernel(kernel.source, specs, stop_after="ir-opt")
t4 = time.perf_counter()
t5 = time.perf_counter()
minitriton.frontend.parser.lark_parser.cache_clear()
minitriton.frontend.parser.lark_parser()
t6 = time.perf_counter()
print(json.dumps({
    "import": (t1 - t0) * 1e3,
    "compile": (t3 - t2) * 1e3,
    "import+compile": (t3 - t0) * 1e3 - (t2 - t1) * 1e3,
    "warm compile": (t4 - t3) * 1e3,
    "grammar build": (t6 - t5) * 1e3,
    **{f"  until {k}": v for k, v in stages.items()},
}))
"""


def one_run() -> dict[str, float]:
    """Timings (ms) of one fresh process."""
    cmd = [sys.executable, "-c", CHILD, str(KERNEL_FILE), SIGNATURE]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"benchmark process failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh processes to time")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    runs = [one_run() for _ in range(args.runs)]
    medians = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    if args.json:
        print(json.dumps(medians, indent=2))
        return 0
    print(f"vector add -> optimized IR, median of {args.runs} fresh processes:")
    for name, ms in medians.items():
        print(f"  {name:<22} {ms:8.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
