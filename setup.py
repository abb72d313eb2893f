"""Package discovery that pyproject.toml cannot express on its own.

All metadata lives in pyproject.toml. This file only lists the packages:
``minitriton`` with all its subpackages, plus the top-level ``emulator/`` and
``grammar/`` folders, which are installed as ``minitriton.emulator`` and
``minitriton.grammar`` (see ``[tool.setuptools.package-dir]``). Discovery is
automatic so a new subpackage cannot be silently left out of a wheel.
"""

from setuptools import find_packages, setup


def _mapped(prefix: str, folder: str) -> list[str]:
    """Return ``prefix`` and its subpackages found under ``folder``."""
    return [prefix] + [f"{prefix}.{name}" for name in find_packages(folder)]


setup(
    packages=(
        find_packages(include=["minitriton", "minitriton.*"])
        + _mapped("minitriton.emulator", "emulator")
        + _mapped("minitriton.grammar", "grammar")
    ),
)
