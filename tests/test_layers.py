"""The package's import layers: a module imports only from its own layer or a lower one.

Every ``import`` statement counts, those inside functions too: a lazy import
still ties the two modules together, it only hides the cycle until run time.
The layers, lowest first (a module belongs to the longest prefix in
:data:`LAYERS`):

0. ``util``: leaf modules that import no other part of the package:
   ``minitriton.diagnostics`` (located errors), ``minitriton.env`` (the
   environment variables' names and the debug flag), ``minitriton.version``,
   ``minitriton.lazy`` (names a package imports on first use),
   ``minitriton.cachefile``, ``minitriton.runtime.errors`` (Triton's error
   classes) and ``minitriton.grammar`` (the Lark grammar, a data package).
1. ``ir``: ``minitriton.ir``.
2. ``passes``: ``minitriton.passes``.
3. ``frontend``: ``minitriton.frontend``, and with it what a kernel's
   arguments and names are made of: ``minitriton.language`` (the ``tl``
   names), ``minitriton.signature`` (argument values -> ``ArgSpec``) and
   ``minitriton.tools.tensor_descriptor`` (Triton's host-side descriptor).
4. ``backend``: ``minitriton.backend`` (IR -> PTX -> a launch on the GPU) with
   ``minitriton.resources`` (does a compiled kernel fit the device), and
   beside them the core of ``minitriton.emulator``. The emulator runs where
   llvmlite and CUDA are absent, so it never imports the GPU backend
   (:data:`APART`); the backend may reuse the emulator's value encodings and
   error reports.
5. ``compiler``: ``minitriton.compiler`` (the stages, one after another),
   ``minitriton.compiled_api`` and ``minitriton.ircache``.
6. ``jit``: the host side of a launch: ``minitriton.jit``, the package root
   ``minitriton``, ``autotune``, ``launch_checks``, ``streams``, ``testing``,
   ``torch_interop``, ``torch_ops``, Triton's host-side names (``runtime``,
   ``backends``, ``minitriton.compiler.compiler``,
   ``minitriton.language.target_info``, which asks the driver) and the emulator's
   debugging tools ``minitriton.emulator.debug`` (attached to a launch).
7. ``tools``: what is built on all of it: ``minitriton.tools``,
   ``minitriton.cli``, ``minitriton.course``, ``minitriton.inductor``,
   ``minitriton.compat`` and ``minitriton.__main__``.

A lower layer that must call up (a compiled kernel's ``kernel[grid](...)``
runs the launcher) is handed the function by the higher layer when that is
imported: ``minitriton.compiled_api.RUN_COMPILED`` is set by ``minitriton.jit``.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Where each package's source lies: the emulator and the grammar are installed
#: under the ``minitriton`` namespace from their own top-level folders.
SOURCES = {
    "minitriton": ROOT / "minitriton",
    "minitriton.emulator": ROOT / "emulator",
    "minitriton.grammar": ROOT / "grammar",
}

LAYER_NAMES = ("util", "ir", "passes", "frontend", "backend", "compiler", "jit", "tools")

#: Module prefix -> layer name; a module takes the longest prefix that matches.
LAYERS = {
    "minitriton.diagnostics": "util",
    "minitriton.env": "util",
    "minitriton.version": "util",
    "minitriton.lazy": "util",
    "minitriton.cachefile": "util",
    "minitriton.runtime.errors": "util",
    "minitriton.grammar": "util",
    "minitriton.ir": "ir",
    "minitriton.passes": "passes",
    "minitriton.frontend": "frontend",
    "minitriton.language": "frontend",
    "minitriton.signature": "frontend",
    "minitriton.tools.tensor_descriptor": "frontend",
    "minitriton.backend": "backend",
    "minitriton.resources": "backend",
    "minitriton.emulator": "backend",
    "minitriton.compiler": "compiler",
    "minitriton.compiled_api": "compiler",
    "minitriton.ircache": "compiler",
    "minitriton.compiler.compiler": "jit",
    "minitriton.language.target_info": "jit",
    "minitriton.emulator.debug": "jit",
    "minitriton": "jit",
    "minitriton.tools": "tools",
    "minitriton.cli": "tools",
    "minitriton.course": "tools",
    "minitriton.inductor": "tools",
    "minitriton.compat": "tools",
    "minitriton.__main__": "tools",
}

#: (importer, imported): packages of one layer where the first must not import the second.
APART = (("minitriton.emulator", "minitriton.backend"),)


@dataclass(frozen=True)
class Violation:
    """One import of a higher layer's module (or across an :data:`APART` pair)."""

    path: Path
    line: int
    importer: str
    imported: str
    why: str

    def __str__(self) -> str:
        path = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{path}:{self.line}: {self.importer} imports {self.imported} ({self.why})"


def module_files(sources: dict[str, Path]) -> dict[str, Path]:
    """Every module's dotted name -> its file, for each package root in ``sources``."""
    modules: dict[str, Path] = {}
    for package, folder in sources.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def layer_of(module: str, layers: dict[str, str]) -> str | None:
    """The layer of ``module``: its longest prefix in ``layers`` (None: outside the package)."""
    name = module
    while name:
        if name in layers:
            return layers[name]
        name = name.rpartition(".")[0]
    return None


def imported_names(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The dotted names an import statement may load: ``from a import b`` may load ``a.b``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
        origin = ".".join(base + ([node.module] if node.module else []))
    else:
        origin = node.module or ""
    return [origin] + [f"{origin}.{alias.name}" for alias in node.names]


def known_module(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is one of our modules."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[tuple[int, str]]:
    """(line, module) for every import of one of ``modules`` anywhere in ``path``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        targets = {
            known_module(n, modules)
            for n in imported_names(module, path.name == "__init__.py", node)
        }
        # `from minitriton.ir import ops` names minitriton.ir.ops, not only minitriton.ir
        specific = {
            t
            for t in targets
            if t and not any(o != t and o and o.startswith(t + ".") for o in targets)
        }
        found.extend((node.lineno, target) for target in sorted(specific) if target != module)
    return found


def check_layers(
    sources: dict[str, Path], layers: dict[str, str], apart: tuple[tuple[str, str], ...] = APART
) -> list[Violation]:
    """Every import in ``sources`` of a module in a higher layer than the importer's."""
    modules = module_files(sources)
    rank = {name: i for i, name in enumerate(LAYER_NAMES)}
    violations = []
    for module, path in sorted(modules.items()):
        here = layer_of(module, layers)
        assert here is not None, f"{path}: {module} is in no layer: add it to LAYERS"
        for line, target in imports_of(module, path, modules):
            there = layer_of(target, layers)
            assert there is not None
            if rank[there] > rank[here]:
                why = f"layer {here} imports layer {there}"
                violations.append(Violation(path, line, module, target, why))
            for low, high in apart:  # within the layer they share (not emulator.debug, a tool)
                same_layer = here == layer_of(low, layers)
                if same_layer and _under(module, low) and _under(target, high):
                    why = f"{low} never imports {high}"
                    violations.append(Violation(path, line, module, target, why))
    return violations


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_package_respects_its_layers() -> None:
    violations = check_layers(SOURCES, LAYERS)
    assert not violations, "imports against the layers:\n" + "\n".join(map(str, violations))


def test_no_backend_module_imports_jit() -> None:
    modules = module_files(SOURCES)
    for module, path in modules.items():
        if _under(module, "minitriton.backend"):
            assert "minitriton.jit" not in {t for _, t in imports_of(module, path, modules)}, path


def write_tree(root: Path, files: dict[str, str]) -> None:
    """Write ``files`` (relative path -> source) under ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


FAKE_LAYERS = {"pkg": "jit", "pkg.ir": "ir", "pkg.backend": "backend", "pkg.emulator": "backend"}


def test_the_check_reports_a_lazy_import_of_a_higher_layer(tmp_path: Path) -> None:
    write_tree(
        tmp_path / "pkg",
        {
            "__init__.py": "from pkg import ir\n",
            "jit.py": "from pkg.backend import driver\n",
            "ir/__init__.py": "",
            "ir/core.py": "import os\n\n\ndef f():\n    from pkg.backend.driver import launch\n",
            "backend/__init__.py": "from . import driver\n",
            "backend/driver.py": "from ..ir import core\n\n\ndef g():\n    import pkg.jit\n",
        },
    )
    violations = check_layers({"pkg": tmp_path / "pkg"}, FAKE_LAYERS, apart=())
    assert [(v.path.relative_to(tmp_path).as_posix(), v.line, v.imported) for v in violations] == [
        ("pkg/backend/driver.py", 5, "pkg.jit"),
        ("pkg/ir/core.py", 5, "pkg.backend.driver"),
    ]
    assert str(violations[1]).endswith(
        "core.py:5: pkg.ir.core imports pkg.backend.driver (layer ir imports layer backend)"
    )


def test_the_check_reports_siblings_that_must_stay_apart(tmp_path: Path) -> None:
    write_tree(
        tmp_path / "pkg",
        {
            "__init__.py": "",
            "backend/__init__.py": "",
            "emulator/__init__.py": "from pkg.backend import x\n",
            "backend/x.py": "from .. import ir\n",
            "ir.py": "",
        },
    )
    apart = (("pkg.emulator", "pkg.backend"),)
    violations = check_layers({"pkg": tmp_path / "pkg"}, FAKE_LAYERS, apart=apart)
    assert [(v.importer, v.line, v.imported) for v in violations] == [
        ("pkg.emulator", 1, "pkg.backend.x")
    ]
    assert violations[0].why == "pkg.emulator never imports pkg.backend"


def test_the_check_accepts_a_tree_that_respects_the_layers(tmp_path: Path) -> None:
    write_tree(
        tmp_path / "pkg",
        {
            "__init__.py": "import pkg.backend\n",
            "ir.py": "import numpy\n",
            "backend/__init__.py": "from pkg import ir\nfrom . import y\n",
            "backend/y.py": "from .. import ir\n",
        },
    )
    assert check_layers({"pkg": tmp_path / "pkg"}, FAKE_LAYERS, apart=()) == []
