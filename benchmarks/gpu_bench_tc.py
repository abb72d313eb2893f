"""Tensor-core rows of ``benchmarks/gpu_bench.py``: matmul and FlashAttention forward.

Run alone with ``python benchmarks/gpu_bench_tc.py`` (or through
``gpu_bench.py``, which prints these rows after its bandwidth rows). The same
kernel source (:data:`TC_SOURCE`: tutorial 03's matmul, tutorial 06's
attention forward; :data:`DESC_SOURCE`: tutorial 09's matmul through host-side
tensor descriptors, ``python benchmarks/gpu_bench_tc.py descriptor`` alone;
:data:`PERSISTENT_SOURCE`: tutorial 09's persistent matmuls, through pointers
and through descriptors with epilogue subtiling and ``warp_specialize``,
``python benchmarks/gpu_bench_tc.py persistent`` alone;
``python benchmarks/gpu_bench_tc.py tma``: the descriptor and block-pointer
matmuls with TMA on and off, :mod:`gpu_bench_tma`) is
imported under ``import triton`` and under
``import minitriton as triton``; both run on the same tensors with the same
launch configurations. For each row, each compiler gets the best of the
same few fixed configurations (block sizes, warps, stages); TFLOP/s are
from medians of ``triton.testing.do_bench``, the two compilers' best
configurations and torch's call then timed again in alternation
(:func:`head_to_head`), so that clock drift during the run does not favour
one of them. Every result is checked
against torch before it is timed, on fresh random inputs, into a poisoned
output.

Options (for MiniTriton only; Triton keeps its own choices)::

    python benchmarks/gpu_bench_tc.py matmul --arch sm_80 --rows "fp16 4096"
    python benchmarks/gpu_bench_tc.py matmul --arch sm_80 --stages 1 --rows "fp16 4096"

``--arch`` compiles MiniTriton's kernels for another arch (``sm_80``: the
``mma.sync`` path, whose PTX the H200 JIT-compiles), ``--stages`` replaces
every config's ``num_stages`` (1: no software pipelining), ``--rows`` keeps
the matmul rows named (comma-separated ``dtype size``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernel_library import HEADERS as LIBRARY_HEADERS  # noqa: E402
from kernel_library import import_source, kernel_text  # noqa: E402

#: Each flavor's import lines, and its host-side tensor descriptor.
_DESCRIPTOR = "from {}.tools.tensor_descriptor import TensorDescriptor\n"
HEADERS = {flavor: head + _DESCRIPTOR.format(flavor) for flavor, head in LIBRARY_HEADERS.items()}

#: Tutorial 03's matmul (autotune and activation cut) and tutorial 06's forward
#: pass, from the kernel library (``tests/kernels/tc_kernels.py``).
TC_SOURCE = kernel_text("tc_kernels", "matmul_kernel", "_attn_fwd_inner", "_attn_fwd")

#: Tutorial 09's descriptor matmul (C = A @ B.T through host-side TensorDescriptors):
#: the library's kernel and its host code.
DESC_SOURCE = (
    kernel_text("tc_kernels", "matmul_kernel_tma")
    + """


def descriptor_matmul(a, b, c, bm, bn, bk, warps, stages):
    M, K = a.shape
    N = b.shape[0]
    a_desc = TensorDescriptor.from_tensor(a, [bm, bk])
    b_desc = TensorDescriptor.from_tensor(b, [bn, bk])
    c_desc = TensorDescriptor.from_tensor(c, [bm, bn])
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    return lambda: matmul_kernel_tma[grid](
        a_desc, b_desc, c_desc, M, N, K, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
        GROUP_SIZE_M=8, num_warps=warps, num_stages=stages)
"""
)

#: Persistent matmuls in tutorial 09's style (one program per SM looping over tiles),
#: through pointers and through host-side descriptors, with their host code.
PERSISTENT_SOURCE = (
    kernel_text("persistent_matmul", "tile_coords", "persistent_matmul", "persistent_desc_matmul")
    + """


def persistent_ptr_matmul(a, b, c, sms, bm, bn, bk, warps, stages):
    M, K = a.shape
    N = b.shape[1]
    grid = (min(sms, triton.cdiv(M, bm) * triton.cdiv(N, bn)),)
    return lambda: persistent_matmul[grid](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
        c.stride(1), BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=8,
        NUM_SMS=sms, num_warps=warps, num_stages=stages)


def persistent_descriptor_matmul(a, b, c, sms, bm, bn, bk, warps, stages, subtile, ws):
    M, K = a.shape
    N = b.shape[0]
    a_desc = TensorDescriptor.from_tensor(a, [bm, bk])
    b_desc = TensorDescriptor.from_tensor(b, [bn, bk])
    c_desc = TensorDescriptor.from_tensor(c, [bm, bn // 2 if subtile else bn])
    grid = (min(sms, triton.cdiv(M, bm) * triton.cdiv(N, bn)),)
    return lambda: persistent_desc_matmul[grid](
        a_desc, b_desc, c_desc, M, N, K, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
        GROUP_SIZE_M=8, EPILOGUE_SUBTILE=subtile, NUM_SMS=sms, WARP_SPECIALIZE=ws,
        num_warps=warps, num_stages=stages)
"""
)

#: (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages); both compilers get the best of these.
MATMUL_CONFIGS = {
    "fp16": [(128, 256, 64, 8, 3), (128, 128, 64, 4, 4), (128, 128, 64, 8, 3), (64, 128, 64, 4, 4)],
    "fp32": [(128, 128, 32, 8, 3), (128, 64, 32, 4, 3), (64, 128, 32, 4, 4)],
    "fp8": [(128, 256, 128, 8, 3), (128, 128, 128, 4, 4), (128, 128, 128, 8, 3)],
}
#: The persistent descriptor matmul's configs: the fp16 ones with and without
#: epilogue subtiling and warp specialization.
PERSISTENT_DESC_CONFIGS = [
    (*cfg, subtile, ws)
    for cfg in MATMUL_CONFIGS["fp16"][:3]
    for subtile in (False, True)
    for ws in (False, True)
]
#: (BLOCK_M, BLOCK_N, warps, stages, maxnreg) per head dim. Each D=64 config is also
#: tried with its registers capped where shared memory would hold one more program per
#: multiprocessor (168 a thread for 4 warps: three programs; 128 for 8 warps: two). At
#: D=128 three stages allow one program whatever the registers; two stages of (128, 64)
#: take 96 KB, so two programs fit when capped at 128 registers (ptxas: no spills).
ATTN_CONFIGS = {
    64: [
        (128, 64, 4, 3, None),
        (128, 128, 8, 3, None),
        (128, 64, 4, 3, 168),
        (128, 128, 8, 3, 128),
    ],
    128: [(128, 64, 8, 3, None), (128, 128, 8, 3, None), (128, 64, 8, 2, 128)],
}
MATMUL_ROWS = [("fp16", 1024), ("fp16", 4096), ("fp16", 8192), ("bf16", 4096), ("bf16", 8192),
               ("fp32", 4096), ("fp8", 4096)]  # fmt: skip
#: Tutorial 03 with ``accumulator += tl.dot(a, b)`` (``PLUS_EQUALS=True``), fp16.
PLUS_EQUALS_ROWS = [4096]
PERSISTENT_ROWS = [4096]
DESC_ROWS = [4096]
ATTN_ROWS = [(64, False), (64, True), (128, False), (128, True)]
#: MiniTriton-only launch options (``--arch``, ``--stages``), set by the command line.
MT_OPTIONS: dict[str, Any] = {}

FLOORS = {"matmul fp16 1024": 0.6, "matmul fp16 4096": 0.7, "matmul fp16 8192": 0.7,
          "matmul fp32 4096": 0.7, "attention": 0.6}  # fmt: skip


def load(flavor: str, folder: Path) -> ModuleType:
    """Import :data:`TC_SOURCE` under ``flavor``'s two import lines."""
    source = HEADERS[flavor] + TC_SOURCE + DESC_SOURCE + PERSISTENT_SOURCE
    return import_source(f"gpu_bench_tc_{flavor}", source, folder)


def median_ms(fn: Callable[[], Any]) -> float:
    """Median milliseconds of ``fn`` (Triton's ``do_bench``)."""
    from triton.testing import do_bench

    return do_bench(fn, warmup=25, rep=100, return_mode="median")


#: Rounds of :func:`head_to_head`.
ROUNDS = 5


def head_to_head(fns: dict[str, Callable[[], Any] | None]) -> dict[str, float]:
    """Median milliseconds of each function over :data:`ROUNDS` rounds in which they take turns.

    The GPU's clocks drift during a run (Triton's own figure for one row moved
    by 8% between two runs on an H200): each compiler's best configuration is
    timed again, alternating with the others', so that both run under the
    same conditions. ``None`` (no configuration ran) gives infinity.
    """
    from triton.testing import do_bench

    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            ms = do_bench(fn, warmup=10, rep=40, return_mode="median") if fn else float("inf")
            times[name].append(ms)
    return {name: statistics.median(ts) for name, ts in times.items()}


def fill(out: dict[str, Any], winners: dict[str, Callable[[], Any] | None], flops: float) -> None:
    """``out["tflops"]`` from :func:`head_to_head` of each compiler's winner and torch's call."""
    for name, ms in head_to_head(winners).items():
        out["tflops"][name] = flops / (ms * 1e-3) / 1e12


def best(configs: list, launch: Callable[[Any], Callable[[], Any]], check: Callable[[], bool]):
    """``(ms, config, ok, fn)`` of the fastest config that runs and checks out."""
    found: tuple[float, Any, bool, Any] = (float("inf"), None, False, None)
    for cfg in configs:
        try:
            fn = launch(cfg)
            fn()
            ok = check()
            ms = median_ms(fn)
        except Exception as e:  # one failing config must not lose the row
            print(f"    config {cfg} failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
            continue
        print(f"    config {cfg}: {ms:.3f} ms, check {'ok' if ok else 'MISMATCH'}", flush=True)
        if ok and ms < found[0]:
            found = (ms, cfg, ok, fn)
    return found


def matmul_row(
    mods: dict[str, ModuleType], dtype_name: str, n: int, plus_equals: bool = False
) -> dict[str, Any]:
    """One matmul row: n x n x n, fp32 (TF32) accumulation, output in the input type."""
    import torch

    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32,
             "fp8": torch.float8_e4m3fn}[dtype_name]  # fmt: skip
    a = torch.randn((n, n), device="cuda").to(dtype)
    # fp8 (e4m3) takes B column-major, as tutorial 03 does: wgmma reads fp8 K-major only.
    b = torch.randn((n, n), device="cuda").to(dtype)
    b = b.T.contiguous().T if dtype_name == "fp8" else b
    ref = (a.double() @ b.double()).float()
    tol = {"fp16": 1e-2, "bf16": 2e-2, "fp32": 5e-3, "fp8": 2e-2}[dtype_name]
    flops = 2.0 * n**3
    label = f"matmul {dtype_name} {n}" + (" (acc +=)" if plus_equals else "")
    out: dict[str, Any] = {"kernel": label, "tflops": {}, "config": {}}
    configs = MATMUL_CONFIGS[dtype_name if dtype_name in ("fp32", "fp8") else "fp16"]
    out_dtype = torch.float16 if dtype_name == "fp8" else dtype
    winners: dict[str, Callable[[], Any] | None] = {}
    for name, mod in mods.items():
        c = torch.full((n, n), float("nan"), device="cuda", dtype=out_dtype)

        def launch(cfg, mod=mod, c=c, name=name):
            bm, bn, bk, warps, stages = cfg
            grid = (triton_cdiv(n, bm) * triton_cdiv(n, bn),)
            opts = {"num_warps": warps, "num_stages": stages}
            if name == "minitriton":
                opts.update(MT_OPTIONS)
            if plus_equals:
                opts["PLUS_EQUALS"] = True
            return lambda: mod.matmul_kernel[grid](
                a, b, c, n, n, n, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                c.stride(0), c.stride(1), BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
                GROUP_SIZE_M=8, **opts)  # fmt: skip

        def check(c=c) -> bool:
            torch.cuda.synchronize()
            err = (torch.linalg.norm(c.float() - ref) / torch.linalg.norm(ref)).item()
            return err < tol

        print(f"  {out['kernel']} [{name}]", flush=True)
        _, cfg, _, winners[name] = best(configs, launch, check)
        out["config"][name] = cfg
    torch.backends.cuda.matmul.allow_tf32 = True
    winners["torch"] = _torch_matmul(a, b, dtype_name)
    fill(out, winners, flops)
    return out


def _torch_matmul(a: Any, b: Any, dtype_name: str) -> Callable[[], Any]:
    """torch's matmul of ``a`` and ``b`` (cuBLAS; for fp8, ``torch._scaled_mm`` to fp16)."""
    import torch

    if dtype_name != "fp8":
        return lambda: a @ b
    one = torch.ones((), device="cuda", dtype=torch.float32)
    return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.float16)


def persistent_matmul_row(mods: dict[str, ModuleType], n: int, descriptors: bool) -> dict[str, Any]:
    """A persistent matmul in tutorial 09's style, fp16, n x n x n (one program per SM)."""
    import torch

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    a = torch.randn((n, n), device="cuda").to(torch.float16)
    b = torch.randn((n, n), device="cuda").to(torch.float16)  # K x N, or N x K (descriptors)
    ref = (a.double() @ (b.double().T if descriptors else b.double())).float()
    flops = 2.0 * n**3
    kind = "persistent descriptor matmul" if descriptors else "persistent matmul"
    out: dict[str, Any] = {"kernel": f"{kind} fp16 {n}", "tflops": {}, "config": {}}
    configs = PERSISTENT_DESC_CONFIGS if descriptors else MATMUL_CONFIGS["fp16"]
    winners: dict[str, Callable[[], Any] | None] = {}
    for name, mod in mods.items():
        c = torch.full((n, n), float("nan"), device="cuda", dtype=torch.float16)
        host = mod.persistent_descriptor_matmul if descriptors else mod.persistent_ptr_matmul

        def launch(cfg, c=c, host=host):
            return host(a, b, c, sms, *cfg)

        def check(c=c) -> bool:
            torch.cuda.synchronize()
            err = (torch.linalg.norm(c.float() - ref) / torch.linalg.norm(ref)).item()
            return err < 1e-2

        print(f"  {out['kernel']} [{name}]", flush=True)
        _, cfg, _, winners[name] = best(configs, launch, check)
        out["config"][name] = cfg
    winners["torch"] = lambda: a @ (b.T if descriptors else b)
    fill(out, winners, flops)
    return out


def descriptor_matmul_row(mods: dict[str, ModuleType], n: int) -> dict[str, Any]:
    """Tutorial 09's descriptor matmul, fp16, n x n x n: C = A @ B.T."""
    import torch

    a = torch.randn((n, n), device="cuda").to(torch.float16)
    b = torch.randn((n, n), device="cuda").to(torch.float16)  # N x K
    ref = (a.double() @ b.double().T).float()
    flops = 2.0 * n**3
    out: dict[str, Any] = {"kernel": f"descriptor matmul fp16 {n}", "tflops": {}, "config": {}}
    winners: dict[str, Callable[[], Any] | None] = {}
    for name, mod in mods.items():
        c = torch.full((n, n), float("nan"), device="cuda", dtype=torch.float16)

        def launch(cfg, mod=mod, c=c):
            return mod.descriptor_matmul(a, b, c, *cfg)

        def check(c=c) -> bool:
            torch.cuda.synchronize()
            err = (torch.linalg.norm(c.float() - ref) / torch.linalg.norm(ref)).item()
            return err < 1e-2

        print(f"  {out['kernel']} [{name}]", flush=True)
        _, cfg, _, winners[name] = best(MATMUL_CONFIGS["fp16"], launch, check)
        out["config"][name] = cfg
    winners["torch"] = lambda: a @ b.T
    fill(out, winners, flops)
    return out


def attention_row(mods: dict[str, ModuleType], d: int, causal: bool) -> dict[str, Any]:
    """FlashAttention-2 forward, fp16, Z*H = 32 (Z=4, H=8), N = 4096."""
    import torch

    z, h, n = 4, 8, 4096
    q, k, v = (torch.randn((z, h, n, d), device="cuda", dtype=torch.float16) for _ in range(3))
    sm_scale = d**-0.5
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    flops = 4.0 * z * h * n * n * d * (0.5 if causal else 1.0)
    label = f"attention d{d}{' causal' if causal else ''}"
    out: dict[str, Any] = {"kernel": label, "tflops": {}, "config": {}}
    winners: dict[str, Callable[[], Any] | None] = {}
    for name, mod in mods.items():
        o = torch.full_like(q, float("nan"))
        m = torch.empty((z * h, n), device="cuda", dtype=torch.float32)

        def launch(cfg, mod=mod, o=o, m=m, name=name):
            bm, bn, warps, stages, maxnreg = cfg
            grid = (triton_cdiv(n, bm), z * h)
            opts = {"num_warps": warps, "num_stages": stages, "maxnreg": maxnreg}
            if name == "minitriton":
                opts.update(MT_OPTIONS)
            return lambda: mod._attn_fwd[grid](
                q, k, v, sm_scale, m, o, *q.stride(), *k.stride(), *v.stride(), *o.stride(),
                z, h, N_CTX=n, HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn, STAGE=3 if causal else 1,
                **opts)  # fmt: skip

        def check(o=o) -> bool:
            torch.cuda.synchronize()
            return bool(torch.allclose(o, ref, atol=1e-2, rtol=0))

        print(f"  {label} [{name}]", flush=True)
        _, cfg, _, winners[name] = best(ATTN_CONFIGS[d], launch, check)
        out["config"][name] = cfg
    sdpa = torch.nn.functional.scaled_dot_product_attention
    winners["torch"] = lambda: sdpa(q, k, v, is_causal=causal)
    fill(out, winners, flops)
    return out


def triton_cdiv(a: int, b: int) -> int:
    """Ceiling division."""
    return (a + b - 1) // b


def run_all(which: str = "all", rows_wanted: list[str] | None = None) -> list[dict[str, Any]]:
    """Every tensor-core row (``which``: ``all``, ``matmul``, ``descriptor`` or ``attention``).

    ``rows_wanted`` keeps only the matmul rows named ``"fp16 4096"``, ``"descriptor 4096"``
    and so on.
    """
    import torch

    import minitriton

    minitriton.set_backend("gpu")
    torch.manual_seed(0)
    folder = Path(tempfile.mkdtemp(prefix="gpu-bench-tc-"))
    mods = {"minitriton": load("minitriton", folder), "triton": load("triton", folder)}
    rows = []
    if which in ("all", "matmul"):
        wanted = [(d, n) for d, n in MATMUL_ROWS if not rows_wanted or f"{d} {n}" in rows_wanted]
        rows += [_attempt(lambda d=d, n=n: matmul_row(mods, d, n)) for d, n in wanted]
        pluses = [n for n in PLUS_EQUALS_ROWS if not rows_wanted or f"fp16 += {n}" in rows_wanted]
        rows += [_attempt(lambda n=n: matmul_row(mods, "fp16", n, True)) for n in pluses]
    if which in ("all", "matmul", "descriptor"):
        descs = [n for n in DESC_ROWS if not rows_wanted or f"descriptor {n}" in rows_wanted]
        rows += [_attempt(lambda n=n: descriptor_matmul_row(mods, n)) for n in descs]
    if which in ("all", "matmul", "persistent"):
        for n in PERSISTENT_ROWS:
            for desc in (False, True):
                label = f"persistent{' descriptor' if desc else ''} {n}"
                if not rows_wanted or label in rows_wanted:
                    rows.append(_attempt(lambda n=n, d=desc: persistent_matmul_row(mods, n, d)))
    if which in ("all", "attention"):
        rows += [_attempt(lambda d=d, c=c: attention_row(mods, d, c)) for d, c in ATTN_ROWS]
    return [r for r in rows if r is not None]


def _attempt(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as e:
        print(f"  row FAILED: {type(e).__name__}: {e}", flush=True)
        return None


def print_table(rows: list[dict[str, Any]]) -> list[str]:
    """Print the TFLOP/s table; returns the floors missed."""
    missed = []
    print("\ntensor cores (TFLOP/s; best of the same configs for both, then timed in turns):")
    print("| work | MiniTriton | Triton | torch | MiniTriton / Triton | configs (mt; triton) |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        t = r["tflops"]
        ratio = t["minitriton"] / t["triton"] if t["triton"] else 0.0
        cfg = f"{r['config']['minitriton']}; {r['config']['triton']}"
        print(f"| {r['kernel']} | {t['minitriton']:.1f} | {t['triton']:.1f} | {t['torch']:.1f} "
              f"| {ratio:.2f} | {cfg} |")  # fmt: skip
        floor = FLOORS.get(r["kernel"], FLOORS["attention"] if "attention" in r["kernel"] else 0)
        if ratio < floor:
            missed.append(f"{r['kernel']} ratio {ratio:.2f} < {floor}")
    return missed


def main() -> None:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description="tensor-core rows: MiniTriton against Triton")
    kinds = ["all", "matmul", "descriptor", "persistent", "attention", "tma"]
    parser.add_argument("which", nargs="?", default="all", choices=kinds)
    parser.add_argument("--arch", help="compile MiniTriton's kernels for this arch (sm_80, ...)")
    parser.add_argument("--stages", type=int, help="MiniTriton's num_stages for every config")
    parser.add_argument("--rows", help='matmul rows to run, e.g. "fp16 4096,fp32 4096"')
    args = parser.parse_args()
    if args.which == "tma":  # TMA on and off against Triton (benchmarks/gpu_bench_tma.py)
        import gpu_bench_tma

        gpu_bench_tma.main()
        return
    if args.arch:
        MT_OPTIONS["arch"] = args.arch
    if args.stages:
        MT_OPTIONS["num_stages"] = args.stages
    if MT_OPTIONS:
        print(f"MiniTriton launch options: {MT_OPTIONS}")
    rows = [r.strip() for r in args.rows.split(",")] if args.rows else None
    missed = print_table(run_all(args.which, rows))
    print("\nfloors: " + ("all met" if not missed else "MISSED: " + "; ".join(missed)))


if __name__ == "__main__":
    main()
