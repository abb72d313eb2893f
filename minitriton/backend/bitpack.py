"""Moving bits of a thread index into place with one shift and mask per run.

A linear layout gives a thread's coordinate as the OR, over the set bits of
its thread id, of one basis value per bit (:mod:`minitriton.backend.layouts`).
Emitted bit by bit, as ``((tid >> i) & 1) * basis_i``, the sum is a chain of
``bfe``/``shl``/``or`` that LLVM leaves opaque: it reassociates the ``or``
chain into different ``add`` chains at different uses, keeps several partial
sums live across loops, and costs registers: tutorial 05's layer norm
(BLOCK 4096, 8 warps) took 44 instead of 32, so 5 CTAs fit on an SM instead
of 8, and it ran at 0.91x Triton's bandwidth on an H200 instead of 0.98-1.01x.

For the layouts we use, consecutive id bits usually have doubling
power-of-two bases: a blocked layout with 4 elements per thread over 8 warps
maps id bits 0..7 to 4, 8, ..., 512, i.e. the coordinate is ``tid << 2``.
:func:`runs` finds such runs and :func:`pack_bits` emits one shift and one
mask per run, the form Triton's generated code reduces to::

    pairs (bit, weight): (0, 4) (1, 8) ... (7, 512)  ->  (tid << 2) & 1020

Bits whose weight is not a power of two (or does not continue a run) stay
``((src >> bit) & 1) * weight``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from llvmlite import ir

I32 = ir.IntType(32)


@dataclass(frozen=True)
class Run:
    """``count`` consecutive source bits from ``bit``, worth ``weight``, ``2 weight``, ..."""

    bit: int
    count: int
    weight: int


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def runs(pairs: Iterable[tuple[int, int]]) -> list[Run]:
    """Group ``(source bit, weight)`` pairs into runs; zero weights are dropped."""
    out: list[Run] = []
    for bit, weight in sorted(p for p in pairs if p[1]):
        last = out[-1] if out else None
        extends = (
            last is not None
            and _is_pow2(last.weight)
            and bit == last.bit + last.count
            and weight == last.weight << last.count
        )
        if extends and last is not None:
            out[-1] = Run(last.bit, last.count + 1, last.weight)
        else:
            out.append(Run(bit, 1, weight))
    return out


def _c(n: int) -> ir.Constant:
    return ir.Constant(I32, n)


def _term(b: ir.IRBuilder, src: ir.Value, run: Run) -> ir.Value:
    if not _is_pow2(run.weight):
        # a lone bit with an arbitrary weight: ((src >> bit) & 1) * weight
        flag = b.and_(b.lshr(src, _c(run.bit)), _c(1))
        return b.mul(flag, _c(run.weight))
    shift = run.weight.bit_length() - 1 - run.bit
    moved = src
    if shift > 0:
        moved = b.shl(src, _c(shift))
    elif shift < 0:
        moved = b.lshr(src, _c(-shift))
    return b.and_(moved, _c(((1 << run.count) - 1) * run.weight))


def pack_bits(b: ir.IRBuilder, src: ir.Value, pairs: Iterable[tuple[int, int]]) -> ir.Value:
    """The OR over ``pairs`` of ``((src >> bit) & 1) * weight`` (i32), run by run."""
    total: ir.Value | None = None
    for run in runs(pairs):
        term = _term(b, src, run)
        total = term if total is None else b.or_(total, term)
    return total if total is not None else _c(0)
