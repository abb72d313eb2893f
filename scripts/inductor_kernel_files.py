"""Write the Triton kernel files that TorchInductor makes for a few small models.

``python scripts/inductor_kernel_files.py OUT_DIR`` compiles each model of
:data:`MODELS` with ``torch.compile`` on the CPU, with Inductor's Triton
backend for the CPU (``cpu_backend = "triton"``) and
``TORCHINDUCTOR_BENCHMARK_KERNEL=1``, under
:func:`minitriton.compat.alias_triton` (no GPU and no Triton needed), and
writes each kernel's file to ``OUT_DIR/<kernel name>.py`` as Inductor wrote
it. The kernels are not compiled: each kernel Inductor hands to its
compiler is written out and replaced by a stub that launches nothing (the
compiled models' results are garbage). This is how
``tests/inductor/files/`` was made (torch 2.14).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from minitriton.compat import alias_triton


def models() -> list[tuple[Any, tuple[Any, ...], dict[str, Any]]]:
    """(function, example inputs, Inductor config overrides) for each model."""
    import torch
    import torch.nn.functional as F  # noqa: N812

    class LayerNormGelu(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln = torch.nn.LayerNorm(64)
            self.fc = torch.nn.Linear(64, 64)

        def forward(self, x: Any) -> Any:
            return F.gelu(self.fc(self.ln(x)))

    looped = {"triton.persistent_reductions": False}
    return [
        (LayerNormGelu().eval(), (torch.randn(8, 64),), {}),
        (lambda x: torch.softmax(x, -1), (torch.randn(4, 3000),), looped),
        (lambda x: torch.var_mean(x, 1), (torch.randn(4, 3000),), looped),
        (lambda x: (x.amax(1), x.argmax(1)), (torch.randn(4, 3000),), looped),
        (lambda x: F.layer_norm(x, (3000,)), (torch.randn(4, 3000),), looped),
        (lambda x: torch.logcumsumexp(x, 1), (torch.randn(4, 100),), {}),
        (lambda x: torch.cumsum(x, 1), (torch.randn(4, 1 << 14),), {}),
        (lambda x: x.t().contiguous() + 1, (torch.randn(100, 70),), {}),
    ]


class _Stub:
    """Stands in for a compiled kernel: the compiled model's call launches nothing."""

    def run(self, *args: Any, **kwargs: Any) -> None:
        """Do nothing."""


def main(out: Path) -> None:
    """Compile every model; write its kernels' files to ``out``."""
    os.environ["TORCHINDUCTOR_BENCHMARK_KERNEL"] = "1"
    alias_triton()
    import torch
    import torch._inductor.config as config
    from torch._inductor.async_compile import AsyncCompile

    out.mkdir(parents=True, exist_ok=True)

    def write(self: Any, kernel_name: str, source_code: str, *args: Any, **kwargs: Any) -> Any:
        (out / f"{kernel_name}.py").write_text(source_code)
        print(out / f"{kernel_name}.py")
        return _Stub()

    AsyncCompile.triton = write  # type: ignore[method-assign]
    config.cpu_backend = "triton"
    config.fx_graph_cache = False
    for fn, inputs, overrides in models():
        torch._dynamo.reset()
        with config.patch(overrides):
            torch.compile(fn)(*inputs)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "inductor-kernels"))
