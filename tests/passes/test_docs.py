"""The before/after example in each pass's docstring is real: the pass turns
the "Before::" IR into the "After::" IR."""

from __future__ import annotations

import textwrap

import pytest

from minitriton.ir import parse_module, print_module, verify_module
from minitriton.passes import PASSES, run_pipeline

DOCUMENTED = ["canonicalize", "cse", "dce", "licm", "inline"]


def _literal_block(doc: str, marker: str) -> str:
    """The indented block that follows ``marker`` (e.g. ``Before::``)."""
    after = doc.split(marker, 1)[1].split("\n\n", 1)[1]
    lines = []
    for line in after.splitlines():
        if line and not line.startswith("    "):
            break
        lines.append(line)
    return textwrap.dedent("\n".join(lines)).strip("\n") + "\n"


@pytest.mark.parametrize("name", DOCUMENTED)
def test_docstring_example(name: str) -> None:
    doc = __import__(PASSES[name].__module__, fromlist=["_"]).__doc__
    assert "Precondition" in doc and "Postcondition" in doc
    before, after = _literal_block(doc, "Before::"), _literal_block(doc, "After::")
    module = parse_module(before)
    verify_module(module)
    run_pipeline(module, [name], verify=True)
    assert print_module(module) == after
