"""Layer norm forward (Triton tutorial 05): 1151 x 8192, fp16, one program per row."""

from __future__ import annotations

import numpy as np

from kernels_src.lang import Case, device, tl, triton


@triton.jit
def _layer_norm_fwd_fused(
    X,  # pointer to the input
    Y,  # pointer to the output
    W,  # pointer to the weights
    B,  # pointer to the biases
    Mean,  # pointer to the mean
    Rstd,  # pointer to the 1/std
    stride,  # how much to increase the pointer when moving by 1 row
    N,  # number of columns in X
    eps,  # epsilon to avoid division by zero
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


def setup(rng: np.random.Generator) -> Case:
    """The tutorial's test shape: fp16 x, w, b; BLOCK_SIZE by the tutorial's rule."""
    M, N, eps = 1151, 8192, 1e-5
    x = (-2.3 + 0.5 * rng.standard_normal((M, N), dtype=np.float32)).astype(np.float16)
    w = rng.random(N, dtype=np.float32).astype(np.float16)
    b = rng.random(N, dtype=np.float32).astype(np.float16)
    y = np.zeros_like(x)
    mean = np.zeros(M, dtype=np.float32)
    rstd = np.zeros(M, dtype=np.float32)
    max_fused_size = 65536 // x.itemsize
    block_size = min(max_fused_size, triton.next_power_of_2(N))
    args = (device(x), device(y), device(w), device(b), device(mean), device(rstd), N, N, eps)

    def launch() -> None:
        _layer_norm_fwd_fused[(M,)](*args, BLOCK_SIZE=block_size)

    def check() -> None:
        x32 = x.astype(np.float32)
        mu = x32.mean(axis=1, keepdims=True)
        inv = 1 / np.sqrt(x32.var(axis=1, keepdims=True) + eps)
        expected = (x32 - mu) * inv * w.astype(np.float32) + b.astype(np.float32)
        np.testing.assert_allclose(mean, mu[:, 0], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(rstd, inv[:, 0], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(y.astype(np.float32), expected, rtol=1e-2, atol=1e-2)

    return Case(launch, check)
