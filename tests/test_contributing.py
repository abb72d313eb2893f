"""The contributor's guide names real files: a checklist follows the tree when it moves.

Every backticked path on ``docs/internals/contributing.md`` (a name with a
``/``) must exist in the repository; a template for a new file is written
with a placeholder in angle brackets (``examples/plot_<name>.py``) and is not
checked. The page must also be in the docs' toctree.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "internals" / "contributing.md"

#: Backticked words that look like repository paths: a folder and a name.
_PATH = re.compile(r"`([A-Za-z0-9_.]+(?:/[A-Za-z0-9_.]+)+/?)`")


def named_paths(text: str) -> list[str]:
    """The repository paths a page names, in order, each once."""
    seen: dict[str, None] = {}
    for match in _PATH.finditer(text):
        seen.setdefault(match.group(1))
    return list(seen)


def missing_paths(text: str, root: Path) -> list[str]:
    """The named paths that do not exist under ``root``."""
    return [p for p in named_paths(text) if not (root / p.rstrip("/")).exists()]


def test_every_named_file_exists() -> None:
    names = named_paths(PAGE.read_text(encoding="utf-8"))
    assert len(names) >= 25, names  # the four checklists name files throughout
    assert missing_paths(PAGE.read_text(encoding="utf-8"), REPO) == []


def test_a_moved_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "minitriton" / "passes").mkdir(parents=True)
    (tmp_path / "minitriton" / "passes" / "dce.py").write_text("")
    text = "1. A module like `minitriton/passes/dce.py`, run by `minitriton/passes/old.py`."
    assert missing_paths(text, tmp_path) == ["minitriton/passes/old.py"]


def test_folders_and_plain_words_are_read_as_intended() -> None:
    text = ("Copy `exercises/kernels/01_constant_add/` to `exercises/kernels/<NN_name>/`; "
            "see `tt.my_op`, `Pure` and `a/b`.")  # fmt: skip
    assert named_paths(text) == ["exercises/kernels/01_constant_add/", "a/b"]


def test_the_page_is_in_the_docs() -> None:
    index = (REPO / "docs" / "internals" / "index.md").read_text(encoding="utf-8")
    assert re.search(r"^contributing$", index, re.M)
