"""``print(parse(text)) == text`` on every golden IR file of the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

import minitriton.backend.ops  # noqa: F401 - registers the ttg/ttng ops of the GPU passes' goldens
from minitriton.ir import parse_module, print_module

TESTS = Path(__file__).parents[1]
FILES = sorted({*TESTS.glob("**/goldens/**/*.ir"), *TESTS.glob("**/goldens/**/*.out")})


def test_goldens_exist() -> None:
    assert any(f.suffix == ".out" for f in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(TESTS)))
def test_round_trip(path: Path) -> None:
    text = path.read_text()
    assert print_module(parse_module(text, str(path))) == text
