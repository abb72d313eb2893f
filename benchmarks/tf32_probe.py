"""How fp32 operands reach the tensor cores, path by path: ``python benchmarks/tf32_probe.py``.

A ``tl.dot`` of fp32 blocks with the default ``input_precision`` runs on
TF32 tensor cores, which keep 10 of fp32's 23 mantissa bits. Whether the
other 13 are rounded away (and how) or cut off decides the result's last
bits. This probe asks the hardware directly, for Triton's code and for
MiniTriton's, on each path:

* MiniTriton compiled for ``sm_90a`` (``wgmma``) and for ``sm_80``
  (``mma.sync``, whose PTX the H200 JIT-compiles), and its emulator for both;
* Triton with its own choices: an ``[64, K]`` block (``wgmma`` on Hopper) and
  a ``[16, K]`` one (too few rows for a warpgroup: ``mma.sync``). Triton has
  no arch option; the path each row took is read from its PTX.

The operands make the answer unambiguous: ``A`` has one nonzero per row and
``B`` is a 0/1 selection (one 1 per column), so every output is a single
product ``x * 1.0``, exact in any accumulation order; then the roles swap
to probe ``B``. Each ``x`` has dropped bits that tell the models apart:
above a half ULP (rounding goes up, truncation down) or exactly half with an
even kept bit (ties away from zero go up, ties to even go down). The verdict
is the model that every output matches: "truncates", "rounds to nearest
(ties away)", "rounds to nearest (ties to even)" or "exact"; "mixed" gives
the counts. The table also says whether the PTX converts the operands
(``cvt.rna.tf32.f32``) before the tensor-core instruction.

Needs an NVIDIA GPU (sm_80 or later), torch and triton for the Triton rows.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernel_library import HEADERS, import_source, kernel_text  # noqa: E402

SOURCE = kernel_text("tf32_kernels", "tf32_probe_kernel")
K = 16
N = 64
ROWS_PER_GROUP = 256  # per kind of dropped bits, spread over the probes

# ---------------------------------------------------------------- the operands and models


def probe_values(count: int, seed: int) -> np.ndarray:
    """fp32 values whose rounding to TF32 tells truncation, RN-away and RN-even apart.

    Half have dropped bits ``0x1800`` (above half an ULP), half exactly ``0x1000``
    with an even kept mantissa (a tie); signs and exponents vary.
    """
    rng = np.random.default_rng(seed)
    sign = rng.integers(0, 2, count).astype(np.uint32) << np.uint32(31)
    exponent = (rng.integers(-6, 7, count) + 127).astype(np.uint32) << np.uint32(23)
    kept = rng.integers(0, 1 << 10, count).astype(np.uint32)
    tie = np.arange(count) % 2 == 1
    kept = np.where(tie, kept & ~np.uint32(1), kept)  # ties: an even last kept bit
    dropped = np.where(tie, np.uint32(0x1000), np.uint32(0x1800))
    bits = sign | exponent | (kept << np.uint32(13)) | dropped
    return bits.astype(np.uint32).view(np.float32)


def _tf32(x: np.ndarray, mode: str) -> np.ndarray:
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    keep = np.uint32(0xFFFFE000)
    if mode == "rz":
        out = bits & keep
    elif mode == "rna":
        out = (bits + np.uint32(0x1000)) & keep
    else:  # "rne": half up, plus one more when the kept last bit is odd
        odd = (bits >> np.uint32(13)) & np.uint32(1)
        out = (bits + np.uint32(0xFFF) + odd) & keep
    return out.astype(np.uint32).view(np.float32)


MODELS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "truncates": lambda x: _tf32(x, "rz"),
    "rounds to nearest (ties away)": lambda x: _tf32(x, "rna"),
    "rounds to nearest (ties to even)": lambda x: _tf32(x, "rne"),
    "exact": lambda x: np.asarray(x, dtype=np.float32),
}


def operands(m: int, values: np.ndarray, which: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(A, B, want)``: one product per output, ``values`` in operand ``which``.

    ``want[i, j]`` is the index into ``values`` that output ``(i, j)`` reads, or -1 (zero).
    """
    a = np.zeros((m, K), np.float32)
    b = np.zeros((K, N), np.float32)
    want = np.full((m, N), -1)
    if which == "A":  # A[i, i % K] = x_i; B[k, j] = 1 where j % K == k
        a[np.arange(m), np.arange(m) % K] = values[:m]
        b[np.arange(N) % K, np.arange(N)] = 1.0
        same = (np.arange(m)[:, None] % K) == (np.arange(N)[None, :] % K)
        want[same] = np.broadcast_to(np.arange(m)[:, None], (m, N))[same]
    else:  # A[i, k] = 1 where i % K == k; B[j % K, j] = y_j
        a[np.arange(m), np.arange(m) % K] = 1.0
        b[np.arange(N) % K, np.arange(N)] = values[:N]
        same = (np.arange(m)[:, None] % K) == (np.arange(N)[None, :] % K)
        want[same] = np.broadcast_to(np.arange(N)[None, :], (m, N))[same]
    return a, b, want


def verdict(outputs: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> str:
    """The model every ``(got, values, want)`` output matches, else the counts."""
    counts = dict.fromkeys(MODELS, 0)
    total = 0
    for got, values, want in outputs:
        read = want >= 0
        for name, model in MODELS.items():
            expect = model(values)[want[read]]
            counts[name] += int((got[read].view(np.uint32) == expect.view(np.uint32)).sum())
        total += int(read.sum())
    for name, n in counts.items():
        if n == total:
            return name
    return "mixed (" + ", ".join(f"{name}: {n}/{total}" for name, n in counts.items()) + ")"


# ---------------------------------------------------------------- running the paths


def load(flavor: str, folder: Path) -> ModuleType:
    """The probe kernel under ``flavor``'s import lines."""
    return import_source(f"tf32_probe_{flavor}", HEADERS[flavor] + SOURCE, folder)


def run(launch: Callable[..., Any], m: int, to_array: Callable, from_array: Callable):
    """Launch both probes of ``m`` rows; the outputs and the PTX of the last launch."""
    outputs, ptx = [], ""
    for seed, which in enumerate(("A", "B")):
        values = probe_values(ROWS_PER_GROUP, seed)
        a, b, want = operands(m, values, which)
        c = np.full((m, N), np.nan, np.float32)
        a_dev, b_dev, c_dev = to_array(a), to_array(b), to_array(c)
        compiled = launch(a_dev, b_dev, c_dev, m)
        outputs.append((from_array(c_dev), values, want))
        ptx = (getattr(compiled, "asm", None) or {}).get("ptx", "") if compiled else ""
    return outputs, ptx


def describe(ptx: str) -> tuple[str, str]:
    """The tensor-core instruction the PTX uses, and whether it converts operands first."""
    if "wgmma.mma_async" in ptx:
        path = "wgmma"
    elif "mma.sync" in ptx and ".tf32" in ptx:
        path = "mma.sync"
    elif ptx:
        path = "no tensor cores"
    else:
        path = "-"
    converts = "cvt.rna.tf32" if "cvt.rna.tf32" in ptx else ("none" if ptx else "-")
    return path, converts


def main() -> int:
    """Print one row per path: who compiled it, the path, the conversion, the verdict."""
    rows = []
    folder = Path(tempfile.mkdtemp(prefix="tf32_probe_"))
    ours = load("minitriton", folder)
    host = (lambda x: x.copy(), lambda x: x)
    for arch in ("sm_90", "sm_80"):

        def emu(a, b, c, m, arch=arch):
            return ours.tf32_probe_kernel[(1,)](a, b, c, m, N, K, backend="emulator", arch=arch)

        rows.append(("MiniTriton emulator", arch, "-", "-", verdict(run(emu, 64, *host)[0])))
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        print("no GPU (or no torch): only the emulator's model is shown")
    else:
        to_dev = (lambda x: torch.from_numpy(x).cuda(), lambda x: x.cpu().numpy())
        for arch in ("sm_90a", "sm_80"):

            def gpu(a, b, c, m, arch=arch):
                return ours.tf32_probe_kernel[(1,)](a, b, c, m, N, K, backend="gpu", arch=arch)

            outputs, ptx = run(gpu, 64, *to_dev)
            rows.append(("MiniTriton", arch, *describe(ptx), verdict(outputs)))
        try:
            theirs = load("triton", folder)
        except ImportError:
            theirs = None
            print("triton is not installed: no Triton rows")
        if theirs is not None:
            for m in (64, 16):

                def tri(a, b, c, m_):
                    return theirs.tf32_probe_kernel[(1,)](a, b, c, m_, N, K)

                outputs, ptx = run(tri, m, *to_dev)
                name = torch.cuda.get_device_name()
                rows.append((f"Triton, M={m}", name, *describe(ptx), verdict(outputs)))
    header = ("compiler", "target", "path (from PTX)", "operand conversion", "verdict")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(5)]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print(" | ".join(str(v).ljust(w) for v, w in zip(row, widths)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
