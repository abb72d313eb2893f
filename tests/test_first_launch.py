"""What a first launch in a fresh process does, with an empty and a warm disk cache.

A timing test would flake on a shared machine; these tests guard the work
instead. In a fresh process (``CHILD``), the first launch of a kernel:

* imports no module: the first ``@jit`` definition imported what it needs
  (:func:`minitriton.jit.preload`; the child imports NumPy first, as a
  script does, since a definition never imports NumPy itself);
* with an empty cache, parses the kernel and its helper once each, all with
  the fast LALR driver (Lark's own loop never runs on valid input);
* with a warm cache, parses nothing, neither the kernel's source nor the
  cached IR's text (the entry's pickled module is loaded), and the
  frontend's lowering and the passes are never imported at all;
* with no backend chosen, on a machine without cuda-python, or with it but
  without NVIDIA's driver, picks the emulator without importing the GPU
  backend or llvmlite.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(
    """
    import json, sys
    NO_CUDA_PYTHON  # replaced by run_child
    import numpy as np
    import lark
    from minitriton.frontend import lalr
    import minitriton.ir.parser as ir_parser
    counts = {"lark": 0, "fast": 0, "ir_text": 0}

    def counting(name, real):
        def wrapper(*args, **kwargs):
            counts[name] += 1
            return real(*args, **kwargs)
        return wrapper

    lark.Lark.parse = counting("lark", lark.Lark.parse)
    lalr.FastLALR.parse = counting("fast", lalr.FastLALR.parse)
    ir_parser.Parser.parse_module = counting("ir_text", ir_parser.Parser.parse_module)
    from tests.kernels.cache_kernels import scale_kernel
    counts = dict.fromkeys(counts, 0)  # the definitions' preload parsed its warm-up text
    x = np.arange(300, dtype=np.float32) % 17
    out = np.zeros_like(x)
    before = set(sys.modules)
    compiled = scale_kernel[(5,)](x, out, 300, BLOCK=64, **LAUNCH_OPTIONS)
    imported = sorted(set(sys.modules) - before)
    want = x * 3  # SCALE, and each block's maximum added to its first lane
    want[::64] += [max(want[i:i + 64].max(), 0) for i in range(0, 300, 64)]
    np.testing.assert_array_equal(out, want)
    print(json.dumps({
        **counts,
        "imported": imported,
        "from_disk": compiled.from_disk,
        "lowering": "minitriton.frontend.lower" in sys.modules,
        "passes": "minitriton.passes.pipeline" in sys.modules,
        "gpu_backend": "minitriton.backend" in sys.modules or "llvmlite" in sys.modules,
        "ran_on": type(compiled).__name__,
    }))
    """
)


def run_child(cache: Path, default_backend: bool = False) -> dict:
    """One fresh process launching scale_kernel with the disk cache ``cache``.

    With ``default_backend`` the launch names no backend, and the child acts
    as a machine without cuda-python (``import cuda`` fails).
    """
    env = dict(os.environ, MINITRITON_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    env.pop("MINITRITON_CACHE", None)
    env.pop("MINITRITON_BACKEND", None)
    child = CHILD.replace("LAUNCH_OPTIONS", "{}" if default_backend else "{'backend': 'emulator'}")
    no_cuda = "sys.modules['cuda'] = None" if default_backend else "pass"
    child = child.replace("NO_CUDA_PYTHON  # replaced by run_child", no_cuda)
    proc = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_first_launch_cold_then_warm(tmp_path: Path) -> None:
    cold = run_child(tmp_path)
    assert cold["imported"] == []  # everything the compile needs was preloaded
    assert cold["from_disk"] is False and cold["lowering"] and cold["passes"]
    assert cold["fast"] == 3  # the kernel and its two helpers, once each
    assert cold["lark"] == 0 and cold["ir_text"] == 0

    warm = run_child(tmp_path)
    assert warm["imported"] == []
    assert warm["from_disk"] is True
    assert warm["fast"] == 0 and warm["lark"] == 0 and warm["ir_text"] == 0
    assert warm["lowering"] is False and warm["passes"] is False


def test_default_backend_without_cuda_python_loads_no_gpu_code(tmp_path: Path) -> None:
    for run in ("cold", "warm"):
        child = run_child(tmp_path, default_backend=True)
        assert child["imported"] == [], run
        assert child["from_disk"] is (run == "warm")
        assert child["gpu_backend"] is False, run  # nor at the @jit definition
        assert child["ran_on"] == "CompiledKernel"  # the emulator's compiled form


def test_cuda_python_without_a_driver_loads_no_gpu_code(tmp_path: Path) -> None:
    jit_module = importlib.import_module("minitriton.jit")
    if jit_module._driver_library_loads():
        pytest.skip("this machine has NVIDIA's driver")
    fake = tmp_path / "site" / "cuda" / "bindings"  # an installed cuda-python, as seen by import
    fake.mkdir(parents=True)
    for folder in (fake, fake.parent):
        (folder / "__init__.py").write_text("")
    probe = (
        "import importlib, importlib.util, json, sys\n"
        "jit = importlib.import_module('minitriton.jit')\n"
        "print(json.dumps([importlib.util.find_spec('cuda.bindings') is not None,\n"
        "                  jit.gpu_available(), 'minitriton.backend' in sys.modules]))\n"
    )
    env = dict(os.environ, PYTHONPATH=f"{tmp_path / 'site'}{os.pathsep}{ROOT}")
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    found, available, backend_imported = json.loads(proc.stdout)
    assert found is True  # the check below is the driver's, not cuda-python's
    assert available is False and backend_imported is False
