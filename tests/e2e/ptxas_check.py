"""Compile a kernel for a signature down to PTX and assemble it with ``ptxas``.

The e2e tests that add language features check that each kernel's PTX is
accepted for sm_90a and sm_80 even where no GPU runs it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from minitriton.backend.build import PTXModule, compile_ir
from minitriton.compiler import compile_kernel
from minitriton.jit import base_jit_function
from minitriton.signature import kernel_params, parse_signature

PTXAS = shutil.which("ptxas")

#: Skips a test where the CUDA toolkit's ``ptxas`` is not on PATH.
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="needs ptxas from the CUDA toolkit")


def assemble(kernel: Any, signature: str, arch: str, tmp_path: Path) -> PTXModule:
    """``kernel`` compiled for ``signature`` and ``arch``; fails the test if ptxas refuses it."""
    jit = base_jit_function(kernel)
    return assemble_specs(kernel, parse_signature(signature, kernel_params(jit.fn)), arch, tmp_path)


def assemble_for_args(kernel: Any, args: tuple[Any, ...], arch: str, tmp_path: Path) -> PTXModule:
    """:func:`assemble`, specialized for actual arguments (tuples among them)."""
    jit = base_jit_function(kernel)
    return assemble_specs(kernel, jit.specialize(jit.bind(args, {})), arch, tmp_path)


def assemble_specs(kernel: Any, specs: list[Any], arch: str, tmp_path: Path) -> PTXModule:
    """``kernel`` compiled for ``specs`` and ``arch``; fails the test if ptxas refuses it."""
    jit = base_jit_function(kernel)
    module = compile_kernel(jit.source, specs, stop_after="ir-opt").module
    compiled = compile_ir(module, arch)
    ptx = tmp_path / "k.ptx"
    ptx.write_text(compiled.ptx)
    assert PTXAS is not None
    proc = subprocess.run(
        [PTXAS, f"-arch={arch}", str(ptx), "-o", str(tmp_path / "k.cubin")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return compiled
