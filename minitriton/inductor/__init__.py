"""Running the kernel files that torch.compile (TorchInductor) writes, on MiniTriton.

With ``TORCHINDUCTOR_BENCHMARK_KERNEL=1``, Inductor writes each Triton kernel
to a file of its own with a ``get_args()`` / ``call(args)`` harness and a
benchmark under ``if __name__ == "__main__":``. ``minitriton run FILE.py``
and ``minitriton debug FILE.py`` run such a file (:func:`is_inductor_file`)
after :func:`install`: ``triton`` becomes MiniTriton
(:func:`minitriton.compat.alias_triton`), Inductor's heuristics module is
replaced by :mod:`minitriton.inductor.heuristics` (one config, no Triton),
and, where torch sees no GPU, a file written for CUDA runs on the CPU
(:mod:`minitriton.inductor.harness`).

:func:`enable` goes further: ``torch.compile`` on CPU tensors then runs the
kernels Inductor writes on MiniTriton, in the process that compiles
(:mod:`minitriton.inductor.cpu`).
"""

from __future__ import annotations

import re
from pathlib import Path

from minitriton.inductor.cpu import enable
from minitriton.inductor.harness import install

__all__ = ["enable", "install", "is_inductor_file"]

_DECORATOR = re.compile(r"^@triton_heuristics\.\w+\(", re.MULTILINE)


def is_inductor_file(path: str | Path) -> bool:
    """Whether ``path`` is a kernel file that Inductor wrote (a ``@triton_heuristics`` kernel)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "torch._inductor.runtime" in text and bool(_DECORATOR.search(text))
