"""The PTX check's choices (``python -m minitriton.tools.ptxas_check``).

Which targets a kernel is assembled for, and the kernels only the emulator
runs: a dump run writes the GPU's refusal (``NN-gpu-error.txt``) and the
launch goes on; the check then wants the same refusal again, and fails a
kernel that compiles after all or is refused for another reason.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from minitriton.tools.ptxas_check import (
    NON_DOT_ARCHS,
    Kernel,
    archs_for,
    check_one,
    find_kernels,
)
from tests.kernels import compat_suite as K


def test_inline_ptx_skips_sm_75() -> None:
    asm = Kernel("a", Path("a.ir"), '%b = tt.elementwise_inline_asm(%a) {asm = "..."}', 4)
    assert archs_for(asm) == tuple(a for a in NON_DOT_ARCHS if a != "sm_75")


def _dump(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, k: int) -> list[Kernel]:
    """Launch ``small_dot`` with inner size ``k`` on the emulator, dumping; the dumped kernels."""
    monkeypatch.setenv("MINITRITON_DUMP_DIR", str(tmp_path / "dump"))
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    a, b = np.ones((16, k), np.float16), np.ones((k, 16), np.float16)
    c = np.zeros((16, 16), np.float32)
    K.small_dot[(1,)](a, b, c, M=16, N=16, K=k, backend="emulator")
    assert (c == k).all()  # the launch ran, whatever the GPU thinks of the kernel
    return find_kernels([tmp_path / "dump"])


def test_an_emulator_only_kernel_must_be_refused_again(tmp_path, monkeypatch) -> None:
    (kernel,) = _dump(tmp_path, monkeypatch, k=4)
    assert kernel.refused is not None and "K >= 16 on the GPU" in kernel.refused
    ok, detail = check_one(kernel, "sm_80", "ptxas-not-needed", str(tmp_path))
    assert ok, detail
    # The same kernel, but the GPU's diagnostic no longer points to the emulator.
    other = dataclasses.replace(kernel, text=kernel.text.replace("tt.dot(", "tt.bogus("))
    ok, detail = check_one(other, "sm_80", "ptxas-not-needed", str(tmp_path))
    assert not ok and "another diagnostic" in detail


def test_a_refused_kernel_that_compiles_fails_the_check(tmp_path, monkeypatch) -> None:
    (kernel,) = _dump(tmp_path, monkeypatch, k=16)
    assert kernel.refused is None
    claimed = dataclasses.replace(kernel, refused="error: ... the emulator runs any K")
    ok, detail = check_one(claimed, "sm_80", "ptxas-not-needed", str(tmp_path))
    assert not ok and "compiled, but the dump run refused it" in detail


FP8_CAST = """tt.func @to_fp8(%x_ptr: ptr<f32>, %y_ptr: ptr<f8e4nv>) {
  %0 = tt.make_range() {end = 128, start = 0} : tensor<128xi32>
  %1 = tt.splat(%x_ptr) : tensor<128xptr<f32>>
  %2 = tt.addptr(%1, %0) : tensor<128xptr<f32>>
  %x = tt.load(%2) : tensor<128xf32>
  %y = arith.cast(%x) : tensor<128xf8e4nv>
  %3 = tt.splat(%y_ptr) : tensor<128xptr<f8e4nv>>
  %4 = tt.addptr(%3, %0) : tensor<128xptr<f8e4nv>>
  tt.store(%4, %y)
  tt.return()
}
"""


def test_a_kernel_refused_for_an_older_arch_on_purpose_is_checked_there(tmp_path) -> None:
    # rounding to fp8e4nv needs sm_89's cvt: sm_80 refuses it with a located "needs sm_89"
    kernel = Kernel("to_fp8", tmp_path / "to_fp8.ir", FP8_CAST, 4)
    ok, detail = check_one(kernel, "sm_80", "ptxas-not-needed", str(tmp_path))
    assert ok and detail.startswith("refused for sm_80: converting to fp8e4nv"), detail
    # Any other compile error still fails the check.
    broken = dataclasses.replace(kernel, text=FP8_CAST.replace("store(%4, %y)", "store(%4, %x)"))
    ok, detail = check_one(broken, "sm_80", "ptxas-not-needed", str(tmp_path))
    assert not ok and "compile error" in detail


def test_a_refusal_counts_by_its_needs_arch_field_not_its_words() -> None:
    from minitriton.diagnostics import Location, error
    from minitriton.tools.ptxas_check import _needs_newer_arch

    here = Location("k.py", 1, 1)
    marked = error(here, "atomic add on bf16 needs sm_90", needs_arch=90)
    assert _needs_newer_arch(marked, "sm_80")
    assert not _needs_newer_arch(marked, "sm_90a")  # the arch it needs: a real failure there
    assert not _needs_newer_arch(error(here, "this kernel needs sm_90"), "sm_80")  # words only
