"""Kernels that use ``tl``'s standard-library functions written in Triton itself.

``tl.swizzle2d``, ``tl.ravel``, ``tl.flip``, ``tl.cat``, ``tl.gather``,
``tl.reduce_or``, ``tl.histogram`` and the random-number helpers
(``rand4x``, ``randn4x``, ``uint_to_uniform_float``,
``pair_uniform_to_normal``), each as a real kernel would call it.
"""

import minitriton as triton
import minitriton.language as tl


@triton.jit
def swizzle_kernel(out_ptr, SIZE_I: tl.constexpr, SIZE_J: tl.constexpr, GROUP: tl.constexpr):
    """Per program (i, j): out[i, j] = the swizzled linear index new_i * SIZE_J + new_j."""
    i = tl.program_id(0)
    j = tl.program_id(1)
    new_i, new_j = tl.swizzle2d(i, j, SIZE_I, SIZE_J, GROUP)
    tl.store(out_ptr + i * SIZE_J + j, new_i * SIZE_J + new_j)


@triton.jit
def swizzle_block_kernel(out_ptr, size_i, SIZE_J: tl.constexpr, GROUP: tl.constexpr,
                         BLOCK: tl.constexpr):  # fmt: skip
    """The same on a block of linear indices, with a run-time ``size_i``."""
    ij = tl.arange(0, BLOCK)
    new_i, new_j = tl.swizzle2d(ij // SIZE_J, ij % SIZE_J, size_i, SIZE_J, GROUP)
    tl.store(out_ptr + ij, new_i * SIZE_J + new_j, mask=ij < size_i * SIZE_J)


@triton.jit
def shapes_kernel(x_ptr, y_ptr, flip_ptr, flip0_ptr, ravel_ptr, cat0_ptr, cat1_ptr,
                  M: tl.constexpr, N: tl.constexpr):  # fmt: skip
    """flip (last dim and dim 0), ravel, and cat along both dims of two M x N blocks."""
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    y = tl.load(y_ptr + rows * N + cols)
    tl.store(flip_ptr + rows * N + cols, tl.flip(x))
    tl.store(flip0_ptr + rows * N + cols, x.flip(0))
    tl.store(ravel_ptr + tl.arange(0, M * N), x.ravel())
    rows2 = tl.arange(0, 2 * M)[:, None]
    tl.store(cat0_ptr + rows2 * N + cols, tl.cat(x, y, can_reorder=True))
    cols2 = tl.arange(0, 2 * N)[None, :]
    tl.store(cat1_ptr + rows * (2 * N) + cols2, tl.cat(x, y, dim=1))


@triton.jit
def flip_bool_kernel(x_ptr, out_ptr, N: tl.constexpr):
    """Flip a block of booleans (compared from floats), stored as int8."""
    offs = tl.arange(0, N)
    flags = tl.load(x_ptr + offs) > 0
    tl.store(out_ptr + offs, tl.flip(flags, 0).to(tl.int8))


@triton.jit
def gather_kernel(src_ptr, idx_ptr, out0_ptr, out1_ptr, M: tl.constexpr, N: tl.constexpr,
                  K: tl.constexpr):  # fmt: skip
    """out0 = gather(src, idx0, axis=0), K x N; out1 = gather(src, idx0 as M rows % N, axis=1)."""
    src = tl.load(src_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    idx0 = tl.load(idx_ptr + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    out0 = tl.gather(src, idx0, 0)
    tl.store(out0_ptr + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :], out0)
    idx1 = idx0.reshape(M, K * N // M) % N
    out1 = src.gather(idx1, axis=1)
    cols = tl.arange(0, K * N // M)[None, :]
    tl.store(out1_ptr + tl.arange(0, M)[:, None] * (K * N // M) + cols, out1)


@triton.jit
def histogram_kernel(x_ptr, out_ptr, or_ptr, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
    """A histogram of the first n values (masked), and the bitwise or of each row of 8."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + tl.arange(0, BINS), tl.histogram(x, BINS, mask=offs < n))
    rows = tl.reshape(x, (BLOCK // 8, 8))
    tl.store(or_ptr + tl.arange(0, BLOCK // 8), tl.reduce_or(rows, 1))


@triton.jit
def bins_kernel(x_ptr, out_ptr, M: tl.constexpr, BINS: tl.constexpr):
    """Triton's test_histogram kernel: the counts also broadcast against an (M, BINS) block."""
    x = tl.load(x_ptr + tl.arange(0, M))
    z = tl.histogram(x, BINS)
    biased = z + tl.full([M, BINS], 1, dtype=tl.int32)  # noqa: F841
    tl.store(out_ptr + tl.arange(0, BINS), z)


@triton.jit
def rows_histogram_kernel(x_ptr, out_ptr, n, M: tl.constexpr, BINS: tl.constexpr):
    """Each program's histogram of its row's first n - pid values."""
    pid = tl.program_id(0)
    offs = tl.arange(0, M)
    x = tl.load(x_ptr + pid * M + offs)
    tl.store(out_ptr + pid * BINS + tl.arange(0, BINS), tl.histogram(x, BINS, mask=offs < n - pid))


@triton.jit
def random4x_kernel(u_ptr, n_ptr, f_ptr, seed, BLOCK: tl.constexpr):
    """rand4x and randn4x (each four blocks), and the two helpers on randint4x's output."""
    offs = tl.arange(0, BLOCK)
    u1, u2, u3, u4 = tl.rand4x(seed, offs)
    n1, n2, n3, n4 = tl.randn4x(seed, offs)
    tl.store(u_ptr + offs, u1)
    tl.store(u_ptr + BLOCK + offs, u2)
    tl.store(u_ptr + 2 * BLOCK + offs, u3)
    tl.store(u_ptr + 3 * BLOCK + offs, u4)
    tl.store(n_ptr + offs, n1)
    tl.store(n_ptr + BLOCK + offs, n2)
    tl.store(n_ptr + 2 * BLOCK + offs, n3)
    tl.store(n_ptr + 3 * BLOCK + offs, n4)
    i1, i2, _, _ = tl.randint4x(seed, offs)
    a, b = tl.pair_uniform_to_normal(tl.uint_to_uniform_float(i1), tl.uint_to_uniform_float(i2))
    tl.store(f_ptr + offs, a)
    tl.store(f_ptr + BLOCK + offs, b)


@triton.jit
def max_numel_kernel(out_ptr, BLOCK: tl.constexpr):
    """Triton's block-size limit as a compile-time value (a static check, then stored)."""
    tl.static_assert(BLOCK <= tl.TRITON_MAX_TENSOR_NUMEL)
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs * 0 + tl.TRITON_MAX_TENSOR_NUMEL // BLOCK)


@triton.jit
def topk_kernel(x_ptr, top_ptr, low_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """Each row's K largest (sorted, largest first) and K smallest (smallest first)."""
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    out = tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :]
    tl.store(top_ptr + out, tl.topk(x, K))
    tl.store(low_ptr + out, tl.topk(x, K, descending=False))


@triton.jit
def large_gather(src_ptr, idx_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """out = gather(src, idx, axis=0) for a K x N index into an M x N table."""
    src = tl.load(src_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    idx = tl.load(idx_ptr + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(out_ptr + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :],
             tl.gather(src, idx, 0))  # fmt: skip


@triton.jit
def newer_forms_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    """Triton 3.7's function forms: ``squeeze``, ``unsqueeze``, ``add``, ``sub``, ``mul``,
    ``to_tensor`` and ``expect_zero``."""
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + tl.unsqueeze(rows, 1) * N + tl.unsqueeze(cols, 0))  # [M, N]
    first = tl.squeeze(tl.reshape(tl.sum(x, axis=1), (M, 1)), 1)  # [M]
    y = tl.sub(tl.add(x, tl.mul(x, 2)), tl.to_tensor(1.0))
    y = y + tl.expect_zero(first * 0, rows < M)[:, None]
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], y)


@triton.jit
def expect_zero_kernel(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, tl.expect_zero(x, offs < N // 2))


@triton.jit
def squeeze_wrong_dim(x_ptr, N: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, N), tl.squeeze(tl.reshape(tl.arange(0, N), (2, N // 2)), 0))
