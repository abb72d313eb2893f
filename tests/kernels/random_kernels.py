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
