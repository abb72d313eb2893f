"""Freed buffers stay in the process: a repeated launch does not page-fault its memory in."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import minitriton as triton
from minitriton.emulator import malloc
from tests.kernels.vector_add import add_kernel


def minor_faults() -> int:
    resource = pytest.importorskip("resource")
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_repeated_launches_reuse_freed_memory():
    if not malloc.tune_malloc():
        pytest.skip("needs glibc's mallopt")
    n = 98_432
    x = np.arange(n, dtype=np.float32)
    out = np.zeros_like(x)
    faults = []
    for _ in range(4):
        before = minor_faults()
        add_kernel[(triton.cdiv(n, 1024),)](x, x, out, n, BLOCK_SIZE=1024, backend="emulator")
        faults.append(minor_faults() - before)
    np.testing.assert_array_equal(out, x + x)
    assert max(faults[1:]) < 100, faults  # about 1,200 per launch with glibc's defaults


def test_user_settings_are_left_alone(monkeypatch):
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "131072")
    assert malloc.tune_malloc() is False
