"""The long fuzz run (not in CI): many mutated kernels through the compiler.

    python tests/fuzz/fuzz_long.py --count 100000 --seed 1 [--ptx-every 5] [--jobs 2]

Each input is a mutant of one of the project's kernels (see
:mod:`fuzz_inputs`), compiled to optimized IR, and every ``--ptx-every``-th
on to PTX. The run reports how many compiled, how many gave a diagnostic,
and the failures: internal errors (or messages leaking Python internals)
and compiles past the time limit. The exit status is 1 if any failed; the
first few failing inputs are written to ``--out`` for a regression test.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fuzz_inputs as F  # noqa: E402


def run_chunk(seed: int, start: int, count: int, ptx_every: int, limit: float) -> dict:
    """Inputs ``start .. start+count`` of the stream of ``seed``; counts and failures."""
    stats: Counter[str] = Counter()
    failures: list[tuple[str, str, str, str]] = []
    slowest = 0.0
    for i in range(start, start + count):
        rng = random.Random(f"{seed}:{i}")  # input i is the same whatever the chunking
        name, text = F.mutant(rng)
        stage = "ptx" if ptx_every and i % ptx_every == 0 else "ir-opt"
        began = time.perf_counter()
        try:
            stats[F.check(name, text, stage, limit).kind] += 1
        except F.TooSlow as e:
            stats["hang"] += 1
            failures.append(("hang", name, text, str(e)))
        except F.Internal as e:
            stats["internal"] += 1
            failures.append(("internal", name, text, str(e)))
        slowest = max(slowest, time.perf_counter() - began)
        stats["ptx" if stage == "ptx" else "ir"] += 1
    return {"stats": stats, "failures": failures[:20], "slowest": slowest}


def main(argv: list[str] | None = None) -> int:
    """Run the fuzzer and print its figures."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--ptx-every", type=int, default=5, help="0: never compile to PTX")
    p.add_argument("--limit", type=float, default=10.0, help="seconds per input")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", default="fuzz_failures.txt")
    args = p.parse_args(argv)
    began = time.perf_counter()
    chunk = 250
    starts = range(0, args.count, chunk)
    stats: Counter[str] = Counter()
    failures: list[tuple[str, str, str, str]] = []
    slowest = 0.0
    with ProcessPoolExecutor(args.jobs) as pool:
        jobs = [pool.submit(run_chunk, args.seed, s, min(chunk, args.count - s), args.ptx_every,
                            args.limit) for s in starts]  # fmt: skip
        for done, job in enumerate(jobs, 1):
            result = job.result()
            stats.update(result["stats"])
            failures.extend(result["failures"])
            slowest = max(slowest, result["slowest"])
            if done % 20 == 0:
                print(f"  {done * chunk} inputs, {dict(stats)}", file=sys.stderr, flush=True)
    report(args, stats, failures, slowest, time.perf_counter() - began)
    return 1 if failures else 0


def report(
    args: argparse.Namespace, stats: Counter[str], failures: list, slowest: float, wall: float
) -> None:
    """The table of figures; failing inputs go to ``args.out``."""
    rows = [
        ("inputs", args.count),
        ("  compiled", stats["compiled"]),
        ("  our diagnostic", stats["diagnostic"]),
        ("  internal error or leak", stats["internal"]),
        (f"  past {args.limit:g} s", stats["hang"]),
        ("compiled to IR only", stats["ir"]),
        ("compiled on to PTX", stats["ptx"]),
        ("slowest input (s)", f"{slowest:.2f}"),
        ("wall time (s)", f"{wall:.0f}"),
    ]
    print(f"{'figure':<28} {'value':>10}")
    for label, value in rows:
        print(f"{label:<28} {value:>10}")
    if failures:
        with open(args.out, "w", encoding="utf-8") as f:
            for kind, name, text, message in failures:
                f.write(f"===== {kind} in a mutant of {name}\n{message}\n----- source\n{text}\n")
        print(f"{len(failures)} failing inputs written to {args.out}")


if __name__ == "__main__":
    sys.exit(main())
