"""Layer norm forward (Triton tutorial 05): 1151 x 8192, fp16, one program per row."""

from __future__ import annotations

import numpy as np

from kernels_src.lang import Case, device, library, triton

_layer_norm_fwd_fused = library("layer_norm")._layer_norm_fwd_fused


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
