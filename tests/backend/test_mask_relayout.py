"""A mask computed in a tensor-core accumulator layout, moved to another layout.

``keep = tl.dot(a, b) > 0`` is an ``i1`` block in the accumulator's layout;
used as the mask of a load in the blocked layout it needs a
``ttg.convert_layout``. The accumulator's vectorized path stored the bytes
and gave them back as ``i8``, and the load's predicate then failed with an
internal error (found by the long fuzz run). Masks now take the element-wise
path, which turns the bytes back into ``i1``.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from minitriton.compiler import CompileOptions, compile_kernel

SOURCE = """
import minitriton as triton
import minitriton.language as tl


@triton.jit
def dot_mask(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tile = offs[:, None] * BLOCK + offs[None, :]
    c = tl.dot(tl.load(a_ptr + tile), tl.load(b_ptr + tile))
    keep = c > 0
    tl.store(c_ptr + tile, tl.load(c_ptr + tile, mask=keep, other=0.0) + 1.0)
"""


def dot_mask(tmp_path: Path) -> Any:
    path = tmp_path / "mask_relayout.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("mask_relayout", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.dot_mask


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_a_mask_in_the_accumulator_layout_converts(tmp_path: Path, monkeypatch: Any, arch: str):
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    fn = dot_mask(tmp_path)
    a = np.zeros((64, 64), np.float16)
    c = np.zeros((64, 64), np.float32)
    specs = fn.specialize(fn.bind((a, a, c), {"BLOCK": 64}))
    out = compile_kernel(fn.source, specs, CompileOptions(arch=arch), stop_after="ptx")
    ptx = out.asm["ptx"]
    assert "ttg.convert_layout" in out.asm["ttgir"]
    assert "setp.ne" in ptx  # the mask's bytes read back as predicates
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas not found")
    (tmp_path / "k.ptx").write_text(ptx)
    proc = subprocess.run(
        [ptxas, f"-arch={arch}", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
