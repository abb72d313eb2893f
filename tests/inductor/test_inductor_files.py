"""Kernel files that torch.compile writes run on MiniTriton with torch's numbers.

``files/`` holds kernel files as TorchInductor (torch 2.14) wrote them with
``TORCHINDUCTOR_BENCHMARK_KERNEL=1`` and ``cpu_backend="triton"`` (see
``files/README.md``); ``handwritten/`` holds kernels written by hand in
Inductor's form, for what a small CPU model does not reach (an online
softmax, a foreach kernel, a split scan, a matmul template), in the form of
a GPU machine's files. ``check_files.py`` runs each
one's ``call(get_args())`` in a child process (the one set-up that
``minitriton run`` makes) and compares what the kernel wrote with torch.
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
FILES = sorted([*(HERE / "files").glob("*.py"), *(HERE / "handwritten").glob("*.py")])
# Kernels that need what the language lacks; each entry is a strict xfail (none today).
MISSING: dict[str, str] = {}
# Hand-written files that call Inductor's helpers with a newer torch's signature.
NEEDS_TORCH_2_14 = {"triton_red_fused__softmax_online_0.py"}
TORCH_2_14 = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 14)


def run_files(backend: str, files: list[Path]) -> dict[str, dict[str, object]]:
    """Run ``check_files.py`` on ``files``; its verdict per file name."""
    env = dict(os.environ, MINITRITON_BACKEND=backend)
    result = subprocess.run(
        [sys.executable, str(HERE / "check_files.py"), backend, *map(str, files)],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    verdicts = {}
    for line in result.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            verdicts[row["file"]] = row
    assert verdicts, result.stderr[-3000:]
    return verdicts


WRONG = "wrong_gelu.py"


@pytest.fixture(scope="module")
def emulator_verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    """Every file's verdict, and that of a copy of the GELU kernel that computes 1% too much."""
    good = (HERE / "files" / "triton_poi_fused_gelu_1.py").read_text()
    wrong = tmp_path_factory.mktemp("wrong") / WRONG
    wrong.write_text(good.replace("tmp2 = tmp0 * tmp1", "tmp2 = tmp0 * tmp1 * 1.01"))
    return run_files("emulator", [*FILES, wrong])


@pytest.mark.parametrize("name", [p.name for p in FILES])
def test_inductor_file_on_the_emulator(name: str, emulator_verdicts: dict, request) -> None:
    if name in NEEDS_TORCH_2_14 and not TORCH_2_14:
        pytest.skip("written for torch 2.14's triton_helpers.online_softmax_combine")
    if name in MISSING:
        request.applymarker(pytest.mark.xfail(strict=True, reason=MISSING[name]))
    verdict = emulator_verdicts[name]
    assert verdict["ok"], verdict["detail"]


@pytest.mark.gpu
def test_inductor_files_on_the_gpu() -> None:
    from minitriton.backend import gpu_available

    if not gpu_available():
        pytest.skip("no GPU")
    skip = set(MISSING) | (set() if TORCH_2_14 else NEEDS_TORCH_2_14)
    verdicts = run_files("gpu", [p for p in FILES if p.name not in skip])
    failed = {n: v["detail"] for n, v in verdicts.items() if not v["ok"]}
    assert not failed, failed


def test_the_checker_rejects_a_wrong_kernel(emulator_verdicts: dict) -> None:
    """A kernel that writes the wrong numbers is reported, not passed."""
    verdict = emulator_verdicts[WRONG]
    assert not verdict["ok"] and "differs" in str(verdict["detail"])
