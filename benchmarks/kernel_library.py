"""The benchmarks' kernels come from the test suite's kernel library, ``tests/kernels/``.

A library module is written against MiniTriton's two import lines
(:data:`HEADERS` ``["minitriton"]``). A benchmark that compares MiniTriton with
Triton needs the same kernel text under both; here the text is taken from the
library, so a kernel is written once and a benchmark times what the tests
check:

* :func:`kernel_text` gives the source of some kernels of a library module
  (decorators, docstring and comments included), for a benchmark that builds
  one source text and imports it under each flavor (``gpu_bench.py``);
* :func:`load_library` imports a whole library module under a flavor's
  import lines (``kernels_src/``);
* :func:`import_source` imports a source text from a file of its own, as
  Triton's ``@jit`` reads a kernel's source back from its file.
"""

from __future__ import annotations

import ast
import atexit
import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
#: The kernel library.
LIBRARY = ROOT / "tests" / "kernels"

#: Each flavor's two import lines.
HEADERS = {
    "triton": "import triton\nimport triton.language as tl\n",
    "minitriton": "import minitriton as triton\nimport minitriton.language as tl\n",
}


def library_source(module: str) -> str:
    """The text of the library module ``module`` (``"layer_norm"``)."""
    return (LIBRARY / f"{module}.py").read_text(encoding="utf-8")


def kernel_text(module: str, *names: str) -> str:
    """The source of the top-level functions ``names`` of library ``module``, in that order."""
    text = library_source(module)
    lines = text.splitlines(keepends=True)
    found = {
        node.name: node
        for node in ast.parse(text).body
        if isinstance(node, ast.FunctionDef) and node.name in names
    }
    missing = [name for name in names if name not in found]
    if missing:
        raise KeyError(f"tests/kernels/{module}.py has no function {', '.join(missing)}")
    parts = []
    for name in names:
        node = found[name]
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        assert node.end_lineno is not None  # ast.parse always sets it
        parts.append("".join(lines[first - 1 : node.end_lineno]))
    return "\n\n" + "\n\n\n".join(parts)


def flavored(text: str, flavor: str) -> str:
    """``text`` (a library module) with MiniTriton's import lines replaced by ``flavor``'s."""
    ours = HEADERS["minitriton"]
    if ours not in text:
        raise ValueError("a library module imports MiniTriton with exactly these lines:\n" + ours)
    return text.replace(ours, HEADERS[flavor], 1)


def import_source(name: str, text: str, folder: Path) -> ModuleType:
    """Write ``text`` to ``folder/name.py`` and import it as module ``name``."""
    path = folder / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Triton's JIT looks its module up
    spec.loader.exec_module(module)
    return module


_FOLDER: Path | None = None


def load_library(module: str, flavor: str) -> ModuleType:
    """Library ``module`` imported under ``flavor`` (kept for the process's life)."""
    name = f"kernel_library_{module}_{flavor}"
    if name in sys.modules:
        return sys.modules[name]
    global _FOLDER
    if _FOLDER is None:
        _FOLDER = Path(tempfile.mkdtemp(prefix="kernel-library-"))
        atexit.register(shutil.rmtree, _FOLDER, True)
    return import_source(name, flavored(library_source(module), flavor), _FOLDER)
