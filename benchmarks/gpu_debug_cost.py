"""What debug mode costs on the GPU: the same launches with ``debug=False`` and ``debug=True``.

Run on a machine with an NVIDIA GPU, PyTorch and Triton (for ``do_bench``),
from the repository root::

    python benchmarks/gpu_debug_cost.py [--json PATH]

Rows, with the kernels and launch settings of ``gpu_bench.py`` and
``gpu_bench_tc.py`` (Triton's tutorials 01, 02, 05 and 03): vector add of
2^28 fp32, fused softmax and layer-norm forward of 4096x4096 and
16384x4096 fp32, and the fp16 matmul at 4096^3 (128x128x64 blocks, 4 warps,
4 stages). The outputs of the checked launches must equal the unchecked ones.

Two figures per row, both ways, in the same process on the same tensors:

* **full path**: ``kernel[grid](...)`` back to back, medians of
  ``triton.testing.do_bench``. A debug launch includes what the host does
  after it: it waits for the kernel and reads the error record's first
  word, so the next launch cannot overlap it;
* **kernel**: the GPU time of the kernel alone (the profiler's kernel
  durations), which is what the checks themselves cost.

Their difference on the debug side is debug mode's fixed cost per launch
(the host's wait and read, and the launch latency no longer hidden). The
goal is a slowdown of at most 1.5x on the memory-bound rows, full path.

A third figure, **off, waited for**, times the plain launch followed by
``torch.cuda.synchronize()``: the least that any check read back after each
launch costs, since the host must wait for the kernel before it can raise.
Where that alone passes 1.5x, the goal is out of reach of a synchronous report.

A fourth, **deferred**, is the debug launch with ``MINITRITON_DEBUG=async``:
the launch returns at once and a failed check is raised at the next debug
launch or by ``minitriton.backend.synchronize()``. The goal is judged on it;
the waited-for debug launch is shown beside its floor.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_bench  # noqa: E402  (the kernels, beside this file)
import gpu_bench_tc  # noqa: E402

MEMORY_BOUND_GOAL = 1.5


def cdiv(a: int, b: int) -> int:
    """Ceiling division."""
    return (a + b - 1) // b


def vector_add(mt: Any) -> tuple[str, Callable[[bool], Any]]:
    """Tutorial 01, 2^28 fp32, BLOCK 1024."""
    import torch

    n = 1 << 28
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)

    def run(debug: bool) -> Any:
        mt.add_kernel[(cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024, debug=debug)
        return out

    return "vector add 2^28 fp32", run


def softmax(mt: Any, m: int = 4096) -> tuple[str, Callable[[bool], Any]]:
    """Tutorial 02, ``m`` x 4096 fp32, one program per row, 8 warps."""
    import torch

    n = 4096
    x = torch.randn(m, n, device="cuda")
    y = torch.empty_like(x)

    def run(debug: bool) -> Any:
        mt.softmax_kernel[(m, 1, 1)](
            y, x, x.stride(0), y.stride(0), m, n, BLOCK_SIZE=4096, num_stages=2, num_warps=8,
            debug=debug,
        )  # fmt: skip
        return y

    return f"fused softmax {m}x{n} fp32", run


def layer_norm(mt: Any, m: int = 4096) -> tuple[str, Callable[[bool], Any]]:
    """Tutorial 05's forward, ``m`` x 4096 fp32, BLOCK 4096, 8 warps."""
    import torch

    n = 4096
    x = torch.randn(m, n, device="cuda")
    w, b = torch.rand(n, device="cuda"), torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    mean, rstd = torch.empty(m, device="cuda"), torch.empty(m, device="cuda")

    def run(debug: bool) -> Any:
        mt._layer_norm_fwd_fused[(m,)](
            x, y, w, b, mean, rstd, x.stride(0), n, 1e-5, BLOCK_SIZE=4096, num_warps=8,
            debug=debug,
        )  # fmt: skip
        return y

    return f"layer norm fwd {m}x{n} fp32", run


def matmul(tc: Any) -> tuple[str, Callable[[bool], Any]]:
    """Tutorial 03, fp16 4096^3, fp32 accumulation."""
    import torch

    n = 4096
    a = torch.randn((n, n), device="cuda").half()
    b = torch.randn((n, n), device="cuda").half()
    c = torch.empty((n, n), device="cuda", dtype=torch.float16)
    bm, bn, bk, warps, stages = 128, 128, 64, 4, 4

    def run(debug: bool) -> Any:
        tc.matmul_kernel[(cdiv(n, bm) * cdiv(n, bn),)](
            a, b, c, n, n, n, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
            c.stride(0), c.stride(1), BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
            GROUP_SIZE_M=8, num_warps=warps, num_stages=stages, debug=debug,
        )  # fmt: skip
        return c

    return "matmul fp16 4096^3", run


def measure(name: str, run: Callable[[bool], Any], memory_bound: bool) -> dict[str, Any]:
    """Both timings of one row, both ways, and whether the outputs agree."""
    import torch
    from triton.testing import do_bench

    plain = run(False).clone()
    checked = run(True).clone()
    torch.cuda.synchronize()
    same = bool(torch.equal(plain, checked))
    ms = {d: do_bench(lambda d=d: run(d), warmup=25, rep=200, return_mode="median")
          for d in (False, True)}  # fmt: skip
    # What any check read after each launch costs at the least: the plain launch, waited for.
    synced = do_bench(lambda: (run(False), torch.cuda.synchronize()), warmup=25, rep=200,
                      return_mode="median")  # fmt: skip
    deferred = deferred_ms(run)
    kernel = {d: kernel_ms(run, d) for d in (False, True)}
    return {"row": name, "off_ms": ms[False], "debug_ms": ms[True],
            "slowdown": ms[True] / ms[False], "kernel_off_ms": kernel[False],
            "kernel_debug_ms": kernel[True], "kernel_slowdown": kernel[True] / kernel[False],
            "fixed_us": 1000 * (ms[True] - kernel[True]), "same_output": same,
            "memory_bound": memory_bound, "synced_ms": synced,
            "synced_slowdown": synced / ms[False], "deferred_ms": deferred,
            "deferred_slowdown": deferred / ms[False]}  # fmt: skip


def deferred_ms(run: Callable[[bool], Any]) -> float:
    """The debug launch's median with ``MINITRITON_DEBUG=async`` (reports deferred)."""
    from triton.testing import do_bench

    from minitriton.backend import synchronize

    before = os.environ.get("MINITRITON_DEBUG")
    os.environ["MINITRITON_DEBUG"] = "async"
    try:
        ms = do_bench(lambda: run(True), warmup=25, rep=200, return_mode="median")
        synchronize()  # every deferred report read: none may have failed
    finally:
        if before is None:
            del os.environ["MINITRITON_DEBUG"]
        else:
            os.environ["MINITRITON_DEBUG"] = before
    return ms


def kernel_ms(run: Callable[[bool], Any], debug: bool, launches: int = 50) -> float:
    """The mean GPU time of the kernel ``run(debug)`` launches, from the profiler."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    run(debug)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(launches):
            run(debug)
        torch.cuda.synchronize()
    # Kernels only: a debug launch's 8-byte read of the record is a copy.
    events = [e for e in prof.key_averages() if e.device_type.name == "CUDA"
              and "Memcpy" not in e.key and "Memset" not in e.key]  # fmt: skip
    total_us = sum(e.device_time_total for e in events)
    return total_us / 1000 / max(1, sum(e.count for e in events))


def main(argv: list[str] | None = None) -> int:
    """Run every row, print the table, return 1 if a memory-bound row misses the goal."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="minitriton-debug-cost-"))
    mt = gpu_bench.load_kernels("minitriton", folder)
    tc = gpu_bench_tc.load("minitriton", folder)
    makers = [(lambda: vector_add(mt), True), (lambda: softmax(mt), True),
              (lambda: softmax(mt, 16384), True), (lambda: layer_norm(mt), True),
              (lambda: layer_norm(mt, 16384), True), (lambda: matmul(tc), False)]  # fmt: skip
    rows = []
    for make, memory_bound in makers:
        name, run = make()
        rows.append(measure(name, run, memory_bound))
        print(f"  measured {name}", flush=True)
    print(
        "\n| row | full path off (ms) | debug, waited for (ms) | slowdown | off, waited for (ms) "
        "| its slowdown | debug, deferred (ms) | slowdown | kernel off (ms) | kernel debug (ms) "
        "| kernel slowdown | same output | goal (deferred) |"
    )
    print("| --- " + "| ---: " * 10 + "| --- | --- |")
    missed = False
    for r in rows:
        goal = f"<= {MEMORY_BOUND_GOAL}x" if r["memory_bound"] else "-"
        if r["memory_bound"] and r["deferred_slowdown"] > MEMORY_BOUND_GOAL:
            missed = True
            goal += " MISSED"
        same = "yes" if r["same_output"] else "NO"
        print(
            f"| {r['row']} | {r['off_ms']:.3f} | {r['debug_ms']:.3f} | {r['slowdown']:.2f}x "
            f"| {r['synced_ms']:.3f} | {r['synced_slowdown']:.2f}x | {r['deferred_ms']:.3f} "
            f"| {r['deferred_slowdown']:.2f}x | {r['kernel_off_ms']:.3f} "
            f"| {r['kernel_debug_ms']:.3f} | {r['kernel_slowdown']:.2f}x | {same} | {goal} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 1 if missed or not all(r["same_output"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
