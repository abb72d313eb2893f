"""Find the pass that changed a kernel's results.

:func:`check_module` runs the kernel on the emulator after every pass of the
pipeline (:func:`minitriton.passes.pipeline.snapshots`), each time on fresh
copies of the same arguments, and compares every array argument with the
results of the IR before any pass. The first pass whose results differ (or
that makes the kernel fail) is reported with the elements that changed and
the IR it produced::

    report = check_passes(add_kernel, (4,), x, y, out, n, BLOCK_SIZE=64)
    assert report.ok, report

``minitriton check-passes FILE.py`` does this for every launch a script
makes, and ``MINITRITON_CHECKS=passes`` for every launch of a test run.

With ``gpu=True`` (``check-passes`` does it) the GPU backend's passes
(:mod:`minitriton.backend.passes`) follow, on the optimized IR, for the
launch's arch and warps: the IR after each one runs too as long as it has
emulator semantics. Once a pass leaves ops that only the GPU has (the
``ttg.`` and ``ttng.`` ops of software pipelining and layouts), the report
says so for that pass and the ones after it instead of running them.
"""

from __future__ import annotations

import contextlib
import difflib
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minitriton.emulator.debug.tools import Launch, Tool
from minitriton.emulator.errors import EmulatorError
from minitriton.emulator.interpreter import Interpreter, Listener
from minitriton.emulator.schedule import run_grid
from minitriton.ir.ops import Module
from minitriton.ir.printer import print_module


@dataclass
class PassResult:
    """The outcome of running the IR after one pass."""

    name: str
    outputs: list[Any] | None  # the argument arrays after the launch (None: it failed)
    error: EmulatorError | None = None


@dataclass
class PassReport:
    """Which pass, if any, changed the results; ``str(report)`` explains."""

    kernel: str
    passes: list[str]
    bad_pass: str | None = None
    differences: list[str] = field(default_factory=list)
    ir_diff: str = ""
    #: One line per GPU pass whose IR was not run (GPU-only ops), in order.
    not_emulated: list[str] = field(default_factory=list)
    #: One line per pass whose float results changed within rounding, as it says it may
    #: (:attr:`minitriton.passes.base.Pass.rounding`); the passes after it are
    #: compared with its results.
    rounded: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every pass kept the results of the unoptimized IR."""
        return self.bad_pass is None

    def __str__(self) -> str:
        if self.ok:
            skipped = {line.split(":", 1)[0].removeprefix("pass ") for line in self.not_emulated}
            names = ", ".join(n for n in self.passes if n not in skipped) or "no passes"
            text = f"{self.kernel}: the results agree after every pass ({names})"
            notes = [*self.rounded, *self.not_emulated]
            return "\n".join([text, *(f"  {line}" for line in notes)])
        lines = [f"{self.kernel}: pass '{self.bad_pass}' changes the kernel's results"]
        lines += [f"  {d}" for d in self.differences]
        if self.ir_diff:
            lines += [
                "  IR changes made by this pass:",
                *(f"    {line}" for line in self.ir_diff.splitlines()),
            ]
        return "\n".join(lines)


def check_module(
    module: Module,
    grid: Sequence[int],
    args: Sequence[Any],
    *,
    passes: Sequence[str] | None = None,
    param_names: Sequence[str] | None = None,
    debug: bool = False,
    kernel: str | None = None,
    listeners: Sequence[Listener] = (),
    gpu: GpuOptions | None = None,
) -> PassReport:
    """Run ``module`` (the IR before passes) after each pass of ``passes`` and compare.

    ``gpu``: the GPU passes follow, with these options (see the module docstring).
    """
    from minitriton.passes.pipeline import DEFAULT_PIPELINE, snapshots

    names = list(DEFAULT_PIPELINE if passes is None else passes)
    params = list(
        param_names or [a.name_hint or f"arg{i}" for i, a in enumerate(module.kernel.body.args)]
    )
    report = PassReport(kernel or module.kernel.sym_name, names)
    stages = snapshots(module, names)
    if gpu is not None:
        stages += _gpu_stages(stages[-1][1], gpu, report)
    reference = _run(stages[0], grid, args, debug, listeners)
    before = stages[0][1]
    for stage in stages[1:]:
        result = _run(stage, grid, args, debug, listeners)
        problems = _compare(reference, result, params)
        rounding = _rounding_of(stage[0])
        if problems and rounding and _within_rounding(reference, result):
            report.rounded.append(f"pass {stage[0]}: float results round differently ({rounding})")
            reference, problems = result, []
        if problems:
            report.bad_pass = stage[0]
            report.differences = problems
            report.ir_diff = _ir_diff(before, stage[1])
            return report
        before = stage[1]
    return report


@dataclass(frozen=True)
class GpuOptions:
    """The compile options the GPU passes depend on."""

    arch: str = "sm_90a"
    num_warps: int = 4
    num_stages: int = 3


def _gpu_stages(
    module: Module, options: GpuOptions, report: PassReport
) -> list[tuple[str, Module]]:
    """The IR after each GPU pass that the emulator can run; the others noted in ``report``."""
    from minitriton.backend.passes import GpuState, gpu_pass_names, run_gpu_passes
    from minitriton.backend.prepare import copy_module
    from minitriton.diagnostics import CompileError
    from minitriton.ir.clone import clone_module

    state = GpuState(copy_module(module), options.num_warps, options.arch, options.num_stages)
    stages: list[tuple[str, Module]] = []
    for name in gpu_pass_names():
        report.passes.append(name)
        try:
            run_gpu_passes(state, [name], verify=True)
        except CompileError as err:
            report.not_emulated.append(f"pass {name}: the GPU backend rejects the kernel: {err}")
            break
        gpu_only = sorted({op.name for op in state.module.walk() if _gpu_only(op.name)})
        if gpu_only:
            ops = ", ".join(gpu_only[:3]) + (", ..." if len(gpu_only) > 3 else "")
            report.not_emulated.append(f"pass {name}: IR has GPU-only ops ({ops}), not emulated")
        else:
            stages.append((name, clone_module(state.module)))
    return stages


def _gpu_only(op_name: str) -> bool:
    return op_name.startswith(("ttg.", "ttng."))


def _run(
    stage: tuple[str, Module], grid: Sequence[int], args: Sequence[Any], debug: bool,
    listeners: Sequence[Listener],
) -> PassResult:  # fmt: skip
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interp = Interpreter(stage[1], copies, grid, debug=debug, listeners=listeners)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # device prints: once, by the real launch
            run_grid(interp)
    except EmulatorError as err:
        return PassResult(stage[0], None, err)
    return PassResult(stage[0], copies)


def _compare(ref: PassResult, got: PassResult, params: list[str]) -> list[str]:
    if ref.error is not None or got.error is not None:
        return _compare_errors(ref, got)
    assert ref.outputs is not None and got.outputs is not None
    problems = []
    for name, a, b in zip(params, ref.outputs, got.outputs):
        if isinstance(a, np.ndarray) and not _same_bits(a, b):
            problems.append(_describe(name, a, b))
    return problems


def _rounding_of(name: str) -> str:
    """What the pass ``name`` says it may do to float results ("" for nothing)."""
    from minitriton.passes import PASSES

    cls = PASSES.get(name)
    return getattr(cls, "rounding", "") if cls is not None else ""


#: How far a float result may move when a pass rounds a sum differently: this many
#: units in the last place of the output's largest magnitude (a wrong rewrite moves
#: results by far more).
ROUNDING_ULPS = 128


def _within_rounding(ref: PassResult, got: PassResult) -> bool:
    """Whether ``got`` differs from ``ref`` only in the rounding of float values."""
    if ref.error is not None or got.error is not None:
        return False
    assert ref.outputs is not None and got.outputs is not None
    for a, b in zip(ref.outputs, got.outputs):
        if not isinstance(a, np.ndarray) or _same_bits(a, b):
            continue
        if a.dtype.kind != "f" or not np.array_equal(np.isnan(a), np.isnan(b)):
            return False
        finite = a[np.isfinite(a)]
        scale = float(np.abs(finite).max()) if finite.size else 0.0
        tol = ROUNDING_ULPS * float(np.finfo(a.dtype).eps) * scale
        close = np.abs(a.astype(np.float64) - b.astype(np.float64)) <= tol
        if not np.all(close | _equal(a, b)):
            return False
    return True


def _compare_errors(ref: PassResult, got: PassResult) -> list[str]:
    if got.error is not None and ref.error is None:
        return [
            "the kernel fails after this pass (it ran before):",
            *got.error.render().splitlines(),
        ]
    if ref.error is not None and got.error is None:
        return ["the kernel no longer fails after this pass (it failed before):",
                *ref.error.render().splitlines()]  # fmt: skip
    assert ref.error is not None and got.error is not None
    if ref.error.diagnostic.message != got.error.diagnostic.message:
        return ["the kernel fails differently after this pass:", *got.error.render().splitlines()]
    return []


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(_equal(a, b)))


def _equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise equality where NaN equals NaN."""
    if a.dtype.kind == "f":
        return (a == b) | (np.isnan(a) & np.isnan(b))
    return a == b


def _describe(name: str, a: np.ndarray, b: np.ndarray) -> str:
    differ = ~_equal(a, b)
    where = np.flatnonzero(differ.reshape(-1))
    shown = ", ".join(
        f"[{i}] {a.reshape(-1)[i].item()!r} -> {b.reshape(-1)[i].item()!r}" for i in where[:4]
    )
    more = ", ..." if where.size > 4 else ""
    return f"'{name}': {where.size} of {a.size} elements differ: {shown}{more}"


def _ir_diff(before: Module, after: Module, limit: int = 40) -> str:
    lines = list(difflib.unified_diff(
        print_module(before).splitlines(), print_module(after).splitlines(),
        "before", "after", lineterm="", n=1,
    ))[2:]  # fmt: skip
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more lines)"]
    return "\n".join(lines)


# ---------------------------------------------------------------- kernels and launches


def check_passes(
    kernel: Any, grid: Any, *args: Any, passes: Sequence[str] | None = None, gpu: bool = False,
    **kwargs: Any,
) -> PassReport:  # fmt: skip
    """Check a ``@jit`` kernel launched as ``kernel[grid](*args, **kwargs)``.

    Nothing is launched for real: the arguments are copied for every run.
    ``gpu``: the GPU backend's passes too (see the module docstring).
    """
    launch = capture_launch(kernel, grid, *args, **kwargs)
    return check_launch(launch, passes, gpu)


def check_launch(
    launch: Launch, passes: Sequence[str] | None = None, gpu: bool = False
) -> PassReport:
    """Check one captured launch (see :class:`PassChecker`); ``gpu``: the GPU passes too."""
    options = launch.compiled.options
    if passes is None and options.passes is not None:
        passes = options.passes
    gpu_options = GpuOptions(options.arch, options.num_warps, options.num_stages) if gpu else None
    return check_module(
        launch.frontend_module(), launch.grid, launch.args, passes=passes,
        param_names=launch.param_names(), debug=launch.debug, kernel=launch.name,
        gpu=gpu_options,
    )  # fmt: skip


def capture_launch(kernel: Any, grid: Any, *args: Any, **kwargs: Any) -> Launch:
    """The :class:`Launch` that ``kernel[grid](*args, **kwargs)`` would make, without running it."""
    from minitriton.emulator.debug.tools import using

    class _Capture(Tool):
        launch: Launch | None = None

        def run(self, launch: Launch, listeners: Sequence[Listener]) -> bool:
            self.launch = Launch(launch.compiled, launch.grid, launch.copy_args())
            return True

    capture = _Capture()
    with using(capture):
        kwargs.pop("backend", None)
        kernel[grid](*args, backend="emulator", **kwargs)
    if capture.launch is None:
        raise RuntimeError("the kernel launched nothing (an empty grid?)")
    return capture.launch


class PassCheckFailed(AssertionError):
    """Raised by :class:`PassChecker` with ``raise_on_difference=True``."""


class PassChecker(Tool):
    """Checks the passes on every launch, then lets the launch run normally."""

    def __init__(
        self, passes: Sequence[str] | None = None, raise_on_difference: bool = False,
        gpu: bool = False,
    ) -> None:  # fmt: skip
        self.passes = passes
        self.raise_on_difference = raise_on_difference
        self.gpu = gpu  # the GPU backend's passes too
        self.reports: list[tuple[Launch, PassReport]] = []

    def run(self, launch: Launch, listeners: Sequence[Listener]) -> bool:
        """Check first (on copies); the real launch follows."""
        report = check_launch(launch, self.passes, self.gpu)
        self.reports.append((launch, report))
        if self.raise_on_difference and not report.ok:
            raise PassCheckFailed(str(report))
        return False
