"""The documentation covers every pass and every ``tl`` builtin.

The docs site generates its pass pages and its builtin reference from the
code (``docs/_ext/minitriton_docs.py``); these tests fail when the code gives
it nothing to render: a registered pass without a docstring holding a
``Before::`` and an ``After::`` IR example that the pass really produces (the
one test of the docstring examples), or its pre- and postconditions, or a
public ``tl`` function without a docstring or without a page entry.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import pytest

from minitriton.ir import parse_module, print_module, verify_module
from minitriton.language import BUILTINS
from minitriton.passes import PASSES

DOCS = Path(__file__).resolve().parents[1] / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

import minitriton_docs  # noqa: E402 - lives in docs/_ext, added to the path above


def _pass_doc(name: str) -> str:
    return inspect.cleandoc(sys.modules[PASSES[name].__module__].__doc__ or "")


# ---------------------------------------------------------------- passes


@pytest.mark.parametrize("name", sorted(PASSES))
def test_pass_docstring_has_summary_and_examples(name: str) -> None:
    doc = _pass_doc(name)
    assert len(doc.splitlines()[0].split()) >= 3, f"pass {name!r}: no one-line summary"
    assert "Precondition" in doc and "Postcondition" in doc, f"pass {name!r}: no conditions"
    examples = minitriton_docs.pass_examples(doc)
    assert "before" in examples, f"pass {name!r}: its module docstring has no 'Before::' IR block"
    assert "after" in examples, f"pass {name!r}: its module docstring has no 'After::' IR block"


@pytest.mark.parametrize("name", sorted(PASSES))
def test_pass_docstring_examples_are_what_the_pass_does(name: str) -> None:
    examples = minitriton_docs.pass_examples(_pass_doc(name))
    after = parse_module(examples["after"], f"{name}-after.ir")
    verify_module(after)
    # The docs build runs the pass on the "before" IR; its output must be the "after" IR.
    assert minitriton_docs.run_pass(name, examples["before"]) == print_module(after)


def test_every_pass_gets_a_page() -> None:
    assert sorted(minitriton_docs.pipeline_order()) == sorted(PASSES)
    index = (DOCS / "internals" / "passes" / "index.md").read_text()
    assert "{minitriton-pass-toctree}" in index


# ---------------------------------------------------------------- builtins


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_builtin_has_docstring(name: str) -> None:
    doc = inspect.getdoc(BUILTINS[name]) or ""
    assert len(doc.split()) >= 2, f"tl.{name} has no docstring"


def test_every_builtin_has_a_page_entry() -> None:
    listed = [n for _, names in minitriton_docs.builtin_sections() for n in names]
    assert sorted(listed) == sorted(BUILTINS)
    page = (DOCS / "language" / "builtins.md").read_text()
    assert ".. minitriton-builtins::" in page


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_builtin_is_reachable_as_tl_attribute(name: str) -> None:
    # The page documents ``minitriton.language.NAME``; autodoc must find it there.
    import minitriton.language as tl

    assert getattr(tl, name) is BUILTINS[name]
