"""Grouped matmul (Triton tutorial 03, no autotune): 512^3, fp16 inputs, fp32 accumulator."""

from __future__ import annotations

import numpy as np

from kernels_src.lang import Case, device, library, triton

CONFIG = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}


#: The GPU benchmark's matmul (``gpu_bench_tc.py``), from the kernel library.
matmul_kernel = library("tc_kernels").matmul_kernel


def setup(rng: np.random.Generator) -> Case:
    """Random fp16 A (512 x 512) and B (512 x 512); C in fp16."""
    M = N = K = 512
    a = rng.standard_normal((M, K), dtype=np.float32).astype(np.float16)
    b = rng.standard_normal((K, N), dtype=np.float32).astype(np.float16)
    c = np.zeros((M, N), dtype=np.float16)
    # Strides in elements; all three matrices are row-major.
    args = (device(a), device(b), device(c), M, N, K, K, 1, N, 1, N, 1)
    n_programs = triton.cdiv(M, CONFIG["BLOCK_SIZE_M"]) * triton.cdiv(N, CONFIG["BLOCK_SIZE_N"])

    def launch() -> None:
        matmul_kernel[(n_programs,)](*args, **CONFIG)

    def check() -> None:
        expected = a.astype(np.float32) @ b.astype(np.float32)
        np.testing.assert_allclose(c.astype(np.float32), expected, rtol=1e-2, atol=5e-2)

    return Case(launch, check)
