"""Autotuning on a real GPU: the first process times the configs, the second reads the winner.

Each "process" is a real Python subprocess running the same script over the
same cache directory; the test reads their stderr. Skipped without a GPU.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from minitriton.jit import gpu_available

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu_available(), reason="needs an NVIDIA GPU and cuda-python"),
]

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import minitriton as triton
    import minitriton.language as tl

    @triton.autotune(
        configs=[triton.Config({"BLOCK": 256}, num_warps=2),
                 triton.Config({"BLOCK": 1024}, num_warps=4),
                 triton.Config({"BLOCK": 4096}, num_warps=8)],
        key=["n"],
        warmup=5,
        rep=20,
    )
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        total = tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, total, mask=mask)

    n = 1 << 20
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    out = np.zeros_like(x)
    add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, x, out, n, backend="gpu")
    np.testing.assert_array_equal(out, x + x)
    print("BEST", add_kernel.best_config)
    """
)


def run_process(script: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MINITRITON_CACHE_DIR": str(cache), "MINITRITON_BACKEND": "gpu"}
    env.pop("MINITRITON_CACHE", None)
    env.pop("MINITRITON_AUTOTUNE_CACHE", None)
    return subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300
    )


def test_a_second_process_skips_the_tuning(tmp_path: Path):
    script = tmp_path / "tuned_add.py"
    script.write_text(SCRIPT)
    first = run_process(script, tmp_path / "cache")
    assert first.returncode == 0, first.stderr
    assert "minitriton: autotuning 'add_kernel' for n=1048576: 3 configs" in first.stderr
    for i in (1, 2, 3):
        assert f"  config {i}/3: BLOCK: " in first.stderr
    assert first.stderr.count(" ms\n") >= 3
    assert len(list((tmp_path / "cache").glob("autotune-*.json"))) == 1

    second = run_process(script, tmp_path / "cache")
    assert second.returncode == 0, second.stderr
    assert "autotuning" not in second.stderr
    assert "from the cache" in second.stderr
    best = [line for line in first.stdout.splitlines() if line.startswith("BEST")]
    assert best and best == [line for line in second.stdout.splitlines() if line.startswith("BEST")]
