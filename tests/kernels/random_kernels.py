"""Kernels that write Triton's random streams (``tl.rand``, ``tl.randint``, ``tl.randn``)."""

# fmt: off
import minitriton as triton
import minitriton.language as tl


@triton.jit
def rand_kernel(out_ptr, seed, n, BLOCK: tl.constexpr):
    """``out[i] = tl.rand(seed, i)``."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.rand(seed, offsets), mask=offsets < n)


@triton.jit
def randint_kernel(out_ptr, seed, n, BLOCK: tl.constexpr):
    """``out[i] = tl.randint(seed, i)`` (32 random bits)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.randint(seed, offsets), mask=offsets < n)


@triton.jit
def randn_kernel(out_ptr, seed, n, BLOCK: tl.constexpr):
    """``out[i] = tl.randn(seed, i)``."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.randn(seed, offsets), mask=offsets < n)


@triton.jit
def rand_offset64_kernel(out_ptr, seed, base, n, BLOCK: tl.constexpr):
    """``out[i] = tl.rand(seed, base + i)``; an int64 ``base`` makes the offsets int64."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.rand(seed, base + offsets), mask=offsets < n)
