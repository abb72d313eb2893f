"""``CompiledKernel.asm["cubin"]`` and ``asm["sass"]``: the GPU's own binary and instructions.

The kernel's PTX is assembled by ``ptxas`` for the arch its ``.target`` line
names, with line information (``-lineinfo``, as Triton assembles; none
under ``TRITON_DISABLE_LINE_INFO=1``), into the cubin (bytes); the SASS is
that cubin disassembled by ``nvdisasm`` (else ``cuobjdump -sass``).
Nothing runs until someone reads one of them; the driver loads the PTX
itself, so a launch never needs these programs.

Each program is looked for as Triton looks for it: its variable
(``TRITON_PTXAS_PATH``, ``TRITON_NVDISASM_PATH``, ``TRITON_CUOBJDUMP_PATH``;
``PTXAS`` too for ``ptxas``), then ``PATH``, then the ``bin`` folder that
Triton's NVIDIA backend ships, then ``$CUDA_HOME/bin`` and the NVIDIA pip
packages (``nvidia-cuda-nvcc``, ``nvidia-cuda-nvdisasm``,
``nvidia-cuda-cuobjdump``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from minitriton.env import line_info_disabled

#: Each program's variables, first match wins.
VARIABLES = {
    "ptxas": ("TRITON_PTXAS_PATH", "PTXAS"),
    "nvdisasm": ("TRITON_NVDISASM_PATH",),
    "cuobjdump": ("TRITON_CUOBJDUMP_PATH",),
}


class MissingToolError(RuntimeError):
    """A program that ``asm["cubin"]`` or ``asm["sass"]`` needs is not on this machine."""


def _package_dirs(name: str) -> list[Path]:
    """The folders of an installed package (namespace packages have several), or none."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    if spec is None or spec.submodule_search_locations is None:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


def _triton_dirs() -> list[Path]:
    """The installed Triton package's folder, found by its distribution's files.

    ``import triton`` may name MiniTriton (``minitriton.compat.alias_triton``),
    so the module spec alone could point here.
    """
    try:
        dist = importlib.metadata.distribution("triton")
    except importlib.metadata.PackageNotFoundError:
        return _package_dirs("triton")
    return list(dict.fromkeys([Path(str(dist.locate_file("triton"))), *_package_dirs("triton")]))


def _candidates(binary: str) -> list[Path]:
    """Folders beyond ``PATH`` where NVIDIA's programs are installed."""
    folders = [d / "backends" / "nvidia" / "bin" for d in _triton_dirs()]
    if os.environ.get("CUDA_HOME"):
        folders.append(Path(os.environ["CUDA_HOME"]) / "bin")
    for nvidia in _package_dirs("nvidia"):
        folders += sorted(nvidia.glob("cu*/bin")) + sorted(nvidia.glob("cuda_*/bin"))
    folders.append(Path("/usr/local/cuda/bin"))
    return [folder / binary for folder in folders]


def find_tool(binary: str) -> str | None:
    """The path of ``binary`` (``ptxas``, ``nvdisasm``, ``cuobjdump``), or None."""
    for variable in VARIABLES[binary]:
        if os.environ.get(variable):
            return os.environ[variable]
    found = shutil.which(binary)
    if found:
        return found
    return next((str(p) for p in _candidates(binary) if os.access(p, os.X_OK)), None)


def _target(ptx: str) -> str:
    match = re.search(r"^\s*\.target\s+(sm_\w+)", ptx, re.MULTILINE)
    if match is None:
        raise ValueError("the PTX has no .target line")
    return match.group(1)


def _run(cmd: list[str]) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{Path(cmd[0]).name} failed:\n{done.stderr.strip()}")
    return done.stdout


def _tools() -> tuple[str | None, str | None]:
    """The assembler and the lister (``nvdisasm``, else ``cuobjdump``), None where missing."""
    return find_tool("ptxas"), find_tool("nvdisasm") or find_tool("cuobjdump")


def available() -> bool:
    """Whether :func:`disassemble` finds both programs it needs."""
    return None not in _tools()


def _missing(what: str, names: list[str]) -> MissingToolError:
    return MissingToolError(
        f"{what} needs NVIDIA's {' and '.join(names)}, found neither on PATH nor beside Triton "
        "or CUDA; install them (pip install nvidia-cuda-nvcc nvidia-cuda-nvdisasm) or "
        "name them with TRITON_PTXAS_PATH and TRITON_NVDISASM_PATH"
    )


def _line_info_flags() -> list[str]:
    """``-lineinfo``; ``-suppress-debug-info`` too under ``TRITON_DISABLE_LINE_INFO``, as Triton."""
    return ["-lineinfo", "-suppress-debug-info"] if line_info_disabled() else ["-lineinfo"]


def _assemble_to(ptxas: str, ptx: str, tmp: Path) -> Path:
    """Assemble ``ptx`` into ``tmp/kernel.cubin`` and return that path."""
    src, cubin = tmp / "kernel.ptx", tmp / "kernel.cubin"
    src.write_text(ptx)
    _run([ptxas, *_line_info_flags(), f"-arch={_target(ptx)}", str(src), "-o", str(cubin)])
    return cubin


def assemble(ptx: str) -> bytes:
    """The cubin of ``ptx`` (Triton's ``asm["cubin"]``), assembled by ``ptxas``."""
    ptxas = find_tool("ptxas")
    if ptxas is None:
        raise _missing('asm["cubin"]', ["ptxas"])
    with tempfile.TemporaryDirectory(prefix="minitriton-sass-") as tmp:
        return _assemble_to(ptxas, ptx, Path(tmp)).read_bytes()


def disassemble(ptx: str) -> str:
    """The SASS of ``ptx``: assembled by ``ptxas``, listed by ``nvdisasm`` or ``cuobjdump``."""
    ptxas, lister = _tools()
    if ptxas is None or lister is None:
        names = [name for name, tool in (("ptxas", ptxas), ("nvdisasm or cuobjdump", lister))
                 if tool is None]  # fmt: skip
        raise _missing('asm["sass"]', names)
    with tempfile.TemporaryDirectory(prefix="minitriton-sass-") as tmp:
        cubin = _assemble_to(ptxas, ptx, Path(tmp))
        if Path(lister).name.startswith("nvdisasm"):
            return _run([lister, "-c", str(cubin)])  # the code sections
        return _run([lister, "-sass", str(cubin)])
