"""The reverse contract: MiniTriton's end-to-end kernels run under real Triton's interpreter.

Usage (not part of CI, since Triton cannot be a dependency; no GPU needed)::

    python3 -m venv /path/to/triton-venv
    /path/to/triton-venv/bin/pip install torch triton numpy pytest hypothesis
    python scripts/reverse_contract.py --venv /path/to/triton-venv

It runs ``tests/e2e`` (the ``emulator`` cases, ``-k "not gpu"``) with that
venv's Python, ``TRITON_INTERPRET=1`` and ``tests/e2e/real_triton`` first on
``PYTHONPATH``, whose stand-in ``minitriton`` forwards every launch to Triton.
The kernels and the NumPy references are the same files the suite uses with
MiniTriton; the summary line counts the tests that pass under Triton.
Test files about MiniTriton itself rather than about kernels are left out:
:data:`MINITRITON_ONLY`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: e2e test files that test MiniTriton's own tools, not kernels.
MINITRITON_ONLY = ("test_triton_scripts.py",)


def command(python: str, extra: list[str]) -> list[str]:
    """The pytest command line, run from outside the repository."""
    ignores = [f"--ignore={REPO / 'tests' / 'e2e' / name}" for name in MINITRITON_ONLY]
    return [
        python, "-m", "pytest", "-c", str(REPO / "pyproject.toml"), f"--rootdir={REPO}",
        str(REPO / "tests" / "e2e"), "-k", "not gpu", "-p", "no:cacheprovider", "-q",
        *ignores, *extra,
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run the e2e suite under Triton's interpreter; returns pytest's exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", required=True, help="a virtual environment with triton")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args(argv)
    python = str(Path(args.venv) / "bin" / "python")
    env = dict(os.environ, TRITON_INTERPRET="1")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests" / "e2e" / "real_triton"), str(REPO)])
    with tempfile.TemporaryDirectory() as outside:  # so the real minitriton is not found first
        return subprocess.call(command(python, args.pytest_args), env=env, cwd=outside)


if __name__ == "__main__":
    sys.exit(main())
