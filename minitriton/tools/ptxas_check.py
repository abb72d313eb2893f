"""Check the generated PTX with NVIDIA's assembler: ``python -m minitriton.tools.ptxas_check``.

Kernels checked:

* the hand-written ``*.ir`` files under ``tests/backend/kernels/`` (a file may
  choose its warps with a ``// num_warps: 8`` line);
* every end-to-end kernel: the end-to-end suite (``tests/e2e``) runs on the
  emulator in a child process with ``MINITRITON_DUMP_DIR`` set, which writes
  each compiled specialization's stages, the optimized IR (``NN-ir-opt.txt``)
  and the PTX for the default target included; ``--no-e2e`` skips this;
* any files or directories given on the command line: ``.ir`` files, or
  folders holding either (a ``MINITRITON_DUMP_DIR`` from another run, say).

Each kernel's IR is compiled to PTX for each target and assembled with
``ptxas -arch=<target>``: kernels with a ``tt.dot`` for the whole arch matrix
(sm_75, sm_80, sm_86, sm_89, sm_90a, sm_100 and sm_120, each taking its own
dot path), the others for sm_75, sm_80 and sm_90a (sm_80 and sm_90a for a kernel with
inline PTX: its instructions are its author's, and Triton's tests use sm_80 ones such as
``cvt.rna.tf32.f32``). A dumped kernel keeps the warps it
was compiled with (read from its PTX's ``.maxntid``). The exit status is
non-zero if any compilation or assembly fails; a summary table is printed
last. A kernel compiled with two schedules (a loop of two dots, see
``MINITRITON_DEFER_LAST_DOT``) has both assembled. ``--keep DIR`` keeps every
kernel's PTX and ttgir (``NAME.ARCH.ptx``, ``NAME.ARCH.alt.ptx`` for the second
schedule, ``NAME.ARCH.ttgir``) in ``DIR``: ``diff -r`` of two such folders shows what a
change to the compiler changed. A dumped kernel that the GPU refused on purpose (the
dump's ``NN-gpu-error.txt``: a dot with K below the GPU's bound, an fp8 format of
another vendor; the diagnostic points to the emulator) must be refused again, with a
located diagnostic, for every target. A kernel the GPU refuses for an older target on
purpose (a located "needs sm_89 or newer": fp8 conversions) counts as checked there.
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
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from minitriton.backend.build import SUPPORTED_ARCHS, compile_ir
from minitriton.diagnostics import CompileError
from minitriton.ir.parser import parse_module

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DIRS = [ROOT / "tests" / "backend" / "kernels"]
E2E_TESTS = ROOT / "tests" / "e2e"
#: The arch matrix: kernels with a ``tt.dot`` are checked for every arch (each takes its
#: own dot path: FMA on sm_75, mma.sync from sm_80), the others for a subset.
ARCHS = SUPPORTED_ARCHS
NON_DOT_ARCHS = ("sm_75", "sm_80", "sm_90a")
_WARPS = re.compile(r"//\s*num_warps:\s*(\d+)")
_MAXNTID = re.compile(r"\.maxntid\s+(\d+)")
_DUMPED_IR = "*-ir-opt.txt"
#: LLVM compiles one kernel at a time anyway; holding this lock keeps the times honest.
_COMPILE_LOCK = threading.Lock()


@dataclass(frozen=True)
class Kernel:
    """One kernel to check: its name in the table, IR text and warps per program."""

    name: str
    path: Path
    text: str
    num_warps: int
    #: The GPU's diagnostic, for a dumped kernel that only the emulator runs.
    refused: str | None = None


def find_kernels(paths: list[Path]) -> list[Kernel]:
    """The kernels in ``paths``: ``.ir`` files and dumped ``NN-ir-opt.txt`` stages."""
    out: list[Kernel] = []
    for p in paths:
        if p.is_dir():
            out += [_ir_file(f) for f in sorted(p.rglob("*.ir"))]
            out += [_dumped(f) for f in sorted(p.rglob(_DUMPED_IR))]
        elif p.is_file():
            out.append(_dumped(p) if p.match(_DUMPED_IR) else _ir_file(p))
    return _unique(out)


def _ir_file(path: Path) -> Kernel:
    text = path.read_text()
    m = _WARPS.search(text)
    return Kernel(path.name, path, text, int(m.group(1)) if m else 4)


def _dumped(path: Path) -> Kernel:
    """A stage written by MINITRITON_DUMP_DIR; the folder is ``<kernel>-<hash>``."""
    warps = _dumped_warps(path.parent)
    return Kernel(path.parent.name, path, path.read_text(), warps, _refusal(path.parent))


def _refusal(folder: Path) -> str | None:
    """The GPU's diagnostic when it refused the kernel on purpose (its help names the emulator)."""
    for error in folder.glob("*-gpu-error.txt"):
        text = error.read_text()
        if any(line.startswith("help:") and "emulator" in line for line in text.splitlines()):
            return text
    return None


def _dumped_warps(folder: Path) -> int:
    """The warps the dumped kernel was compiled with: its PTX says ``.maxntid 32*warps``."""
    for ptx in folder.glob("*-ptx.txt"):
        m = _MAXNTID.search(ptx.read_text())
        if m:
            return max(1, int(m.group(1)) // 32)
    return 4  # no PTX: the dump run failed before codegen; check with the default


def _unique(kernels: list[Kernel]) -> list[Kernel]:
    """Drop kernels whose IR and warps repeat an earlier one (the same specialization)."""
    seen: set[tuple[str, int]] = set()
    out = []
    for k in kernels:
        if (k.text, k.num_warps) not in seen:
            seen.add((k.text, k.num_warps))
            out.append(k)
    return out


def dump_e2e_kernels(folder: Path) -> str:
    """Run the e2e suite on the emulator, dumping every kernel into ``folder``.

    Returns pytest's last line. Test failures are not this check's concern
    (the test suite reports them); the kernels that compiled are all dumped.
    """
    env = dict(os.environ, MINITRITON_DUMP_DIR=str(folder), MINITRITON_CACHE="0")
    env.pop("MINITRITON_BACKEND", None)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not gpu",
           str(E2E_TESTS)]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    return lines[-1] if lines else proc.stderr.strip()[-300:]


def check_one(kernel: Kernel, arch: str, ptxas: str, workdir: str) -> tuple[bool, str]:
    """Compile ``kernel`` for ``arch`` and assemble it; ``(ok, detail)``."""
    if kernel.refused is not None:
        return check_refused(kernel, arch)
    with _COMPILE_LOCK:
        start = time.perf_counter()
        try:
            module = parse_module(kernel.text, str(kernel.path))
            compiled = compile_ir(module, arch, kernel.num_warps)
        except CompileError as e:
            if _needs_newer_arch(e, arch):
                return True, f"refused for {arch}: {e.first.message}"
            return False, f"compile error:\n{e}"
        ms = (time.perf_counter() - start) * 1e3
    Path(workdir, f"{kernel.name}.{arch}.ttgir").write_text(compiled.ttgir)
    # A kernel with a loop of two dots has a second schedule (PTXModule.alt_ptx): both run.
    texts = {"ptx": compiled.ptx, "alt.ptx": compiled.alt_ptx}
    for suffix, text in texts.items():
        if not text:
            continue
        ptx_file = os.path.join(workdir, f"{kernel.name}.{arch}.{suffix}")
        Path(ptx_file).write_text(text)
        # A kernel using wgmma targets the arch-specific sm_90a.
        cmd = [ptxas, f"-arch={compiled.arch}", ptx_file, "-o", os.devnull]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            return False, f"ptxas failed ({suffix}):\n{proc.stderr.strip()}"
    detail = f"{ms:.0f} ms to PTX, {kernel.num_warps} warps, {compiled.shared} B shared"
    return True, detail + (", two schedules" if compiled.alt_ptx else "")


def _needs_newer_arch(e: CompileError, arch: str) -> bool:
    """Whether the GPU refused ``arch`` on purpose: a located diagnostic that the kernel
    needs a newer arch (``needs_arch``: fp8 conversions need sm_89, bf16 atomic adds sm_90)."""
    needs = e.first.needs_arch
    return needs is not None and needs > int(re.sub(r"\D", "", arch))


def check_refused(kernel: Kernel, arch: str) -> tuple[bool, str]:
    """A kernel only the emulator runs: the GPU compile must stop with a located diagnostic."""
    assert kernel.refused is not None
    with _COMPILE_LOCK:
        try:
            compile_ir(parse_module(kernel.text, str(kernel.path)), arch, kernel.num_warps)
        except CompileError as e:
            if "emulator" in (e.first.help or ""):
                return True, "refused, as the emulator-only kernel it is"
            return False, f"refused with another diagnostic:\n{e}"
    return False, f"compiled, but the dump run refused it:\n{kernel.refused}"


def archs_for(kernel: Kernel) -> tuple[str, ...]:
    """The targets ``kernel`` is checked for: all of them when it has a dot.

    Inline PTX may use instructions of sm_80 and later (``cvt.rna.tf32.f32``):
    such a kernel skips sm_75.
    """
    archs: tuple[str, ...] = ARCHS if "tt.dot(" in kernel.text else NON_DOT_ARCHS
    if "tt.elementwise_inline_asm" in kernel.text:
        archs = tuple(a for a in archs if a != "sm_75")
    return archs


def check_all(kernels: list[Kernel], ptxas: str, workdir: str) -> list[tuple[str, ...]]:
    """``(name, arch, status, detail)`` for every kernel and target.

    LLVM compiles under a lock, one kernel at a time; ptxas runs as a
    separate process, so a few threads overlap the two.
    """
    jobs = [(k, arch) for k in kernels for arch in archs_for(k)]

    def run(job: tuple[Kernel, str]) -> tuple[str, ...]:
        kernel, arch = job
        ok, detail = check_one(kernel, arch, ptxas, workdir)
        return (kernel.name, arch, "ok" if ok else "FAIL", detail)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(run, jobs))


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="extra .ir files or directories")
    parser.add_argument("--no-e2e", action="store_true", help="skip the end-to-end suite's kernels")
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="keep each kernel's PTX and ttgir in DIR (diff two such folders to see what "
        "a change to the compiler changed)",
    )
    args = parser.parse_args(argv)
    ptxas = os.environ.get("PTXAS") or shutil.which("ptxas")
    if not ptxas:
        print("ptxas_check: skipped (no ptxas on PATH)")
        return 0
    with tempfile.TemporaryDirectory() as workdir:
        paths = DEFAULT_DIRS + list(args.paths)
        if not args.no_e2e and E2E_TESTS.is_dir():
            dump = Path(workdir) / "dump"
            print(
                f"ptxas_check: e2e suite on the emulator, dumping kernels: {dump_e2e_kernels(dump)}"
            )
            paths.append(dump)
        kernels = find_kernels(paths)
        if not kernels:
            print("ptxas_check: no kernels found", file=sys.stderr)
            return 1
        out = workdir
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            out = str(args.keep)
        rows = check_all(kernels, ptxas, out)
    return report(rows)


def report(rows: list[tuple[str, ...]]) -> int:
    """Print failures in full, then the table; returns the exit status."""
    failures = sum(r[2] == "FAIL" for r in rows)
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
