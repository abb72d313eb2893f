"""The ``minitriton`` command line.

::

    minitriton compile FILE.py[:KERNEL] --signature SIG
                       --emit ast|ir|ir-opt|ttgir|llvm|ptx|cubin
                       [--print-after PASS ...] [--print-after-all] [--passes P,Q]
                       [--arch sm_90|sm_90a] [--num-warps N] [--num-stages N] [-o OUT]
    minitriton run [--backend emulator|gpu] FILE.py [--backend B] [args...]

Errors in kernels print as ``file:line:col: error: message`` with the source
line and a caret, on stderr, with exit status 1 and no traceback.

More subcommands live in their own modules: each exposes
``add_parser(subparsers)``, which adds its command with :func:`add_command`
(or :func:`minitriton.tools.debug_cli.script_command` for a command that runs
a script) and then its options. A command is the function that runs it,
taking the parsed arguments and returning the exit status; that function's
docstring is the command's help. List the module in :data:`COMMAND_MODULES`.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import inspect
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

from minitriton.diagnostics import CompileError, UserError, install_excepthook

#: Modules that add more subcommands (each has ``add_parser(subparsers)``).
COMMAND_MODULES: tuple[str, ...] = (
    "minitriton.course.cli",
    "minitriton.tools.debug_cli",
    "minitriton.tools.trace_cli",
    "minitriton.tools.check_passes",
    "minitriton.tools.check_cli",
)

#: ``--emit`` choices -> the compiler stage that produces them.
EMIT_STAGES = {
    "ast": "ast",
    "ir": "ir",
    "ir-opt": "ir-opt",
    "ttgir": "ptx",
    "llvm": "ptx",
    "ptx": "ptx",
    "cubin": "ptx",
}
EMIT_ASM_KEYS = {
    "ast": "ast",
    "ir": "ir",
    "ir-opt": "ir-opt",
    "ttgir": "ttgir",
    "llvm": "llir",
    "ptx": "ptx",
}


class CliError(UserError, Exception):
    """A usage problem reported as ``minitriton: error: ...`` with exit status 1."""


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``minitriton`` command; returns the exit status."""
    # The command, not ``import minitriton``, owns the interpreter's hook: a
    # kernel error escaping a subcommand prints without our internal frames.
    install_excepthook()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except CompileError as e:
        print(e, file=sys.stderr)
        return 1
    except CliError as e:
        print(f"minitriton: error: {e}", file=sys.stderr)
        return 1


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    from minitriton import __version__

    parser = argparse.ArgumentParser(
        prog="minitriton",
        description="MiniTriton: compile and run Triton-style kernels.",
    )
    parser.add_argument("--version", action="version", version=f"minitriton {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    add_compile_parser(subparsers)
    add_run_parser(subparsers)
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_parser(subparsers)
    return parser


def add_command(
    subparsers: Any, name: str, func: Callable[[argparse.Namespace], int]
) -> argparse.ArgumentParser:
    """Add ``minitriton NAME``, which ``func`` runs; ``func``'s docstring is its help.

    The docstring's first paragraph is the command's line in ``minitriton
    --help``, its second the description that starts the command's own
    ``--help`` (argparse wraps both).
    """
    paragraphs = inspect.cleandoc(func.__doc__ or "").split("\n\n")
    if len(paragraphs) < 2:
        raise TypeError(f"{func.__qualname__}: a command's docstring needs a help line and a "
                        "description, a blank line apart")  # fmt: skip
    p = subparsers.add_parser(name, help=paragraphs[0], description=paragraphs[1])
    p.set_defaults(func=func)
    return p


# ---------------------------------------------------------------------------
# minitriton compile
# ---------------------------------------------------------------------------


def add_compile_parser(subparsers: Any) -> None:
    """Register ``minitriton compile``."""
    p = add_command(subparsers, "compile", run_compile)
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = SIGNATURE_HELP
    p.add_argument(
        "target", metavar="FILE.py[:KERNEL]", nargs="?",
        help="the kernel (default: the only one)",
    )  # fmt: skip
    p.add_argument(
        "-s", "--signature", metavar="SIG",
        help='argument types, e.g. "*fp32:16, *fp32:16, *fp32:16, i32:16, 1024" (constexprs as '
             "values; :16 and :1 as below)",
    )  # fmt: skip
    p.add_argument("--emit", choices=list(EMIT_STAGES), default="ir-opt", help="default: ir-opt")
    p.add_argument(
        "--print-after", action="append", default=[], metavar="PASS",
        help="print the IR after PASS to stderr (repeatable, or comma-separated)",
    )  # fmt: skip
    p.add_argument("--print-after-all", action="store_true", help="print the IR after every pass")
    p.add_argument("--passes", metavar="P,Q", help="run these passes instead of the pipeline")
    p.add_argument(
        "--list-passes", action="store_true",
        help="list the passes, the optimization pipeline's and the GPU backend's, and exit",
    )  # fmt: skip
    p.add_argument("--arch", default=None, help="GPU architecture (default: sm_90)")
    p.add_argument("--num-warps", type=int, default=None, help="warps per program (default: 4)")
    p.add_argument(
        "--num-stages", type=int, default=None, help="software-pipelining depth (default: 3)"
    )
    p.add_argument("-o", "--output", metavar="OUT", help="write to OUT instead of stdout")
    p.add_argument(
        "--loc", action="store_true", help="with --emit ir-opt or ttgir: source locations"
    )


#: The end of ``minitriton compile --help``: what the signature's specializations mean.
SIGNATURE_HELP = """\
signature specializations (as Triton's launcher makes them):
  *fp16:16   a pointer whose address is divisible by 16 bytes (every torch/NumPy
             allocation is); lets loads and stores use 16-byte vector accesses
  i32:16     an integer divisible by 16 (a size or stride such as 1024)
  i32:1      an integer equal to 1 (a unit stride); Triton folds it to a constant
  1          in place of an integer argument: its value, compiled in as a constant
             (Triton's AOT compiler writes equal-to-1 arguments this way)
  1024       a constexpr's value (BLOCK_SIZE: tl.constexpr)
A real launch specializes every argument that qualifies, so write the marks that
your data would get: without them the GPU code assumes the worst (scalar
accesses; the tutorial matmul's loop is not software-pipelined).

example (Triton's tutorial matmul, fp16; its constexprs come from the first
autotune config; look for ttg.async_copy_global_to_local in the loop):
  minitriton compile matmul.py:matmul_kernel --emit ttgir --arch sm_80 --signature \\
    "*fp16:16, *fp16:16, *fp16:16, i32:16, i32:16, i32:16, i32:16, i32:1, i32:16, i32:1, \\
     i32:16, i32:1"
"""


def run_compile(args: argparse.Namespace) -> int:
    """compile one kernel and print a stage (AST, IR, optimized IR, LLVM IR, PTX)

    Compile one @jit kernel of FILE.py for the argument types of a Triton AOT
    signature, and print the chosen stage.
    """
    from minitriton.compiler import compile_kernel, gpu_passes_printed

    if args.list_passes:
        _write_text(pass_listing(), args.output)
        return 0
    if args.target is None:
        raise CliError("compile needs FILE.py[:KERNEL] (or --list-passes)")
    path, kernel_name = split_target(args.target)
    kernel = find_kernel(import_user_file(path), path, kernel_name)
    stage = EMIT_STAGES[args.emit]
    options = _compile_options(args, kernel, stage)
    specs = _arg_specs(args, kernel, stage)
    if args.loc and args.emit not in ("ir-opt", "ttgir"):
        raise CliError("--loc needs --emit ir-opt or ttgir")
    _note_unspecialized(args.signature, stage)
    if stage == "ir-opt" and gpu_passes_printed(options):
        stage = "ptx"  # the GPU passes run in the backend; --emit still prints ir-opt
    compiled = compile_kernel(kernel_jit(kernel).source, specs, options, stop_after=stage)
    if args.emit == "cubin":
        ptx = compiled.asm["ptx"]
        return _write_cubin(ptx, _ptx_target(ptx, options.arch), args.output, compiled.name)
    _write_text(_stage_text(compiled, args.emit, args.loc), args.output)
    return 0


def pass_listing() -> str:
    """``--list-passes``: every pass in the order it runs, with a line on what it does.

    The optimization passes of the default pipeline first (then those run only
    through ``--passes``), then the GPU backend's, with when each runs.
    """
    from minitriton.backend.passes import gpu_pass_names
    from minitriton.compiler import default_pipeline, pass_names
    from minitriton.passes import PASSES

    ir = default_pipeline()
    extra = sorted(n for n in pass_names("ir") if n not in ir)
    gpu = gpu_pass_names()
    width = max(len(n) for n in [*ir, *extra, *gpu])
    lines = ["optimization passes (the block IR), in the default pipeline's order:"]
    lines += [f"  {n:<{width}}  {_summary(PASSES[n])}" for n in ir]
    if extra:
        lines.append("optimization passes outside the default pipeline (--passes):")
        lines += [f"  {n:<{width}}  {_summary(PASSES[n])}" for n in extra]
    lines.append("GPU backend passes (ttgir), in the order they run:")
    for n in gpu:
        condition = getattr(PASSES[n], "condition", "every arch")
        lines.append(f"  {n:<{width}}  {_summary(PASSES[n])}")
        lines.append(f"  {'':<{width}}  runs on: {condition}")
    return "\n".join(lines) + "\n"


def _summary(cls: type) -> str:
    """The first line of the pass module's docstring."""
    doc = sys.modules[cls.__module__].__doc__ or ""
    return doc.strip().split("\n", 1)[0].rstrip(".").replace("``", "")


def _stage_text(compiled: Any, emit: str, loc: bool) -> str:
    """The text ``--emit`` prints: ttgir with its layouts as aliases, locations on request."""
    from minitriton.ir.printer import print_module
    from minitriton.ir.ttgir_text import readable

    if emit == "ir-opt" and loc:
        return print_module(compiled.module, with_locs=True)
    if emit != "ttgir":
        return str(compiled.asm[EMIT_ASM_KEYS[emit]])
    if not loc:
        return readable(compiled.asm["ttgir"])
    from minitriton.backend.prepare import prepare_kernel
    from minitriton.backend.tma import tma_enabled, tma_stores_enabled

    options = compiled.options
    tma = tma_enabled() and not options.debug
    copy, *_ = prepare_kernel(compiled.module, options.num_warps, options.arch,
                              options.num_stages, tma, tma and tma_stores_enabled())  # fmt: skip
    return readable(print_module(copy, with_locs=True))


def _note_unspecialized(signature: str | None, stage: str) -> None:
    """A note when no pointer or integer of the signature carries ``:16`` or ``:1``."""
    if signature is None or stage != "ptx" or ":" in signature:
        return
    entries = [e.strip() for e in re.split(r",(?![^<\[]*[>\]])", signature)]
    marked = [e + ":16" if re.fullmatch(r"\*\w+|[iu](8|16|32|64)", e) else e for e in entries]
    if marked == entries:
        return
    print(
        "note: Triton's launcher would specialize this kernel's pointers (16-byte aligned) and\n"
        "      integers (divisible by 16, or equal to 1); this signature has no :16 or :1, so the\n"
        "      GPU code assumes neither. What a launch with aligned data and sizes gets:\n"
        f'      --signature "{", ".join(marked)}"  (write :1 for an integer equal to 1)',
        file=sys.stderr,
    )


def _compile_options(args: argparse.Namespace, kernel: Any, stage: str) -> Any:
    from minitriton.compiler import DEFAULT_ARCH, CompileOptions, check_pass_names
    from minitriton.launch_checks import arch_problem, num_warps_problem

    print_after = tuple(n.strip() for item in args.print_after for n in item.split(",") if n)
    if args.print_after_all:
        print_after = ("all",)
    if print_after and stage in ("ast", "ir"):
        raise CliError("--print-after needs --emit ir-opt, llvm, ptx or cubin (passes must run)")
    passes = tuple(n.strip() for n in args.passes.split(",") if n.strip()) if args.passes else None
    try:
        check_pass_names(list(passes or ()), stage="ir")  # --passes: the optimization passes
        check_pass_names([n for n in print_after if n != "all"])
    except ValueError as e:
        raise CliError(str(e)) from None
    arch = args.arch or DEFAULT_ARCH
    problem = arch_problem(arch)
    if problem is not None:
        raise CliError(f"--arch {arch}: {problem}")
    first = _first_config(kernel)
    num_warps = first.get("num_warps", 4) if args.num_warps is None else args.num_warps
    problem = num_warps_problem(num_warps)
    if problem is not None:
        raise CliError(f"--num-warps {num_warps}: {problem}")
    num_stages = args.num_stages or first.get("num_stages", 3)
    return CompileOptions(
        num_warps=num_warps,
        num_stages=num_stages,
        arch=arch,
        passes=passes,
        print_after=print_after,
    )


def _arg_specs(args: argparse.Namespace, kernel: Any, stage: str) -> list[Any]:
    from minitriton.signature import kernel_params, parse_signature

    jit_fn = kernel_jit(kernel)
    params = kernel_params(jit_fn.fn)
    if args.signature is None and stage == "ast":
        return []  # the AST does not depend on argument types
    if args.signature is None and params:
        names = ", ".join(p.name for p in params)
        raise CliError(f"--signature is required: give the types of {jit_fn.__name__}({names})")
    return parse_signature(args.signature or "", params, fill=_first_config(kernel))


def _first_config(kernel: Any) -> dict[str, Any]:
    """The first autotune config's keywords: they fill constexprs the signature omits."""
    while not hasattr(kernel, "configs") and hasattr(kernel, "fn"):
        kernel = kernel.fn
    configs = getattr(kernel, "configs", None)
    return configs[0].all_kwargs() if configs else {}


def _write_text(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    Path(output).write_text(text, encoding="utf-8")


def _ptx_target(ptx: str, default: str) -> str:
    """The PTX's ``.target`` (``sm_90a`` once a kernel uses ``wgmma``)."""
    found = re.search(r"^\.target\s+(sm_\w+)", ptx, re.MULTILINE)
    return found.group(1) if found else default


def _write_cubin(ptx: str, arch: str, output: str | None, name: str) -> int:
    """Assemble PTX with ``ptxas`` (when installed) into a cubin file."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        raise CliError("--emit cubin needs ptxas (from the CUDA toolkit) on PATH")
    out = Path(output or f"{name}.cubin")
    with tempfile.TemporaryDirectory() as tmp:
        ptx_file = Path(tmp) / f"{name}.ptx"
        ptx_file.write_text(ptx, encoding="utf-8")
        cmd = [ptxas, f"-arch={arch}", str(ptx_file), "-o", str(out)]
        result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise CliError(f"ptxas failed:\n{result.stderr.strip()}")
    if output is None:
        print(f"wrote {out}", file=sys.stderr)
    return 0


# -- finding the kernel --------------------------------------------------------


def split_target(target: str) -> tuple[str, str | None]:
    """``"k.py:add_kernel"`` -> (``"k.py"``, ``"add_kernel"``); no name -> None."""
    path, sep, name = target.rpartition(":")
    if sep and path and name.isidentifier():
        return path, name
    return target, None


def import_user_file(path: str) -> ModuleType:
    """Import a Python file's definitions under a private name, without its script work.

    Imports, ``def``/``class`` statements and assignments run; what a script
    does at its top level (expression statements such as ``main()`` or
    ``benchmark.run(...)``, loops, ``with`` blocks, ``if __name__ == "__main__"``)
    does not, so compiling a tutorial neither launches nor benchmarks it. An
    assignment that fails (it needed a GPU, or work that was skipped) is left
    out; what the file still prints goes to stderr, away from the IR.
    """
    file = Path(path)
    if not file.is_file():
        raise CliError(f"{path}: no such file")
    name = "_minitriton_user_" + re.sub(r"\W", "_", file.stem)
    try:
        tree = ast.parse(file.read_text(encoding="utf-8"), str(file))
    except SyntaxError as e:
        raise CliError(f"importing {path} failed:\n{user_traceback(e, file).rstrip()}") from None
    module = ModuleType(name)
    module.__file__ = str(file)
    sys.modules[name] = module
    sys.path.insert(0, str(file.resolve().parent))  # its sibling imports work
    with contextlib.redirect_stdout(sys.stderr):  # its prints stay out of --emit output
        for stmt in tree.body:
            _run_definition(stmt, module, file, path)
    return module


#: Top-level statements that are a script's work, not definitions: never run.
_SCRIPT_WORK = (ast.Expr, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)


def _run_definition(stmt: ast.stmt, module: ModuleType, file: Path, path: str) -> None:
    if isinstance(stmt, _SCRIPT_WORK) or _is_main_guard(stmt):
        return
    code = compile(ast.Module(body=[stmt], type_ignores=[]), str(file), "exec")
    try:
        exec(code, module.__dict__)  # noqa: S102 - the user's own file, as ``import`` would
    except Exception as e:
        if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            return  # script state the kernels do not need (x = torch.rand(..., device="cuda"))
        raise CliError(f"importing {path} failed:\n{user_traceback(e, file).rstrip()}") from None


def _is_main_guard(stmt: ast.stmt) -> bool:
    """``if __name__ == "__main__":``."""
    test = stmt.test if isinstance(stmt, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def kernel_jit(kernel: Any) -> Any:
    """The ``JITFunction`` under ``@autotune``/``@heuristics``."""
    from minitriton.jit import base_jit_function

    return base_jit_function(kernel)


def find_kernel(module: ModuleType, path: str, name: str | None) -> Any:
    """The kernel called ``name`` in ``module``, or its only kernel."""
    kernels = _kernels_of(module, path)
    if name is not None:
        return _named_kernel(module, path, name, kernels)
    if len(kernels) == 1:
        return next(iter(kernels.values()))
    if not kernels:
        raise CliError(f"{path} defines no @jit kernel")
    names = ", ".join(kernels)
    raise CliError(f"{path} defines several kernels ({names}): choose one as {path}:KERNEL")


def _named_kernel(module: ModuleType, path: str, name: str, kernels: dict[str, Any]) -> Any:
    from minitriton.jit import KernelInterface

    kernel = getattr(module, name, None)
    if isinstance(kernel, KernelInterface):
        return kernel
    known = ", ".join(kernels) or "none"
    raise CliError(f"{path} has no @jit kernel named '{name}' (kernels: {known})")


def _kernels_of(module: ModuleType, path: str) -> dict[str, Any]:
    """Kernels defined in ``path``, without the @jit helpers that other kernels call."""
    from minitriton.jit import KernelInterface

    here = Path(path).resolve()
    found = {
        name: obj
        for name, obj in vars(module).items()
        if isinstance(obj, KernelInterface) and _defined_in(obj, here)
    }
    sources = {name: kernel_jit(obj).src for name, obj in found.items()}
    return {
        name: obj
        for name, obj in found.items()
        if not any(re.search(rf"\b{name}\b", s) for other, s in sources.items() if other != name)
    }


def _defined_in(kernel: Any, file: Path) -> bool:
    try:
        return Path(kernel_jit(kernel).source.filename).resolve() == file
    except TypeError:
        return False


# ---------------------------------------------------------------------------
# minitriton run
# ---------------------------------------------------------------------------


def add_run_parser(subparsers: Any) -> None:
    """Register ``minitriton run``."""
    p = add_command(subparsers, "run", run_script)
    p.add_argument("--backend", choices=["emulator", "gpu"], help="default: GPU if available")
    p.add_argument("script", metavar="FILE.py")
    p.add_argument("script_args", nargs=argparse.REMAINDER, metavar="args")


def run_script(args: argparse.Namespace) -> int:
    """run a Python script that launches kernels, on the chosen backend

    Run FILE.py as __main__ with the chosen backend. Arguments after FILE.py
    go to the script (a leading --backend is still read here).
    """
    from minitriton.tools.run_status import prepare_script, run_reporting_errors, script_runner

    backend, script_args = _pop_backend(args.backend, list(args.script_args))
    script = prepare_script(args.script, script_args, backend)
    return run_reporting_errors(script_runner(script), script)


def _pop_backend(backend: str | None, rest: list[str]) -> tuple[str | None, list[str]]:
    """Take a ``--backend B`` (or ``--backend=B``) written right after the script."""
    if rest and rest[0] == "--":
        return backend, rest[1:]
    if rest and rest[0].startswith("--backend="):
        return _backend_name(rest[0].split("=", 1)[1]), rest[1:]
    if len(rest) >= 2 and rest[0] == "--backend":
        return _backend_name(rest[1]), rest[2:]
    return backend, rest


def _backend_name(name: str) -> str:
    if name not in ("emulator", "gpu"):
        raise CliError(f"--backend {name!r}: expected 'emulator' or 'gpu'")
    return name


def user_traceback(exc: BaseException, file: Path) -> str:
    """The traceback of ``exc`` from the first frame in the user's ``file`` on."""
    tb = _first_frame_in(exc.__traceback__, file.resolve())
    return "".join(traceback.format_exception(type(exc), exc, tb))


def _first_frame_in(tb: TracebackType | None, file: Path) -> TracebackType | None:
    start = tb
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).resolve() == file:
            return tb
        tb = tb.tb_next
    return start
