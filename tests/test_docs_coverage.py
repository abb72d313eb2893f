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

import minitriton.backend.passes  # noqa: F401 - registers the GPU passes
from minitriton.backend.passes import GPU_PIPELINE
from minitriton.ir import parse_module, print_module, verify_module
from minitriton.language import BUILTINS
from minitriton.passes import PASSES

#: The optimization passes (the GPU backend's have no hand-written examples: their
#: pages run real kernels).
IR_PASSES = sorted(n for n, cls in PASSES.items() if cls.stage == "ir")

DOCS = Path(__file__).resolve().parents[1] / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

import minitriton_docs  # noqa: E402 - lives in docs/_ext, added to the path above


def _pass_doc(name: str) -> str:
    return inspect.cleandoc(sys.modules[PASSES[name].__module__].__doc__ or "")


# ---------------------------------------------------------------- passes


@pytest.mark.parametrize("name", IR_PASSES)
def test_pass_docstring_has_summary_and_examples(name: str) -> None:
    doc = _pass_doc(name)
    assert len(doc.splitlines()[0].split()) >= 3, f"pass {name!r}: no one-line summary"
    assert "Precondition" in doc and "Postcondition" in doc, f"pass {name!r}: no conditions"
    examples = minitriton_docs.pass_examples(doc)
    assert "before" in examples, f"pass {name!r}: its module docstring has no 'Before::' IR block"
    assert "after" in examples, f"pass {name!r}: its module docstring has no 'After::' IR block"


@pytest.mark.parametrize("name", IR_PASSES)
def test_pass_docstring_examples_are_what_the_pass_does(name: str) -> None:
    examples = minitriton_docs.pass_examples(_pass_doc(name))
    after = parse_module(examples["after"], f"{name}-after.ir")
    verify_module(after)
    # The docs build runs the pass on the "before" IR; its output must be the "after" IR.
    assert minitriton_docs.run_pass(name, examples["before"]) == print_module(after)


def test_every_pass_gets_a_page() -> None:
    assert sorted(minitriton_docs.pipeline_order()) == sorted(PASSES)
    assert minitriton_docs.pipeline_order("gpu") == list(GPU_PIPELINE)
    index = (DOCS / "internals" / "passes" / "index.md").read_text()
    assert "{minitriton-pass-toctree}" in index
    assert ":stage: ir" in index and ":stage: gpu" in index


@pytest.mark.parametrize("name", GPU_PIPELINE)
def test_gpu_pass_docstring_has_summary_and_conditions(name: str) -> None:
    doc = _pass_doc(name)
    assert len(doc.splitlines()[0].split()) >= 3, f"pass {name!r}: no one-line summary"
    assert "Precondition" in doc and "Postcondition" in doc, f"pass {name!r}: no conditions"


@pytest.mark.parametrize("name", GPU_PIPELINE)
def test_gpu_pass_page_shows_what_it_does_to_real_kernels(name: str) -> None:
    examples = minitriton_docs.gpu_examples(name)
    titles = [e.title for e in examples]
    assert any("matmul" in t and "sm_90a" in t for t in titles)
    assert any("attention" in t for t in titles)
    changed = [e for e in examples if e.language != "text"]  # a diff or the loop after it
    assert changed, f"pass {name!r} changes none of its page's kernels"
    assert all(f"--print-after {name}" in e.command for e in examples)


def test_gpu_pass_page_shows_the_pipelined_loop() -> None:
    (matmul, *_) = minitriton_docs.gpu_examples("software-pipeline")
    assert "sm_90a" in matmul.title
    assert "ttg.async_copy_global_to_local" in matmul.text and "ttng.warp_group_dot" in matmul.text
    assert "#blocked" not in matmul.text  # before assign-layouts: no layouts yet


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

    found = getattr(tl, name)
    # tl.tuple is a class (Triton's), which names the builtin it stands for in kernels.
    assert found is BUILTINS[name] or tl.core.builtin_name(found) == name
