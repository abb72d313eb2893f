"""The "many small scripts" row: the end-to-end tests' kernels, run as a student runs them.

Every case of ``tests/e2e/test_e2e_{tutorials,puzzles,apps}.py`` (one test
function with one set of parameters, on the emulator) is one script. The
scripts run one after another, each in a fresh Python process, and a
script's time runs from its first kernel launch to the end of its last check:
the imports and the inputs made before the first launch are left out, every
compile, launch and NumPy reference after it counts. Cases that launch no
kernel are left out.

On Triton's side the same test functions run unchanged through the stand-in
package in ``triton_cpu/`` (``import minitriton as triton`` imports Triton,
NumPy arrays become CPU tensors over the same memory), with
``TRITON_INTERPRET=1``.

Run one script: ``python benchmarks/small_scripts.py --run ID`` prints one
``BENCH-RESULT`` JSON line; ``--list`` prints the ids.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
STAND_IN = HERE / "triton_cpu"
RESULT_TAG = "BENCH-RESULT "
MODULES = ("tests.e2e.test_e2e_tutorials", "tests.e2e.test_e2e_puzzles", "tests.e2e.test_e2e_apps")
#: The seed of the e2e tests' ``rng`` fixture.
RNG_SEED = 20240601
#: Fixtures the runner can provide (the e2e tests use no others).
FIXTURES = ("backend", "rng")


# ---------------------------------------------------------------------------
# The cases: each test function times its parameter sets
# ---------------------------------------------------------------------------


def cases(module: Any) -> Iterator[tuple[str, Callable[..., Any], dict[str, Any]]]:
    """``(id, function, parameters)`` for every case of ``module``'s tests, in file order."""
    tests = [(n, f) for n, f in vars(module).items() if n.startswith("test_") and callable(f)]
    for name, fn in tests:
        wanted = inspect.signature(fn).parameters
        combos = parameter_sets(fn)
        if not combos or any(p not in FIXTURES and p not in combos[0] for p in wanted):
            continue  # needs a fixture the runner does not have
        for i, combo in enumerate(combos):
            yield f"{module.__name__}::{name}[{i}]", fn, combo


def parameter_sets(fn: Callable[..., Any]) -> list[dict[str, Any]]:
    """The product of ``fn``'s ``pytest.mark.parametrize`` marks (GPU-only values dropped)."""
    combos: list[dict[str, Any]] = [{}]
    for mark in getattr(fn, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names, values = mark.args[0], mark.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        expanded = []
        for value in values:
            if hasattr(value, "marks") and hasattr(value, "values"):  # pytest.param(...)
                if any(m.name == "gpu" for m in value.marks):
                    continue
                value = value.values if len(names) > 1 else value.values[0]
            row = dict(zip(names, value)) if len(names) > 1 else {names[0]: value}
            expanded += [{**combo, **row} for combo in combos]
        combos = expanded
    return combos


def script_ids() -> list[str]:
    """Every script's id, in table order."""
    setup_path()
    return [case_id for name in MODULES for case_id, _, _ in cases(importlib.import_module(name))]


def setup_path() -> None:
    """The repository (``tests.kernels``) and ``tests/e2e`` (``philox_ref``) on the path."""
    for path in (str(ROOT / "tests" / "e2e"), str(ROOT)):
        if path not in sys.path:
            sys.path.insert(0, path)


# ---------------------------------------------------------------------------
# One script, in this process
# ---------------------------------------------------------------------------


def time_first_launches(flavor: str) -> list[tuple[float, float]]:
    """Wrap ``kernel[grid]``: the first launch's start (wall, thread CPU time) lands in a list."""
    first: list[tuple[float, float]] = []
    if flavor == "triton":
        from triton.runtime.jit import KernelInterface

        classes: list[type] = [KernelInterface]
    else:
        jit_module = importlib.import_module("minitriton.jit")
        classes = [jit_module.KernelInterface, jit_module.JITFunction]
    for cls in classes:
        original = cls.__getitem__

        def getitem(self: Any, grid: Any, _original: Any = original) -> Any:
            launcher = _original(self, grid)

            def timed(*args: Any, **kwargs: Any) -> Any:
                if not first:
                    first.append((time.perf_counter(), time.thread_time()))
                return launcher(*args, **kwargs)

            return timed

        cls.__getitem__ = getitem
    return first


def run_script(case_id: str) -> dict[str, Any]:
    """Run one case; milliseconds from its first launch to its end."""
    start = time.perf_counter()
    flavor = os.environ.get("BENCH_FLAVOR", "minitriton")
    setup_path()
    import numpy as np
    import numpy.testing  # noqa: F401 - an import (torch makes it on Triton's side)

    import minitriton  # noqa: F401 - Triton itself behind the stand-in

    first = time_first_launches(flavor)
    module_name, rest = case_id.split("::")
    module = importlib.import_module(module_name)
    found = {cid: (fn, combo) for cid, fn, combo in cases(module)}
    fn, combo = found[case_id]
    kwargs = dict(combo)
    params = inspect.signature(fn).parameters
    if "backend" in params:
        kwargs["backend"] = "emulator"
    if "rng" in params:
        kwargs["rng"] = np.random.default_rng(RNG_SEED)
    imported = time.perf_counter()
    fn(**kwargs)
    end, end_cpu = time.perf_counter(), time.thread_time()
    if not first:
        return {"script": case_id, "skipped": "no kernel launch"}
    return {
        "script": case_id,
        "ms": (end - first[0][0]) * 1e3,
        "cpu_ms": (end_cpu - first[0][1]) * 1e3,
        "import_ms": (imported - start) * 1e3,
    }


# ---------------------------------------------------------------------------
# Many scripts, one process each
# ---------------------------------------------------------------------------


def script_env(flavor: str, cache_dir: str | None) -> dict[str, str]:
    """The environment of one script of ``flavor``."""
    env = dict(os.environ, BENCH_FLAVOR=flavor)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a student's Python caches bytecode
    if flavor == "triton":
        env["TRITON_INTERPRET"] = "1"
        env["PYTHONPATH"] = os.pathsep.join([str(STAND_IN), str(ROOT)])
    else:
        env.pop("TRITON_INTERPRET", None)
        env["PYTHONPATH"] = str(ROOT)
    if cache_dir is not None:
        env["MINITRITON_CACHE_DIR"] = cache_dir
        env.pop("MINITRITON_CACHE", None)
    return env


def tagged_record(stdout: str) -> dict[str, Any] | None:
    """The record a child printed as one ``RESULT_TAG`` JSON line, or None."""
    for line in stdout.splitlines():
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG) :])
    return None


def run_scripts(
    python: str, flavor: str, ids: list[str], cache_dir: str | None = None
) -> dict[str, dict[str, Any]]:
    """Run every script in ``ids`` in its own process, one after another."""
    env = script_env(flavor, cache_dir)
    results: dict[str, dict[str, Any]] = {}
    for case_id in ids:
        cmd = [python, str(Path(__file__).resolve()), "--run", case_id]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
        record = tagged_record(proc.stdout) or {"error": f"exited with {proc.returncode}"}
        if "error" in record:
            tail = proc.stderr.strip().splitlines()[-1:] or [""]
            print(f"{flavor} {case_id}: {record['error']} {tail[0]}", file=sys.stderr)
        results[case_id] = record
    return results


def main(argv: list[str] | None = None) -> int:
    """``--run ID`` (one script, in this process) or ``--list``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", help="run one script and print its result")
    parser.add_argument("--list", action="store_true", help="print every script's id")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(script_ids()))
        return 0
    try:
        record = run_script(args.run)
    except Exception as e:  # the parent reports it; the traceback goes to stderr
        traceback.print_exc()
        record = {"script": args.run, "error": f"{type(e).__name__}: {str(e)[:200]}"}
    print(RESULT_TAG + json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
