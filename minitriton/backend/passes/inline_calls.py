"""Inline every call into the kernel: the backend compiles one function.

The GPU code generator emits one PTX entry and no device functions, so every
``tt.call`` of the kernel is replaced by the callee's body
(:func:`minitriton.passes.inline.inline_call`), helpers called by helpers
included, and the module keeps the kernel alone. Each inlined op remembers
its call site (``GpuState.inlined_at``): the code generator's ``.loc`` line
info points at the line of the kernel that called the helper, as Triton's
does. The inlined ops keep each helper's own value names, so the ``ttgir``
reads like the helper's source.

Runs on every arch, first: the later passes see the whole kernel. A
recursive helper gets a located error ("too many nested calls").

Precondition: verified optimized IR (a copy: the caller's module is never
changed). Postcondition: verified IR; the module holds the kernel alone and
no ``tt.call`` is left.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from minitriton.backend.passes.gpu_pipeline import GpuPass, GpuState
from minitriton.backend.prepare import inline_calls
from minitriton.passes.base import register_pass


@register_pass
@dataclass(frozen=True)
class InlineCallsPass(GpuPass):
    """Inline every ``tt.call`` of the kernel; drop the helpers."""

    name: ClassVar[str] = "inline-calls"

    def run(self, state: GpuState) -> None:
        kernel, inlined_at = inline_calls(state.module)
        state.module.funcs = [kernel]
        state.inlined_at.update(inlined_at)
        state.inlined_ops += [op for op in kernel.walk() if id(op) in inlined_at]
