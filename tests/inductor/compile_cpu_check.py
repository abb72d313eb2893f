"""``torch.compile`` on CPU tensors with :func:`minitriton.inductor.enable`, against eager torch.

``python compile_cpu_check.py [--break OP] [NAME ...]`` compiles each case of
:data:`CASES` (all, or those named) in this process, runs it on the emulator
and prints one JSON line per case: ``{"case", "ok", "kernels", "detail"}``,
where ``kernels`` counts the Triton kernels Inductor handed to MiniTriton.
``--break OP`` first swaps the emulator's meaning of ``math.OP`` for a wrong
one (``sin`` computes ``cos``), so that a test can see the check fail.
It runs in a process of its own, since :func:`enable` changes the process.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from typing import Any

import minitriton.inductor
import minitriton.inductor.cpu as cpu

minitriton.inductor.enable()

import torch  # noqa: E402 - after enable(), as a user would
import torch.nn.functional as F  # noqa: E402, N812

Case = tuple[Callable[..., Any], Callable[[], tuple[Any, ...]], dict[str, Any]]


def _r(*shape: int, dtype: Any = torch.float32) -> Any:
    return torch.randn(*shape).to(dtype)


def _pos(*shape: int) -> Any:
    return torch.rand(*shape) * 3 + 0.1


def _ints(*shape: int, lo: int = -100, hi: int = 100, dtype: Any = torch.int32) -> Any:
    return torch.randint(lo, hi, shape, dtype=dtype)


class _LayerNormMLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln = torch.nn.LayerNorm(64)
        self.fc = torch.nn.Linear(64, 32)

    def forward(self, x: Any) -> Any:
        return F.gelu(self.fc(self.ln(x))).softmax(-1)


LOOPED = {"triton.persistent_reductions": False}
CASES: dict[str, Case] = {
    # pointwise math, with Inductor's libdevice calls
    "sin_mul_add": (lambda x, y: torch.sin(x) * y + 1, lambda: (_r(100), _r(100)), {}),
    "exp_log1p_tanh": (lambda x: torch.exp(x).log1p() + x.tanh(), lambda: (_r(257),), {}),
    "erf_erfinv": (
        lambda x: torch.erf(x) + torch.erfinv(x / 3),
        lambda: (torch.rand(64) * 2 - 1,),
        {},
    ),
    "lgamma_digamma": (lambda x: torch.lgamma(x) + torch.digamma(x), lambda: (_pos(64),), {}),
    "bessel_i0_j0_y1": (
        lambda x: torch.i0(x) + torch.special.bessel_j0(x) + torch.special.bessel_y1(x),
        lambda: (_pos(64) * 5,),
        {},
    ),
    "erfcx_log_ndtr": (
        lambda x: torch.special.erfcx(x) + torch.special.log_ndtr(x),
        lambda: (_r(64) * 4,),
        {},
    ),
    "atan2_hypot_pow": (
        lambda x, y: torch.atan2(x, y) + torch.hypot(x, y) + x.abs() ** y,
        lambda: (_r(64), _r(64)),
        {},
    ),
    "remainder_floor_div": (
        lambda x, y: torch.remainder(x, y) + torch.floor_divide(x, y),
        lambda: (_r(64) * 9, _r(64) + 3),
        {},
    ),
    "int_div_mod": (
        lambda x, y: (x // y, x % y, torch.div(x, y, rounding_mode="trunc")),
        lambda: (_ints(64), _ints(64, lo=1, hi=9) * torch.where(torch.rand(64) < 0.5, -1, 1)),
        {},
    ),
    "int8_shifts_bits": (
        lambda x, y: (x << y) ^ (x >> y) | (x & 7),
        lambda: (_ints(64, dtype=torch.int8), _ints(64, lo=0, hi=7, dtype=torch.int8)),
        {},
    ),
    "int64_wide": (lambda x: x * 3_000_000_000 + 7, lambda: (_ints(64, dtype=torch.int64),), {}),
    "casts": (
        lambda x: (x.to(torch.int32), x.to(torch.float16), x.to(torch.bfloat16), x > 0),
        lambda: (_r(64) * 30,),
        {},
    ),
    "fp16_bf16_math": (
        lambda x, y: (x.sigmoid() * 2, F.silu(y)),
        lambda: (_r(64, dtype=torch.float16), _r(64, dtype=torch.bfloat16)),
        {},
    ),
    "fp64": (lambda x: x.sin() * x.exp(), lambda: (_r(64, dtype=torch.float64),), {}),
    "where_clamp_nan": (
        lambda x: torch.where(x > 0, x, x * 0.1).clamp(-0.5, 0.7) + torch.nan_to_num(x / 0.0),
        lambda: (_r(64),),
        {},
    ),
    "activations": (
        lambda x: F.gelu(x, approximate="tanh") + F.mish(x) + F.hardswish(x) + F.elu(x),
        lambda: (_r(8, 64),),
        {},
    ),
    # layouts and indexing
    "transpose_2d_tiles": (lambda x: x.t().contiguous() + 1, lambda: (_r(100, 70),), {}),
    "permute_3d": (lambda x: x.permute(2, 0, 1) + 1, lambda: (_r(9, 40, 33),), {}),
    "strided_offset_view": (lambda x: x[3:, 5:] * 2 + x[:-3, :-5], lambda: (_r(40, 50),), {}),
    "broadcast_outer": (lambda x, y: x[:, None] * y[None, :], lambda: (_r(50), _r(70)), {}),
    "cat_pad_flip": (
        lambda x, y: torch.cat([F.pad(x, (2, 3), value=1.5), y.flip(1)], 1),
        lambda: (_r(20, 30), _r(20, 17)),
        {},
    ),
    "reflect_pad": (lambda x: F.pad(x, (2, 3, 1, 2), mode="reflect"), lambda: (_r(3, 20, 30),), {}),
    "tril_arange": (lambda x: torch.tril(x) + torch.arange(30)[:, None], lambda: (_r(30, 30),), {}),
    "gather": (
        lambda x, i: torch.gather(x, 1, i) * 2,
        lambda: (_r(20, 30), torch.randint(0, 30, (20, 10))),
        {},
    ),
    "embedding": (
        lambda w, i: F.embedding(i, w) * 2,
        lambda: (_r(50, 16), torch.randint(0, 50, (4, 7))),
        {},
    ),
    "index_put_accumulate": (
        lambda x, i, v: x.index_put((i,), v, accumulate=True),
        lambda: (_r(20, 30), torch.randint(0, 20, (40,)), _r(40, 30)),
        {},
    ),
    "scatter_add": (
        lambda x, i, s: x.scatter_add(1, i, s),
        lambda: (_r(20, 30), torch.randint(0, 30, (20, 10)), _r(20, 10)),
        {},
    ),
    "bucketize": (
        lambda x, b: torch.bucketize(x, b),
        lambda: (_r(100), torch.linspace(-2, 2, 9)),
        {},
    ),
    "max_pool_indices": (
        lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True),
        lambda: (_r(2, 3, 16, 16),),
        {},
    ),
    "avg_pool": (lambda x: F.avg_pool2d(x, 3, 2, 1), lambda: (_r(2, 3, 16, 16),), {}),
    "bilinear_upsample": (
        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
        lambda: (_r(2, 3, 8, 8),),
        {},
    ),
    # reductions: persistent, looped, split, Welford, with indices
    "sum_rows": (lambda x: x.sum(1), lambda: (_r(33, 70),), {}),
    "sum_columns": (lambda x: x.sum(0), lambda: (_r(3000, 40),), {}),
    "sum_middle": (lambda x: x.sum(1), lambda: (_r(8, 3000, 5),), {}),
    "sum_all_split": (lambda x: x.sum(), lambda: (_r(1 << 18),), {}),
    "amax_argmax_looped": (lambda x: (x.amax(1), x.argmax(1)), lambda: (_r(4, 3000),), LOOPED),
    "argmin_int": (lambda x: x.argmin(0), lambda: (_ints(300, 20),), {}),
    "var_mean_welford": (lambda x: torch.var_mean(x, 1), lambda: (_r(16, 3000),), LOOPED),
    "std_3d": (lambda x: torch.std(x, (0, 2)), lambda: (_r(20, 30, 40),), {}),
    "logsumexp": (lambda x: torch.logsumexp(x, 1), lambda: (_r(16, 3000),), {}),
    "prod_any_all": (
        lambda x: (x.prod(1), (x > 1).any(1), (x > -3).all(1)),
        lambda: (_r(8, 50) * 0.2 + 1,),
        {},
    ),
    "sum_int_fp16": (
        lambda x, y: (x.sum(1), y.sum(1)),
        lambda: (_ints(20, 300), _r(20, 300, dtype=torch.float16)),
        {},
    ),
    "softmax": (lambda x: torch.softmax(x, -1), lambda: (_r(16, 1000),), {}),
    "softmax_looped": (lambda x: torch.softmax(x, -1), lambda: (_r(4, 3000),), LOOPED),
    "log_softmax_dim0": (lambda x: F.log_softmax(x, 0), lambda: (_r(100, 30),), {}),
    "layer_norm": (
        lambda x, w, b: F.layer_norm(x, (256,), w, b),
        lambda: (_r(32, 256), _r(256), _r(256)),
        {},
    ),
    "rms_norm": (lambda x, w: F.rms_norm(x, (256,), w), lambda: (_r(32, 256), _r(256)), {}),
    "group_norm": (lambda x: F.group_norm(x, 4), lambda: (_r(2, 8, 10, 10),), {}),
    "cross_entropy": (
        lambda x, t: F.cross_entropy(x, t),
        lambda: (_r(32, 100), torch.randint(0, 100, (32,))),
        {},
    ),
    "layer_norm_mlp": (_LayerNormMLP().eval(), lambda: (_r(8, 64),), {}),
    # scans and sorts
    "cumsum": (lambda x: torch.cumsum(x, 1), lambda: (_r(8, 100),), {}),
    "cumsum_long_row": (lambda x: torch.cumsum(x, 1), lambda: (_r(3, 5000),), {}),
    "cumprod_cummax": (
        lambda x: (torch.cumprod(x, 0), torch.cummax(x, 0)[0]),
        lambda: (_r(100, 8) * 0.1 + 1,),
        {},
    ),
    "logcumsumexp": (lambda x: torch.logcumsumexp(x, 1), lambda: (_r(4, 100),), {}),
    "sort_values_indices": (lambda x: torch.sort(x, 1, descending=True), lambda: (_r(8, 64),), {}),
    "topk": (lambda x: torch.topk(x, 5, 1)[0] * 2, lambda: (_r(8, 64),), {}),
}


def _compare(got: Any, want: Any) -> str | None:
    """None when ``got`` matches ``want`` (tensors or tuples of them); what differs otherwise."""
    if isinstance(want, (tuple, list)):
        for i, (g, w) in enumerate(zip(got, want)):
            if (problem := _compare(g, w)) is not None:
                return f"output {i}: {problem}"
        return None
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"{got.dtype}{list(got.shape)} where eager gives {want.dtype}{list(want.shape)}"
    if not want.is_floating_point():
        return None if torch.equal(got, want) else f"{int((got != want).sum())} elements differ"
    tol = 1e-2 if want.dtype in (torch.float16, torch.bfloat16) else 2e-4
    if torch.allclose(got.double(), want.double(), rtol=tol, atol=tol, equal_nan=True):
        return None
    return f"differs by up to {(got.double() - want.double()).abs().nan_to_num(0).max().item():.3g}"


def run(name: str, kernels: list[str]) -> dict[str, Any]:
    """Compile and run one case; compare with eager torch."""
    import torch._inductor.config as config

    fn, make, patch = CASES[name]
    torch._dynamo.reset()
    torch.manual_seed(0)
    args = make()
    want = fn(*[a.clone() for a in args])
    before = len(kernels)
    with config.patch(patch):
        got = torch.compile(fn)(*[a.clone() for a in args])
    problem = _compare(got, want)
    return {"ok": problem is None, "kernels": len(kernels) - before, "detail": problem or ""}


def _break(op: str) -> None:
    """Make the emulator's ``math.OP`` wrong: it computes ``cos`` (a checker test's fault)."""
    import numpy as np

    from minitriton.emulator.ops.arith import elementwise
    from minitriton.emulator.registry import SEMANTICS
    from minitriton.ir.ops import MATH_UNARY_OPS

    del SEMANTICS[MATH_UNARY_OPS[op]]
    elementwise(MATH_UNARY_OPS[op], math_precision=True)(np.cos)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--break"]:
        _break(argv[1])
        argv = argv[2:]
    kernels: list[str] = []
    load = cpu.load_kernel

    def counting(kernel_name: str, source_code: str, backend: str | None = None) -> Any:
        kernels.append(kernel_name)
        return load(kernel_name, source_code, backend)

    cpu.load_kernel = counting  # type: ignore[assignment]
    for name in argv or list(CASES):
        try:
            row = run(name, kernels)
        except Exception:
            row = {"ok": False, "kernels": 0, "detail": traceback.format_exc(limit=-3)}
        print(json.dumps({"case": name, **row}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
