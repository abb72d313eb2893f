"""``tl.dot_scaled`` kernels: one block product of two microscaled operands."""

from __future__ import annotations

import minitriton as triton
import minitriton.language as tl


@triton.jit
def scaled_product(
    a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, out_ptr,
    M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
    FORMAT_A: tl.constexpr, FORMAT_B: tl.constexpr, SCALED: tl.constexpr,
):  # fmt: skip
    """``out = dot_scaled(a, a_scale, b, b_scale)`` with e2m1 packed two to a byte along K."""
    KA: tl.constexpr = K // 2 if FORMAT_A == "e2m1" else K
    KB: tl.constexpr = K // 2 if FORMAT_B == "e2m1" else K
    a = tl.load(a_ptr + tl.arange(0, M)[:, None] * KA + tl.arange(0, KA)[None, :])
    b = tl.load(b_ptr + tl.arange(0, KB)[:, None] * N + tl.arange(0, N)[None, :])
    SK: tl.constexpr = K // 32
    if SCALED:
        a_scale = tl.load(a_scale_ptr + tl.arange(0, M)[:, None] * SK + tl.arange(0, SK)[None, :])
        b_scale = tl.load(b_scale_ptr + tl.arange(0, N)[:, None] * SK + tl.arange(0, SK)[None, :])
        c = tl.dot_scaled(a, a_scale, FORMAT_A, b, b_scale, FORMAT_B)
    else:
        c = tl.dot_scaled(a, None, FORMAT_A, b, None, FORMAT_B)
    tl.store(out_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


@triton.jit
def fp4_packed_along_m_and_n(a_ptr, b_ptr, acc_ptr, out_ptr,
                             M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):  # fmt: skip
    """e2m1 packed along M (``lhs_k_pack=False``) and N, added to an accumulator."""
    a = tl.load(a_ptr + tl.arange(0, M // 2)[:, None] * K + tl.arange(0, K)[None, :])
    b = tl.load(b_ptr + tl.arange(0, K)[:, None] * (N // 2) + tl.arange(0, N // 2)[None, :])
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    acc = tl.load(acc_ptr + offs)
    c = tl.dot_scaled(a, None, "e2m1", b, None, "e2m1", acc=acc, lhs_k_pack=False,
                      rhs_k_pack=False)  # fmt: skip
    tl.store(out_ptr + offs, c)


@triton.jit
def bad_scale_shape(a_ptr, s_ptr, out_ptr):
    """A scale of the wrong shape: one exponent per 16 elements instead of 32."""
    a = tl.load(a_ptr + tl.arange(0, 16)[:, None] * 64 + tl.arange(0, 64)[None, :])
    s = tl.load(s_ptr + tl.arange(0, 16)[:, None] * 4 + tl.arange(0, 4)[None, :])
    c = tl.dot_scaled(a, s, "e4m3", tl.trans(a), None, "e4m3")
    tl.store(out_ptr + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :], c)


@triton.jit
def bad_format(a_ptr, out_ptr, FORMAT: tl.constexpr):
    """An unknown format name."""
    a = tl.load(a_ptr + tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :])
    c = tl.dot_scaled(a, None, FORMAT, tl.trans(a), None, "e4m3")
    tl.store(out_ptr + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :], c)


@triton.jit
def nvfp4_product(
    a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, out_ptr,
    M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
):  # fmt: skip
    """NVFP4: e2m1 packed along K, one e4m3 scale (its value) per 16 elements along K."""
    a = tl.load(a_ptr + tl.arange(0, M)[:, None] * (K // 2) + tl.arange(0, K // 2)[None, :])
    b = tl.load(b_ptr + tl.arange(0, K // 2)[:, None] * N + tl.arange(0, N)[None, :])
    SK: tl.constexpr = K // 16
    a_scale = tl.load(a_scale_ptr + tl.arange(0, M)[:, None] * SK + tl.arange(0, SK)[None, :])
    b_scale = tl.load(b_scale_ptr + tl.arange(0, N)[:, None] * SK + tl.arange(0, SK)[None, :])
    a_scale = a_scale.to(tl.float8e4nv, bitcast=True)
    b_scale = b_scale.to(tl.float8e4nv, bitcast=True)
    c = tl.dot_scaled(a, a_scale, "e2m1", b, b_scale, "e2m1")
    tl.store(out_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)
