"""Run one compiler exercise's tests against each of its mutants, in this process.

``python compiler_mutant_runner.py c1 [NAME ...]`` patches each mutant of
``compiler_mutants.py`` (or each one named) into the real package (the wrong function replaces
the real one in its module, and in the emulator's semantics registry where
it is registered), runs the exercise's tests as ``check`` does (the spec's
``TESTS`` and ``SELECT``) with ``pytest.main``, undoes the patch, and prints
one JSON line: per mutant, its name and the failing tests with their
messages, as ``check`` would show them. One process per exercise keeps the
whole run short: the package and the tests are imported once.
"""

from __future__ import annotations

import importlib
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from compiler_mutants import MUTANTS, CompilerMutant  # noqa: E402

from minitriton.course import catalog  # noqa: E402
from minitriton.course.compiler_grader import _read_junit, pytest_command  # noqa: E402


def _resolve(target: str) -> tuple[Any, str]:
    """``"pkg.mod:Class.name"`` -> (the object holding ``name``, ``name``)."""
    module_name, _, path = target.partition(":")
    holder: Any = importlib.import_module(module_name)
    *owners, name = path.split(".")
    for owner in owners:
        holder = getattr(holder, owner)
    return holder, name


def _compile(mutant: CompilerMutant, holder: Any, name: str) -> Callable[..., Any]:
    """The mutant's function, defined with the globals of the real one's module."""
    original = getattr(holder, name)
    namespace = dict(original.__globals__)
    exec(compile(mutant.code, f"<mutant {mutant.name}>", "exec"), namespace)
    return namespace[name]


@contextmanager
def patched(mutant: CompilerMutant) -> Iterator[None]:
    """The package with ``mutant``'s function in place of the real one."""
    from minitriton.emulator.registry import SEMANTICS

    holder, name = _resolve(mutant.target)
    original = holder.__dict__[name]
    wrong = _compile(mutant, holder, name)
    registered = [k for k, fn in SEMANTICS.items() if fn is original]
    setattr(holder, name, wrong)
    for key in registered:
        SEMANTICS[key] = wrong
    try:
        yield
    finally:
        setattr(holder, name, original)
        for key in registered:
            SEMANTICS[key] = original


def _forget_test_modules(before: set[str]) -> None:
    # Test modules hold jitted kernels with compile caches: import them afresh.
    for name in set(sys.modules) - before:
        if not name.startswith("minitriton"):
            del sys.modules[name]


def failing_tests(ex: catalog.Exercise) -> list[str]:
    """``"module::test -- message"`` for every test of ``ex`` that fails now."""
    before = set(sys.modules)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        args = pytest_command(ex, report)[3:]  # without `python -m pytest`
        pytest.main(args)
        cases = _read_junit(report) if report.exists() else []
    _forget_test_modules(before)
    return [f"{c.name} -- {c.message}" for c in cases if not c.passed]


def main(ex_id: str, names: list[str]) -> int:
    """Print one JSON line: ``[{"name": ..., "failing": [...]}, ...]``.

    With ``names``, only the mutants of those names run (the quick subset).
    """
    ex = catalog.find_exercise(ex_id)
    outcomes = []
    for mutant in [m for m in MUTANTS if m.exercise == ex.id and (not names or m.name in names)]:
        with patched(mutant):
            outcomes.append({"name": mutant.name, "failing": failing_tests(ex)})
    print(json.dumps(outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
