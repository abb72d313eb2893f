"""Custom layers whose forward and backward are MiniTriton kernels.

``torch.autograd.Function`` with kernel launches, checked with
``torch.autograd.gradcheck`` in fp64 on the emulator; the same layer as a
custom op with ``register_autograd``; ``torch.export`` of a module that
calls the op.
"""

from __future__ import annotations

from typing import Any

import pytest

import minitriton as triton
import minitriton.language as tl

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from minitriton import torch_ops  # noqa: E402  (imports torch)


@triton.jit
def linear_tanh_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, ACC: tl.constexpr,
):  # fmt: skip
    """``y = tanh(x @ w + b)`` for row-major ``x`` (M, K), ``w`` (K, N), ``y`` (M, N)."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        a = tl.load(x_ptr + rm[:, None] * K + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)  # fmt: skip
        w = tl.load(w_ptr + rk[:, None] * N + rn[None, :],
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)  # fmt: skip
        acc = tl.dot(a, w, acc, out_dtype=ACC)
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    y = 2 * tl.sigmoid(2 * acc) - 1  # tanh
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], y, mask=mask)


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, ACC: tl.constexpr,
):  # fmt: skip
    """``c = a @ b`` with any strides for ``a`` and ``b`` (transposes are views)."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * sam + rk[None, :] * sak,
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)  # fmt: skip
        b = tl.load(b_ptr + rk[:, None] * sbk + rn[None, :] * sbn,
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)  # fmt: skip
        acc = tl.dot(a, b, acc, out_dtype=ACC)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=mask)


@triton.jit
def tanh_grad_kernel(y_ptr, dy_ptr, dz_ptr, n, BLOCK: tl.constexpr):
    """``dz = dy * (1 - y**2)``: the gradient through tanh, from its output."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.load(y_ptr + offs, mask=offs < n)
    dy = tl.load(dy_ptr + offs, mask=offs < n)
    tl.store(dz_ptr + offs, dy * (1 - y * y), mask=offs < n)


BLOCK = 16
#: fp32 dots round their inputs to TF32, on the GPU and (faithfully) on the emulator.
TF32 = {"rtol": 2e-2, "atol": 5e-2}


def _acc(t: Any) -> Any:
    return tl.float64 if t.dtype == torch.float64 else tl.float32


def linear_tanh(x: Any, w: Any, b: Any) -> Any:
    """``tanh(x @ w + b)`` with one fused kernel."""
    (M, K), N = x.shape, w.shape[1]
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(M, BLOCK), triton.cdiv(N, BLOCK))
    linear_tanh_kernel[grid](x, w, b, y, M, N, K, BLOCK, BLOCK, BLOCK, _acc(x))
    return y


def matmul(a: Any, b: Any) -> Any:
    """``a @ b`` (either may be a transposed view)."""
    (M, K), N = a.shape, b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, BLOCK), triton.cdiv(N, BLOCK))
    matmul_kernel[grid](a, b, c, M, N, K, *a.stride(), *b.stride(),
                        BLOCK, BLOCK, BLOCK, _acc(a))  # fmt: skip
    return c


def tanh_grad(y: Any, dy: Any) -> Any:
    dz = torch.empty_like(y)
    tanh_grad_kernel[(triton.cdiv(y.numel(), 128),)](y, dy.contiguous(), dz, y.numel(), BLOCK=128)
    return dz


class LinearTanh(torch.autograd.Function):
    """``tanh(x @ w + b)``: a forward kernel and three backward launches."""

    @staticmethod
    def forward(ctx: Any, x: Any, w: Any, b: Any) -> Any:
        y = linear_tanh(x.contiguous(), w.contiguous(), b.contiguous())
        ctx.save_for_backward(x, w, y)
        return y

    @staticmethod
    def backward(ctx: Any, dy: Any) -> Any:
        x, w, y = ctx.saved_tensors
        dz = tanh_grad(y, dy)
        return matmul(dz, w.t()), matmul(x.t(), dz), dz.sum(0)


def _inputs(device: str, dtype: Any, m: int = 4, k: int = 3, n: int = 3) -> tuple[Any, ...]:
    gen = torch.Generator().manual_seed(0)
    shapes = ((m, k), (k, n), (n,))
    return tuple(
        torch.randn(s, generator=gen, dtype=dtype).to(device).requires_grad_() for s in shapes
    )


def test_linear_tanh_gradcheck_fp64_on_the_emulator() -> None:
    triton.set_backend("emulator")
    try:
        assert torch.autograd.gradcheck(LinearTanh.apply, _inputs("cpu", torch.float64))
    finally:
        triton.set_backend(None)


def test_gradcheck_rejects_a_wrong_backward() -> None:
    """The check has teeth: a backward that forgets tanh's derivative fails it."""

    class Wrong(LinearTanh):
        @staticmethod
        def backward(ctx: Any, dy: Any) -> Any:
            x, w, _ = ctx.saved_tensors
            return matmul(dy.contiguous(), w.t()), matmul(x.t(), dy.contiguous()), dy.sum(0)

    triton.set_backend("emulator")
    try:
        inputs = _inputs("cpu", torch.float64)
        assert not torch.autograd.gradcheck(Wrong.apply, inputs, raise_exception=False)
    finally:
        triton.set_backend(None)


def test_linear_tanh_matches_torch_autograd(device: str) -> None:
    x, w, b = _inputs(device, torch.float32, m=40, k=24, n=20)
    y = LinearTanh.apply(x, w, b)
    (y * y).sum().backward()
    grads = [t.grad.clone() for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    ref = torch.tanh(x @ w + b)
    (ref * ref).sum().backward()
    tol = TF32
    torch.testing.assert_close(y, ref, **tol)
    for got, want in zip(grads, (x.grad, w.grad, b.grad)):
        torch.testing.assert_close(got, want, **tol)


# -- the same layer as a custom op ---------------------------------------------


@torch_ops.custom_op("minitriton_tests::linear_tanh", mutates_args=())
def linear_tanh_op(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return linear_tanh(x.contiguous(), w.contiguous(), b.contiguous())


# The backward is traced too (by AOTAutograd, under torch.compile): its kernels
# must be a custom op of their own.
@torch_ops.custom_op("minitriton_tests::linear_tanh_backward", mutates_args=())
def linear_tanh_backward_op(
    x: torch.Tensor, w: torch.Tensor, y: torch.Tensor, dy: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    dz = tanh_grad(y, dy)
    return matmul(dz, w.t()), matmul(x.t(), dz), dz.sum(0)


def _setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    x, w, _ = inputs
    ctx.save_for_backward(x, w, output)


def _backward(ctx: Any, dy: Any) -> Any:
    x, w, y = ctx.saved_tensors
    return linear_tanh_backward_op(x, w, y, dy)


linear_tanh_op.register_autograd(_backward, setup_context=_setup_context)


def test_custom_op_gradcheck_and_compile_without_breaks() -> None:
    triton.set_backend("emulator")
    try:
        inputs = _inputs("cpu", torch.float64)
        assert torch.autograd.gradcheck(linear_tanh_op, inputs)
        torch._dynamo.reset()

        def loss(x: Any, w: Any, b: Any) -> Any:
            return linear_tanh_op(x, w, b).pow(2).sum()

        explained = torch._dynamo.explain(loss)(*inputs)
        assert (explained.graph_count, explained.graph_break_count) == (1, 0)
        compiled = torch.compile(loss, backend="aot_eager", fullgraph=True)
        got = torch.autograd.grad(compiled(*inputs), inputs)
        want = torch.autograd.grad(loss(*inputs), inputs)
        for g, r in zip(got, want):
            torch.testing.assert_close(g, r)
    finally:
        triton.set_backend(None)


class Layer(torch.nn.Module):
    def __init__(self, k: int, n: int) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(k, n) / k**0.5)
        self.b = torch.nn.Parameter(torch.zeros(n))

    def forward(self, x: Any) -> Any:
        return linear_tanh_op(x, self.w, self.b) * 2


def test_export_of_a_module_calling_the_op(device: str) -> None:
    model = Layer(24, 20).to(device)
    x = torch.randn(40, 24, device=device)
    exported = torch.export.export(model, (x,))
    targets = [str(node.target) for node in exported.graph.nodes]
    assert "minitriton_tests.linear_tanh.default" in targets
    x2 = torch.randn(40, 24, device=device)
    tol = TF32
    with torch.no_grad():
        torch.testing.assert_close(exported.module()(x2), torch.tanh(x2 @ model.w + model.b) * 2,
                                   **tol)  # fmt: skip
