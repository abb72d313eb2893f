"""Elementwise ops are computed once per run of equal elements (Triton's deduplication).

The axis analysis knows when a block is constant over aligned chunks
(``cols < N`` with ``N % 16 == 0`` is one boolean per 16 columns). The code
generator then computes such an op once per chunk of a thread's registers
and reuses the value, as Triton's elementwise lowering does: a mask's
``setp`` per 16-byte vector, not per element, and fewer registers live.
Only pure elementwise ops pass constancy on: an atomic, a scan or inline
asm of equal inputs gives different values, and the GPU runs check that
those are not merged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from minitriton.backend.axis import AxisAnalysis
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.ir.ops import AtomicRMWOp, ScanOp, SelectOp

SOURCE = """
import minitriton as triton
import minitriton.language as tl


@triton.jit
def shifted_where(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + cols, mask=cols < N, other=0.0)
    y = tl.where(cols < N, x - 1.0, 0.0)
    tl.store(y_ptr + cols, y, mask=cols < N)


@triton.jit
def equal_inputs(counter_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    old = tl.atomic_add(counter_ptr + offs * 0, 1)  # one address: every old value differs
    ones = tl.full([BLOCK], 1, tl.int32)
    ramp = tl.cumsum(ones, 0)  # 1, 2, 3, ... from equal inputs
    tl.store(out_ptr + offs, old * 1000 + tl.where(ramp > 0, ramp, 0))
"""


@pytest.fixture(scope="module")
def kernels(module_from_source: Callable[[str, str], ModuleType]) -> ModuleType:
    return module_from_source("constant_runs_kernels", SOURCE)


def compiled(fn: Any, args: tuple, consts: dict, stop_after: str = "ptx") -> Any:
    specs = fn.specialize(fn.bind(args, consts))
    return compile_kernel(fn.source, specs, CompileOptions(arch="sm_90a"), stop_after=stop_after)


@pytest.mark.parametrize(("n", "compares"), [(4096, 2), (4095, 8)])
def test_a_mask_is_compared_once_per_vector_when_n_is_aligned(
    kernels: Any, n: int, compares: int
) -> None:
    # 1024 floats, 4 warps: 8 a thread, two 16-byte vectors. With N % 16 == 0 the
    # three ``cols < N`` are one compare per vector (LLVM merges the equal ones);
    # with N unaligned every element needs its own.
    x = np.zeros(n, np.float32)
    ptx = compiled(kernels.shifted_where, (x, x, n), {"BLOCK": 1024}).asm["ptx"]
    assert len(re.findall(r"setp\.lt\.s32", ptx)) == compares


def test_atomics_and_scans_of_equal_inputs_are_not_constant(kernels: Any) -> None:
    out = np.zeros(64, np.int32)
    func = compiled(kernels.equal_inputs, (out, out), {"BLOCK": 64}, "ir-opt").module.funcs[0]
    axis = AxisAnalysis(func)
    ops = list(func.walk())
    for cls in (AtomicRMWOp, ScanOp):
        (op,) = [o for o in ops if isinstance(o, cls)]
        assert axis.get(op.results[0]).const == (1,), cls.name
    # A select of a constant condition and a varying value is not constant either.
    (select,) = [o for o in ops if isinstance(o, SelectOp)]
    assert axis.get(select.result).const == (1,)


def test_atomics_and_scans_of_equal_inputs_give_every_value(kernels: Any, backend: str) -> None:
    counter = np.zeros(1, np.int32)
    out = np.zeros(64, np.int32)
    kernels.equal_inputs[(1,)](counter, out, BLOCK=64, backend=backend)
    assert counter[0] == 64
    olds, ramp = np.divmod(out, 1000)
    assert sorted(olds.tolist()) == list(range(64))
    np.testing.assert_array_equal(ramp, np.arange(1, 65))
