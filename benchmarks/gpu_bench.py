"""GPU benchmark: MiniTriton vs Triton vs PyTorch on the same kernel source, in one run.

Run on a machine with an NVIDIA GPU, PyTorch and Triton, from the repo root::

    python benchmarks/gpu_bench.py [--json PATH] [--quick]

The kernels are one Python source text (:data:`KERNEL_SOURCE`: Triton's
tutorials 01, 02 and 05, taken from the kernel library ``tests/kernels/``
that the tests check). It is written to two files that differ only in
their first two lines, ``import triton`` / ``import triton.language as tl``
and ``import minitriton as triton`` / ``import minitriton.language as tl``,
and both are imported, so the two compilers run the very same kernels with
the same launch configuration, in the same process, on the same tensors.
Both go through the full Python launch path, ``kernel[grid](...)``.

Rows: vector add of 2^28 fp32 (BLOCK 1024), fused softmax of 4096x4096 fp32
(tutorial 02's kernel, one program per row), layer-norm forward of 4096x4096
fp32 (tutorial 05). Bandwidth counts bytes read plus bytes written once;
times are medians of ``triton.testing.do_bench``.

Tensor-core rows (``benchmarks/gpu_bench_tc.py``, also runnable alone):
tutorial 03's matmul (fp16 1024^3, 4096^3, 8192^3; bf16 4096^3 and 8192^3;
fp32 with TF32 4096^3; fp8 e4m3 4096^3 with B column-major, against
``torch._scaled_mm``), tutorial 09's descriptor matmul and its persistent
matmuls (through pointers; through descriptors, with epilogue subtiling and
``warp_specialize`` among the configs), and a FlashAttention-2 forward after tutorial 06 (fp16,
Z*H = 32, N = 4096, D = 64 and 128, causal and not), in TFLOP/s, with the
ratio to Triton; ``--only tc`` runs just these, ``--only bandwidth`` skips them.

Also measured:

* host cost of one launch of a cached tiny kernel through ``kernel[grid](...)``
  (MiniTriton and Triton), next to ``cuLaunchKernel`` alone and ``torch.add``;
  MiniTriton's includes the lookup of torch's current stream, which each
  launch of CUDA tensors makes (as Triton's does), and is also measured on a
  side stream (``with torch.cuda.stream(s):``); that lookup alone is timed
  in nanoseconds;
* cold compile of the vector add in fresh processes (``--cold-child``):
  source -> PTX -> module loaded, with CUDA context creation timed apart
  (it is not compilation), the driver's JIT cache off, and the driver's JIT
  tried with other options; Triton's cold compile for comparison.

Floors (exit status 1 when one is missed): bandwidth at least 0.9 of
Triton's in the same run (vector add) or 0.8 (softmax, layer norm); a cached
launch at most 0.8 of Triton's host cost in the same run (host speed moves
both alike); a cold compile under 150 ms.

``--json PATH`` writes ``{"device", "date", "rows": [...], ...}`` in the
format of ``docs/_data/gpu_bench.json``.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_bench_tc  # noqa: E402  (the tensor-core rows, beside this file)
from kernel_library import HEADERS, import_source, kernel_text  # noqa: E402

#: The kernels of Triton's tutorials 01, 02 and 05, from the kernel library.
KERNEL_SOURCE = (
    kernel_text("vector_add", "add_kernel")
    + kernel_text("fused_softmax", "softmax_kernel")
    + kernel_text("layer_norm", "_layer_norm_fwd_fused")
)

FLOORS = {"vector add": 0.9, "fused softmax": 0.8, "layer norm fwd": 0.8}
#: A cached launch through ``kernel[grid](...)`` costs at most this share of
#: Triton's, measured in the same run (host speed moves both alike).
LAUNCH_FLOOR = 0.8
COLD_TARGET_MS = 150.0


def load_kernels(flavor: str, folder: Path) -> ModuleType:
    """Import :data:`KERNEL_SOURCE` under ``flavor``'s two import lines."""
    return import_source(f"gpu_bench_kernels_{flavor}", HEADERS[flavor] + KERNEL_SOURCE, folder)


# ------------------------------------------------------------------ bandwidth rows


def median_ms(fn: Callable[[], Any]) -> float:
    """Median milliseconds of ``fn`` on the GPU (Triton's ``do_bench``)."""
    from triton.testing import do_bench

    return do_bench(fn, warmup=50, rep=300, return_mode="median")


def check(label: str, got: Any, want: Any, rtol: float, atol: float) -> dict[str, Any]:
    """Compare one output with the torch reference."""
    import torch

    ok = bool(torch.allclose(got, want, rtol=rtol, atol=atol))
    return {"what": label, "ok": ok, "max_abs_err": float((got - want).abs().max().item())}


def run_row(
    name: str, shape: str, config: str, nbytes: int, impls: dict[str, Callable[[], Any]],
    checks: Callable[[], list[dict[str, Any]]],
) -> dict[str, Any]:  # fmt: skip
    """Run each implementation once, check it, then time it."""
    import torch

    for fn in impls.values():
        fn()
    torch.cuda.synchronize()
    results = checks()
    ms = {impl: median_ms(fn) for impl, fn in impls.items()}
    gbps = {impl: nbytes / (t * 1e-3) / 1e9 for impl, t in ms.items()}
    return {"kernel": name, "shape": shape, "config": config, "gbps": gbps, "checks": results}


def row_vector_add(mt: ModuleType, tr: ModuleType) -> dict[str, Any]:
    """Tutorial 01: 2^28 fp32, BLOCK 1024, 4 warps (Triton's default)."""
    import torch

    n = 1 << 28
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = {k: torch.empty_like(x) for k in ("minitriton", "triton", "torch")}
    grid = lambda meta: (triton_cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    impls = {
        "minitriton": lambda: mt.add_kernel[grid](x, y, out["minitriton"], n, BLOCK_SIZE=1024),
        "triton": lambda: tr.add_kernel[grid](x, y, out["triton"], n, BLOCK_SIZE=1024),
        "torch": lambda: torch.add(x, y, out=out["torch"]),
    }

    def checks() -> list[dict[str, Any]]:
        ref = x + y
        return [check(f"vector add {k}", out[k], ref, 0, 0) for k in ("minitriton", "triton")]

    return run_row("vector add", "2^28 fp32", "BLOCK 1024, 4 warps", 3 * 4 * n, impls, checks)


def row_softmax(mt: ModuleType, tr: ModuleType, num_warps: int) -> dict[str, Any]:
    """Tutorial 02's kernel, one program per row (its loop runs once), BLOCK 4096."""
    import torch

    m, n = 4096, 4096
    x = torch.randn(m, n, device="cuda")
    out = {k: torch.empty_like(x) for k in ("minitriton", "triton")}

    def launch(mod: ModuleType, y: Any) -> None:
        mod.softmax_kernel[(m, 1, 1)](
            y, x, x.stride(0), y.stride(0), m, n, BLOCK_SIZE=4096, num_stages=2,
            num_warps=num_warps,
        )  # fmt: skip

    impls = {
        "minitriton": lambda: launch(mt, out["minitriton"]),
        "triton": lambda: launch(tr, out["triton"]),
        "torch": lambda: torch.softmax(x, dim=-1),
    }

    def checks() -> list[dict[str, Any]]:
        ref = torch.softmax(x, dim=-1)
        return [check(f"softmax {k}", out[k], ref, 1e-4, 1e-6) for k in out]

    config = f"BLOCK 4096, {num_warps} warps, {m} programs"
    return run_row("fused softmax", "4096x4096 fp32", config, 2 * 4 * m * n, impls, checks)


def row_layer_norm(mt: ModuleType, tr: ModuleType) -> dict[str, Any]:
    """Tutorial 05's forward kernel with its launch choices: BLOCK 4096, 8 warps."""
    import torch

    m, n, eps = 4096, 4096, 1e-5
    x = torch.randn(m, n, device="cuda")
    w, b = torch.rand(n, device="cuda"), torch.randn(n, device="cuda")
    y = {k: torch.empty_like(x) for k in ("minitriton", "triton")}
    stats = {k: (torch.empty(m, device="cuda"), torch.empty(m, device="cuda")) for k in y}

    def launch(mod: ModuleType, key: str) -> None:
        mean, rstd = stats[key]
        mod._layer_norm_fwd_fused[(m,)](
            x, y[key], w, b, mean, rstd, x.stride(0), n, eps, BLOCK_SIZE=4096, num_warps=8
        )

    impls = {
        "minitriton": lambda: launch(mt, "minitriton"),
        "triton": lambda: launch(tr, "triton"),
        "torch": lambda: torch.nn.functional.layer_norm(x, (n,), w, b, eps),
    }

    def checks() -> list[dict[str, Any]]:
        ref = torch.nn.functional.layer_norm(x, (n,), w, b, eps)
        return [check(f"layer norm {k}", y[k], ref, 1e-4, 1e-4) for k in y]

    config = "BLOCK 4096, 8 warps, 4096 programs"
    return run_row("layer norm fwd", "4096x4096 fp32", config, 2 * 4 * m * n, impls, checks)


def triton_cdiv(a: int, b: int) -> int:
    """Ceiling division."""
    return (a + b - 1) // b


# ------------------------------------------------------------------ launch overhead


def per_launch_us(
    cases: dict[str, Callable[[], Any]], count: int = 3000, repeats: int = 7
) -> dict[str, float]:
    """Host microseconds per call of each case: the median of ``repeats`` loops of ``count``.

    The cases are timed in turns (one loop of each, then again), so that a
    slow start (clocks ramping up, the launch queue filling) or a drift
    during the run falls on every case alike, not on whichever came first.
    """
    import torch

    for fn in cases.values():
        for _ in range(200):
            fn()
    torch.cuda.synchronize()
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            t0 = time.perf_counter()
            for _ in range(count):
                fn()
            samples[name].append((time.perf_counter() - t0) / count * 1e6)
            torch.cuda.synchronize()
    return {name: statistics.median(times) for name, times in samples.items()}


def launch_overhead(mt: ModuleType, tr: ModuleType) -> dict[str, float]:
    """Host cost of one launch of the vector add on 1024 elements (one program)."""
    import torch
    from cuda.bindings import driver as cu

    from minitriton.backend import driver

    n = 1024
    x, y, out = (torch.randn(n, device="cuda") for _ in range(3))
    compiled = mt.add_kernel[(1,)](x, y, out, n, BLOCK_SIZE=1024)
    launcher = compiled.binary.load()
    default_impl = launcher.impl
    func, params, block = launcher.func, launcher.array_addr, launcher.block
    c_func, c_params = ctypes.c_void_p(int(func)), ctypes.c_void_p(params)
    by_address = driver._c_launch_kernel()
    exported = ctypes.CDLL("libcuda.so.1")["cuLaunchKernel"]
    exported.restype = ctypes.c_int

    def mt_launch() -> None:
        mt.add_kernel[(1,)](x, y, out, n, BLOCK_SIZE=1024)

    cases: dict[str, Callable[[], Any]] = {
        "minitriton kernel[grid](...)": mt_launch,
        "triton kernel[grid](...)": lambda: tr.add_kernel[(1,)](x, y, out, n, BLOCK_SIZE=1024),
        "minitriton GPUKernel.launch": lambda: compiled.binary.launch((1, 1, 1), [x, y, out, n]),
        "raw cuLaunchKernel, cuda-bindings": lambda: cu.cuLaunchKernel(
            func, 1, 1, 1, block, 1, 1, 0, 0, params, 0
        ),
        "raw cuLaunchKernel, ctypes, exported symbol": lambda: exported(
            c_func, 1, 1, 1, block, 1, 1, 0, None, c_params, None
        ),
        "torch.add": lambda: torch.add(x, y, out=out),
    }
    if by_address is not None:
        cases["raw cuLaunchKernel, ctypes, cuGetProcAddress"] = lambda: by_address(
            c_func, 1, 1, 1, block, 1, 1, 0, None, c_params, None
        )
    result = per_launch_us(cases)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):  # a stream handle other than NULL goes to the driver
        result["minitriton kernel[grid](...), on a side stream"] = per_launch_us(
            {"side": mt_launch}
        )["side"]
    other = "bindings" if default_impl == "ctypes" else "ctypes"
    if launcher.use(other) == other:
        result[f"minitriton kernel[grid](...), {other} launch"] = per_launch_us(
            {"other": mt_launch}
        )["other"]
    print(f"MiniTriton's launcher calls cuLaunchKernel through {default_impl}", flush=True)
    launcher.use(default_impl)
    out.zero_()
    mt_launch()
    torch.cuda.synchronize()
    assert torch.equal(out, x + y), "the fast launch path computed a wrong result"
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        out.zero_()
        mt_launch()
    side.synchronize()
    assert torch.equal(out, x + y), "the fast launch path on a side stream computed a wrong result"
    return result


def stream_lookup_ns(count: int = 200_000, repeats: int = 7) -> dict[str, float]:
    """Nanoseconds per lookup of torch's current stream (best of ``repeats`` loops).

    The first row is the lookup each MiniTriton launch of CUDA tensors makes
    (:func:`minitriton.streams.current_stream_function`, the C function
    Triton's launcher calls too); the second, torch's Python API, for scale.
    """
    import torch

    from minitriton.streams import current_stream_function

    scope = {"lookup": current_stream_function(), "torch": torch}
    statements = {
        "torch._C._cuda_getCurrentRawStream(0) (MiniTriton's lookup)": "lookup(0)",
        "torch.cuda.current_stream().cuda_stream": "torch.cuda.current_stream().cuda_stream",
    }
    return {
        name: min(timeit.repeat(stmt, globals=scope, number=count, repeat=repeats)) / count * 1e9
        for name, stmt in statements.items()
    }


# ------------------------------------------------------------------ cold compile

COLD_ENV = {"MINITRITON_CACHE": "0", "CUDA_CACHE_DISABLE": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def cold_compile() -> dict[str, Any]:
    """Cold compiles in fresh processes; see :func:`cold_child`."""
    out: dict[str, Any] = {}
    for mode in ("minitriton-total", "minitriton-stages", "triton"):
        env = dict(os.environ, **COLD_ENV)
        if mode == "triton":
            env["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton-cold-")
        cmd = [sys.executable, __file__, "--cold-child", mode]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        if proc.returncode != 0:
            out[mode] = {"error": " | ".join(proc.stderr.strip().splitlines()[-4:]) or "?"}
            continue
        out[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def cold_child(mode: str) -> dict[str, Any]:
    """One fresh process: imports and context first (timed apart), then one cold compile."""
    t0 = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="gpu-bench-"))
    if mode == "triton":
        return _cold_triton(folder, t0)
    import numpy as np

    import minitriton
    import minitriton.backend
    import minitriton.frontend.lower
    import minitriton.frontend.parser
    import minitriton.passes.pipeline  # noqa: F401
    from minitriton.backend.driver import ensure_context

    mt = load_kernels("minitriton", folder)
    t1 = time.perf_counter()
    ensure_context()  # cuInit + primary context: not compilation
    t2 = time.perf_counter()
    times = {"imports": (t1 - t0) * 1e3, "CUDA context creation (excluded)": (t2 - t1) * 1e3}
    x = np.zeros(1 << 10, np.float32)
    if mode == "minitriton-total":
        start = time.perf_counter()
        mt.add_kernel.warmup(x, x, x, 1 << 28, BLOCK_SIZE=1024, grid=(1,), backend="gpu")
        times["cold compile: source -> PTX -> loaded"] = (time.perf_counter() - start) * 1e3
        return times
    return times | _cold_stages(mt, x, minitriton)


def _cold_stages(mt: ModuleType, x: Any, minitriton: ModuleType) -> dict[str, float]:
    """The same compile step by step, then the driver's JIT under other options."""
    from minitriton import compiler
    from minitriton.frontend.parser import lark_parser

    fn = mt.add_kernel
    specs = fn.specialize(fn.bind((x, x, x, 1 << 28), {"BLOCK_SIZE": 1024}))
    options = compiler.CompileOptions(arch=minitriton.backend.driver.device_arch())
    stamps = [("start", time.perf_counter())]
    lark_parser()
    stamps.append(("grammar tables (once per process)", time.perf_counter()))
    compiler.parse(fn.source)
    stamps.append(("parse", time.perf_counter()))
    module = compiler.lower(fn.source, specs)
    stamps.append(("lower to IR (the parsed AST reused)", time.perf_counter()))
    module = compiler.optimize(module, options)
    stamps.append(("pass pipeline", time.perf_counter()))
    binary = compiler.codegen(module, options)
    stamps.append(("layouts + LLVM IR + PTX (llvmlite)", time.perf_counter()))
    binary.load()
    stamps.append(("PTX -> loaded (cuModuleLoadData, driver JIT)", time.perf_counter()))
    times = {name: (t - stamps[i][1]) * 1e3 for i, (name, t) in enumerate(stamps[1:])}
    times["sum of the stages"] = (stamps[-1][1] - stamps[0][1]) * 1e3
    return times | jit_variants(binary.ptx, binary.name)


def jit_variants(ptx: str, name: str) -> dict[str, Any]:
    """Milliseconds to load ``ptx`` again under other JIT options (a fresh text each time)."""
    from cuda.bindings import driver as cu

    from minitriton.backend.driver import check

    opt = cu.CUjit_option.CU_JIT_OPTIMIZATION_LEVEL
    out: dict[str, Any] = {}
    for i, level in enumerate((None, 4, 3, 2, 1, 0)):
        text = (ptx + f"\n// variant {i}\n").encode() + b"\0"  # no cache can match
        label = "JIT again, default options" if level is None else (
            f"JIT, CU_JIT_OPTIMIZATION_LEVEL={level}")  # fmt: skip
        start = time.perf_counter()
        try:
            if level is None:
                check(cu.cuModuleLoadData(text), "cuModuleLoadData", name)
            else:
                check(cu.cuModuleLoadDataEx(text, 1, [opt], [level]), "cuModuleLoadDataEx", name)
            out[label] = (time.perf_counter() - start) * 1e3
        except Exception as e:  # a report, not a test: note it and go on
            out[label] = f"error: {e}"
    label = "cuLinkCreate/AddData/Complete + load cubin"
    try:
        out[label] = _link_and_load(ptx + "\n// variant link\n", name)
    except Exception as e:
        out[label] = f"error: {e}"
    return out


def _link_and_load(ptx: str, name: str) -> float:
    from cuda.bindings import driver as cu

    from minitriton.backend.driver import check

    text = ptx.encode() + b"\0"
    start = time.perf_counter()
    state = check(cu.cuLinkCreate(0, [], []), "cuLinkCreate", name)
    kind = cu.CUjitInputType.CU_JIT_INPUT_PTX
    check(cu.cuLinkAddData(state, kind, text, len(text), b"k", 0, [], []), "cuLinkAddData", name)
    cubin, size = check(cu.cuLinkComplete(state), "cuLinkComplete", name)
    image = ctypes.string_at(int(cubin), int(size))
    check(cu.cuLinkDestroy(state), "cuLinkDestroy", name)
    check(cu.cuModuleLoadData(image), "cuModuleLoadData", name)
    return (time.perf_counter() - start) * 1e3


def _cold_triton(folder: Path, t0: float) -> dict[str, float]:
    import torch

    tr = load_kernels("triton", folder)
    t1 = time.perf_counter()
    x = torch.zeros(1 << 10, device="cuda")  # creates the context
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    tr.add_kernel.warmup(x, x, x, 1 << 28, BLOCK_SIZE=1024, grid=(1,))
    t3 = time.perf_counter()
    return {
        "imports": (t1 - t0) * 1e3,
        "CUDA context creation (excluded)": (t2 - t1) * 1e3,
        "cold compile (empty cache dir)": (t3 - t2) * 1e3,
    }


# ------------------------------------------------------------------ report


def device_info() -> dict[str, str]:
    """The GPU, driver and library versions."""
    import torch
    import triton
    from cuda.bindings import driver as cu

    import minitriton
    from minitriton.backend.driver import check, ensure_context

    ensure_context()
    driver = check(cu.cuDriverGetVersion(), "cuDriverGetVersion")
    return {
        "device": torch.cuda.get_device_name(),
        "cuda_driver_api": f"{driver // 1000}.{driver % 1000 // 10}",
        "torch": torch.__version__,
        "triton": triton.__version__,
        "minitriton": minitriton.__version__,
    }


def to_docs_json(
    info: dict, rows: list, overhead: dict, cold: dict, lookup: dict | None = None
) -> dict[str, Any]:
    """The ``docs/_data/gpu_bench.json`` document."""
    out_rows: list[dict[str, Any]] = []
    for r in rows:
        g = r["gbps"]
        out_rows.append({
            "kernel": r["kernel"], "shape": r["shape"], "config": r["config"], "unit": "GB/s",
            "minitriton": round(g["minitriton"], 1), "triton": round(g["triton"], 1),
            "torch": round(g["torch"], 1),
            "notes": f"MiniTriton/Triton {g['minitriton'] / g['triton']:.2f}",
        })  # fmt: skip
    if "minitriton kernel[grid](...)" in overhead:
        out_rows.append({
            "kernel": "launch overhead", "shape": "cached tiny kernel, kernel[grid](...)",
            "unit": "µs per launch (host)",
            "minitriton": round(overhead["minitriton kernel[grid](...)"], 2),
            "triton": round(overhead["triton kernel[grid](...)"], 2),
            "torch": round(overhead["torch.add"], 2),
            "notes": "torch: torch.add; raw cuLaunchKernel (cuda-bindings): "
            f"{overhead['raw cuLaunchKernel, cuda-bindings']:.2f} µs",
        })  # fmt: skip
    total = cold.get("minitriton-total", {}).get("cold compile: source -> PTX -> loaded")
    triton_ms = cold.get("triton", {}).get("cold compile (empty cache dir)")
    if total is not None:
        out_rows.append({
            "kernel": "cold compile", "shape": "vector add, fresh process", "unit": "ms",
            "minitriton": round(total, 1),
            "triton": round(triton_ms, 1) if triton_ms is not None else None,
            "notes": "source -> PTX -> loaded; CUDA context creation excluded",
        })  # fmt: skip
    today = datetime.date.today().isoformat()
    return {"device": info["device"], "date": today, "rows": out_rows, "details": {
        "versions": info, "rows": rows, "launch_overhead_us": overhead, "cold_compile_ms": cold,
        "stream_lookup_ns": lookup or {},
    }}  # fmt: skip


def print_report(info: dict, rows: list, overhead: dict, cold: dict) -> list[str]:
    """Print everything; returns the list of floors missed."""
    missed = []
    print("versions: " + ", ".join(f"{k} {v}" for k, v in info.items()))
    print("\ncorrectness (against torch):")
    for r in rows:
        for c in r["checks"]:
            status = "ok" if c["ok"] else "MISMATCH"
            print(f"  {c['what']:<28} {status} (max abs err {c['max_abs_err']:.2e})")
            if not c["ok"]:
                missed.append(f"{c['what']} mismatch")
    print("\nbandwidth (GB/s, bytes read + written; medians of do_bench):")
    print("| kernel | shape | config | MiniTriton | Triton | torch | MiniTriton / Triton |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        g = r["gbps"]
        ratio = g["minitriton"] / g["triton"]
        print(f"| {r['kernel']} | {r['shape']} | {r['config']} | {g['minitriton']:.0f} "
              f"| {g['triton']:.0f} | {g['torch']:.0f} | {ratio:.2f} |")  # fmt: skip
        if ratio < FLOORS[r["kernel"]]:
            missed.append(
                f"{r['kernel']} ({r['config']}) ratio {ratio:.2f} < {FLOORS[r['kernel']]}"
            )
    print("\nhost cost of one launch, cached tiny kernel (µs):")
    for name, us in overhead.items():
        print(f"  {name:<48} {us:7.2f}")
    ours = overhead.get("minitriton kernel[grid](...)", float("inf"))
    theirs = overhead.get("triton kernel[grid](...)", 0.0)
    if ours > LAUNCH_FLOOR * theirs:
        missed.append(f"launch overhead {ours:.2f} us > {LAUNCH_FLOOR} x Triton's {theirs:.2f} us")
    print("\ncold compile, vector add, fresh processes (ms):")
    for mode, times in cold.items():
        print(f"  [{mode}]")
        for name, value in times.items():
            text = f"{value:9.2f}" if isinstance(value, float) else str(value)
            print(f"    {name:<48} {text}")
    total = cold.get("minitriton-total", {}).get("cold compile: source -> PTX -> loaded")
    if total is None or total > COLD_TARGET_MS:
        missed.append(f"cold compile {total} ms > {COLD_TARGET_MS} ms")
    return missed


def attempt(what: str, fn: Callable[[], Any], fallback: Any) -> Any:
    """``fn()``, or ``fallback`` after printing the error: one failure loses one section."""
    try:
        return fn()
    except Exception:
        print(f"\n{what} FAILED:\n{traceback.format_exc()}", flush=True)
        return fallback


def main(argv: list[str] | None = None) -> int:
    """Run every measurement; status 1 if a floor or a check is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the docs' JSON document here")
    parser.add_argument("--cold-child", help=argparse.SUPPRESS)
    parser.add_argument("--only", choices=("all", "bandwidth", "tc"), default="all")
    args = parser.parse_args(argv)
    if args.cold_child:
        print(json.dumps(cold_child(args.cold_child)))
        return 0
    if args.only == "tc":
        return _tc_rows_only()
    import torch

    import minitriton

    torch.manual_seed(0)
    cold = attempt("cold compile", cold_compile, {})  # first: nothing in this process is warm
    minitriton.set_backend("gpu")
    folder = Path(tempfile.mkdtemp(prefix="gpu-bench-"))
    mt, tr = load_kernels("minitriton", folder), load_kernels("triton", folder)
    info = device_info()
    rows = []
    for name, fn in (
        ("vector add", lambda: row_vector_add(mt, tr)),
        ("softmax, 8 warps", lambda: row_softmax(mt, tr, 8)),
        ("softmax, 16 warps", lambda: row_softmax(mt, tr, 16)),
        ("layer norm", lambda: row_layer_norm(mt, tr)),
    ):
        row = attempt(name, fn, None)
        if row is not None:
            rows.append(row)
            print(f"{name}: " + ", ".join(f"{k} {v:.0f} GB/s" for k, v in row["gbps"].items()))
    overhead = attempt("launch overhead", lambda: launch_overhead(mt, tr), {})
    lookup = attempt("stream lookup", stream_lookup_ns, {})
    missed = print_report(info, rows, overhead, cold)
    print("\nlookup of torch's current stream (ns per lookup):")
    for name, ns in lookup.items():
        print(f"  {name:<64} {ns:7.1f}")
    tc_rows: list[dict[str, Any]] = []
    if args.only == "all":
        tc_rows = attempt("tensor cores", gpu_bench_tc.run_all, [])
        missed += gpu_bench_tc.print_table(tc_rows)
    if args.json:
        doc = to_docs_json(info, rows, overhead, cold, lookup)
        doc["tensor_cores"] = tc_rows  # TFLOP/s and configs per compiler, row by row
        args.json.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    print("\nfloors: " + ("all met" if not missed else "MISSED: " + "; ".join(missed)))
    return 1 if missed else 0


def _tc_rows_only() -> int:
    missed = gpu_bench_tc.print_table(gpu_bench_tc.run_all())
    print("\nfloors: " + ("all met" if not missed else "MISSED: " + "; ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
