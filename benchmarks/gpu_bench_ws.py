"""Warp specialization on the H200: tutorial 09's descriptor matmul with and without it.

``python benchmarks/gpu_bench_ws.py [n ...]`` times ``ws_desc_matmul``
(``tests/kernels/tma_matmul.py``, imported under ``import triton`` and under
``import minitriton as triton``) on n x n x n fp16 matmuls, with
``WARP_SPECIALIZE`` off and on, for each compiler: the best of a few fixed
configurations (block sizes, warps, stages), TFLOP/s from the median of
``triton.testing.do_bench``. Each result is checked against torch first.
MiniTriton's pass is turned on here (``MINITRITON_WARP_SPECIALIZE=1``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernel_library import HEADERS, import_source, kernel_text  # noqa: E402

SOURCE = (
    kernel_text("tma_matmul", "ws_desc_matmul")
    + """


def launch(a, b, c, bm, bn, bk, warps, stages, ws):
    M, K = a.shape
    N = b.shape[0]
    descs = [TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(b, [bn, bk]),
             TensorDescriptor.from_tensor(c, [bm, bn])]
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    return lambda: ws_desc_matmul[grid](*descs, M, N, K, bm, bn, bk, ws, num_warps=warps,
                                        num_stages=stages)
"""
)

#: (BM, BN, BK, warps, stages).
CONFIGS = [(128, 128, 64, 4, 3), (128, 128, 64, 4, 4), (128, 256, 64, 8, 3), (128, 256, 64, 8, 4)]


def _module(flavor: str, folder: Path) -> Any:
    head = HEADERS[flavor] + f"from {flavor}.tools.tensor_descriptor import TensorDescriptor\n"
    return import_source(f"gpu_bench_ws_{flavor}", head + SOURCE, folder)


def _best(mod: Any, a: Any, b: Any, want: Any, ws: bool) -> tuple[float, Any]:
    import torch
    from triton.testing import do_bench

    best: tuple[float, Any] = (float("inf"), None)
    for cfg in CONFIGS:
        c = torch.full((a.shape[0], b.shape[0]), float("nan"), dtype=a.dtype, device="cuda")
        try:
            fn = mod.launch(a, b, c, *cfg, ws)
            fn()
            torch.cuda.synchronize()
        except Exception as e:  # one failing config must not lose the row
            print(f"    {cfg} ws={ws}: {type(e).__name__}: {str(e)[:200]}", flush=True)
            continue
        ok = torch.allclose(c.float(), want, rtol=2e-2, atol=0.5)
        ms = do_bench(fn, warmup=25, rep=100, return_mode="median")
        print(f"    {cfg} ws={ws}: {ms:.3f} ms {'ok' if ok else 'MISMATCH'}", flush=True)
        if ok and ms < best[0]:
            best = (ms, cfg)
    return best


def main(sizes: list[int]) -> None:
    import torch

    import minitriton

    os.environ["MINITRITON_WARP_SPECIALIZE"] = "1"
    minitriton.set_backend("gpu")
    folder = Path(tempfile.mkdtemp())
    mods = {flavor: _module(flavor, folder) for flavor in ("minitriton", "triton")}
    print("| n | compiler | plain TFLOP/s | warp-specialized TFLOP/s | configs |")
    print("|---|---|---|---|---|")
    for n in sizes:
        torch.manual_seed(0)
        a = torch.randn((n, n), device="cuda", dtype=torch.float16)
        b = torch.randn((n, n), device="cuda", dtype=torch.float16)
        want = a.float() @ b.float().T
        for name, mod in mods.items():
            plain, ws = _best(mod, a, b, want, False), _best(mod, a, b, want, True)
            tflops = [2 * n**3 / (ms * 1e-3) / 1e12 for ms, _ in (plain, ws)]
            print(
                f"| {n} | {name} | {tflops[0]:.1f} | {tflops[1]:.1f} | {plain[1]}; {ws[1]} |",
                flush=True,
            )


if __name__ == "__main__":
    main([int(x) for x in sys.argv[1:]] or [4096, 8192])
