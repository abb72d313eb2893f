"""Semantics of ``tt.dot``: a block matrix product, as tensor cores compute it.

fp32 inputs follow ``input_precision``: TF32 inputs as the tensor cores of
the modelled arch read them, and fp32 accumulation in steps of 8 values of K
(:mod:`minitriton.emulator.tf32`), or exact;
fp16, bf16 and integer dots are exact and rounded once, except fp16
accumulation on tensor cores, which rounds after every instruction's K step.
"""

from __future__ import annotations

import numpy as np

from minitriton.emulator.interpreter import ProgramState
from minitriton.emulator.registry import semantics
from minitriton.emulator.tf32 import arch_family, tensor_core_inputs, tf32_dot, tf32x3_dot
from minitriton.emulator.values import RVal, from_compute, to_compute, to_float64
from minitriton.ir.core import Operation
from minitriton.ir.ops import DotOp
from minitriton.ir.types import ScalarType, element_type


def _scalar_type(t: object) -> ScalarType:
    elem = element_type(t)  # type: ignore[arg-type]
    assert isinstance(elem, ScalarType)
    return elem


@semantics(DotOp)
def _dot(op: Operation, state: ProgramState, a: RVal, b: RVal, acc: RVal) -> RVal:
    """``a @ b + acc``; fp32 inputs follow ``input_precision`` as on the GPU.

    * fp32 with ``"tf32"`` (Triton's default): inputs made TF32 as the arch's
      tensor cores do (:func:`minitriton.emulator.tf32.tensor_core_inputs`),
      fp32 accumulation in steps of 8 (:func:`minitriton.emulator.tf32.tf32_dot`);
      before sm_80 (no TF32), exact;
    * fp32 with ``"tf32x3"``: Triton's three TF32 dots of the split inputs;
    * ``"ieee"``, fp16 and bf16: exact in fp64, rounded once;
    * fp16 operands with an fp16 accumulator where the GPU runs them on
      fp16-accumulating tensor cores (:func:`_f16_acc_step`): exact in fp64
      per 16 values of K, the running sum rounded to fp16 after each step
      (fp8 on ``wgmma``: per 32);
    * integers: exact in int64, wrapped once.
    """
    ta, tb, tc = (_scalar_type(v.type) for v in op.operands)
    out = _scalar_type(op.results[0].type)
    batched = a.batched or b.batched or acc.batched
    if ta.is_int():
        prod = np.matmul(a.data.astype(np.int64), b.data.astype(np.int64))
        return RVal(np.asarray(from_compute(prod + acc.data.astype(np.int64), out)), batched)
    tensor_core = _TF32_DOTS.get(str(op.attrs.get("input_precision", "tf32")))
    to_tf32 = tensor_core_inputs(state.interp.arch, _path(op, state.interp.arch))
    if ta.name == "f32" and tb.name == "f32" and tensor_core is not None and to_tf32 is not None:
        acc32 = to_compute(acc.data, tc).astype(np.float32)
        total = tensor_core(a.data, b.data, acc32, to_tf32)
        return RVal(np.asarray(from_compute(total, out)), batched)
    step = _f16_acc_step(op, state.interp.arch)
    if step:
        x, y = to_float64(a.data, ta), to_float64(b.data, tb)
        total = to_float64(acc.data, tc).astype(np.float16)
        for k in range(0, x.shape[-1], step):
            part = np.matmul(x[..., k : k + step], y[..., k : k + step, :])
            total = (total.astype(np.float64) + part).astype(np.float16)
        return RVal(np.asarray(from_compute(total.astype(np.float64), out)), batched)
    total = np.matmul(to_float64(a.data, ta), to_float64(b.data, tb)) + to_float64(acc.data, tc)
    if out.name == "bf16":
        total = total.astype(np.float32)
    return RVal(np.asarray(from_compute(total, out)), batched)


def _f16_acc_step(op: Operation, arch: str) -> int:
    """K per fp16-accumulating tensor-core step of ``op`` on ``arch`` (0: rounded once).

    The GPU accumulates in fp16 (``mma.sync ... .f16.f16.f16.f16``, ``wgmma
    ... .f16``) for 2-D fp16 dots with an fp16 accumulator whose shape fits
    the instructions (M a multiple of 16, N of 8, K of 16), on sm_80 and
    later, and for fp8 ones on ``wgmma`` (K steps of 32); elsewhere its FMA
    path adds in fp32 and rounds once.
    """
    ta, tb, tc = (_scalar_type(v.type) for v in op.operands)
    shape = op.results[0].shape
    if tc.name != "f16" or ta != tb or len(shape) != 2 or arch_family(arch) is None:
        return 0
    (m, n), k = shape, op.operands[0].shape[-1]
    if ta.name == "f16":
        step = 16
    elif ta.is_fp8() and _path(op, arch) == "wgmma":
        step = 32
    else:
        return 0
    return step if m % 16 == 0 and n % 8 == 0 and k % step == 0 else 0


def _path(op: Operation, arch: str) -> str:
    """The tensor-core path of a dot on ``arch``: sm_90's ``wgmma`` takes 2-D dots whose
    M is a multiple of 64 (a warpgroup's rows), ``mma.sync`` the others."""
    shape = op.results[0].shape
    if arch_family(arch) == "sm_90" and len(shape) == 2 and shape[0] % 64 == 0:
        return "wgmma"
    return "mma.sync"


#: The fp32 precisions that run on TF32 tensor cores ("ieee" is exact).
_TF32_DOTS = {"tf32": tf32_dot, "tf32x3": tf32x3_dot}
