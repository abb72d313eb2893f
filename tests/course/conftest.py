"""The ``mutation`` marker: the full mutation suite of the course's graders.

Tests marked ``mutation`` run only when the marker expression selects them
(``pytest -m mutation``, a step of its own in CI); a plain ``pytest`` skips
them and runs the quick subset instead (see ``test_course_mutants.py``).
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "mutation: the full mutation suite of the course's graders (pytest -m mutation)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``mutation`` tests unless ``-m`` names the marker."""
    if "mutation" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="the full mutation suite runs with `pytest -m mutation`")
    for item in items:
        if item.get_closest_marker("mutation") is not None:
            item.add_marker(skip)
