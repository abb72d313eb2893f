"""Fixtures for the debugger, checks, tracer and pass-checker tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


@pytest.fixture
def in_test_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Run from tests/debugger, so the debugger shows short paths (debug_kernels.py:18)."""
    monkeypatch.chdir(HERE)
    yield HERE


@pytest.fixture(autouse=True)
def _emulator_backend() -> Iterator[None]:
    """The CLI tools select the emulator for the whole process: undo that."""
    from minitriton.jit import set_backend

    yield
    set_backend(None)


@pytest.fixture(autouse=True)
def _no_tool_left_active() -> Iterator[None]:
    """A test ends its debugger sessions: a paused session's tools see every later launch."""
    from minitriton.emulator.debug import tools

    yield
    left = tools.tools_in_use()
    assert not left, f"the test left {left} emulator tool activation(s) (quit its Debugger)"
