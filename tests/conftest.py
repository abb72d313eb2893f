"""Shared pytest fixtures.

``golden``: compare text with a file under ``goldens/`` next to the test
module. Run ``pytest --update-goldens`` to (re)write the files instead; review
the diff before committing.

``backend``: each test once on the emulator and once on the GPU (marked
``gpu``, so it skips without a device); pass it as ``backend=`` at launch.

``fast_paths``: the emulator's fast paths are on for the test, even in a run
with ``MINITRITON_EMULATOR_PLAIN=1`` (for tests of the fast paths themselves).

``module_from_source``: ``load(name, text)`` imports kernel source text as a
module of its own file (``@jit`` reads a kernel's source back from its file).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="rewrite golden files with the current output instead of comparing",
    )


@pytest.fixture(autouse=True)
def _own_cache_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test starts with an empty on-disk kernel cache of its own.

    A kernel compiled by one test must not be found on disk by another (which
    may fake the compiler or change a pass).
    """
    monkeypatch.setenv("MINITRITON_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def fast_paths() -> Iterator[None]:
    """The emulator's fast paths on for this test (see ``minitriton.emulator.speed``)."""
    from minitriton.emulator.speed import fast_paths_enabled

    with fast_paths_enabled(True):
        yield


@pytest.fixture(scope="session")
def module_from_source(
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[[str, str], ModuleType]:
    """Return ``load(name, text)``: ``text`` written to ``name.py`` and imported."""

    def load(name: str, text: str) -> ModuleType:
        path = tmp_path_factory.mktemp(name) / f"{name}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """Return ``check(text, name)``: assert ``text`` equals ``goldens/<name>``.

    ``name`` is relative to the ``goldens`` folder beside the test module.
    A missing golden file fails the test unless ``--update-goldens`` is given.
    """
    update = request.config.getoption("--update-goldens")
    folder = Path(request.path).parent / "goldens"

    def check(text: str, name: str) -> None:
        path = folder / name
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        if not path.exists():
            pytest.fail(f"golden file {path} is missing; run pytest --update-goldens")
        expected = path.read_text(encoding="utf-8")
        assert text == expected, f"output differs from {path} (pytest --update-goldens)"

    return check


def _gpu_available() -> bool:
    """True when MiniTriton's GPU backend imports and reports a usable device."""
    try:
        from minitriton.backend import gpu_available
    except ImportError:
        return False
    return bool(gpu_available())


def _torch_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip tests marked ``gpu`` without a usable GPU, and ``torch`` without PyTorch.

    Tests marked ``heavy`` (long fuzzing, whole-suite sweeps) run only when the
    marker expression names them (``pytest -m heavy``, a step of its own in CI),
    so that a plain ``pytest`` stays within a few minutes on two cores.
    """
    if "heavy" not in (config.getoption("markexpr") or ""):
        skip_heavy = pytest.mark.skip(reason="a heavy check: it runs with `pytest -m heavy`")
        for item in items:
            if item.get_closest_marker("heavy") is not None:
                item.add_marker(skip_heavy)
    torch_items = [item for item in items if item.get_closest_marker("torch") is not None]
    if torch_items and not _torch_installed():
        skip_torch = pytest.mark.skip(reason="needs PyTorch (pip install -e '.[compat]')")
        for item in torch_items:
            item.add_marker(skip_torch)
    gpu_items = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not gpu_items or _gpu_available():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU and cuda-python")
    for item in gpu_items:
        item.add_marker(skip)


@pytest.fixture(params=["emulator", pytest.param("gpu", marks=pytest.mark.gpu)])
def backend(request: pytest.FixtureRequest) -> str:
    """The backend name to pass as ``backend=`` at every launch."""
    return str(request.param)
