"""fp32 ``tl.dot`` kernels that show how fp32 operands reach the tensor cores.

``tf32_probe_kernel`` multiplies one ``[M, K]`` by one ``[K, N]`` block with
the default ``input_precision`` (TF32). ``benchmarks/tf32_probe.py`` feeds it
matrices with one nonzero per row and column, so each output is a single
product read straight from the tensor cores; ``tests/gpu`` compares full
dots on the device with the emulator.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def tf32_probe_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """``C = A @ B`` for row-major fp32 blocks, Triton's default precision."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


@triton.jit
def tf32_matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """``C = A @ B`` over K in ``BLOCK_K`` steps (an fp32 accumulator carried in the loop)."""
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)
