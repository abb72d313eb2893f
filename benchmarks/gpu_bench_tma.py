"""TMA rows: descriptor and block-pointer matmuls, MiniTriton with TMA on and off, Triton, torch.

``python benchmarks/gpu_bench_tma.py`` prints one table. The same kernel
source runs under ``import triton`` and ``import minitriton as triton`` on
the same tensors: tutorial 09's descriptor matmul (``DESC_SOURCE`` of
:mod:`gpu_bench_tc`) and a block-pointer matmul (:data:`BP_SOURCE`), fp16,
n x n x n. Each compiler gets the best of the same fixed configurations. The
"TMA off" column is measured in a child process with ``MINITRITON_TMA=0``
(the compiled kernels differ, so they are cached apart).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_bench_tc as TC  # noqa: E402
from kernel_library import import_source, kernel_text  # noqa: E402

#: The block-pointer matmul of the kernel library (``tests/kernels/tma_matmul.py``)
#: and its host code.
BP_SOURCE = (
    kernel_text("tma_matmul", "bp_matmul_kernel")
    + """


def bp_matmul(a, b, c, bm, bn, bk, warps, stages):
    M, K = a.shape
    N = b.shape[1]
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    return lambda: bp_matmul_kernel[grid](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
        c.stride(0), c.stride(1), BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=stages)
"""
)
N = 4096


def load(flavor: str, folder: Path) -> ModuleType:
    """Import the descriptor and block-pointer sources under ``flavor``."""
    source = TC.HEADERS[flavor] + TC.DESC_SOURCE + BP_SOURCE
    return import_source(f"gpu_bench_tma_{flavor}", source, folder)


def rows(mods: dict) -> list[dict[str, Any]]:
    """TFLOP/s of each flavor on both kernels."""
    import torch

    a = torch.randn((N, N), device="cuda").to(torch.float16)
    b = torch.randn((N, N), device="cuda").to(torch.float16)
    out = []
    for kernel, fn_name, bt in (("descriptor matmul fp16", "descriptor_matmul", True),
                                ("block-pointer matmul fp16", "bp_matmul", False)):  # fmt: skip
        ref = (a.double() @ (b.double().T if bt else b.double())).float()
        row: dict[str, Any] = {"kernel": f"{kernel} {N}", "tflops": {}, "config": {}}
        for name, mod in mods.items():
            c = torch.full((N, N), float("nan"), device="cuda", dtype=torch.float16)

            def launch(cfg, mod=mod, c=c, fn_name=fn_name):  # noqa: ANN001, ANN202
                return getattr(mod, fn_name)(a, b, c, *cfg)

            def check(c=c, ref=ref) -> bool:  # noqa: ANN001
                torch.cuda.synchronize()
                return (torch.linalg.norm(c.float() - ref) / torch.linalg.norm(ref)).item() < 1e-2

            print(f"  {row['kernel']} [{name}]", flush=True)
            ms, cfg, _, _ = TC.best(TC.MATMUL_CONFIGS["fp16"], launch, check)
            row["tflops"][name] = 2.0 * N**3 / (ms * 1e-3) / 1e12 if cfg else 0.0
            row["config"][name] = cfg
        mm = (lambda: a @ b.T) if bt else (lambda: a @ b)
        row["tflops"]["torch"] = 2.0 * N**3 / (TC.median_ms(mm) * 1e-3) / 1e12
        out.append(row)
    return out


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    if "--child" in sys.argv:  # MiniTriton only, with the environment's MINITRITON_TMA
        print("JSON " + json.dumps(rows({"minitriton": load("minitriton", folder)})), flush=True)
        return
    mods = {"minitriton": load("minitriton", folder), "triton": load("triton", folder)}
    table = rows(mods)
    env = dict(os.environ, MINITRITON_TMA="0")
    child = subprocess.run([sys.executable, __file__, "--child"], env=env, text=True,
                           capture_output=True, timeout=900)  # fmt: skip
    print(child.stdout[-4000:], child.stderr[-2000:], flush=True)
    off = next((json.loads(line[5:]) for line in child.stdout.splitlines()
                if line.startswith("JSON ")), [])  # fmt: skip
    print("\n| work | MiniTriton TMA | MiniTriton cp.async | Triton | torch | TMA/Triton |")
    print("|---|---:|---:|---:|---:|---:|")
    for i, row in enumerate(table):
        t = row["tflops"]
        cp = off[i]["tflops"]["minitriton"] if i < len(off) else float("nan")
        ratio = t["minitriton"] / t["triton"] if t.get("triton") else float("nan")
        print(f"| {row['kernel']} | {t['minitriton']:.1f} | {cp:.1f} | {t['triton']:.1f} | "
              f"{t['torch']:.1f} | {ratio:.2f} |")  # fmt: skip
    for i, row in enumerate(table):
        cp = off[i]["config"]["minitriton"] if i < len(off) else None
        print(f"configs {row['kernel']}: {row['config']} cp.async: {cp}")


if __name__ == "__main__":
    main()
