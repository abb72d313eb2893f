"""
Training a custom layer
=======================

A PyTorch model whose hidden layer is MiniTriton kernels, forward and
backward, trained by gradient descent. The layer is ``y = tanh(x @ W + b)``:

* the forward pass is **one fused kernel** (the matrix product, the bias and
  the ``tanh`` in registers, one store);
* the backward pass is three launches: ``dz = dy * (1 - y**2)`` from the
  saved output, then ``dx = dz @ W.T`` and ``dW = x.T @ dz`` with one matmul
  kernel that takes any strides, so a transpose is just a view.

``torch.autograd.Function`` ties them together: autograd calls ``backward``
with the gradient of the loss, and the rest of the model (a ``torch.nn.Linear``
head, the loss, the optimizer) is ordinary PyTorch. ``gradcheck`` compares the
kernels' gradients with finite differences in fp64 before training starts.
The guide "Using MiniTriton kernels in PyTorch programs" shows the same layer
as a custom op, which ``torch.compile`` keeps in one graph.
"""

import matplotlib.pyplot as plt
import torch

import minitriton as triton
import minitriton.language as tl

# The GPU when MiniTriton runs there, else the emulator on CPU tensors.
DEVICE = "cuda" if triton.get_backend() == "gpu" else "cpu"
BLOCK = 16


@triton.jit
def linear_tanh_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, ACC: tl.constexpr,
):  # fmt: skip
    """``y = tanh(x @ w + b)``; ``x`` is (M, K), ``w`` (K, N), all row-major."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + rm[:, None] * K + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)  # fmt: skip
        w = tl.load(w_ptr + rk[:, None] * N + rn[None, :],
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)  # fmt: skip
        acc = tl.dot(x, w, acc, out_dtype=ACC)
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    y = 2 * tl.sigmoid(2 * acc) - 1  # tanh, built on tl.sigmoid
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], y, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, ACC: tl.constexpr,
):  # fmt: skip
    """``c = a @ b`` for any strides of ``a`` and ``b``."""
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
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def tanh_grad_kernel(y_ptr, dy_ptr, dz_ptr, n, BLOCK: tl.constexpr):
    """``dz = dy * (1 - y**2)``: tanh's derivative, from its output."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.load(y_ptr + offs, mask=offs < n)
    dy = tl.load(dy_ptr + offs, mask=offs < n)
    tl.store(dz_ptr + offs, dy * (1 - y * y), mask=offs < n)


# %%
# The host functions allocate the outputs and launch. fp32 products
# accumulate in fp32 (with TF32 inputs, as on the GPU); fp64 ones in fp64,
# which ``gradcheck`` needs.


def acc_type(t):
    return tl.float64 if t.dtype == torch.float64 else tl.float32


def linear_tanh(x, w, b):
    (M, K), N = x.shape, w.shape[1]
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(M, BLOCK), triton.cdiv(N, BLOCK))
    linear_tanh_kernel[grid](x, w, b, y, M, N, K, BLOCK, BLOCK, BLOCK, acc_type(x))
    return y


def matmul(a, b):
    (M, K), N = a.shape, b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, BLOCK), triton.cdiv(N, BLOCK))
    strides = (*a.stride(), *b.stride())
    matmul_kernel[grid](a, b, c, M, N, K, *strides, BLOCK, BLOCK, BLOCK, acc_type(a))
    return c


class LinearTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b):
        y = linear_tanh(x.contiguous(), w.contiguous(), b.contiguous())
        ctx.save_for_backward(x, w, y)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w, y = ctx.saved_tensors
        dz = torch.empty_like(y)
        n = y.numel()
        tanh_grad_kernel[(triton.cdiv(n, 256),)](y, dy.contiguous(), dz, n, BLOCK=256)
        return matmul(dz, w.t()), matmul(x.t(), dz), dz.sum(0)


# %%
# Gradients checked against finite differences, in fp64:

inputs = [torch.randn(s, dtype=torch.float64, device=DEVICE, requires_grad=True)
          for s in ((5, 3), (3, 4), (4,))]  # fmt: skip
print("gradcheck:", torch.autograd.gradcheck(LinearTanh.apply, inputs))


# %%
# A model with the custom layer, fit to a bumpy surface by full-batch gradient
# descent (with Adam's step sizes).


class Model(torch.nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(2, hidden))
        self.b = torch.nn.Parameter(torch.zeros(hidden))
        self.head = torch.nn.Linear(hidden, 1)

    def forward(self, x):
        return self.head(LinearTanh.apply(x, self.w, self.b)).squeeze(1)


torch.manual_seed(0)
x = torch.rand(128, 2, device=DEVICE) * 4 - 2
target = torch.sin(2 * x[:, 0]) * torch.cos(1.5 * x[:, 1])
model = Model().to(DEVICE)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
losses = []
for step in range(80):
    loss = torch.nn.functional.mse_loss(model(x), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    if step % 20 == 0:
        print(f"step {step:3d}: loss {loss.item():.4f}")
print(f"final loss {losses[-1]:.4f} (started at {losses[0]:.4f})")

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.semilogy(losses)
ax.set_xlabel("step")
ax.set_ylabel("mean squared error")
ax.set_title("A MiniTriton layer trained by gradient descent")
fig.tight_layout()
plt.show()
