"""Check the generated PTX with NVIDIA's assembler: ``python -m minitriton.tools.ptxas_check``.

Every end-to-end kernel's IR is compiled to PTX for each target (``sm_90``
and ``sm_80``) and assembled with ``ptxas -arch=<target>``. Kernels are the
``*.ir`` files under ``tests/backend/kernels/`` plus any files or directories
given on the command line (for example a ``MINITRITON_DUMP_DIR``). A file may
choose its warps with a ``// num_warps: 8`` line. The exit status is non-zero
if any compilation or assembly fails; a summary table is printed last.
Without ``ptxas`` on ``PATH`` (or ``$PTXAS``) the check is skipped (status 0).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from minitriton.backend.compiler import compile_ir
from minitriton.diagnostics import CompileError
from minitriton.ir.parser import parse_module

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DIRS = [ROOT / "tests" / "backend" / "kernels"]
ARCHS = ("sm_90", "sm_80")
_WARPS = re.compile(r"//\s*num_warps:\s*(\d+)")


def find_kernels(paths: list[Path]) -> list[Path]:
    """All ``.ir`` files in ``paths`` (files, or directories searched recursively)."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(sorted(p.rglob("*.ir")))
        elif p.is_file():
            out.append(p)
    return out


def check_one(path: Path, arch: str, ptxas: str, workdir: str) -> tuple[bool, str]:
    """Compile ``path`` for ``arch`` and assemble it; ``(ok, detail)``."""
    text = path.read_text()
    m = _WARPS.search(text)
    num_warps = int(m.group(1)) if m else 4
    start = time.perf_counter()
    try:
        kernel = compile_ir(parse_module(text, str(path)), arch, num_warps)
    except CompileError as e:
        return False, f"compile error:\n{e}"
    ms = (time.perf_counter() - start) * 1e3
    ptx_file = os.path.join(workdir, f"{path.stem}.{arch}.ptx")
    Path(ptx_file).write_text(kernel.ptx)
    cmd = [ptxas, f"-arch={arch}", ptx_file, "-o", os.devnull]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return False, f"ptxas failed:\n{proc.stderr.strip()}"
    return True, f"{ms:.0f} ms to PTX, {kernel.shared} B shared"


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="extra .ir files or directories")
    args = parser.parse_args(argv)
    ptxas = os.environ.get("PTXAS") or shutil.which("ptxas")
    if not ptxas:
        print("ptxas_check: skipped (no ptxas on PATH)")
        return 0
    kernels = find_kernels(DEFAULT_DIRS + list(args.paths))
    if not kernels:
        print("ptxas_check: no kernels found", file=sys.stderr)
        return 1
    rows, failures = [], 0
    with tempfile.TemporaryDirectory() as workdir:
        for path in kernels:
            for arch in ARCHS:
                ok, detail = check_one(path, arch, ptxas, workdir)
                failures += not ok
                rows.append((path.name, arch, "ok" if ok else "FAIL", detail))
    for name, arch, status, detail in rows:
        if status == "FAIL":
            print(f"--- {name} [{arch}]\n{detail}\n")
    width = max(len(r[0]) for r in rows)
    print(f"{'kernel':<{width}}  arch   status  detail")
    for name, arch, status, detail in rows:
        line = detail.splitlines()[0] if detail else ""
        print(f"{name:<{width}}  {arch}  {status:<6}  {line}")
    print(f"ptxas_check: {len(rows) - failures}/{len(rows)} passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
