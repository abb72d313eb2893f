"""``import minitriton`` imports what a first launch needs, and nothing more.

A timing test would flake on a shared machine (``benchmarks/import_time.py``
measures the time); these tests read which modules a fresh process has
loaded after ``import minitriton``. The parser and its grammar (a kernel
found in the disk cache never parses), the IR's text form, the GPU backend
and llvmlite (the emulator needs neither), the course, the tools, torch and
the autotuner's benchmarks are all loaded on first use, through module
``__getattr__`` (PEP 562) for the public names, so ``minitriton.X`` works
unchanged. NumPy, which a launch needs, is loaded neither by the import
nor by a kernel's definition: the first launch imports it, unless the
program did.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minitriton

ROOT = Path(__file__).resolve().parents[1]

#: Modules that ``import minitriton`` must not load (a prefix covers its submodules).
HEAVY = (
    "lark",
    "llvmlite",
    "torch",
    "triton",
    "cuda",
    "matplotlib",
    "numpy",
    "minitriton.backend",
    "minitriton.backends",
    "minitriton.cli",
    "minitriton.compat",
    "minitriton.course",
    "minitriton.emulator",
    "minitriton.frontend.ast",
    "minitriton.frontend.lower",
    "minitriton.frontend.parser",
    "minitriton.inductor",
    "minitriton.ir.parser",
    "minitriton.ir.printer",
    "minitriton.passes",
    "minitriton.testing",
    "minitriton.tools",
    "minitriton.torch_ops",
)

CHILD = "import json, sys, minitriton; print(json.dumps(sorted(sys.modules)))"


def fresh_import(child: str = CHILD, path: str = "") -> tuple[list[str], str]:
    """What ``child`` prints last (``sys.modules``, for :data:`CHILD`) in a fresh process,
    and its ``-X importtime``; ``path`` goes on ``PYTHONPATH`` too."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), path) if p))
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", child],
        capture_output=True, text=True, env=env, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def importers(importtime: str, module: str) -> list[str]:
    """The chain that imported ``module``, innermost first, read from ``-X importtime``.

    The report lists a module after the ones it imported, one level deeper.
    """
    rows = []
    for line in importtime.splitlines():
        if line.startswith("import time:") and "|" in line and "self [us]" not in line:
            name = line.rsplit("|", 1)[1]
            rows.append((len(name) - len(name.lstrip()), name.strip()))
    for i, (depth, name) in enumerate(rows):
        if name == module:
            chain = [name]
            for outer_depth, outer in rows[i + 1 :]:
                if outer_depth < depth:
                    chain.append(outer)
                    depth = outer_depth
            return chain
    return []


def heavy(modules: list[str]) -> list[str]:
    """The modules of ``modules`` that :data:`HEAVY` lists."""
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_import_minitriton_loads_no_heavy_module() -> None:
    modules, importtime = fresh_import()
    assert "minitriton.jit" in modules  # the launcher, which @jit needs, is there
    found = heavy(modules)
    chains = "\n".join(" <- ".join(importers(importtime, m)) for m in found)
    assert found == [], f"imported by `import minitriton`:\n{chains}"


def test_the_check_names_what_imported_a_heavy_module() -> None:
    report = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       5 |          5 |       lark.utils\n"
        "import time:      10 |         15 |     lark\n"
        "import time:      20 |         35 |   minitriton.frontend.parser\n"
        "import time:       1 |          1 |   minitriton.env\n"
        "import time:      30 |         66 | minitriton\n"
    )
    assert importers(report, "lark") == ["lark", "minitriton.frontend.parser", "minitriton"]
    assert heavy(["minitriton.jit", "lark.utils", "minitriton.backendish", "torch"]) == [
        "lark.utils",
        "torch",
    ]


@pytest.mark.parametrize("package", ["minitriton", "minitriton.runtime", "minitriton.frontend"])
def test_every_public_name_is_there(package: str) -> None:
    module = sys.modules.get(package) or __import__(package, fromlist=["_"])
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        getattr(module, "no_such_name")  # noqa: B009


def test_lazy_names_are_the_modules_objects() -> None:
    from minitriton import launch_checks, torch_interop
    from minitriton.compiler import CompiledKernel

    assert minitriton.CompiledKernel is CompiledKernel
    assert minitriton.LaunchError is launch_checks.LaunchError
    assert minitriton.reinterpret is torch_interop.reinterpret
    autotune_module = importlib.import_module("minitriton.autotune")
    assert minitriton.runtime.Autotuner is autotune_module.Autotuner
    assert minitriton.testing.__name__ == "minitriton.testing"
    # functions named as a submodule stay the functions once the submodules are loaded
    assert callable(minitriton.autotune) and minitriton.autotune.__name__ == "autotune"
    assert minitriton.jit.__name__ == "jit"


def test_tritons_package_attributes_are_there_in_a_fresh_process() -> None:
    # after ``import triton``, Triton's package has these (its runtime imports backends)
    code = (
        "import minitriton as t, sys; "
        "print(t.backends.compiler.GPUTarget.__name__, t.tools.__name__, "
        "t.InterpreterError.__name__, t.MockTensor.__name__, t.compiler.ASTSource.__name__)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [
        "GPUTarget", "minitriton.tools", "InterpreterError", "MockTensor", "ASTSource",
    ]  # fmt: skip


#: A module of kernels: ``@jit``, ``@autotune`` over ``@heuristics``, ``Config``, ``cdiv``.
KERNELS = """
import minitriton as triton
import minitriton.language as tl


@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.autotune([triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


GRID = (triton.cdiv(100, 32),)
BLOCK = triton.next_power_of_2(20)
"""

#: Defines the kernels, then (NumPy imported only now) launches them on the emulator.
LAUNCH = """
import json, sys
import import_cost_kernels as k
defined = sorted(sys.modules)
import numpy as np
x, y = np.arange(100, dtype=np.float32), np.full(100, 0.5, dtype=np.float32)
added, scaled = np.zeros_like(x), np.zeros_like(x)
k.add[k.GRID](x, y, added, 100, BLOCK=k.BLOCK)
k.scale[lambda meta: (k.triton.cdiv(100, meta["BLOCK"]),)](x, scaled, 100)
print(json.dumps([added.tolist(), scaled.tolist(), defined]))
"""


def test_a_kernels_definition_loads_no_numpy_and_its_first_launch_runs(tmp_path: Path) -> None:
    (tmp_path / "import_cost_kernels.py").write_text(KERNELS)
    cache = tmp_path / "cache"
    child = f"import os\nos.environ.update(MINITRITON_CACHE_DIR={str(cache)!r}, "
    child += "MINITRITON_BACKEND='emulator')\n" + LAUNCH
    (added, scaled, defined), _ = fresh_import(child, path=str(tmp_path))
    assert "minitriton.jit" in defined and "import_cost_kernels" in defined
    # NumPy among them: the definitions preloaded nothing that needs it. The namespace
    # package `cuda` is there when cuda-python is: a definition asks whether it is installed.
    assert [m for m in heavy(defined) if m != "cuda"] == []
    x = np.arange(100, dtype=np.float32)
    np.testing.assert_array_equal(added, x + 0.5)
    np.testing.assert_array_equal(scaled, x * 2)
