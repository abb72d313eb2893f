"""The long fuzz run (not in CI): many mutated kernels through the compiler.

    python tests/fuzz/fuzz_long.py --count 100000 --seed 1 [--ptx-every 5] [--jobs 2]
                                   [--state fuzz_state.jsonl]

Each input is a mutant of one of the project's kernels (see
:mod:`fuzz_inputs`), compiled to optimized IR, and every ``--ptx-every``-th
on to PTX. The run reports how many compiled, how many gave a diagnostic,
and the failures: internal errors (or messages leaking Python internals)
and compiles past the time limit (CPU time, so that a loaded machine gives
the same verdict). The exit status is 1 if any failed; the first few
failing inputs are written to ``--out`` for a regression test.

Input ``i`` of a seed is the same however the run is chunked, so a run can
stop and resume: every finished chunk of 250 inputs is appended to the
``--state`` file (one JSON line each), and a later run with the same state
file, seed and settings skips the chunks it holds; ``--report`` prints the
figures of the chunks a state file holds, running nothing. ``--only I,J``
re-runs single inputs by number, e.g. the failing ones of an earlier run.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fuzz_inputs as F  # noqa: E402

CHUNK = 250


def run_one(seed: int, i: int, ptx_every: int, limit: float) -> tuple[str, str, str, str]:
    """Input ``i`` of the stream of ``seed``: (kind, seed kernel, source, message)."""
    rng = random.Random(f"{seed}:{i}")  # input i is the same whatever the chunking
    name, text = F.mutant(rng)
    stage = "ptx" if ptx_every and i % ptx_every == 0 else "ir-opt"
    try:
        return F.check(name, text, stage, limit).kind, name, text, ""
    except F.TooSlow as e:
        return "hang", name, text, str(e)
    except F.Internal as e:
        return "internal", name, text, str(e)


def run_inputs(seed: int, numbers: list[int], ptx_every: int, limit: float) -> dict:
    """Run the inputs ``numbers``; counts, failures and the slowest input (CPU seconds)."""
    stats: Counter[str] = Counter()
    failures: list[tuple[int, str, str, str, str]] = []
    slowest, slowest_input = 0.0, -1
    for i in numbers:
        began = time.process_time()
        kind, name, text, message = run_one(seed, i, ptx_every, limit)
        spent = time.process_time() - began
        stats[kind] += 1
        stats["ptx" if ptx_every and i % ptx_every == 0 else "ir"] += 1
        if kind in ("hang", "internal"):
            failures.append((i, kind, name, text, message))
        if spent > slowest:
            slowest, slowest_input = spent, i
    return {"first": numbers[0], "stats": dict(stats), "failures": failures[:20],
            "slowest": slowest, "slowest_input": slowest_input}  # fmt: skip


def load_state(path: Path | None, key: dict) -> dict[int, dict]:
    """The chunks a state file already holds for this seed and settings, by first input."""
    done: dict[int, dict] = {}
    if path is None or not path.exists():
        return done
    text = path.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):  # stopped while writing: end that line
        with path.open("a", encoding="utf-8") as f:
            f.write("\n")
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short when the run was stopped
        if record.get("key") == key:
            done[record["first"]] = record
    return done


def main(argv: list[str] | None = None) -> int:
    """Run the fuzzer and print its figures."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--ptx-every", type=int, default=5, help="0: never compile to PTX")
    p.add_argument("--limit", type=float, default=10.0, help="CPU seconds per input")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--state", type=Path, default=None, help="resume file (JSON lines)")
    p.add_argument("--only", default="", help="comma-separated input numbers to re-run")
    p.add_argument("--report", action="store_true", help="print the state file's figures only")
    p.add_argument("--out", default="fuzz_failures.txt")
    args = p.parse_args(argv)
    began = time.perf_counter()
    if args.only:
        numbers = [int(n) for n in args.only.split(",")]
        results = [run_inputs(args.seed, [n], args.ptx_every, args.limit) for n in numbers]
        args.count = len(numbers)
    elif args.report:
        key = {"seed": args.seed, "ptx_every": args.ptx_every, "limit": args.limit}
        results = list(load_state(args.state, key).values())
    else:
        results = run_chunks(args)
    report(args, results, time.perf_counter() - began)
    return 1 if any(r["failures"] for r in results) else 0


def run_chunks(args: argparse.Namespace) -> list[dict]:
    """All chunks of ``--count`` inputs, those in the state file taken from it."""
    key = {"seed": args.seed, "ptx_every": args.ptx_every, "limit": args.limit}
    done = load_state(args.state, key)
    todo = [s for s in range(0, args.count, CHUNK) if s not in done]
    results = [done[s] for s in sorted(done) if s < args.count]
    print(f"  {len(results)} chunks from the state file, {len(todo)} to run", file=sys.stderr)
    with ProcessPoolExecutor(args.jobs) as pool:
        jobs = [pool.submit(run_inputs, args.seed, list(range(s, min(s + CHUNK, args.count))),
                            args.ptx_every, args.limit) for s in todo]  # fmt: skip
        for n, job in enumerate(jobs, 1):
            result = job.result()
            results.append(result)
            if args.state is not None:
                with args.state.open("a", encoding="utf-8") as f:
                    f.write(json.dumps({"key": key, **result}) + "\n")
            if n % 20 == 0:
                inputs = sum(sum(r["stats"].get(k, 0) for k in ("ir", "ptx")) for r in results)
                print(f"  {inputs} inputs done", file=sys.stderr, flush=True)
    return results


def report(args: argparse.Namespace, results: list[dict], wall: float) -> None:
    """The table of figures; failing inputs go to ``args.out``."""
    stats: Counter[str] = Counter()
    for r in results:
        stats.update(r["stats"])
    failures = [f for r in results for f in r["failures"]]
    worst = max(results, key=lambda r: r["slowest"], default={"slowest": 0.0, "slowest_input": -1})
    rows = [
        ("inputs", sum(stats[k] for k in ("ir", "ptx"))),
        ("  compiled", stats["compiled"]),
        ("  our diagnostic", stats["diagnostic"]),
        ("  internal error or leak", stats["internal"]),
        (f"  past {args.limit:g} s of CPU", stats["hang"]),
        ("compiled to IR only", stats["ir"]),
        ("compiled on to PTX", stats["ptx"]),
        ("slowest input (CPU s)", f"{worst['slowest']:.2f}"),
        ("  its number", worst["slowest_input"]),
        ("wall time (s)", f"{wall:.0f}"),
    ]
    print(f"{'figure':<28} {'value':>10}")
    for label, value in rows:
        print(f"{label:<28} {value:>10}")
    if failures:
        with open(args.out, "w", encoding="utf-8") as f:
            for i, kind, name, text, message in failures:
                f.write(f"===== input {i}: {kind} in a mutant of {name}\n{message}\n")
                f.write(f"----- source\n{text}\n")
        numbers = ",".join(str(f[0]) for f in failures)
        print(f"{len(failures)} failing inputs written to {args.out}: --only {numbers}")


if __name__ == "__main__":
    sys.exit(main())
