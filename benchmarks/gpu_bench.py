"""GPU benchmark: MiniTriton vs Triton vs PyTorch on the same kernels, in one run.

Run on a machine with an NVIDIA GPU, PyTorch and Triton, from the repo root::

    PYTHONPATH=. python benchmarks/gpu_bench.py

Kernels (fp32): vector add of 2^28 elements, softmax of 4096x4096 (one row per
program, BLOCK 4096, 16 warps) and layer-norm forward of 4096x4096 (Triton's
tutorial, BLOCK 4096, 8 warps); all three implementations run the same
algorithm. Bandwidth counts bytes read plus bytes written once. Also measured:
host cost of one launch of a cached tiny kernel, and cold compile time
(IR -> PTX -> module loaded).

The MiniTriton side runs hand-written IR equivalent to the tutorial kernels
(``tests/backend/kernels/*.ir``) because the frontend is not merged yet; it
will switch to ``@minitriton.jit`` kernels once it is. Triton is imported in
this script only.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import torch
import triton
import triton.language as tl
from triton.testing import do_bench

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # appended: a PYTHONPATH entry for minitriton takes precedence

import minitriton.backend as mtb  # noqa: E402
from minitriton.ir.parser import parse_module  # noqa: E402

KERNELS = ROOT / "tests" / "backend" / "kernels"


# ------------------------------------------------------------------ Triton kernels


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + cols, y, mask=mask)


@triton.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


# ------------------------------------------------------------------ helpers


def mt_kernel(name: str, num_warps: int) -> mtb.GPUKernel:
    path = KERNELS / f"{name}.ir"
    return mtb.compile_module(parse_module(path.read_text(), str(path)), num_warps=num_warps)


def median_ms(fn) -> float:
    return do_bench(fn, warmup=50, rep=300, return_mode="median")


def gbps(nbytes: int, ms: float) -> float:
    return nbytes / (ms * 1e-3) / 1e9


def check(name: str, got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float) -> str:
    ok = torch.allclose(got, want, rtol=rtol, atol=atol)
    err = (got - want).abs().max().item()
    return f"{name}: {'ok' if ok else 'MISMATCH'} (max abs err {err:.2e})"


# ------------------------------------------------------------------ cases


def case_vector_add(rows: list, notes: list) -> None:
    n = 1 << 28
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out_mt, out_tr, out_th = (torch.empty_like(x) for _ in range(3))
    k = mt_kernel("vector_add", 4)
    grid = (triton.cdiv(n, 1024), 1, 1)
    impls = {
        "minitriton": lambda: k.launch(grid, [x, y, out_mt, n]),
        "triton": lambda: add_kernel[grid[:1]](x, y, out_tr, n, BLOCK_SIZE=1024),
        "torch": lambda: torch.add(x, y, out=out_th),
    }
    for fn in impls.values():
        fn()
    torch.cuda.synchronize()
    ref = x + y
    notes.append(check("vector add minitriton", out_mt, ref, 0, 0))
    notes.append(check("vector add triton", out_tr, ref, 0, 0))
    record(rows, "vector add 2^28 fp32", 3 * 4 * n, impls)


def case_softmax(rows: list, notes: list) -> None:
    m, n = 4096, 4096
    x = torch.randn(m, n, device="cuda")
    out_mt, out_tr = torch.empty_like(x), torch.empty_like(x)
    k = mt_kernel("softmax", 16)
    impls = {
        "minitriton": lambda: k.launch((m, 1, 1), [out_mt, x, n, n, n]),
        "triton": lambda: softmax_kernel[(m,)](out_tr, x, n, n, n, BLOCK_SIZE=4096, num_warps=16),
        "torch": lambda: torch.softmax(x, dim=-1),
    }
    for fn in impls.values():
        fn()
    torch.cuda.synchronize()
    ref = torch.softmax(x, dim=-1)
    notes.append(check("softmax minitriton", out_mt, ref, 1e-4, 1e-6))
    notes.append(check("softmax triton", out_tr, ref, 1e-4, 1e-6))
    record(rows, "softmax 4096x4096 fp32", 2 * 4 * m * n, impls)


def case_layer_norm(rows: list, notes: list) -> None:
    m, n = 4096, 4096
    x = torch.randn(m, n, device="cuda")
    w, b = torch.rand(n, device="cuda"), torch.randn(n, device="cuda")
    y_mt, y_tr = torch.empty_like(x), torch.empty_like(x)
    stats = [torch.empty(m, device="cuda") for _ in range(4)]
    eps = 1e-5
    k = mt_kernel("layer_norm", 8)
    impls = {
        "minitriton": lambda: k.launch((m, 1, 1), [x, y_mt, w, b, stats[0], stats[1], n, n, eps]),
        "triton": lambda: layer_norm_fwd[(m,)](
            x, y_tr, w, b, stats[2], stats[3], n, n, eps, BLOCK_SIZE=4096, num_warps=8
        ),
        "torch": lambda: torch.nn.functional.layer_norm(x, (n,), w, b, eps),
    }
    for fn in impls.values():
        fn()
    torch.cuda.synchronize()
    ref = torch.nn.functional.layer_norm(x, (n,), w, b, eps)
    notes.append(check("layer norm minitriton", y_mt, ref, 1e-4, 1e-4))
    notes.append(check("layer norm triton", y_tr, ref, 1e-4, 1e-4))
    record(rows, "layer norm fwd 4096x4096 fp32", 2 * 4 * m * n, impls)


def record(rows: list, name: str, nbytes: int, impls: dict) -> None:
    ms = {impl: median_ms(fn) for impl, fn in impls.items()}
    rows.append((name, {impl: gbps(nbytes, t) for impl, t in ms.items()}))


def launch_overhead() -> dict[str, float]:
    """Host microseconds per launch of a tiny cached kernel (one program)."""
    n = 1024
    x, y, out = (torch.randn(n, device="cuda") for _ in range(3))
    k = mt_kernel("vector_add", 4)
    launcher = k.load()
    args = [x, y, out, n]
    raw = launcher._launch

    def mt() -> None:
        k.launch((1, 1, 1), args)

    def tr() -> None:
        add_kernel[(1,)](x, y, out, n, BLOCK_SIZE=1024)

    def raw_launch() -> None:  # cuLaunchKernel alone, parameters already packed
        raw(launcher.func, 1, 1, 1, 128, 1, 1, 0, 0, launcher.array_addr, 0)

    def th() -> None:
        torch.add(x, y, out=out)

    return {
        name: per_launch_us(fn)
        for name, fn in (
            ("minitriton", mt),
            ("triton", tr),
            ("raw cuLaunchKernel", raw_launch),
            ("torch.add", th),
        )
    }


def per_launch_us(fn, count: int = 2000, repeats: int = 5) -> float:
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(count):
            fn()
        samples.append((time.perf_counter() - t0) / count * 1e6)
        torch.cuda.synchronize()
    return statistics.median(samples)


def cold_compile() -> dict[str, float]:
    """Milliseconds from IR text to a loaded module, with no cache."""
    os.environ["MINITRITON_CACHE"] = "0"
    mtb.clear_memory_cache()
    text = (KERNELS / "vector_add.ir").read_text()
    t0 = time.perf_counter()
    module = parse_module(text, "vector_add.ir")
    t1 = time.perf_counter()
    k = mtb.compile_module(module, num_warps=4)
    t2 = time.perf_counter()
    k.load()
    t3 = time.perf_counter()
    k2 = mtb.compile_module(module, num_warps=4)
    t4 = time.perf_counter()
    assert k2 is k
    os.environ.pop("MINITRITON_CACHE")
    return {
        "parse IR": (t1 - t0) * 1e3,
        "IR -> PTX": (t2 - t1) * 1e3,
        "PTX -> loaded (driver JIT)": (t3 - t2) * 1e3,
        "total cold": (t3 - t0) * 1e3,
        "compile_module, memory cache hit": (t4 - t3) * 1e3,
    }


def main() -> None:
    torch.manual_seed(0)
    name = torch.cuda.get_device_name()
    print(f"device: {name}, torch {torch.__version__}, triton {triton.__version__}")
    cold = cold_compile()  # first, so nothing is cached or warm
    rows, notes = [], []
    for case in (case_vector_add, case_softmax, case_layer_norm):
        case(rows, notes)
    overhead = launch_overhead()
    print("\ncorrectness:")
    for note in notes:
        print("  " + note)
    print("\ncold compile of vector add (ms):")
    for name, ms in cold.items():
        print(f"  {name:<36} {ms:8.2f}")
    print("\nhost cost of one launch, tiny cached kernel (us):")
    for name, us in overhead.items():
        print(f"  {name:<36} {us:8.2f}")
    print("\nbandwidth (GB/s, bytes read + written):")
    print(f"  {'kernel':<32} {'minitriton':>11} {'triton':>9} {'torch':>9} {'mt/triton':>10}")
    for name, r in rows:
        mt, tr, th = r["minitriton"], r["triton"], r["torch"]
        print(f"  {name:<32} {mt:11.0f} {tr:9.0f} {th:9.0f} {mt / tr:10.2f}")


if __name__ == "__main__":
    main()
