"""``tl.range(..., loop_unroll_factor=F)``: the ``loop-unroll`` pass, end to end.

The unrolled loop must give the loop's values for every trip count (none,
fewer than ``F``, a multiple of ``F``, one more), start and step, on both
backends; the optimized IR holds ``F`` copies of the body plus the remainder
loop's one (unless the bounds show it never runs), as Triton's (its
``test_unroll_attr`` counts them). A factor that is not a positive
compile-time int is a located error (``tests/backend/test_loop_stages.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.signature import kernel_params, parse_signature


@triton.jit
def sums(out_ptr, lo, hi, STEP: tl.constexpr, F: tl.constexpr):
    total = 0
    squares = 0.0
    for i in tl.range(lo, hi, STEP, loop_unroll_factor=F):
        total += i
        squares += (i * i).to(tl.float32)
        tl.atomic_add(out_ptr + 2, 1)  # one per iteration
    tl.store(out_ptr, total)
    tl.store(out_ptr + 1, squares.to(tl.int32))


@triton.jit
def counted(dst, F: tl.constexpr):
    for i in tl.range(0, 10, loop_unroll_factor=F):
        tl.atomic_add(dst, i)


#: Trip counts: none, fewer than a factor, many, stepped, an empty range.
BOUNDS = [(0, 0, 1), (0, 2, 1), (3, 27, 1), (5, 33, 3), (7, 3, 2)]


@pytest.mark.parametrize("factor", [1, 2, 3, 4, 8])
@pytest.mark.parametrize(("lo", "hi", "step"), BOUNDS)
def test_unrolled_loops_give_the_loops_values(
    backend: str, factor: int, lo: int, hi: int, step: int
) -> None:
    out = np.zeros(3, np.int32)
    sums[(1,)](out, lo, hi, STEP=step, F=factor, backend=backend)
    its = np.arange(lo, hi, step)
    assert out.tolist() == [its.sum(), (its * its).sum(), len(its)]


@pytest.mark.parametrize("factor", [1, 2, 4, 5, 8])
def test_the_ir_holds_factor_copies_and_a_remainder(factor: int) -> None:
    specs = parse_signature(f"*i32, {factor}", kernel_params(counted.fn))
    ir = compile_kernel(counted.source, specs, CompileOptions()).asm["ir-opt"]
    loops, atomics = ir.count("scf.for("), ir.count("tt.atomic_rmw(")
    # Ten iterations: canonicalize drops the remainder loop where the factor divides ten.
    remainder = int(10 % factor != 0)
    assert (loops, atomics) == (1 + remainder, factor + remainder)
    assert "loop_unroll_factor" not in ir
