"""The emulator's core runs IR and imports neither the frontend nor its own tools.

The tools (debugger, checks, tracer, pass checker) live in
``minitriton.emulator.debug`` beside the core; the core never imports them, the
frontend, the passes, the backend or the compiler driver, not even lazily
inside a function.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

EMULATOR = Path(__file__).resolve().parents[2] / "emulator"
FORBIDDEN = (
    "minitriton.frontend",
    "minitriton.emulator.debug",
    "minitriton.passes",
    "minitriton.backend",
    "minitriton.compiler",
    "minitriton.jit",
)
CORE = sorted(
    str(p.relative_to(EMULATOR)) for p in [*EMULATOR.glob("*.py"), *EMULATOR.glob("ops/*.py")]
)


def imported_modules(source: str) -> set[str]:
    """Every module ``source`` imports, at the top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def forbidden_imports(source: str) -> list[str]:
    """The imports of ``source`` that the emulator's core must not make."""
    return sorted(name for name in imported_modules(source) if name.startswith(FORBIDDEN))


@pytest.mark.parametrize("name", CORE)
def test_core_module_imports_no_frontend_and_no_tool(name: str) -> None:
    source = (EMULATOR / name).read_text()
    # emulator/__init__.py names the tools only as strings for lazy attributes.
    assert forbidden_imports(source) == [], name


def test_the_checker_finds_a_forbidden_import() -> None:
    source = "import numpy\n\ndef f():\n    from minitriton.frontend import ast\n"
    assert forbidden_imports(source) == ["minitriton.frontend", "minitriton.frontend.ast"]
    assert forbidden_imports("from minitriton.emulator import debug\n") == [
        "minitriton.emulator.debug"
    ]


def test_the_tools_are_beside_the_core() -> None:
    tools = {p.stem for p in (EMULATOR / "debug").glob("*.py")} - {"__init__"}
    assert {"debugger", "checks", "tracer", "passcheck", "trace_plot", "debug_expr"} <= tools
    assert not tools & {p.stem for p in EMULATOR.glob("*.py")}


def test_public_tool_names_still_load_from_the_emulator_package() -> None:
    code = (
        "import minitriton.emulator as e, sys\n"
        "assert 'minitriton.emulator.debug.debugger' not in sys.modules\n"
        "print(e.Debugger.__module__, e.empty.__module__, e.trace.__module__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == [
        "minitriton.emulator.debug.debugger",
        "minitriton.emulator.debug.checks",
        "minitriton.emulator.debug.tracer",
    ], done.stderr
