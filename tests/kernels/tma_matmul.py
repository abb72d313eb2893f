"""Matmul kernels whose K loops the sm_90a pipeliner copies with TMA.

``desc_matmul`` is tutorial 09's kernel (host ``TensorDescriptor`` arguments,
``A @ B.T``); ``bp_matmul_kernel`` (``block_ptr_matmul`` to the tests) uses
``tl.make_block_ptr`` over kernel arguments with ``boundary_check`` on both
dimensions and stores fp16; ``ws_desc_matmul`` is ``desc_matmul`` whose K loop
asks for warp specialization (``WARP_SPECIALIZE``); ``benchmarks/gpu_bench_tma.py`` times it.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def desc_matmul(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([pid_n * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@triton.jit
def ws_desc_matmul(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr, WARP_SPECIALIZE: tl.constexpr):
    # desc_matmul whose K loop may be warp-specialized (a TMA producer warpgroup).
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(tl.cdiv(K, BK), warp_specialize=WARP_SPECIALIZE):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([pid_n * BN, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@triton.jit
def bp_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (sam, sak), (pid_m * BM, 0), (BM, BK), (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (sbk, sbn), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_bp, boundary_check=(0, 1))
        b = tl.load(b_bp, boundary_check=(0, 1))
        acc = tl.dot(a, b, acc)
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = tl.advance(b_bp, (BK, 0))
    c_bp = tl.make_block_ptr(c_ptr, (M, N), (scm, scn), (pid_m * BM, pid_n * BN), (BM, BN),
                             (1, 0))
    tl.store(c_bp, acc.to(tl.float16), boundary_check=(0, 1))


@triton.jit
def ws_block_ptr_matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sbk, scm,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Asks for warp specialization, but its TMA coordinates are loop-carried (tl.advance).
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (sam, 1), (pid_m * BM, 0), (BM, BK), (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (sbk, 1), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in tl.range(0, tl.cdiv(K, BK), warp_specialize=True):
        a = tl.load(a_bp, boundary_check=(0, 1))
        b = tl.load(b_bp, boundary_check=(0, 1))
        acc = tl.dot(a, b, acc)
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = tl.advance(b_bp, (BK, 0))
    c_bp = tl.make_block_ptr(c_ptr, (M, N), (scm, 1), (pid_m * BM, pid_n * BN), (BM, BN),
                             (1, 0))
    tl.store(c_bp, acc.to(tl.float16), boundary_check=(0, 1))


#: The tests' name for it.
block_ptr_matmul = bp_matmul_kernel


@triton.jit
def block_ptr_matmul_rows_unchecked(a_ptr, b_ptr, c_ptr, M, N, K, sam, sbk,
                                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # A's rows are not bounds-checked (boundary_check=(1,)): its tensor map's row dimension
    # is unbounded, so TMA reads the rows past M as the pointer load does; B is checked on
    # both dimensions.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (sam, 1), (pid_m * BM, 0), (BM, BK), (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (sbk, 1), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_bp, boundary_check=(1,))
        b = tl.load(b_bp, boundary_check=(0, 1))
        acc = tl.dot(a, b, acc)
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = tl.advance(b_bp, (BK, 0))
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(tl.float16), mask=mask)


@triton.jit
def mixed_matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sbk,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # A through pointers masked as tutorial 03 does (offs_k < K - k * BK): no tensor map
    # describes that mask, so A keeps cp.async; B, through a block pointer, qualifies for TMA.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * sam + offs_k[None, :]
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (sbk, 1), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_bp, boundary_check=(0, 1))
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_bp = tl.advance(b_bp, (BK, 0))
    offs_n = pid_n * BN + tl.arange(0, BN)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(tl.float16), mask=mask)
