"""The GPU backend's pass pipeline: its state, its pass class and its runner.

The code generator reads a private copy of the optimized IR
(:func:`~minitriton.backend.prepare.copy_module`) that the passes of
:data:`GPU_PIPELINE` turn, one after the other, into the ``ttgir`` form:
the kernel alone (helpers inlined), loops feeding tensor cores software
pipelined (and, where asked, warp-specialized), and a layout on every block
value. Each is a :class:`GpuPass`
registered in the one pass registry (:data:`minitriton.passes.PASSES`) with
``stage = "gpu"``; its module docstring is its documentation page.

A GPU pass reads and writes a :class:`GpuState`: the module copy, the
compile options it depends on (arch, warps, stages, TMA), and what one pass
leaves for the code generator (the call sites of inlined ops, the layout
plan). A pass whose ``applies(state)`` is false for the options (an arch
without the hardware it targets) is skipped.

``--print-after NAME`` and ``MINITRITON_DUMP_DIR`` watch these passes as
they watch the optimization passes: :func:`watching` sets, for the compiles
made inside it, what to print and whom to hand each pass's IR; a watched
compile skips the backend's caches, so that its passes really run.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal, TextIO

from minitriton.backend.accelerate_matmul import arch_number
from minitriton.diagnostics import Location
from minitriton.ir.core import Operation
from minitriton.ir.ops import FuncOp, Module
from minitriton.ir.printer import print_module
from minitriton.passes.base import PASSES, Pass, get_pass
from minitriton.passes.pipeline import DUMP_HEADER, OnIR, verify_after

if TYPE_CHECKING:
    from minitriton.backend.prepare import LayoutPlan

#: The GPU passes, in the order the backend runs them.
GPU_PIPELINE: tuple[str, ...] = (
    "inline-calls",
    "scalar-combiners",
    "sink-transposes",
    "software-pipeline",
    "warp-specialize",
    "tma-stores",
    "assign-layouts",
)


@dataclass
class GpuState:
    """What the GPU passes read and write: the module copy and the options."""

    module: Module
    num_warps: int = 4
    arch: str = "sm_90a"
    num_stages: int = 3
    #: TMA copies allowed in pipelined loops (sm_90 only; ``MINITRITON_TMA``).
    tma: bool = False
    #: Tile stores made TMA stores (sm_90 only; ``MINITRITON_TMA_STORES``).
    tma_stores: bool = False
    #: Whether pipelined loops may leave their last dot in flight across the back edge
    #: (``MINITRITON_DEFER_LAST_DOT``, see :mod:`.software_pipeline`).
    defer_last_dot: bool = False
    #: ``id(op)`` -> (callee name, call location) of every inlined op (``.loc`` info).
    inlined_at: dict[int, tuple[str, Location]] = field(default_factory=dict)
    #: The inlined ops themselves, kept alive while the state lives: an op a later
    #: pass deletes must not free its ``id`` for a new op, which would inherit its call site.
    inlined_ops: list[Operation] = field(default_factory=list, repr=False)
    #: The layout of every block value, once ``assign-layouts`` has run.
    plan: LayoutPlan | None = None

    @property
    def kernel(self) -> FuncOp:
        """The module's kernel function."""
        return self.module.kernel

    @property
    def arch_number(self) -> int:
        """The arch's number: ``sm_90a`` -> 90."""
        return arch_number(self.arch)

    def live_inlined_at(self) -> dict[int, tuple[str, Location]]:
        """``inlined_at`` for the ops still in the module only.

        What the code generator reads: once the state (and the ops the passes
        deleted) is gone, a new object may reuse a deleted op's ``id``.
        """
        return {id(op): self.inlined_at[id(op)] for op in self.module.walk()
                if id(op) in self.inlined_at}  # fmt: skip


@dataclass(frozen=True)
class GpuPass(Pass):
    """A step of the GPU backend: rewrites a :class:`GpuState`'s module in place."""

    stage: ClassVar[str] = "gpu"
    #: When the pass runs, in words (``minitriton compile --list-passes`` prints it).
    condition: ClassVar[str] = "every arch"

    def applies(self, state: GpuState) -> bool:
        """Whether the pass runs for ``state``'s options (the arch, the stages)."""
        return True

    def run(self, state: GpuState) -> None:
        """Rewrite ``state.module`` in place."""
        raise NotImplementedError

    def apply(self, module: Module) -> None:
        """Run on ``module`` with the default options (sm_90a, 4 warps, 3 stages)."""
        state = GpuState(module)
        if self.applies(state):
            self.run(state)


def gpu_pass_names() -> list[str]:
    """The registered GPU passes, those of :data:`GPU_PIPELINE` first, in order."""
    gpu = [n for n, cls in PASSES.items() if cls.stage == "gpu"]
    return [n for n in GPU_PIPELINE if n in gpu] + sorted(n for n in gpu if n not in GPU_PIPELINE)


# ------------------------------------------------------------------ watching


@dataclass(frozen=True)
class GpuWatch:
    """What to do after each GPU pass of the compiles inside :func:`watching`."""

    print_after: frozenset[str] | Literal["all"] = frozenset()
    on_ir: OnIR | None = None
    verify: bool = False
    out: TextIO | None = None  # None: sys.stderr at the time of printing

    def prints(self, name: str) -> bool:
        """Whether the IR after pass ``name`` is printed."""
        return self.print_after == "all" or name in self.print_after


_WATCH: ContextVar[GpuWatch | None] = ContextVar("minitriton_gpu_watch", default=None)


@contextmanager
def watching(
    print_after: Collection[str] | Literal["all"] = (),
    on_ir: OnIR | None = None,
    *,
    verify: bool = False,
    out: TextIO | None = None,
) -> Iterator[GpuWatch]:
    """Watch the GPU passes of the compiles made inside: print, hand on, verify.

    ``print_after`` names passes (those not GPU passes are ignored) or is
    ``"all"``; ``on_ir(pass_name, ir_text)`` is called after every GPU pass.
    """
    wanted: frozenset[str] | Literal["all"] = "all"
    if print_after != "all":
        wanted = frozenset(n for n in print_after if n in PASSES and PASSES[n].stage == "gpu")
    watch = GpuWatch(wanted, on_ir, verify, out)
    token = _WATCH.set(watch)
    try:
        yield watch
    finally:
        _WATCH.reset(token)


def watched() -> bool:
    """True inside a :func:`watching` that prints or hands on IR (no cache may answer then)."""
    watch = _WATCH.get()
    return watch is not None and (bool(watch.print_after) or watch.on_ir is not None)


def run_gpu_passes(
    state: GpuState, names: Sequence[str] = GPU_PIPELINE, *, verify: bool = False
) -> GpuState:
    """Run the GPU passes ``names`` in order on ``state`` (in place) and return it.

    Passes that do not apply to the options are skipped. With ``verify`` (or a
    watch that verifies) the verifier runs after each pass and names it in
    its errors.
    """
    passes = [_gpu_pass(n) for n in names]  # unknown names fail before any work
    watch = _WATCH.get()
    verify = verify or (watch is not None and watch.verify)
    for p in passes:
        if not p.applies(state):
            continue
        p.run(state)
        if verify:
            verify_after(state.module, p.name)
        if watch is not None:
            _report(watch, p.name, state.module)
    return state


def _gpu_pass(name: str) -> GpuPass:
    p = get_pass(name)
    if not isinstance(p, GpuPass):
        raise ValueError(f"{name!r} is not a GPU pass (GPU passes: {', '.join(gpu_pass_names())})")
    return p


def _report(watch: GpuWatch, name: str, module: Module) -> None:
    if watch.on_ir is None and not watch.prints(name):
        return
    text = print_module(module)
    if watch.prints(name):
        from minitriton.ir.ttgir_text import readable

        out = watch.out or sys.stderr
        out.write(DUMP_HEADER.format(name=name) + "\n" + readable(text))
    if watch.on_ir is not None:
        watch.on_ir(name, text)


def gpu_snapshots(
    module: Module, num_warps: int = 4, arch: str = "sm_90a", num_stages: int = 3,
    tma: bool = False, tma_stores: bool = False,
) -> list[tuple[str, str]]:  # fmt: skip
    """``[("input", ir), (pass, ir), ...]``: the IR text before and after each GPU pass.

    Runs the backend's passes on a copy of ``module`` (the optimized IR) as
    the compiler does, with the verifier after each; passes that do not
    apply to the options are left out. The texts are the ``ttgir`` printer's
    attribute form (:func:`~minitriton.ir.ttgir_text.readable` gives the aliases).
    """
    from minitriton.backend.prepare import copy_module

    state = GpuState(copy_module(module), num_warps, arch, num_stages, tma, tma_stores)
    result = [("input", print_module(state.module))]
    for name in GPU_PIPELINE:
        if _gpu_pass(name).applies(state):
            run_gpu_passes(state, [name], verify=True)
            result.append((name, print_module(state.module)))
    return result


__all__ = [
    "GPU_PIPELINE",
    "GpuPass",
    "GpuState",
    "gpu_pass_names",
    "gpu_snapshots",
    "run_gpu_passes",
    "watched",
    "watching",
]
