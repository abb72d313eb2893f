"""Run Inductor kernel files on MiniTriton and compare what they write with torch.

``python check_files.py BACKEND FILE.py...`` prints one JSON line per file:
``{"file": ..., "kernel": ..., "ok": ..., "detail": ...}``. Each file runs as
``minitriton run`` runs it (:func:`minitriton.inductor.install`): its
``get_args()`` makes the arguments, ``call(args)`` launches its kernel, and
:data:`REFERENCES` says what the kernel must have written, computed by torch
from copies of the inputs. It runs in a process of its own, since it swaps
``triton`` and Inductor's heuristics module for the whole process.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

Expected = dict[int, Any]  # argument index -> what the kernel must write there


def _layer_norm(a: list[Any]) -> Expected:
    import torch

    x, w, b = a[2], a[3], a[4]
    mean = x.mean(1, keepdim=True)
    rstd = torch.rsqrt(x.var(1, unbiased=False, keepdim=True) + 1e-5)
    return {0: mean, 1: rstd, 5: (x - mean) * rstd * w + b}


def _reference(name: str) -> Callable[[list[Any]], Expected]:
    import torch
    import torch.nn.functional as F  # noqa: N812

    table: dict[str, Callable[[list[Any]], Expected]] = {
        "triton_per_fused_native_layer_norm_0": _layer_norm,
        "triton_poi_fused_gelu_1": lambda a: {1: F.gelu(a[0])},
        "triton_red_fused__softmax_0": lambda a: {0: torch.softmax(a[1], 1)},
        "triton_red_fused_amax_argmax_0": lambda a: {1: a[0].amax(1), 2: a[0].argmax(1)},
        "triton_red_fused_var_mean_0": lambda a: {2: a[1].mean(1), 0: a[1].var(1)},
        "triton_per_fused_logcumsumexp_0": lambda a: {1: torch.logcumsumexp(a[0], 1)},
        "triton_poi_fused_add_clone_t_0": lambda a: {1: a[0].t() + 1},
        "triton_red_fused__softmax_online_0": lambda a: {1: torch.softmax(a[0], 1)},
        "triton_red_fused_native_layer_norm_0": lambda a: {1: F.layer_norm(a[0], (3000,))},
        "triton_red_fused_cumsum_0": lambda a: {1: torch.cumsum(a[0].double(), 1).float()},
        "triton_per_fused_welford_combine_0": lambda a: {
            2: a[1].mean(1),
            0: a[1].var(1, unbiased=False),
        },
        "triton_spl_fused_cumsum_0": lambda a: {1: torch.cumsum(a[0].double(), 0).float()},
        "triton_for_fused_0": lambda a: {2: a[0] + 1, 3: a[1] * 2},
        "triton_tem_fused_mm_0": lambda a: {2: a[0] @ a[1]},
    }
    return table[name]


def _kernel_name(module: Any) -> str:
    """The name of the file's kernel (the one its ``call()`` launches)."""
    from minitriton.inductor.heuristics import InductorKernel

    kernels = [v for v in vars(module).values() if isinstance(v, InductorKernel)]
    assert len(kernels) == 1, f"expected one Inductor kernel, found {len(kernels)}"
    return kernels[0].__name__


def check(path: Path, backend: str) -> dict[str, Any]:
    """Run one file's kernel; compare every output with torch's.

    On the GPU backend the arguments that ``get_args()`` made on the CPU
    (files written for Inductor's CPU Triton backend) move to the GPU first.
    """
    import torch

    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    args = list(module.get_args())
    if backend == "gpu":
        args = [a.cuda() if isinstance(a, torch.Tensor) else a for a in args]
    inputs = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    expected = _reference(_kernel_name(module))(inputs)
    module.call(args)
    for index, want in expected.items():
        got = args[index].reshape(want.shape).to(want.dtype).to(want.device)
        # Sums of thousands of float32 values: rounding differs with the order of the additions.
        if not torch.allclose(got, want, rtol=1e-4, atol=1e-4):
            worst = (got.double() - want.double()).abs().max().item()
            return {"ok": False, "detail": f"argument {index} differs by up to {worst}"}
    return {"ok": True, "detail": f"{len(expected)} outputs match"}


def main(argv: list[str]) -> int:
    from minitriton.inductor import install

    install(argv[0])
    for name in argv[1:]:
        path = Path(name)
        try:
            result = check(path, argv[0])
        except Exception:
            result = {"ok": False, "detail": traceback.format_exc(limit=-3)}
        print(json.dumps({"file": path.name, **result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
