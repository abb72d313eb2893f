"""The compiler driver: one readable pipeline of named steps.

:func:`compile_kernel` is the whole compiler::

    source --parse--> AST --lower--> IR --verify--> --passes--> optimized IR
           [--codegen--> LLVM IR -> PTX]  [--load--> a kernel loaded on the GPU]

Each step's text lands in :attr:`CompiledKernel.asm` under the stage's name:
``"ast"``, ``"ir"`` (the frontend's output), ``"ir-opt"`` (after the pass
pipeline) and, when compiled for the GPU, ``"ttgir"`` (the IR with layouts),
``"llir"`` and ``"ptx"``. Printing a stage costs time, so a text is made
only when someone reads it (``asm`` is a lazy :class:`Stages` mapping); the
source is parsed once per function (:meth:`KernelSource.parsed`).

Two environment variables help to look inside:

* ``MINITRITON_DUMP_DIR=DIR`` writes every stage of every kernel compiled in
  the process (the IR after each pass included) to
  ``DIR/<kernel>-<hash>/NN-<stage>.txt``. With it set, kernels also compile
  to PTX for the default architecture even when they run on the emulator, so
  that CI exercises the whole GPU path.
* ``MINITRITON_PRINT_AFTER=all`` (or ``name,name``) prints the IR after those
  passes to stderr, like ``minitriton compile --print-after``.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from minitriton.compiled_api import CompiledKernelAPI
from minitriton.compiler import errors as errors  # triton.compiler.errors.CompilationError
from minitriton.diagnostics import CompileError
from minitriton.frontend.source import (
    ArgSpec,
    KernelSource,
    default_fp_fusion,
    f32_default_precision,
)

DEFAULT_ARCH = "sm_90"
DUMP_DIR_ENV = "MINITRITON_DUMP_DIR"
PRINT_AFTER_ENV = "MINITRITON_PRINT_AFTER"

#: Stages in pipeline order; ``stop_after`` names one of them.
STAGES = ("ast", "ir", "ir-opt", "ptx", "gpu")

#: Called with (stage name, text) for every stage and every pass.
StageHook = Callable[[str, str], None]


@dataclass(frozen=True)
class CompileOptions:
    """Everything besides the arguments that changes what gets compiled.

    ``num_stages`` is the software-pipelining depth of loops feeding tensor
    cores (sm_90); ``maxnreg`` caps each thread's registers on the GPU (the
    emulator has none to cap); ``num_ctas`` is accepted for Triton
    compatibility and only takes part in the cache key.
    """

    num_warps: int = 4
    num_stages: int = 3
    num_ctas: int = 1
    maxnreg: int | None = None
    debug: bool = False
    arch: str = DEFAULT_ARCH
    passes: tuple[str, ...] | None = None  # None: the default pipeline
    print_after: tuple[str, ...] = ()  # pass names, or ("all",)
    #: The ``input_precision`` of fp32 dots that name none: ``TRITON_F32_DEFAULT``
    #: when the options are made (at each launch), else ``"tf32"``.
    default_dot_input_precision: str = field(default_factory=f32_default_precision)
    #: Triton's ``enable_fp_fusion``: False keeps every float multiply and add apart on
    #: the GPU (no FMA contraction); ``TRITON_DEFAULT_FP_FUSION=0`` sets the default.
    enable_fp_fusion: bool = field(default_factory=default_fp_fusion)
    #: Triton's ``enable_reflect_ftz``: False compiles ``exp2`` and ``rsqrt`` to
    #: approximations that keep subnormals (no ``.ftz``).
    enable_reflect_ftz: bool = True
    #: Triton's ``debug``: ``tl.device_assert`` and ``tl.expect_zero`` stay in the
    #: kernel (a failing one stops it, as in Triton) without debug mode's checks of
    #: every access. ``triton.compile(..., options={"debug": True})`` sets it;
    #: ``debug`` implies it.
    device_asserts: bool = False

    def key(self) -> tuple[Any, ...]:
        """The part of the specialization key these options contribute."""
        return (self.num_warps, self.num_stages, self.num_ctas, self.maxnreg, self.debug,
                self.arch, self.passes, self.default_dot_input_precision,
                self.enable_fp_fusion, self.enable_reflect_ftz,
                self.device_asserts)  # fmt: skip

    def keeps_asserts(self) -> bool:
        """Whether ``tl.device_assert`` and ``tl.expect_zero`` are compiled in."""
        return self.debug or self.device_asserts


@dataclass
class CompiledKernel(CompiledKernelAPI):
    """The result of compiling one specialization of a kernel.

    ``module`` is the optimized IR (what the emulator runs); ``asm`` maps a
    stage name to its text (a :class:`Stages` mapping: texts are made when
    read; ``"ttir"``, Triton's name, is ``"ir-opt"``); ``binary`` is the
    launchable GPU kernel when the kernel was compiled for the GPU, else
    ``None``. ``from_disk`` is true when the optimized IR came from the
    on-disk cache (:mod:`minitriton.ircache`).
    Triton's ``n_regs``, ``n_spills``, ``metadata`` and ``kernel[grid](...)``
    come from :class:`~minitriton.compiled_api.CompiledKernelAPI`.
    """

    name: str
    module: Any
    arg_specs: list[ArgSpec]
    asm: Stages
    options: CompileOptions
    binary: Any = field(default=None, repr=False)
    dump_dir: Path | None = None
    #: The kernel's source, so that tools can lower it again
    #: (the debugger runs the IR before passes).
    source: KernelSource | None = field(default=None, repr=False)
    from_disk: bool = False

    @property
    def hash(self) -> str:
        """Triton's ``CompiledKernel.hash``: one value for one source, specialization and options.

        ``kernel.preload(data)`` of the ``specialization_data`` written at a
        compile gives a kernel of the same hash.
        """
        text = self.source.source if self.source is not None else self.name
        parts = [text, repr([s.key() for s in self.arg_specs]), repr(self.options.key())]
        return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


# ---------------------------------------------------------------------------
# The pipeline
# ---------------------------------------------------------------------------


def compile_kernel(
    src: KernelSource,
    arg_specs: Sequence[ArgSpec],
    options: CompileOptions | None = None,
    *,
    stop_after: str = "ir-opt",
    on_stage: StageHook | None = None,
) -> CompiledKernel:
    """Compile ``src`` for ``arg_specs``, up to and including ``stop_after``.

    ``stop_after`` is one of :data:`STAGES`: ``"ptx"`` adds LLVM IR and PTX
    (no GPU needed) and the launchable ``binary``; ``"gpu"`` also loads it on
    the device.
    Raises :class:`~minitriton.diagnostics.CompileError` for errors in the
    kernel.
    """
    options = options or CompileOptions()
    options = _with_env_print_after(options)
    if stop_after not in STAGES:
        raise ValueError(f"unknown stage {stop_after!r}; expected one of {STAGES}")
    dump = Dump.from_env(src, arg_specs, options)
    out = CompiledKernel(src.name, None, list(arg_specs), Stages(), options, source=src)
    out.dump_dir = dump.folder if dump else None
    record = _recorder(out, dump, on_stage)
    # Printing the IR after every pass costs time: only when someone reads it.
    per_pass = record if dump is not None or on_stage is not None else None
    with recursion_headroom():
        _run_steps(src, options, stop_after, out, record, per_pass)
        if dump is not None and STAGES.index(stop_after) < STAGES.index("ptx"):
            _dump_gpu_stages(out, dump, record, per_pass)
    if out.module is not None:
        out.module.target = options.arch  # the emulator models this arch's TF32 dots
    return out


#: The Python recursion limit while compiling: the parser, the AST dump and
#: lowering recurse once per level of an expression, so that a chain of a few
#: thousand terms (``x + x + ... + x``) compiles; deeper ones get a diagnostic.
COMPILE_RECURSION_LIMIT = 20_000


@contextmanager
def recursion_headroom(limit: int = COMPILE_RECURSION_LIMIT) -> Iterator[None]:
    """Raise the recursion limit to at least ``limit`` for the duration of a compile."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def _run_steps(
    src: KernelSource, options: CompileOptions, stop_after: str, out: CompiledKernel,
    record: StageHook, per_pass: StageHook | None,
) -> None:  # fmt: skip
    """The named steps, in order; each stops the pipeline once it is the last.

    Stage texts are made only when read (:class:`Stages`) unless a hook
    (``on_stage``, the dump folder) wants every one as it happens.
    """
    eager = per_pass is not None
    last = STAGES.index(stop_after)
    fdef = parse(src)  # 1. source -> AST (syntax errors surface here)
    _stage(out, record, eager, "ast", lambda: ast_dump(fdef))
    if last < STAGES.index("ir"):
        return
    # A GPU compile refuses the globals that Triton's compiler refuses; the emulator
    # reads them, as Triton's interpreter does (see minitriton.frontend.capture).
    strict = last >= STAGES.index("ptx")
    out.module = lower(src, out.arg_specs, options, strict)  # 2. AST -> IR, verified
    if strict:  # as Triton's frontend: before the passes can delete what the GPU refuses
        from minitriton.backend.target_rules import reject_unsupported

        reject_unsupported(out.module, options.arch)
    if eager:
        record("ir", ir_text(out.module))
    else:  # the passes edit the module in place: lower again to print it
        specs = out.arg_specs
        out.asm.lazy("ir", lambda: ir_text(lower(src, specs, options, strict)))
    if last < STAGES.index("ir-opt"):
        return
    out.module = optimize(out.module, options, per_pass)  # 3. the pass pipeline
    module = out.module
    _stage(out, record, eager, "ir-opt", lambda: ir_text(module))
    finish_backend(out, stop_after, record, per_pass)


def _dump_gpu_stages(
    out: CompiledKernel, dump: Dump, record: StageHook, per_pass: StageHook | None
) -> None:
    """The dump exercises the whole GPU compile path, for a kernel compiled for the emulator too.

    A kernel that only the emulator runs (a dot with K below the GPU's bound,
    an fp8 format of another vendor) still runs there: the GPU's diagnostic
    goes into the dump as ``NN-gpu-error.txt``.
    """
    try:
        finish_backend(out, "ptx", record, per_pass)
    except CompileError as e:
        dump.write("gpu-error", str(e))


def finish_backend(
    out: CompiledKernel, stop_after: str, record: StageHook | None = None,
    per_pass: StageHook | None = None,
) -> None:  # fmt: skip
    """Steps 4 and 5 on ``out.module`` (the optimized IR), as far as ``stop_after``.

    ``per_pass("after:<pass>", ir)`` sees the IR after every GPU pass.
    """
    last = STAGES.index(stop_after)
    if last < STAGES.index("ptx"):
        return
    out.binary = codegen(out.module, out.options, per_pass)  # 4. layouts -> LLVM IR -> PTX
    for stage in ("ttgir", "llir", "ptx"):
        if record is None:
            out.asm[stage] = out.binary.asm[stage]
        else:
            record(stage, out.binary.asm[stage])
    if last < STAGES.index("gpu"):
        return
    out.binary.load()  # 5. load the PTX on the device


def _stage(
    out: CompiledKernel, record: StageHook, eager: bool, stage: str, make: Callable[[], str]
) -> None:
    """Record ``stage`` now (``eager``) or leave ``make`` to run on first read."""
    if eager:
        record(stage, make())
    else:
        out.asm.lazy(stage, make)


def _recorder(out: CompiledKernel, dump: Dump | None, on_stage: StageHook | None) -> StageHook:
    def record(stage: str, text: str) -> None:
        if not stage.startswith("after:"):
            out.asm[stage] = text
        if dump is not None:
            dump.write(stage, text)
        if on_stage is not None:
            on_stage(stage, text)

    return record


class Stages(MutableMapping[str, str]):
    """``CompiledKernel.asm``: stage name -> text, each text made on first read.

    :meth:`lazy` registers a function that makes a stage's text; reading the
    stage calls it once and keeps the text. Iteration, ``in`` and ``len`` see
    lazy stages without making them, in the order the stages were added.
    """

    def __init__(self, texts: dict[str, str] | None = None) -> None:
        self._entries: dict[str, str | Callable[[], str]] = dict(texts or {})
        self._made: dict[tuple[str, bool], str | bytes] = {}

    def lazy(self, stage: str, make: Callable[[], str]) -> None:
        """Make ``stage``'s text with ``make()`` when someone reads it."""
        self._entries[stage] = make

    #: Triton's names for our stages: ``asm["ttir"]`` (the tt dialect after its
    #: passes) is the optimized IR. Read through, not listed by iteration.
    ALIASES = {"ttir": "ir-opt"}

    def __getitem__(self, stage: str) -> Any:
        """The text of ``stage`` (``str``); ``"cubin"`` is ``bytes``, as in Triton."""
        if stage not in self._entries:
            stage = self.ALIASES.get(stage, stage)
        if stage in self.FROM_PTX and stage not in self._entries and "ptx" in self._entries:
            return self._from_ptx(stage)
        entry = self._entries[stage]
        if isinstance(entry, str):
            return entry
        text = entry()
        self._entries[stage] = text
        return text

    #: Stages made from the PTX by NVIDIA's tools on first read and never listed
    #: (Triton lists no SASS either; a compile never needs them).
    FROM_PTX = ("cubin", "sass")

    def _from_ptx(self, stage: str) -> str | bytes:
        """``asm["cubin"]`` or ``asm["sass"]``, as Triton's, made from the PTX on first read.

        They need NVIDIA's ``ptxas`` (and ``nvdisasm`` or ``cuobjdump`` for the
        SASS); see :mod:`minitriton.backend.sass`.
        """
        from minitriton.backend import sass
        from minitriton.env import line_info_disabled

        # made once for each TRITON_DISABLE_LINE_INFO setting, which changes the cubin
        key = (stage, line_info_disabled())
        if key not in self._made:
            make = sass.assemble if stage == "cubin" else sass.disassemble
            self._made[key] = make(self["ptx"])
        return self._made[key]

    def __setitem__(self, stage: str, text: str) -> None:
        self._entries[stage] = text

    def __delitem__(self, stage: str) -> None:
        del self._entries[stage]

    def __contains__(self, stage: object) -> bool:
        if isinstance(stage, str) and stage not in self._entries:
            stage = self.ALIASES.get(stage, stage)
        return stage in self._entries  # without making the text

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Stages({list(self._entries)})"


# ---------------------------------------------------------------------------
# The steps
# ---------------------------------------------------------------------------


def parse(src: KernelSource) -> Any:
    """Step 1: the kernel's source text -> an AST ``FunctionDef`` (parsed once per function)."""
    return src.parsed()


def ast_dump(fdef: Any) -> str:
    """An AST ``FunctionDef`` as text, ending with a newline."""
    from minitriton.diagnostics import error
    from minitriton.frontend.ast import dump

    try:
        with recursion_headroom():  # the stage text may be read after the compile
            text = dump(fdef)
    except RecursionError:
        raise error(fdef.loc, "expression is nested too deeply") from None
    return text if text.endswith("\n") else text + "\n"


def lower(
    src: KernelSource,
    arg_specs: Sequence[ArgSpec],
    options: CompileOptions | None = None,
    strict: bool = False,
) -> Any:
    """Step 2: the kernel's AST (from :func:`parse`) -> verified IR ``Module``.

    ``strict`` lowers under Triton's compiler rule for globals, as a GPU
    compile does (:mod:`minitriton.frontend.capture`); else under its interpreter's.
    """
    from minitriton.frontend.builtins import COMPILING_OPTIONS, COMPILING_PRECISION
    from minitriton.frontend.capture import compiler_rule
    from minitriton.frontend.lower import lower_kernel
    from minitriton.ir.verifier import verify_module

    precision = options.default_dot_input_precision if options is not None else None
    token = COMPILING_PRECISION.set(precision)
    options_token = COMPILING_OPTIONS.set(options if options is not None else CompileOptions())
    try:
        with compiler_rule(strict):
            module = lower_kernel(src, list(arg_specs))
    finally:
        COMPILING_OPTIONS.reset(options_token)
        COMPILING_PRECISION.reset(token)
    verify_module(module)
    return module


def optimize(module: Any, options: CompileOptions, record: StageHook | None = None) -> Any:
    """Step 3: run the pass pipeline; ``record("after:<pass>", ir)`` sees every pass.

    ``options.print_after`` passes print their IR to stderr, MLIR-style.
    """
    from minitriton.passes import pipeline as passes

    names = list(options.passes) if options.passes is not None else list(passes.DEFAULT_PIPELINE)
    print_after: Any = "all" if "all" in options.print_after else options.print_after
    if print_after != "all":  # the GPU passes' names print in codegen
        print_after = [n for n in print_after if n not in pass_names("gpu")]
    on_ir = None if record is None else (lambda name, text: record(f"after:{name}", text))
    result = passes.run_pipeline(
        module, names, print_after=print_after, verify=options.debug, on_ir=on_ir, out=sys.stderr
    )
    return module if result is None else result


def codegen(module: Any, options: CompileOptions, record: StageHook | None = None) -> Any:
    """Step 4: optimized IR -> a ``GPUKernel`` holding ``ttgir``, ``llir`` and ``ptx``.

    Needs llvmlite only, no GPU; the backend caches the result on disk. The
    GPU passes (:mod:`minitriton.backend.passes`) print their IR as
    ``options.print_after`` asks, and ``record("after:<pass>", ir)`` sees
    every one; the caches are skipped then, so that the passes run.
    """
    from minitriton.backend import compile_module
    from minitriton.backend.passes import watching

    extra = {"debug": True} if options.debug else {}
    print_after: Any = "all" if "all" in options.print_after else options.print_after
    on_ir = None if record is None else (lambda name, text: record(f"after:{name}", text))
    with watching(print_after, on_ir, verify=options.debug, out=sys.stderr):
        return compile_module(
            module, arch=options.arch, num_warps=options.num_warps,
            num_stages=options.num_stages, maxnreg=options.maxnreg, **extra,
        )  # fmt: skip


# ---------------------------------------------------------------------------
# Pass selection and printing
# ---------------------------------------------------------------------------


def pass_names(stage: str | None = None) -> list[str]:
    """Every registered pass name, the GPU backend's included; or those of ``stage``."""
    import minitriton.backend.passes  # noqa: F401 - registers the GPU passes
    from minitriton.passes import PASSES

    return [n for n, cls in PASSES.items() if stage is None or cls.stage == stage]


def default_pipeline() -> list[str]:
    """The names of the default pass pipeline, in order."""
    from minitriton.passes.pipeline import DEFAULT_PIPELINE

    return list(DEFAULT_PIPELINE)


def check_pass_names(names: Sequence[str], stage: str | None = None) -> None:
    """Raise ``ValueError`` naming any unknown pass (before any work is done).

    With ``stage`` (``"ir"``), only the passes of that stage are known.
    """
    known = pass_names(stage)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown pass {unknown[0]!r}; known passes: {', '.join(known)}")


def gpu_passes_printed(options: CompileOptions) -> bool:
    """Whether ``options.print_after`` asks for the IR after a GPU pass (or after all)."""
    names = set(options.print_after)
    return "all" in names or bool(names & set(pass_names("gpu")))


def _with_env_print_after(options: CompileOptions) -> CompileOptions:
    value = os.environ.get(PRINT_AFTER_ENV, "").strip()
    if not value or options.print_after:
        return options
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    return replace(options, print_after=names)


def ir_text(module: Any) -> str:
    """The canonical text of an IR module."""
    from minitriton.ir.printer import print_module

    return print_module(module)


# ---------------------------------------------------------------------------
# MINITRITON_DUMP_DIR
# ---------------------------------------------------------------------------


@dataclass
class Dump:
    """Writes each stage to ``DIR/<kernel>-<hash>/NN-<stage>.txt``."""

    folder: Path
    count: int = 0

    @classmethod
    def from_env(
        cls, src: KernelSource, arg_specs: Sequence[ArgSpec], options: CompileOptions
    ) -> Dump | None:
        """A dump into ``$MINITRITON_DUMP_DIR``, or None when it is unset."""
        root = os.environ.get(DUMP_DIR_ENV)
        if not root:
            return None
        key = repr((src.source, [a.key() for a in arg_specs], options.key()))
        digest = hashlib.sha256(key.encode()).hexdigest()[:10]
        folder = Path(root) / f"{src.name}-{digest}"
        folder.mkdir(parents=True, exist_ok=True)
        return cls(folder)

    def write(self, stage: str, text: str) -> None:
        """Write one stage; ``after:<pass>`` becomes ``NN-after-<pass>.txt``."""
        name = stage.replace(":", "-").replace("/", "_")
        path = self.folder / f"{self.count:02d}-{name}.txt"
        path.write_text(text, encoding="utf-8")
        self.count += 1


# ---------------------------------------------------------------------------
# Warming up
# ---------------------------------------------------------------------------


def preload(frontend: bool = True) -> None:
    """Import what a first launch needs, so that it pays no import.

    Always the emulator and the IR parser (enough for a kernel found in the
    disk cache); with ``frontend`` also the frontend with its parser and
    lexer built, and the pass pipeline.
    """
    import minitriton.emulator  # noqa: F401 - imported for its cost, now
    import minitriton.ir.parser  # noqa: F401

    if frontend:
        import minitriton.frontend.lower  # noqa: F401 - with the builtins and libdevice
        import minitriton.passes.pipeline  # noqa: F401
        from minitriton.frontend.parser import warm_up

        warm_up()


def __getattr__(name: str) -> Any:
    """``triton.compiler.ASTSource`` and ``triton.compiler.compile``, from :mod:`.aot`."""
    if name in ("ASTSource", "compile"):
        from minitriton.compiler import aot

        return getattr(aot, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
