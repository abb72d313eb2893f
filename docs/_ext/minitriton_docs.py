"""Sphinx directives that build MiniTriton's docs from the code itself.

Nothing on the pages these directives render is copied by hand, so the site
cannot drift from the code:

``minitriton-builtins``
    Every ``tl`` builtin in :data:`minitriton.language.BUILTINS`, grouped by
    the ``# -- section --`` comments of the module that defines it, with a
    summary table and one autodoc entry each. A new builtin appears by itself.
``minitriton-pass:: NAME``
    A pass's page: its module docstring, then the "before" IR from that
    docstring run through the pass *now*, and the IR it really produces. The
    build fails when the docstring's "after" IR differs from the real output.
``minitriton-pass-toctree``
    A toctree of one page per registered pass (the pages are generated at
    ``builder-inited``), in pipeline order.
``minitriton-automodule:: MODULE``
    ``automodule`` for a module that may not be written yet: until it exists
    the page says so instead of failing the build.
``minitriton-ir``
    IR text parsed, verified and printed back by the real parser and printer.
``minitriton-ptx``
    PTX generated at build time from a kernel, annotated with its source lines.
``minitriton-bench``
    The GPU benchmark table and plot from ``docs/_data/gpu_bench.json``.

Helpers used by ``tests/test_docs_coverage.py`` (``builtin_sections``,
``pass_examples``) live here too, so the test checks what the site renders.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import io
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from pygments.lexer import RegexLexer, bygroups
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text
from sphinx.application import Sphinx
from sphinx.directives.other import TocTree
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

logger = logging.getLogger(__name__)

DOCS = Path(__file__).resolve().parents[1]
REPO = DOCS.parent
PASS_PAGES = DOCS / "internals" / "passes"
PASS_PAGE_PREFIX = "pass-"
BENCH_DATA = DOCS / "_data" / "gpu_bench.json"


# ---------------------------------------------------------------- IR lexer


class MiniTritonIRLexer(RegexLexer):
    """Pygments lexer for the IR text form (never emits error tokens)."""

    name = "MiniTriton IR"
    aliases = ["mtir"]
    tokens = {
        "root": [
            (r"//[^\n]*", Comment.Single),
            (r"\bloc\(", Comment.Special, "loc"),
            (r"%[A-Za-z0-9_.]+", Name.Variable),
            (r"@[A-Za-z0-9_.]+", Name.Function),
            (r"\^", Punctuation),
            (r"(tensor|ptr)(<)", bygroups(Keyword.Type, Punctuation)),
            (r"\b(?:[iuf]\d+|bf16)\b", Keyword.Type),
            (r"\b(?:tt|arith|math|scf)\.[A-Za-z_]+", Keyword),
            (r'"(?:[^"\\]|\\.)*"', String),
            (r"-?\d+\.\d*(?:[eE][-+]?\d+)?|-?\d+", Number),
            (r"\b(?:true|false|inf|nan)\b", Keyword.Constant),
            (r"->|[=:,x]", Operator),
            (r"[(){}\[\]<>]", Punctuation),
            (r"\s+", Text),
            (r".", Text),
        ],
        "loc": [(r"[^)]*\)", Comment.Special, "#pop")],
    }


# ---------------------------------------------------------------- helpers


def module_exists(name: str) -> bool:
    """True if ``name`` is a written module or package (without importing it).

    A folder without ``__init__.py`` (a namespace package: a package being
    written whose first files just landed) does not count yet.
    """
    try:
        spec = importlib.util.find_spec(name)
    except ModuleNotFoundError:
        return False
    return spec is not None and spec.origin is not None


class GeneratingDirective(SphinxDirective):
    """A directive whose content is computed from the code at build time.

    If computing it fails, the build gets a warning (an error under ``-W``)
    that names the directive and the exception, and the page shows the error
    instead of stale or missing content.
    """

    def run(self) -> list[nodes.Node]:
        try:
            return self.generate()
        except Exception as exc:  # noqa: BLE001 - any failure must become a located warning
            message = f"{self.name}: {type(exc).__name__}: {exc}"
            logger.warning(message, location=self.get_location())
            return [nodes.error("", nodes.literal_block(message, message))]

    def generate(self) -> list[nodes.Node]:
        """The nodes to render."""
        raise NotImplementedError


def literal(
    text: str, language: str = "text", caption: str | None = None, command: str | None = None
) -> nodes.Node:
    """A highlighted code block, with an optional caption and shell command.

    The command is set as inline code, so that smart quotes leave its ``--``
    and ``"`` alone.
    """
    block = nodes.literal_block(text, text)
    block["language"] = language
    if caption is None and command is None:
        return block
    container = nodes.container("", literal_block=True, classes=["literal-block-wrapper"])
    title = nodes.caption("", "")
    if command is not None:
        title += nodes.literal(command, command)
        title += nodes.Text(" ")
    title += nodes.Text(caption or "")
    container += title
    container += block
    return container


def parse_rst(
    directive: SphinxDirective, lines: list[str], titles: bool = False
) -> list[nodes.Node]:
    """Parse reStructuredText ``lines`` in the directive's context."""
    holder = nodes.section() if titles else nodes.container()
    holder.document = directive.state.document
    content = StringList(lines, source=directive.get_source_info()[0])
    if titles:
        nested_parse_with_titles(directive.state, content, holder)
    else:
        directive.state.nested_parse(content, directive.content_offset, holder)
    return list(holder.children)


def make_section(directive: SphinxDirective, title: str, key: str) -> nodes.section:
    """A section node with a stable id, as if written with a heading."""
    section = nodes.section(ids=[nodes.make_id(key)], names=[nodes.fully_normalize_name(key)])
    section += nodes.title(title, title)
    directive.state.document.note_implicit_target(section, section)
    return section


def docstring_of(module_name: str) -> str:
    """The cleaned module docstring of ``module_name`` ("" if none)."""
    return inspect.cleandoc(importlib.import_module(module_name).__doc__ or "")


# ---------------------------------------------------------------- builtins

_SECTION_COMMENT = re.compile(r"^# -+ (.+?) -*$")


def _section_headers(path: str) -> list[tuple[int, str]]:
    lines = Path(path).read_text().splitlines()
    return [
        (i + 1, m.group(1)) for i, line in enumerate(lines) if (m := _SECTION_COMMENT.match(line))
    ]


def _section_of(line: int, headers: list[tuple[int, str]]) -> str:
    title = "Other builtins"
    for header_line, header in headers:
        if header_line < line:
            title = header[:1].upper() + header[1:]
    return title


def builtin_sections() -> list[tuple[str, list[str]]]:
    """Every builtin name, grouped by the source section that defines it."""
    from minitriton.language import BUILTINS

    groups: dict[str, list[str]] = {}
    for name, stub in BUILTINS.items():
        fn = inspect.unwrap(stub)
        headers = _section_headers(inspect.getsourcefile(fn) or "")
        title = _section_of(inspect.getsourcelines(fn)[1], headers)
        groups.setdefault(title, []).append(name)
    return list(groups.items())


def _summary(obj: object) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.split("\n\n")[0].replace("\n", " ")


class BuiltinsDirective(GeneratingDirective):
    """``.. minitriton-builtins::`` renders every ``tl`` builtin."""

    def generate(self) -> list[nodes.Node]:
        from minitriton.language import BUILTINS

        sections = builtin_sections()
        table = [
            ".. list-table::",
            "   :header-rows: 1",
            "   :widths: 25 75",
            "",
            "   * - builtin",
            "     - what it does",
        ]
        for _, names in sections:
            for name in names:
                table += [f"   * - :py:func:`tl.{name} <minitriton.language.{name}>`"]
                table += [f"     - {_summary(BUILTINS[name])}"]
        out = parse_rst(self, table)
        for title, names in sections:
            section = make_section(self, title, f"builtins-{title}")
            lines: list[str] = []
            for name in names:
                lines += [f".. autofunction:: minitriton.language.{name}", ""]
            section += parse_rst(self, lines)
            out.append(section)
        return out


def dtype_rows() -> list[tuple[str, Any]]:
    """``(tl name, ScalarType)`` for every dtype that ``tl`` exports, first name wins."""
    import minitriton.language as tl
    from minitriton.ir.types import ScalarType

    rows: dict[Any, str] = {}
    for attr in dir(tl):
        value = getattr(tl, attr)
        if isinstance(value, ScalarType) and not attr.startswith("_"):
            rows.setdefault(value, attr)
    order = {"bool": 0, "int": 1, "uint": 2, "float": 3}
    ordered = sorted(rows, key=lambda t: (order[t.kind], t.bitwidth, t.name))
    return [(rows[t], t) for t in ordered]


class DtypesDirective(GeneratingDirective):
    """``.. minitriton-dtypes::``: the table of ``tl`` dtypes, read from the code."""

    def generate(self) -> list[nodes.Node]:
        import minitriton.language as tl

        header = [
            "   * - ``tl`` name",
            "     - aliases",
            "     - IR type",
            "     - kind",
            "     - bits",
            "     - NumPy storage",
        ]
        lines = [".. list-table::", "   :header-rows: 1", ""] + header
        for name, t in dtype_rows():
            aliases = [
                a for a in dir(tl) if getattr(tl, a) is t and a != name and not a.startswith("_")
            ]
            lines += [
                f"   * - ``tl.{name}``",
                "     - " + (", ".join(f"``tl.{a}``" for a in sorted(aliases)) or "–"),
                f"     - ``{t.name}``",
                f"     - {t.kind}",
                f"     - {t.bitwidth}",
                f"     - ``{t.numpy}``",
            ]
        return parse_rst(self, lines)


# ---------------------------------------------------------------- passes

_EXAMPLE_HEAD = re.compile(r"^(?P<kind>before|after)\b.*::\s*$", re.IGNORECASE)


def _indented_block(lines: list[str], start: int) -> str:
    """The literal block that starts after line ``start`` (an ``::`` line)."""
    block: list[str] = []
    for line in lines[start + 1 :]:
        if line.strip() and not line.startswith((" ", "\t")):
            break
        block.append(line)
    return inspect.cleandoc("\n".join(block)) + "\n"


def pass_examples(doc: str) -> dict[str, str]:
    """The ``Before::`` and ``After::`` literal IR blocks of a pass docstring.

    A paragraph line that starts with "Before" or "After" and ends with
    ``::`` introduces an indented IR block (the first of each kind counts).
    """
    lines = doc.splitlines()
    found: dict[str, str] = {}
    for i, line in enumerate(lines):
        m = _EXAMPLE_HEAD.match(line.strip())
        if m and m.group("kind").lower() not in found:
            found[m.group("kind").lower()] = _indented_block(lines, i)
    return found


def registered_passes() -> dict[str, type]:
    """``minitriton.passes.PASSES`` (the GPU backend's included), or ``{}`` before it exists."""
    if not module_exists("minitriton.passes"):
        return {}
    if module_exists("minitriton.backend.passes"):
        importlib.import_module("minitriton.backend.passes")  # registers the GPU passes
    return dict(importlib.import_module("minitriton.passes").PASSES)


def pass_stage(cls: type) -> str:
    """``"ir"`` for an optimization pass, ``"gpu"`` for a GPU backend pass."""
    return str(getattr(cls, "stage", "ir"))


def pipeline_order(stage: str | None = None) -> list[str]:
    """Registered pass names in pipeline order: the default pipeline's, the other
    optimization passes, then the GPU backend's (or only those of ``stage``)."""
    passes = registered_passes()
    order: list[str] = []
    if module_exists("minitriton.passes.pipeline"):
        pipeline = importlib.import_module("minitriton.passes.pipeline")
        order = [_pass_name(p) for p in getattr(pipeline, "DEFAULT_PIPELINE", [])]
    ir = [n for n in passes if pass_stage(passes[n]) == "ir"]
    order = [n for n in order if n in ir]
    order += sorted(n for n in ir if n not in order)
    if module_exists("minitriton.backend.passes"):
        order += importlib.import_module("minitriton.backend.passes").gpu_pass_names()
    return [n for n in order if stage is None or pass_stage(passes[n]) == stage]


def _pass_name(entry: Any) -> str:
    """A pipeline entry's name: a string, a pass class, or a pass instance."""
    if isinstance(entry, str):
        return entry
    return str(getattr(entry, "name", entry))


def run_pass(name: str, ir_text: str) -> str:
    """Parse ``ir_text``, run pass ``name`` on it, verify, and print the result."""
    from minitriton.ir import parse_module, print_module, verify_module

    module = parse_module(ir_text, f"{name}-before.ir")
    verify_module(module)
    pass_obj = registered_passes()[name]()
    result = _apply(pass_obj, module)
    verify_module(result)
    return print_module(result)


def _apply(pass_obj: Any, module: Any) -> Any:
    """Run one pass; passes may rewrite in place (return None) or return a module."""
    for method in ("run", "apply", "__call__"):
        fn: Callable[..., Any] | None = getattr(pass_obj, method, None)
        if fn is not None:
            result = fn(module)
            return module if result is None else result
    raise TypeError(f"{type(pass_obj).__name__} has no run() method")


class PassDirective(GeneratingDirective):
    """``.. minitriton-pass:: NAME`` renders one pass page."""

    required_arguments = 1

    def generate(self) -> list[nodes.Node]:
        name = self.arguments[0]
        cls = registered_passes()[name]
        self.env.note_dependency(inspect.getsourcefile(cls) or "")
        doc = docstring_of(cls.__module__)
        body = doc.split("\n", 1)[1] if "\n" in doc else ""
        gpu = pass_stage(cls) == "gpu"
        out = [self._gpu_facts(name, cls) if gpu else self._facts(name, cls)]
        out += parse_rst(self, body.splitlines(), titles=True)
        out.append(self._gpu_examples(name) if gpu else self._example(name, doc))
        return out

    def _gpu_facts(self, name: str, cls: type) -> nodes.Node:
        from minitriton.backend.passes import GPU_PIPELINE

        step = GPU_PIPELINE.index(name) + 1 if name in GPU_PIPELINE else None
        where = f"step {step} of {len(GPU_PIPELINE)}" if step else "not in the pipeline"
        lines = [
            f'| **Name:** ``{name}`` (``minitriton.passes.PASSES[{name!r}]``, ``stage = "gpu"``)',
            f"| **Module:** ``{cls.__module__}``",
            f"| **In the GPU backend's pipeline** (``GPU_PIPELINE``): {where}",
            f"| **Runs on:** {getattr(cls, 'condition', 'every arch')}",
            "",
        ]
        return nodes.container("", *parse_rst(self, lines), classes=["pass-facts"])

    def _gpu_examples(self, name: str) -> nodes.Node:
        section = make_section(self, "Run at build time on real kernels", f"pass-{name}-run")
        intro = (
            "When this page was built, each kernel below was compiled to the optimized IR and "
            f"run through the GPU passes up to ``{name}``, with the verifier after each. "
            "What changed is shown in the ``ttgir`` form that ``--emit ttgir`` prints; where the "
            "change is too long to read whole, the loop after the pass stands for it."
        )
        section += parse_rst(self, [intro])
        for example in gpu_examples(name):
            section += parse_rst(self, [f"**{example.title}**"])
            section += literal(example.text, example.language, example.caption, example.command)
        return section

    def _facts(self, name: str, cls: type) -> nodes.Node:
        lines = [
            f"| **Name:** ``{name}`` (``minitriton.passes.PASSES[{name!r}]``)",
            f"| **Module:** ``{cls.__module__}``",
            f"| **In the default pipeline:** {'yes' if name in _default_names() else 'no'}",
            "",
        ]
        return nodes.container("", *parse_rst(self, lines), classes=["pass-facts"])

    def _example(self, name: str, doc: str) -> nodes.Node:
        section = make_section(self, "Run at build time", f"pass-{name}-run")
        examples = pass_examples(doc)
        if "before" not in examples:
            logger.warning(
                "pass %r: its docstring has no 'Before::' IR block",
                name,
                location=self.get_location(),
            )
            return section
        before = examples["before"]
        after = run_pass(name, before)
        intro = (
            "When this page was built, the *before* IR above was parsed, verified, run through "
            f"the ``{name}`` pass and verified again. This is what the pass produced, and the "
            "build checks that it is exactly the *after* IR above:"
        )
        section += parse_rst(self, [intro])
        section += literal(after, "mtir", caption=f"after {name} (generated)")
        diff = "".join(
            difflib.unified_diff(before.splitlines(True), after.splitlines(True), "before", "after")
        )
        section += parse_rst(self, ["The same change as a diff:"])
        section += literal(
            diff or "(no change)\n", "diff", caption=f"what {name} changed (generated)"
        )
        if examples.get("after", "").strip() != after.strip():
            logger.warning(
                "pass %r: the docstring's 'After::' IR differs from what the pass produces:\n%s",
                name,
                after,
                location=self.get_location(),
            )
        return section


def _default_names() -> set[str]:
    if not module_exists("minitriton.passes.pipeline"):
        return set()
    pipeline = importlib.import_module("minitriton.passes.pipeline")
    return {_pass_name(p) for p in getattr(pipeline, "DEFAULT_PIPELINE", [])}


class PassToctree(TocTree):
    """``.. minitriton-pass-toctree::``: one entry per registered pass.

    ``:stage: ir`` or ``:stage: gpu`` lists the passes of that stage only.
    """

    option_spec = {**TocTree.option_spec, "stage": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        names = pipeline_order(self.options.get("stage"))
        self.content = StringList([f"{PASS_PAGE_PREFIX}{name}" for name in names])
        if not self.content:
            return [nodes.paragraph(text="No pass is registered yet.")]
        return super().run()


# ---------------------------------------------------------------- GPU passes

#: The kernels every GPU pass page runs: (title, FILE.py:KERNEL, signature).
_TC = "tests/kernels/tc_kernels.py"
GPU_EXAMPLE_KERNELS = {
    "matmul": (
        "Tutorial 03's matmul (fp16, 128x128x64 tiles)",
        f"{_TC}:matmul_kernel",
        "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, i32:1, "
        "i32:16, i32:1, 128, 128, 64, 8",
    ),
    "attention": (
        "Tutorial 06's attention forward (fp16, HEAD_DIM 64)",
        f"{_TC}:_attn_fwd",
        "*fp16:16, *fp16:16, *fp16:16, fp32, *fp32:16, *fp16:16, "
        + ", ".join(["i32:16, i32:16, i32:16, i32:1"] * 4)
        + ", i32, i32, 1024, 64, 128, 64, 3",
    ),
    "descriptor-matmul": (
        "Tutorial 09's descriptor matmul (A @ B.T)",
        f"{_TC}:matmul_kernel_tma",
        "tensordesc<fp16[128, 64]>:16, tensordesc<fp16[128, 64]>:16, "
        "tensordesc<fp16[128, 128]>:16, i32:16, i32:16, i32:16, 128, 128, 64, 8",
    ),
    "ws-descriptor-matmul": (
        "Tutorial 09's descriptor matmul, warp_specialize=True, TMA copies",
        "tests/kernels/tma_matmul.py:ws_desc_matmul",
        "tensordesc<fp16[128, 64]>:16, tensordesc<fp16[128, 64]>:16, "
        "tensordesc<fp16[128, 128]>:16, i32:16, i32:16, i32:16, 128, 128, 64, 1",
    ),
    "argmax": (
        "Inductor's argmax (a reduction whose combiner calls helpers)",
        "tests/kernels/inductor_reductions.py:argmax_kernel",
        "*fp32:16, *fp32:16, *i32:16, i32:16, i32:16, 4, 64",
    ),
    "persistent-matmul": (
        "Tutorial 09's persistent descriptor matmul, its epilogue in two halves",
        "tests/kernels/persistent_matmul.py:persistent_desc_matmul",
        "tensordesc<fp16[128, 64]>:16, tensordesc<fp16[128, 64]>:16, "
        "tensordesc<fp16[128, 64]>:16, i32:16, i32:16, i32:16, 128, 128, 64, 8, True, 132, False",
    ),
}
#: Kernels beyond the matmul and the attention that show what a pass does.
GPU_EXTRA_KERNELS = {
    "sink-transposes": ["descriptor-matmul"],
    "scalar-combiners": ["argmax"],
    "tma-stores": ["persistent-matmul"],
    "warp-specialize": ["ws-descriptor-matmul"],
}
#: Passes whose pages compile with TMA copies and stores allowed (``MINITRITON_TMA_STORES=1``).
GPU_EXAMPLE_TMA = {"tma-stores"}
#: Kernels compiled with TMA copies and warp specialization allowed (as on an H200 with
#: ``MINITRITON_WARP_SPECIALIZE=1``); the others show the default ``cp.async`` pipeline.
GPU_TMA_KERNELS = {"ws-descriptor-matmul"}
#: The archs each pass page compiles for: sm_90a (wgmma), and sm_80 (mma.sync) where it differs.
GPU_EXAMPLE_ARCHS = {
    "software-pipeline": ("sm_90a", "sm_80"),
    "assign-layouts": ("sm_90a", "sm_80"),
}
#: A change longer than this (lines of diff) is shown as the loop after the pass.
GPU_DIFF_LINES = 160


@dataclass(frozen=True)
class GpuExample:
    """One generated block of a GPU pass page."""

    title: str
    text: str
    language: str
    caption: str
    command: str


def gpu_examples(name: str) -> list[GpuExample]:
    """What pass ``name`` does to each example kernel, for each arch of its page."""
    keys = ["matmul", "attention", *GPU_EXTRA_KERNELS.get(name, [])]
    return [
        _gpu_example(name, key, arch)
        for key in keys
        for arch in GPU_EXAMPLE_ARCHS.get(name, ("sm_90a",))
    ]


def _gpu_example(name: str, key: str, arch: str) -> GpuExample:
    from minitriton.ir.ttgir_text import readable

    title, target, signature = GPU_EXAMPLE_KERNELS[key]
    tma = name in GPU_EXAMPLE_TMA or key in GPU_TMA_KERNELS
    command = f'$ minitriton compile {target} --arch {arch} --signature "{signature}" ' + (
        f"--print-after {name}"
    )
    if tma:
        stores = name in GPU_EXAMPLE_TMA
        switch = "MINITRITON_TMA_STORES" if stores else "MINITRITON_WARP_SPECIALIZE"
        command = f"$ {switch}=1 " + command.removeprefix("$ ")
    snapshots = gpu_pass_snapshots(target, signature, arch, tma)
    names = [n for n, _ in snapshots]
    heading = f"{title}, {arch}"
    if name not in names:
        return GpuExample(heading, "(the pass does not run for this arch)\n", "text",
                          "(generated)", command)  # fmt: skip
    index = names.index(name)
    before, after = readable(snapshots[index - 1][1]), readable(snapshots[index][1])
    diff = "".join(
        difflib.unified_diff(
            before.splitlines(True), after.splitlines(True), f"before {name}", f"after {name}", n=2
        )
    )
    if not diff:
        return GpuExample(heading, "(no change on this kernel)\n", "text", "(generated)", command)
    if diff.count("\n") <= GPU_DIFF_LINES:
        return GpuExample(heading, diff, "diff", f"what {name} changed (generated)", command)
    span = GPU_EXCERPTS.get(name)
    if span is not None:
        caption = f"the split after {name} (an excerpt, generated)"
        return GpuExample(heading, span_excerpt(after, *span), "mtir", caption, command)
    loop = loop_excerpt(after)
    caption = f"the loop after {name} (an excerpt, generated)"
    return GpuExample(heading, loop, "mtir", caption, command)


#: Passes whose long change is shown as the lines from one op to another, not one loop.
GPU_EXCERPTS = {"warp-specialize": ("ttng.init_barrier", "ttng.inval_barrier")}


def span_excerpt(text: str, first: str, last: str, limit: int = GPU_DIFF_LINES) -> str:
    """The lines of ``text`` from the first holding ``first`` to the next holding ``last``."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if first in line), 0)
    end = next((i for i in range(start, len(lines)) if last in lines[i]), len(lines) - 1)
    indent = len(lines[start]) - len(lines[start].lstrip())
    return "\n".join(line[indent:] for line in lines[start : min(end + 1, start + limit)]) + "\n"


_SNAPSHOTS: dict[tuple[str, str, str, bool], list[tuple[str, str]]] = {}


def gpu_pass_snapshots(
    target: str, signature: str, arch: str, tma: bool = False
) -> list[tuple[str, str]]:
    """``minitriton.backend.passes.gpu_snapshots`` of a kernel (``FILE.py:KERNEL``), kept.

    With ``tma``, the pipeliner may copy with TMA, stores may become TMA stores
    and ``warp-specialize`` runs (``MINITRITON_TMA_STORES=1`` and
    ``MINITRITON_WARP_SPECIALIZE=1``).
    """
    key = (target, signature, arch, tma)
    if key not in _SNAPSHOTS:
        from minitriton.backend.passes import gpu_snapshots
        from minitriton.backend.tma import WARP_SPECIALIZE_ENV
        from minitriton.cli import find_kernel, import_user_file, kernel_jit, split_target
        from minitriton.compiler import CompileOptions, compile_kernel
        from minitriton.signature import kernel_params, parse_signature

        path, kernel_name = split_target(str(REPO / target))
        jit = kernel_jit(find_kernel(import_user_file(path), path, kernel_name))
        specs = parse_signature(signature, kernel_params(jit.fn))
        options = CompileOptions(arch=arch)
        module = compile_kernel(jit.source, specs, options, stop_after="ir-opt").module
        saved = os.environ.get(WARP_SPECIALIZE_ENV)
        if tma:
            os.environ[WARP_SPECIALIZE_ENV] = "1"
        try:
            _SNAPSHOTS[key] = gpu_snapshots(module, arch=arch, tma=tma, tma_stores=tma)
        finally:
            if saved is None:
                os.environ.pop(WARP_SPECIALIZE_ENV, None)
            else:
                os.environ[WARP_SPECIALIZE_ENV] = saved
    return _SNAPSHOTS[key]


def loop_excerpt(text: str, limit: int = GPU_DIFF_LINES) -> str:
    """The first ``scf.for`` of ``text`` with its body (at most ``limit`` lines)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if "scf.for" in line), 0)
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith(" " * indent + "}")),
        len(lines) - 1,
    )
    excerpt = lines[start : end + 1]
    if len(excerpt) > limit:
        excerpt = [*excerpt[:limit], f"{' ' * indent}  ... ({len(excerpt) - limit} more lines)"]
    return "\n".join(excerpt) + "\n"


def _pass_title(name: str, cls: type) -> str:
    summary = docstring_of(cls.__module__).split("\n", 1)[0].strip().rstrip(".")
    return summary or name


def generate_pass_pages(app: Sphinx) -> None:
    """Write one page per registered pass; remove pages of passes now gone."""
    PASS_PAGES.mkdir(parents=True, exist_ok=True)
    wanted: dict[Path, str] = {}
    for name, cls in registered_passes().items():
        title = _pass_title(name, cls)
        text = (
            ".. Generated by docs/_ext/minitriton_docs.py from minitriton.passes.PASSES.\n"
            ".. Do not edit: the pass module's docstring is the source of this page.\n\n"
            f"{title}\n{'=' * len(title)}\n\n"
            ".. highlight:: mtir\n\n"
            f".. minitriton-pass:: {name}\n"
        )
        wanted[PASS_PAGES / f"{PASS_PAGE_PREFIX}{name}.rst"] = text
    for stale in PASS_PAGES.glob(f"{PASS_PAGE_PREFIX}*.rst"):
        if stale not in wanted:
            stale.unlink()
    for path, text in wanted.items():
        # Rewrite only on change, so incremental builds stay incremental.
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


# ---------------------------------------------------------------- modules


class AutomoduleIfExists(GeneratingDirective):
    """``.. minitriton-automodule:: MODULE`` (with ``:members:``)."""

    required_arguments = 1
    option_spec = {"members": directives.unchanged, "pending": directives.unchanged}

    def generate(self) -> list[nodes.Node]:
        name = self.arguments[0]
        if not module_exists(name):
            note = self.options.get("pending") or f"``{name}`` is not written yet."
            return [nodes.note("", *parse_rst(self, [note]))]
        lines = [f".. automodule:: {name}"]
        if "members" in self.options:
            lines.append(f"   :members: {self.options['members'] or ''}".rstrip())
        return parse_rst(self, lines)


# ---------------------------------------------------------------- IR


class IRDirective(GeneratingDirective):
    """``.. minitriton-ir::``: IR parsed, verified and printed back at build time.

    The IR is the directive's content, or ``:file:`` (relative to the
    repository root), or the kernel ``:kernel: path.py::name`` compiled by the
    frontend with ``:constexprs:`` (a Python dict literal of constexpr values).
    """

    has_content = True
    option_spec = {
        "caption": directives.unchanged,
        "file": directives.unchanged,
        "with-locs": directives.flag,
    }

    def generate(self) -> list[nodes.Node]:
        from minitriton.ir import parse_module, print_module, verify_module

        text, filename = self._text()
        module = parse_module(text, filename)
        verify_module(module)
        printed = print_module(module, with_locs="with-locs" in self.options)
        return [literal(printed, "mtir", caption=self.options.get("caption"))]

    def _text(self) -> tuple[str, str]:
        if "file" not in self.options:
            return "\n".join(self.content) + "\n", Path(self.get_source_info()[0]).name
        path = REPO / self.options["file"]
        self.env.note_dependency(str(path))
        return path.read_text(), self.options["file"]


def run_cli(args: list[str]) -> tuple[str, str]:
    """Run ``minitriton ARGS`` in-process; return what it wrote and its stderr."""
    import contextlib
    import tempfile

    from minitriton.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        out_path = Path(tmp) / "out.txt"
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = main([*args, "-o", str(out_path)])
        if status:
            command = " ".join(args)
            raise RuntimeError(f"minitriton {command} exited with {status}:\n{err.getvalue()}")
        return out_path.read_text(), err.getvalue()


class CompileDirective(GeneratingDirective):
    """``.. minitriton-compile:: FILE.py[:KERNEL]``: run ``minitriton compile`` now.

    Options: ``:signature:`` (``-s``), ``:emit:`` (default ``ir``),
    ``:print-after:`` (shows the pass's IR, printed to stderr, instead),
    ``:num-warps:``, ``:num-stages:``, ``:arch:`` and ``:match:`` (a regular expression:
    only the lines it finds are shown, for excerpts of long output).
    PTX is annotated with the kernel's source lines (``:no-annotate:``: matched as
    it is, the parameter list and every line of long groups included).
    """

    required_arguments = 1
    option_spec = {
        "signature": directives.unchanged,
        "emit": directives.unchanged,
        "print-after": directives.unchanged,
        "num-warps": directives.unchanged,
        "num-stages": directives.unchanged,
        "arch": directives.unchanged,
        "match": directives.unchanged,
        "no-annotate": directives.flag,
    }

    def generate(self) -> list[nodes.Node]:
        target = self.arguments[0]
        # --print-after needs the passes to run: the optimized IR is the default then.
        emit = self.options.get("emit", "ir-opt" if "print-after" in self.options else "ir")
        args = ["compile", target, "--emit", emit]
        if "signature" in self.options:
            args += ["-s", self.options["signature"]]
        if "print-after" in self.options:
            args += ["--print-after", self.options["print-after"]]
        for option in ("num-warps", "num-stages", "arch"):
            if option in self.options:
                args += [f"--{option}", self.options[option]]
        self.env.note_dependency(str(REPO / target.split(":")[0]))
        if emit in ("llvm", "ptx", "ttgir") and not _backend_ready():
            text = "The GPU backend is not written yet: this PTX appears once it is."
            return [nodes.note("", nodes.paragraph(text=text))]
        with _chdir(REPO):
            text, err = run_cli(args)
        shown, language = (err, "mtir") if "print-after" in self.options else (text, _LANGS[emit])
        if emit == "ptx" and "no-annotate" not in self.options:
            shown = annotate_ptx(shown)
        caption = "(run when the docs were built)"
        if "match" in self.options:
            pattern = re.compile(self.options["match"])
            shown = "\n".join(line for line in shown.splitlines() if pattern.search(line)) + "\n"
            caption = "(run when the docs were built; only the lines that matter here)"
        command = "$ minitriton " + " ".join(_quote_arg(a) for a in args)
        return [literal(shown, language, caption=caption, command=command)]


# LLVM 22 syntax (e.g. `range(i32 0, 128)`) is newer than Pygments' llvm lexer: plain text.
_LANGS = {
    "ast": "text",
    "ir": "mtir",
    "ir-opt": "mtir",
    "ttgir": "mtir",
    "llvm": "text",
    "ptx": "text",
}


def _quote_arg(arg: str) -> str:
    return f'"{arg}"' if " " in arg else arg


@contextmanager
def _chdir(path: Path) -> Iterator[None]:
    """``contextlib.chdir`` for Python 3.10: relative kernel paths are the repo's."""
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def op_groups() -> list[tuple[str, list[type]]]:
    """Registered IR op classes grouped by dialect (``tt``, ``arith``, ...)."""
    from minitriton.ir import OP_REGISTRY

    groups: dict[str, list[type]] = {}
    for name in sorted(OP_REGISTRY):
        groups.setdefault(name.split(".")[0], []).append(OP_REGISTRY[name])
    return sorted(groups.items())


class OpsDirective(GeneratingDirective):
    """``.. minitriton-ops::``: every op of ``OP_REGISTRY``, its docstring and signature."""

    def generate(self) -> list[nodes.Node]:
        out: list[nodes.Node] = []
        for dialect, classes in op_groups():
            section = make_section(self, f"{dialect}", f"ops-{dialect}")
            lines = [
                ".. list-table::",
                "   :header-rows: 1",
                "   :widths: 20 60 20",
                "",
                "   * - op",
                "     - syntax and meaning",
                "     - declared signature",
            ]
            for cls in classes:
                doc = (inspect.getdoc(cls) or "").replace("\n", "\n       ")
                lines += [f"   * - ``{cls.name}``", f"     - {doc or '(undocumented)'}"]
                lines.append(f"     - {cls.signature() or 'none declared'}")
            section += parse_rst(self, lines)
            out.append(section)
        return out


class SemanticsTableDirective(GeneratingDirective):
    """``.. minitriton-semantics-table::``: where each op means what, from the code."""

    def generate(self) -> list[nodes.Node]:
        from minitriton.tools.semantics_table import COLUMNS, op_rows

        lines = [
            ".. list-table::",
            "   :header-rows: 1",
            "   :class: semantics-table",
            "",
            f"   * - {COLUMNS[0]}",
            *(f"     - {column}" for column in COLUMNS[1:]),
        ]
        for row in op_rows():
            op, *rest = row.cells()
            lines.append(f"   * - ``{op}``")
            lines += [f"     - {_rst_cell(cell)}" for cell in rest]
        return parse_rst(self, lines)


def _rst_cell(text: str) -> str:
    """Code (dotted paths, ``verify_``) as literals, prose and punctuation as they are."""
    return " ".join(_rst_word(w) for w in text.split(" "))


def _rst_word(word: str) -> str:
    core = word.rstrip(",;")
    is_code = "_" in core and ("." in core.strip("()") or core.endswith("_"))
    return f"``{core}``{word[len(core) :]}" if is_code else word


# ---------------------------------------------------------------- PTX

_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')


def annotate_ptx(ptx: str, max_lines: int = 14) -> str:
    """PTX with each ``.loc`` run replaced by a comment quoting that source line.

    Debug sections are dropped; groups longer than ``max_lines`` are cut.
    """
    files: dict[str, str] = {}
    out: list[str] = []
    group: list[str] = []
    current: tuple[str, int] | None = None
    for line in ptx.split(".section\t.debug", 1)[0].split(".section .debug", 1)[0].splitlines():
        if m := _FILE.match(line):
            files[m.group(1)] = m.group(2)
            continue
        if m := _LOC.match(line):
            where = (files.get(m.group(1), "?"), int(m.group(2)))
            if where != current:
                _flush(out, group, max_lines)
                current, group = where, [_quote(*where)] if where[1] else []
            continue
        group.append(line)
    _flush(out, group, max_lines)
    return "\n".join(out).strip() + "\n"


def _quote(path: str, line: int) -> str:
    import linecache

    text = linecache.getline(path, line).strip()
    return f"\n// ---- {Path(path).name}:{line}: {text}"


def _flush(out: list[str], group: list[str], max_lines: int) -> None:
    body = [g for g in group if g.strip()]
    if len(body) > max_lines + 1:
        body = body[: max_lines + 1] + [f"        // ... {len(body) - max_lines - 1} more lines"]
    out.extend(body)


def _load_kernel(spec: str) -> Any:
    path, name = spec.split("::")
    mod_spec = importlib.util.spec_from_file_location(Path(path).stem + "_docs", REPO / path)
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    return getattr(module, name)


def _backend_ready() -> bool:
    """True once ``minitriton.backend`` exists and offers ``compile_to_ptx``."""
    if not module_exists("minitriton.backend"):
        return False
    return hasattr(importlib.import_module("minitriton.backend"), "compile_to_ptx")


class PTXDirective(GeneratingDirective):
    """``.. minitriton-ptx:: path.py::kernel``: real PTX, annotated with the source."""

    required_arguments = 1
    option_spec = {"constexprs": directives.unchanged, "signature": directives.unchanged}

    def generate(self) -> list[nodes.Node]:
        if not _backend_ready():
            text = "The GPU backend is not written yet: the annotated PTX appears here once it is."
            return [nodes.note("", nodes.paragraph(text=text))]
        self.env.note_dependency(str(REPO / self.arguments[0].split("::")[0]))
        ptx = self._ptx()
        return [
            literal(annotate_ptx(ptx), "text", caption=f"PTX of {self.arguments[0]} (generated)")
        ]

    def _ptx(self) -> str:
        from minitriton.backend import compile_to_ptx

        kernel = _load_kernel(self.arguments[0])
        constexprs = json.loads(self.options.get("constexprs", "{}"))
        signature = json.loads(self.options.get("signature", "null"))
        return compile_to_ptx(kernel, signature=signature, constexprs=constexprs)


# ---------------------------------------------------------------- GPU numbers


def _bench_rows() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The metadata and the rows of ``gpu_bench.json`` (a list, or ``{"rows": [...]}``)."""
    if not BENCH_DATA.exists():
        return {}, []
    data = json.loads(BENCH_DATA.read_text())
    if isinstance(data, list):
        return {}, [r for r in data if isinstance(r, dict)]
    rows = data.get("rows", data.get("results", []))
    return data, [r for r in rows if isinstance(r, dict)]


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    return columns


def _bench_table(rows: list[dict[str, Any]]) -> list[str]:
    columns = _columns(rows)
    lines = [".. list-table::", "   :header-rows: 1", ""]
    lines += ["   * - " + columns[0]] + [f"     - {c}" for c in columns[1:]]
    for row in rows:
        cells = [_cell(row.get(c)) for c in columns]
        lines += ["   * - " + cells[0]] + [f"     - {c}" for c in cells[1:]]
    return lines


def _cell(value: Any) -> str:
    if value is None or value == "":
        return "–"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return str(value).replace("\n", " ")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_NOT_A_LABEL = ("unit", "metric", "notes", "note", "date", "device")


def _label(row: dict[str, Any]) -> str:
    parts = [str(v) for k, v in row.items() if isinstance(v, str) and k not in _NOT_A_LABEL]
    return "\n".join(parts) or "?"


def _bench_svg(rows: list[dict[str, Any]]) -> str:
    """Grouped horizontal bars per row, one bar per numeric field, one panel per unit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    units = list(dict.fromkeys(str(r.get("unit", r.get("metric", ""))) for r in rows))
    panels = [[r for r in rows if str(r.get("unit", r.get("metric", ""))) == u] for u in units]
    heights = [1.2 + 0.6 * len(p) for p in panels]
    fig, axes = plt.subplots(len(units), 1, figsize=(8, sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})  # fmt: skip
    for ax, unit, panel in zip(axes[:, 0], units, panels):
        _bench_panel(ax, panel, unit)
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    svg = buf.getvalue()
    return svg[svg.index("<svg") :]


def _bench_panel(ax: Any, rows: list[dict[str, Any]], unit: str) -> None:
    series = [c for c in _columns(rows) if any(_is_number(r.get(c)) for r in rows)]
    height = 0.8 / max(len(series), 1)
    for k, key in enumerate(series):
        values = [float(r[key]) if _is_number(r.get(key)) else 0.0 for r in rows]
        ys = [i + k * height for i in range(len(rows))]
        ax.barh(ys, values, height=height, label=key)
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(rows))], [_label(r) for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel(unit)
    ax.legend(loc="best", fontsize="small")


class BenchDirective(GeneratingDirective):
    """``.. minitriton-bench::``: table and plot of ``docs/_data/gpu_bench.json``."""

    def generate(self) -> list[nodes.Node]:
        self.env.note_dependency(str(BENCH_DATA))
        data, rows = _bench_rows()
        if not rows:
            return [
                nodes.note("", nodes.paragraph(text="No GPU benchmark results are checked in yet."))
            ]
        meta = [
            f"{k}: {v}" for k, v in data.items() if k != "rows" and isinstance(v, (str, int, float))
        ]
        out = parse_rst(self, ["| " + line for line in meta] + [""]) if meta else []
        out += parse_rst(self, _bench_table(rows))
        out.append(
            nodes.raw("", f'<div class="bench-plot">{_bench_svg(rows)}</div>', format="html")
        )
        return out


# ---------------------------------------------------------------- setup


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directives, the IR lexer and the pass-page generator."""
    app.add_lexer("mtir", MiniTritonIRLexer)
    app.add_directive("minitriton-builtins", BuiltinsDirective)
    app.add_directive("minitriton-dtypes", DtypesDirective)
    app.add_directive("minitriton-pass", PassDirective)
    app.add_directive("minitriton-pass-toctree", PassToctree)
    app.add_directive("minitriton-automodule", AutomoduleIfExists)
    app.add_directive("minitriton-ir", IRDirective)
    app.add_directive("minitriton-ops", OpsDirective)
    app.add_directive("minitriton-semantics-table", SemanticsTableDirective)
    app.add_directive("minitriton-compile", CompileDirective)
    app.add_directive("minitriton-bench", BenchDirective)
    app.add_directive("minitriton-ptx", PTXDirective)
    app.connect("builder-inited", generate_pass_pages)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
