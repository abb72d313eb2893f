"""torch's Inductor runtime under the import swap, and ``minitriton run/debug`` on its files.

``layernorm_gelu/`` holds the two kernels Inductor writes for a LayerNorm +
GELU model in the form it writes them on a GPU machine (``device='cuda:0'``,
``torch.cuda.set_device``, the raw CUDA stream); here, with no GPU, they run
on the CPU. Each test runs a child process: the swap changes the process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.torch, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE / "layernorm_gelu"
LAYER_NORM = EXAMPLE / "triton_per_fused_native_layer_norm_0.py"


def run(args: list[str], stdin: str = "", backend: str = "emulator") -> subprocess.CompletedProcess:
    env = dict(os.environ, MINITRITON_BACKEND=backend)
    env.pop("MINITRITON_CHECKS", None)
    return subprocess.run(
        [sys.executable, *args], input=stdin, capture_output=True, text=True, env=env,
        cwd=HERE, timeout=300,
    )  # fmt: skip


def test_inductor_runtime_helpers_import_and_run_under_the_alias() -> None:
    """triton_helpers imports unchanged after real Triton was imported; its helpers are right."""
    result = run([str(HERE / "scripts" / "helpers_under_alias.py")])
    assert result.returncode == 0, result.stderr[-3000:]
    checks = json.loads(result.stdout.strip().splitlines()[-1])
    assert checks.pop("target") == "sm_90"
    assert checks.pop("out_of_resources") == "minitriton.runtime.errors"
    assert checks == dict.fromkeys(checks, True)


def test_first_configs_are_inductors_own() -> None:
    """For ~200 size hints and reduction hints, the config is the first of Inductor's list.

    Inductor's own heuristics module imports under the alias and lists its
    configs without compiling; the cases lead it to many different configs.
    """
    result = run([str(HERE / "scripts" / "compare_configs.py")])
    assert result.returncode == 0, result.stderr[-3000:]
    verdict = json.loads(result.stdout.strip().splitlines()[-1])
    if "skipped" in verdict:
        pytest.skip(verdict["skipped"])
    assert verdict["compared"] >= 190 and verdict["distinct"] >= 20
    assert verdict["differ"] == []


def test_minitriton_run_on_a_file_written_for_cuda() -> None:
    """The file's own benchmark block runs: one launch on the emulator, timed."""
    result = run(["-m", "minitriton", "run", str(EXAMPLE / "triton_poi_fused_gelu_1.py")])
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("GB/s")
    assert "one run on the emulator" in result.stderr


SESSION = """\
b 47
c
p XBLOCK
p tmp4.shape
p tmp0.shape
p tmp6 * 64.0 - tmp4
pid 5
c
c
"""


def test_minitriton_debug_steps_through_an_inductor_kernel() -> None:
    """Breakpoint, the config Inductor would pick (XBLOCK 1), values, another program."""
    result = run(["-m", "minitriton", "debug", str(LAYER_NORM)], SESSION)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "debugging triton_per_fused_native_layer_norm_0, grid (8, 1, 1), program (0," in out
    assert "triton_per_fused_native_layer_norm_0.py:47" in out
    assert "-> tmp7 = tmp0 - tmp6" in out
    assert "(mtdb) p XBLOCK\n1\n" in out
    assert "(mtdb) p tmp4.shape\n(1, 1)\n" in out and "(mtdb) p tmp0.shape\n(1, 64)\n" in out
    assert "(mtdb) p tmp6 * 64.0 - tmp4\nfp32[1, 1] [[0.]]\n" in out  # the mean is sum / 64
    assert "program (5, 0, 0) (breakpoint 1)" in out
    assert "the script finished" in out
