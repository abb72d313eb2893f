"""What debug mode costs on the GPU: the same launches with ``debug=False`` and ``debug=True``.

Run on a machine with an NVIDIA GPU, PyTorch and Triton (for ``do_bench``),
from the repository root::

    python benchmarks/gpu_debug_cost.py [--json PATH]

Rows, with the kernels and launch settings of ``gpu_bench.py`` and
``gpu_bench_tc.py`` (Triton's tutorials 01, 02, 05 and 03): vector add of
2^28 fp32, fused softmax and layer-norm forward of 4096x4096 fp32, and the
fp16 matmul at 4096^3 (128x128x64 blocks, 4 warps, 4 stages). Each row is
timed through the full ``kernel[grid](...)`` path, both ways, in the same
process on the same tensors; times are medians of ``triton.testing.do_bench``.
A debug launch includes what the host does after it: a synchronize and an
8-byte read of the error record. The checked outputs must equal the
unchecked ones. The goal is a slowdown of at most 1.5x on the memory-bound
rows.
"""

from __future__ import annotations

import argparse
import json
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


def softmax(mt: Any) -> tuple[str, Callable[[bool], Any]]:
    """Tutorial 02, 4096x4096 fp32, one program per row, 8 warps."""
    import torch

    m = n = 4096
    x = torch.randn(m, n, device="cuda")
    y = torch.empty_like(x)

    def run(debug: bool) -> Any:
        mt.softmax_kernel[(m, 1, 1)](
            y, x, x.stride(0), y.stride(0), m, n, BLOCK_SIZE=4096, num_stages=2, num_warps=8,
            debug=debug,
        )  # fmt: skip
        return y

    return "fused softmax 4096x4096 fp32", run


def layer_norm(mt: Any) -> tuple[str, Callable[[bool], Any]]:
    """Tutorial 05's forward, 4096x4096 fp32, BLOCK 4096, 8 warps."""
    import torch

    m = n = 4096
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

    return "layer norm fwd 4096x4096 fp32", run


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
    """Both timings of one row, and whether the outputs agree."""
    import torch
    from triton.testing import do_bench

    plain = run(False).clone()
    checked = run(True).clone()
    torch.cuda.synchronize()
    same = bool(torch.equal(plain, checked))
    ms = {d: do_bench(lambda d=d: run(d), warmup=25, rep=200, return_mode="median")
          for d in (False, True)}  # fmt: skip
    ratio = ms[True] / ms[False]
    return {"row": name, "off_ms": ms[False], "debug_ms": ms[True], "slowdown": ratio,
            "same_output": same, "memory_bound": memory_bound}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run every row, print the table, return 1 if a memory-bound row misses the goal."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="minitriton-debug-cost-"))
    mt = gpu_bench.load_kernels("minitriton", folder)
    tc = gpu_bench_tc.load("minitriton", folder)
    makers = [(vector_add, mt, True), (softmax, mt, True), (layer_norm, mt, True),
              (matmul, tc, False)]  # fmt: skip
    rows = []
    for make, mod, memory_bound in makers:
        name, run = make(mod)
        rows.append(measure(name, run, memory_bound))
        print(f"  measured {name}", flush=True)
    print("\n| row | debug off (ms) | debug on (ms) | slowdown | same output | goal |")
    print("| --- | ---: | ---: | ---: | --- | --- |")
    missed = False
    for r in rows:
        goal = f"<= {MEMORY_BOUND_GOAL}x" if r["memory_bound"] else "-"
        if r["memory_bound"] and r["slowdown"] > MEMORY_BOUND_GOAL:
            missed = True
            goal += " MISSED"
        same = "yes" if r["same_output"] else "NO"
        print(f"| {r['row']} | {r['off_ms']:.3f} | {r['debug_ms']:.3f} | "
              f"{r['slowdown']:.2f}x | {same} | {goal} |")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 1 if missed or not all(r["same_output"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
