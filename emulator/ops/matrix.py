"""Semantics of ``tt.dot``: a block matrix product, as tensor cores compute it.

fp32 inputs follow ``input_precision``: TF32 inputs as the tensor cores of
the modelled arch read them, and fp32 accumulation in steps of 8 values of K
(:mod:`minitriton.emulator.tf32`), or exact;
fp16, bf16 and integer dots are exact and rounded once.
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
    total = np.matmul(to_float64(a.data, ta), to_float64(b.data, tb)) + to_float64(acc.data, tc)
    if out.name == "bf16":
        total = total.astype(np.float32)
    return RVal(np.asarray(from_compute(total, out)), batched)


def _path(op: Operation, arch: str) -> str:
    """The tensor-core path of a dot on ``arch``: sm_90's ``wgmma`` takes 2-D dots whose
    M is a multiple of 64 (a warpgroup's rows), ``mma.sync`` the others."""
    shape = op.results[0].shape
    if arch_family(arch) == "sm_90" and len(shape) == 2 and shape[0] % 64 == 0:
        return "wgmma"
    return "mma.sync"


#: The fp32 precisions that run on TF32 tensor cores ("ieee" is exact).
_TF32_DOTS = {"tf32": tf32_dot, "tf32x3": tf32x3_dot}
