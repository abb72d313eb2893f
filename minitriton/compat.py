"""Run scripts written for Triton, unchanged, on MiniTriton: ``python -m minitriton.compat``.

:func:`alias_triton` makes ``import triton``, ``import triton.language as tl``,
``from triton.language.extra import libdevice``, ``triton.testing``,
``triton.runtime.driver`` and the rest import MiniTriton's modules, so a
script needs no edit at all. :func:`run_script` runs one script that way in
a child process (on the emulator unless told otherwise) and reports whether
it finished and how long it took; the command line runs every ``*.py`` file
given (or found in the folders given) and prints one row per script::

    python -m minitriton.compat path/to/triton/python/tutorials/0[1-9]-*.py

``MINITRITON_BENCH_POINTS`` (default here: 1) limits each benchmark table to
its first x values, since the emulator is slow on GPU-sized inputs; the
scripts' own checks run at their own sizes.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.abc
import importlib.util
import os
import pkgutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import minitriton

#: What a script prints when one of its own checks failed.
FAILED_CHECK = "❌"

# Subpackages that Triton code imports by name, beyond those imported with minitriton.
_EXTRA_MODULES = ("minitriton.language.extra.cuda.libdevice", "minitriton.tools.tensor_descriptor")

# Subpackages imported whole, every module in them, so that ``triton.<sub>.<module>`` resolves.
_ALIASED_PACKAGES = ("language", "runtime", "backends", "compiler")


def alias_triton() -> None:
    """Make ``triton`` and every ``triton.<sub>`` import the MiniTriton module of that name.

    Beside the language and the runtime, this covers the host-side names
    that libraries built on Triton import (``triton.backends``,
    ``triton.compiler.compiler.triton_key``, ``triton.runtime.jit``,
    ``triton.runtime.autotuner``). Modules of an installed Triton that were
    imported before are dropped from ``sys.modules``, so that no later import
    mixes the two.
    """
    for name in _EXTRA_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
    for info in pkgutil.walk_packages(minitriton.__path__, "minitriton."):
        if info.name.split(".")[1] in _ALIASED_PACKAGES:
            try:
                importlib.import_module(info.name)
            except ImportError:
                continue
    for name in [n for n in sys.modules if n == "triton" or n.startswith("triton.")]:
        if not _is_minitriton(sys.modules[name]):
            del sys.modules[name]
    for name, module in list(sys.modules.items()):
        if name == "minitriton" or name.startswith("minitriton."):
            sys.modules["triton" + name[len("minitriton") :]] = module
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import triton.<name>`` of a module not imported yet: ``minitriton.<name>``'s module
    object itself, so that each module exists once under both names (a second copy would
    keep its own state: a patch of ``triton.testing.do_bench`` would not reach it)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        # Only while ``triton`` is the alias: a real Triton imported later keeps its modules.
        if not fullname.startswith("triton.") or sys.modules.get("triton") is not minitriton:
            return None
        target_name = "minitriton" + fullname[len("triton") :]
        if importlib.util.find_spec(target_name) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> Any:
        return importlib.import_module("minitriton" + spec.name[len("triton") :])

    def exec_module(self, module: Any) -> None:
        """The module ran when ``minitriton.<name>`` was imported."""


def _is_minitriton(module: object) -> bool:
    name = getattr(module, "__name__", "")
    return isinstance(name, str) and (name == "minitriton" or name.startswith("minitriton."))


def torch_shims() -> None:
    """Fill gaps in torch's CPU device module that GPU scripts reach through ``DEVICE.type``.

    On the emulator the active torch device is the CPU, and tutorial 02 calls
    ``getattr(torch, DEVICE.type).set_stream(stream)``, which ``torch.cpu``
    lacks: it becomes a no-op (the CPU has one stream).
    """
    try:
        import torch
    except ImportError:
        return
    if not hasattr(torch.cpu, "set_stream"):
        setattr(torch.cpu, "set_stream", lambda stream: None)  # noqa: B010 (mypy: torch.cpu lacks it)


@dataclass
class Result:
    """How one script ran."""

    path: Path
    returncode: int
    seconds: float
    tail: str

    @property
    def passed(self) -> bool:
        """The script finished without an error and printed no failed check.

        Some tutorials report their check by printing rather than asserting
        (tutorial 03 prints "❌ Triton and Torch differ").
        """
        return self.returncode == 0 and FAILED_CHECK not in self.tail


def run_script(path: Path, timeout: float = 600, backend: str = "emulator") -> Result:
    """Run ``path`` with ``triton`` aliased to MiniTriton, in a child process."""
    env = dict(os.environ)
    env.setdefault("MINITRITON_BENCH_POINTS", "1")
    env.setdefault("MPLBACKEND", "Agg")
    env["MINITRITON_BACKEND"] = backend
    code = (
        "import sys, runpy; from minitriton.compat import alias_triton, torch_shims; "
        "alias_triton(); torch_shims(); "
        "sys.argv = [sys.argv[1]]; runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, str(path)],
            env=env,
            cwd=str(path.parent),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else e.stdout or ""
        return Result(path, 124, time.perf_counter() - start, out[-2000:] + "\n(timed out)")
    out = proc.stdout + proc.stderr
    earlier = FAILED_CHECK in out[:-2000]
    tail = out[-2000:] + (f"\n{FAILED_CHECK} (printed earlier)" if earlier else "")
    return Result(path, proc.returncode, time.perf_counter() - start, tail)


def _scripts(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for p in map(Path, paths):
        found.extend(sorted(p.glob("*.py")) if p.is_dir() else [p])
    return found


def main(argv: list[str] | None = None) -> int:
    """Run each script; print a table; exit 1 if any failed."""
    parser = argparse.ArgumentParser(prog="python -m minitriton.compat", description=__doc__)
    parser.add_argument("paths", nargs="+", help="Triton scripts, or folders of them")
    parser.add_argument("--backend", default="emulator", choices=["emulator", "gpu"])
    parser.add_argument("--timeout", type=float, default=600, help="seconds per script")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each failure's tail")
    args = parser.parse_args(argv)
    results = [run_script(p, args.timeout, args.backend) for p in _scripts(args.paths)]
    for r in results:
        print(f"{r.path.name:45s} {'pass' if r.passed else 'FAIL':5s} {r.seconds:7.1f} s")
        if args.verbose and not r.passed:
            print("    " + r.tail.replace("\n", "\n    "))
    print(f"{sum(r.passed for r in results)} passed, {sum(not r.passed for r in results)} failed")
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
