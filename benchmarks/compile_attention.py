"""Cold compile of tutorial 06's attention for sm_90a, MiniTriton beside Triton, no GPU needed.

Each run is a fresh Python process with empty compile caches that imports its
compiler and compiles the kernel library's ``_attn_fwd`` (``tests/kernels/
tc_kernels.py``; causal, D = 64, BLOCK_M = BLOCK_N = 128, 8 warps, 3 stages)
for sm_90a:

* ``minitriton``: source to PTX as the first launch does, with its default
  ``MINITRITON_DEFER_LAST_DOT`` (unset): a loop with two dots is compiled
  with ``P @ V`` left in flight and without, and the launcher keeps one
  (see the tensor-cores internals page);
* ``minitriton, one schedule``: the same with ``MINITRITON_DEFER_LAST_DOT=1``;
* ``triton``: Triton's ``triton.compile`` for ``GPUTarget("cuda", 90, 32)``,
  to its cubin (Triton runs ``ptxas`` itself).

MiniTriton hands its PTX to the CUDA driver, which assembles it when the
kernel is loaded; where ``ptxas`` is on ``PATH`` the table adds what
assembling each PTX text costs, as a stand-in for that step. Medians of
``--runs`` processes (3)::

    python benchmarks/compile_attention.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernel_library import HEADERS, kernel_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SOURCE = kernel_text("tc_kernels", "_attn_fwd_inner", "_attn_fwd")
#: Tutorial 06's arguments: Q, K, V, sm_scale, M, Out, 16 strides, Z, H; then the constexprs.
CONSTEXPRS = {"N_CTX": 4096, "HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 128, "STAGE": 3}
WARPS, STAGES = 8, 3


def _child(imports: str, compile_lines: str) -> str:
    """A child process's script: time the imports, load the kernel, then compile it."""
    return (
        "import json, sys, time\nt0 = time.perf_counter()\n" + imports
        + "t1 = time.perf_counter()\nimport importlib.util\n"
        + 'spec = importlib.util.spec_from_file_location("_attn", sys.argv[1])\n'
        + "module = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(module)\n"
        + "kernel = module._attn_fwd\n" + compile_lines
    )  # fmt: skip


MINITRITON_CHILD = _child(
    """import minitriton
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.signature import kernel_params, parse_signature
""",
    r"""strides = ", ".join(["i32:16, i32:16, i32:16, 1"] * 4)
sig = (f"*fp16:16, *fp16:16, *fp16:16, fp32, *fp32:16, *fp16:16, {strides}, i32, i32, "
       + sys.argv[2])
specs = parse_signature(sig, kernel_params(kernel.fn))
options = CompileOptions(num_warps=int(sys.argv[3]), num_stages=int(sys.argv[4]), arch="sm_90a")
t2 = time.perf_counter()
binary = compile_kernel(kernel.source, specs, options, stop_after="ptx").binary
t3 = time.perf_counter()
print(json.dumps({"import": (t1 - t0) * 1e3, "compile": (t3 - t2) * 1e3,
                  "ptx": [binary.ptx] + ([binary.alt_ptx] if binary.alt_ptx else [])}))
""",
)

TRITON_CHILD = _child(
    """import triton
from triton.backends.compiler import GPUTarget
""",
    r"""consts = json.loads(sys.argv[2])
names = kernel.arg_names
strides = [n for n in names if n.startswith("stride_")]
unit = [strides[i] for i in (3, 7, 11, 15)]  # the innermost strides: 1, as specialized
signature, attrs = {}, {}
for i, n in enumerate(names):
    if n in consts or n in unit:
        signature[n] = "constexpr"
    elif n in ("Q", "K", "V", "Out"):
        signature[n] = "*fp16"
    elif n == "M":
        signature[n] = "*fp32"
    elif n == "sm_scale":
        signature[n] = "fp32"
    else:
        signature[n] = "i32"
    if signature[n].startswith("*") or n in strides and n not in unit:
        attrs[(i,)] = [["tt.divisibility", 16]]
constexprs = {**consts, **{n: 1 for n in unit}}
src = triton.compiler.ASTSource(kernel, signature=signature, constexprs=constexprs, attrs=attrs)
t2 = time.perf_counter()
triton.compile(src, target=GPUTarget("cuda", 90, 32),
               options={"num_warps": int(sys.argv[3]), "num_stages": int(sys.argv[4])})
t3 = time.perf_counter()
print(json.dumps({"import": (t1 - t0) * 1e3, "compile": (t3 - t2) * 1e3, "ptx": []}))
""",
)


def one_run(flavor: str, env: dict[str, str], folder: Path) -> dict:
    """One fresh process's timings (ms) and PTX texts."""
    kernel_file = folder / f"attn_{flavor}.py"
    kernel_file.write_text(HEADERS[flavor] + SOURCE)
    child = MINITRITON_CHILD if flavor == "minitriton" else TRITON_CHILD
    if flavor == "minitriton":
        consts = ", ".join(str(v) for v in CONSTEXPRS.values())
    else:
        consts = json.dumps(CONSTEXPRS)
    caches = tempfile.mkdtemp(dir=folder)  # nothing compiled before
    env = {**os.environ, **env, "MINITRITON_CACHE_DIR": caches, "TRITON_CACHE_DIR": caches}
    cmd = [sys.executable, "-c", child, str(kernel_file), consts, str(WARPS), str(STAGES)]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip().splitlines()[-1])
    return json.loads(result.stdout.strip().splitlines()[-1])


def assemble_ms(ptx_texts: list[str], folder: Path) -> float | None:
    """Milliseconds ``ptxas`` takes for each text (summed), or None without ``ptxas``."""
    ptxas = shutil.which("ptxas")
    if ptxas is None or not ptx_texts:
        return None
    total = 0.0
    for i, text in enumerate(ptx_texts):
        path = folder / f"k{i}.ptx"
        path.write_text(text)
        cmd = [ptxas, "-arch=sm_90a", str(path), "-o", str(folder / f"k{i}.cubin")]
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        total += (time.perf_counter() - start) * 1e3
    return total


def main(argv: list[str] | None = None) -> int:
    """Time each variant and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per variant")
    args = parser.parse_args(argv)
    variants = [
        ("minitriton", "minitriton", {}),
        ("minitriton, one schedule", "minitriton", {"MINITRITON_DEFER_LAST_DOT": "1"}),
        ("triton", "triton", {}),
    ]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for label, flavor, env in variants:
            try:
                runs = [one_run(flavor, env, folder) for _ in range(args.runs)]
            except (RuntimeError, FileNotFoundError) as e:
                rows.append((label, None, None, None, None, f"did not run: {e}"))
                continue
            imp = statistics.median(r["import"] for r in runs)
            comp = statistics.median(r["compile"] for r in runs)
            asm = assemble_ms(runs[-1]["ptx"], folder)
            total = comp + (asm or 0.0)
            rows.append((label, imp, comp, asm, total, f"{len(runs[-1]['ptx']) or 1} text(s)"))
    print(f"tutorial 06 attention, causal, D=64, (128, 128), {WARPS} warps, sm_90a; "
          f"medians of {args.runs} fresh processes (ms):")  # fmt: skip
    print("| compiler | import | compile | ptxas (driver's share) | compile + ptxas | note |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for label, imp, comp, asm, total, note in rows:
        cells = [f"{x:.0f}" if isinstance(x, float) else "-" for x in (imp, comp, asm, total)]
        print(f"| {label} | " + " | ".join(cells) + f" | {note} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
