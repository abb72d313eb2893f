"""Golden IR -> IR tests: ``goldens/<pass>/<case>.ir`` -> ``<case>.out``.

Each input is verified, the pass runs with the verifier after it, and the
printed result must equal the ``.out`` file (``pytest --update-goldens``
rewrites it). ``goldens/pipeline/`` runs the whole default pipeline.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from minitriton.ir import parse_module, print_module, verify_module
from minitriton.passes import DEFAULT_PIPELINE, run_pipeline

GOLDENS = Path(__file__).parent / "goldens"
CASES = sorted(GOLDENS.glob("*/*.ir"))


def _passes_for(folder: str) -> tuple[str, ...]:
    return DEFAULT_PIPELINE if folder == "pipeline" else (folder,)


def test_every_pass_has_goldens() -> None:
    folders = {case.parent.name for case in CASES}
    assert {"canonicalize", "cse", "dce", "licm", "inline", "pipeline"} <= folders


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_golden(case: Path, golden: Callable[[str, str], None]) -> None:
    module = parse_module(case.read_text(), str(case))
    verify_module(module)  # the input itself must be valid IR
    run_pipeline(module, _passes_for(case.parent.name), verify=True)
    golden(print_module(module), f"{case.parent.name}/{case.stem}.out")


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_pass_is_idempotent(case: Path) -> None:
    """Running the passes again on their own output changes nothing."""
    module = parse_module(case.read_text(), str(case))
    names = _passes_for(case.parent.name)
    once = print_module(run_pipeline(module, names, verify=True))
    twice = print_module(run_pipeline(module, names, verify=True))
    assert twice == once
