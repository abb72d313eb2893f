"""The default pass pipeline, and the function that runs a list of passes.

The default order, and why::

    loop-unroll    unroll the loops that tl.range(loop_unroll_factor=F) marks, first,
                   so that the passes below fold and merge across the copies
    canonicalize   fold constants, simplify identities, drop dead branches
    licm           move invariant work (often constants and splats) out of loops
    cse            merge duplicates, including those hoisted out of sibling loops
    dce            delete what the other passes left without users

``run_pipeline`` can print the IR after chosen passes, in MLIR's format::

    // -----// IR Dump After cse //----- //
    tt.func @kernel(...) {
      ...
    }

and hand every intermediate IR to a callback (``on_ir``), which is how
``MINITRITON_DUMP_DIR`` and the pass checker watch the pipeline.
``snapshots`` keeps a copy of the module after each pass so that a tool can
run the kernel on each one and find the pass that broke it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Literal, TextIO

from minitriton.diagnostics import CompileError, Diagnostic
from minitriton.ir.clone import clone_module
from minitriton.ir.ops import Module
from minitriton.ir.printer import print_module
from minitriton.ir.verifier import verify_module
from minitriton.passes.base import PASSES, Pass, get_pass

DEFAULT_PIPELINE: tuple[str, ...] = ("loop-unroll", "canonicalize", "licm", "cse", "dce")

DUMP_HEADER = "// -----// IR Dump After {name} //----- //"

OnIR = Callable[[str, str], None]


def run_pipeline(
    module: Module,
    names: Sequence[str] = DEFAULT_PIPELINE,
    *,
    print_after: Collection[str] | Literal["all"] = (),
    verify: bool = False,
    on_ir: OnIR | None = None,
    out: TextIO = sys.stderr,
) -> Module:
    """Run the passes ``names`` in order on ``module`` (in place) and return it.

    ``print_after`` names the passes after which the IR is written to ``out``
    (``"all"``: after every pass). With ``verify=True`` the verifier runs
    after each pass and a broken IR raises a :class:`CompileError` that names
    the pass. ``on_ir(pass_name, ir_text)`` is called after each pass.
    """
    passes = [get_pass(n) for n in names]  # unknown names fail before any work
    wanted = _print_set(print_after)
    for p in passes:
        p.apply(module)
        if verify:
            verify_after(module, p.name)
        if not (on_ir or wanted == "all" or p.name in wanted):
            continue
        text = print_module(module)
        if wanted == "all" or p.name in wanted:
            out.write(DUMP_HEADER.format(name=p.name) + "\n" + text)
        if on_ir is not None:
            on_ir(p.name, text)
    return module


def _print_set(print_after: Collection[str] | Literal["all"]) -> set[str] | Literal["all"]:
    if print_after == "all":
        return "all"
    # A lone string is one pass name, not a collection of letters.
    names = {print_after} if isinstance(print_after, str) else set(print_after)
    for name in names:
        get_pass(name)  # ValueError listing the known passes
    return names


def verify_after(module: Module, pass_name: str) -> None:
    """Verify ``module``; the errors say which pass produced the bad IR."""
    try:
        verify_module(module)
    except CompileError as err:
        raise type(err)([_blame(d, pass_name) for d in err.diagnostics]) from None


def _blame(diag: Diagnostic, pass_name: str) -> Diagnostic:
    message = f"after pass '{pass_name}': {diag.message}"
    return Diagnostic(diag.loc, message, diag.severity, diag.help)


def snapshots(
    module: Module, names: Sequence[str] = DEFAULT_PIPELINE, *, verify: bool = False
) -> list[tuple[str, Module]]:
    """``[("input", m0), (pass1, m1), ...]``: independent copies after each pass.

    ``module`` itself is left untouched.
    """
    current = clone_module(module)
    result = [("input", clone_module(current))]
    for name in names:
        run_pipeline(current, [name], verify=verify)
        result.append((name, clone_module(current)))
    return result


def dump_dir_writer(directory: str | Path) -> OnIR:
    """An ``on_ir`` callback writing ``01-canonicalize.ir``, ``02-licm.ir``... in ``directory``.

    Used for ``MINITRITON_DUMP_DIR``; numbering keeps the files in pipeline
    order even when a pass runs twice.
    """
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    counter = iter(range(1, 10**6))

    def write(pass_name: str, text: str) -> None:
        (path / f"{next(counter):02d}-{pass_name}.ir").write_text(text)

    return write


__all__ = [
    "DEFAULT_PIPELINE",
    "DUMP_HEADER",
    "PASSES",
    "Pass",
    "dump_dir_writer",
    "run_pipeline",
    "snapshots",
    "verify_after",
]
