"""The course in Jupyter: start, check and get hints from a notebook.

::

    from minitriton.course.notebook import start, check, hint, trace_picture

    start(5)                     # the README's task and the skeleton to paste in a cell
    # ... write softmax_kernel in a cell, with @triton.jit ...
    check(5, softmax_kernel)     # the grade, the picture of wrong elements, the hint
    trace_picture(5, softmax_kernel)  # which program loaded and stored which elements

Kernel exercises: :func:`check` writes the kernels' source (and the source
of the ``@jit`` helpers they call) into the workspace file, then grades that
file exactly like ``minitriton exercises check``: in a child process, with
progress recorded by the grader. Compiler exercises: pass the functions the
exercise stubs (``check("c4", integer_promote)``); each replaces the
function of the same name in the workspace copy, and the project's tests
grade the copy.
"""

from __future__ import annotations

import ast
import html
import inspect
import io
import tempfile
import textwrap
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any, NamedTuple

from minitriton.course.catalog import Exercise, find_exercise
from minitriton.course.compiler_grader import marked_files
from minitriton.course.workspace import Workspace

HEADER = "import minitriton as triton\nimport minitriton.language as tl\n"

__all__ = ["check", "hint", "start", "trace_picture"]


def _show(text: str) -> None:
    print(text.rstrip("\n"))


def _cli_text(*args: str, workspace: str | None = None) -> tuple[int, str]:
    """Run a ``minitriton exercises`` subcommand and return its status and output."""
    argv = ["exercises", *args] + (["--workspace", workspace] if workspace else [])
    from minitriton.cli import main

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        rc = main(argv)
    return rc, buffer.getvalue()


def start(exercise: int | str, workspace: str | None = None) -> None:
    """Start ``exercise``: print where it is, and offer its code in a new cell.

    Kernels: the skeleton. Compiler exercises: the stubbed functions.
    """
    ex = find_exercise(str(exercise))
    _show(_cli_text("start", ex.id, workspace=workspace)[1])
    if ex.track == "compiler":
        _offer_cell(stubbed_functions(ex, Workspace.resolve(workspace)))
        return
    _offer_cell((ex.folder / "skeleton.py").read_text(encoding="utf-8"))


def _offer_cell(text: str) -> None:
    """Put ``text`` into the next cell, where the notebook supports it."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.set_next_input(text, replace=False)


def hint(exercise: int | str, workspace: str | None = None) -> None:
    """Show the next hint of ``exercise``."""
    _show(_cli_text("hint", str(exercise), workspace=workspace)[1])


class Grade(NamedTuple):
    """What ``check`` recorded: the status and the score (0..1)."""

    status: str
    score: float


def check(
    exercise: int | str, *functions: Any, workspace: str | None = None, gpu: bool = False
) -> Grade:
    """Grade ``functions`` (kernels, or a compiler exercise's functions) and show the result."""
    ex = find_exercise(str(exercise))
    ws = Workspace.resolve(workspace)
    if not ws.started(ex):
        _cli_text("start", ex.id, workspace=str(ws.root))
    if ex.track == "kernels":
        _write_kernels(ws.kernel_file(ex), functions)
    else:
        _write_functions(ex, ws, functions)
    with tempfile.TemporaryDirectory(prefix="minitriton-check-") as folder:
        png = Path(folder) / "wrong.png"  # shown (embedded in the notebook), then removed
        args = ["check", ex.id, "--png", str(png)] + (["--gpu"] if gpu else [])
        _show(_cli_text(*args, workspace=str(ws.root))[1])
        _display_png(png)
    return _last_result(ex, ws)


def _last_result(ex: Exercise, ws: Workspace) -> Grade:
    """The recorded grade (the details were printed above)."""
    pr = ws.progress(ex)
    return Grade(pr.status, round(pr.score, 4))


def _display_png(path: Path) -> None:
    if not path.exists():
        return
    try:
        from IPython.display import Image, display
    except ImportError:
        return
    display(Image(filename=str(path)))


def _display_view(path: Path) -> None:
    """The trace's interactive view (hover a cell), framed so its script keeps to itself."""
    try:
        from IPython.display import HTML, display
    except ImportError:
        return
    page = html.escape(path.read_text(encoding="utf-8"), quote=True)
    display(HTML(f'<iframe srcdoc="{page}" style="width:100%;height:640px;border:0"></iframe>'))


# ---------------------------------------------------------------- kernels


def _write_kernels(path: Path, kernels: tuple[Any, ...]) -> None:
    """Write the kernels, and the ``@jit`` helpers they use, as one file."""
    sources = []
    for fn in _with_helpers(kernels):
        sources.append(textwrap.dedent(fn.source.source))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + "\n\n" + "\n\n".join(sources), encoding="utf-8")


def _with_helpers(kernels: tuple[Any, ...]) -> list[Any]:
    """``kernels`` and every ``@jit`` function they reach through globals, helpers first."""
    from minitriton.frontend.source import JITBase

    order: list[Any] = []

    def visit(fn: Any) -> None:
        if any(fn is seen for seen in order):
            return
        code = fn.source.fn.__code__
        for name in code.co_names:
            helper = fn.source.globals.get(name)
            if isinstance(helper, JITBase):
                visit(helper)
        order.append(fn)

    for kernel in kernels:
        if not isinstance(kernel, JITBase):
            raise TypeError(f"check() takes @triton.jit kernels, got {type(kernel).__name__}")
        visit(kernel)
    return order


# ---------------------------------------------------------------- compiler


def _write_functions(ex: Exercise, ws: Workspace, functions: tuple[Any, ...]) -> None:
    """Replace, in the student's copy, each function of the same name by the given one."""
    files = marked_files(ex, ws.compiler_dir(ex))
    for fn in functions:
        source = textwrap.dedent(inspect.getsource(fn))
        if not any(_replace_function(path, fn.__name__, source) for path in files):
            names = ", ".join(str(p.name) for p in files)
            raise ValueError(f"{fn.__name__} is not a function of {names}")


def _replace_function(path: Path, name: str, source: str) -> bool:
    """Put ``source`` in place of function (or method) ``name`` in ``path``; False if absent."""
    text = path.read_text(encoding="utf-8")
    node = _find_def(ast.parse(text), name)
    if node is None:
        return False
    lines = text.splitlines(keepends=True)
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
    indent = lines[node.lineno - 1][: node.col_offset]
    body = textwrap.indent(source, indent)
    lines[start : node.end_lineno] = [body if body.endswith("\n") else body + "\n"]
    path.write_text("".join(lines), encoding="utf-8")
    return True


def stubbed_functions(ex: Exercise, ws: Workspace) -> str:
    """The functions of the student's copy that hold ``ex``'s stubbed regions, dedented."""
    marker = f"# BEGIN EXERCISE {ex.spec.MARKER}"
    parts = []
    for path in marked_files(ex, ws.compiler_dir(ex)):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.FunctionDef) or any(
                isinstance(inner, ast.FunctionDef) and inner is not node for inner in ast.walk(node)
            ):
                continue
            body = "".join(lines[node.lineno - 1 : node.end_lineno])
            if marker in body:
                parts.append(textwrap.dedent(body))
    return "\n\n".join(parts)


def _find_def(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


# ---------------------------------------------------------------- the trace picture


def trace_picture(exercise: int | str, *kernels: Any, case: int = 0) -> None:
    """Run ``kernels`` on case number ``case`` of the spec and draw the output's trace.

    The picture shows, per element of the output, which program stored it
    (and which loaded what): the tool for "why is this tile wrong". Runs in
    this process, on the emulator; nothing is graded.
    """
    from types import SimpleNamespace

    from minitriton.course.kernels import copy_inputs
    from minitriton.emulator import trace
    from minitriton.emulator.debug.trace_plot import plot_buffer

    ex = find_exercise(str(exercise))
    module = SimpleNamespace(**{k.source.name: k for k in _with_helpers(kernels)})
    cases = ex.spec.cases()
    chosen = cases[case]
    result = trace(lambda: ex.spec.launch(module, *copy_inputs(chosen.args)))
    print(f"case '{chosen.name}'")
    print(result.summary())
    stored = [a.buffer for a in result.accesses if a.kind in ("store", "atomic")]
    figure = plot_buffer(result, stored[-1] if stored else next(iter(result.buffers)))
    path = Path(tempfile.mkdtemp(prefix="minitriton-trace-")) / "trace.png"
    figure.savefig(path, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(figure)
    view = result.save_html(path.with_name("trace.html"))
    print(f"(picture saved to {path})")
    print(f"(interactive view, hover a cell: {view})")
    _display_png(path)
    _display_view(view)
