"""The kernels that a GPU target refuses, checked on the IR: Triton's rules for NVIDIA GPUs.

Triton refuses in its frontend, when a kernel is compiled for an NVIDIA GPU,
what the emulator (like Triton's interpreter) runs: fp8 formats of other
vendors, a ``tl.dot`` whose K is below the tensor cores' bound, and rounding
to f8e4nv before sm_89. :func:`reject_unsupported` gives each a located
error with what to write instead.
"""

from __future__ import annotations

from minitriton.backend.accelerate_matmul import arch_number
from minitriton.diagnostics import error
from minitriton.ir.core import Operation
from minitriton.ir.ops import CastOp, DotOp, Module
from minitriton.ir.types import BlockType, PointerType, ScalarType, element_type


def reject_unsupported(module: Module, arch: str) -> None:
    """What the GPU backend cannot run on ``arch``: a located error.

    A GPU compile checks this twice: on the IR as lowered, before the passes (Triton
    refuses these in its frontend, so a value that the passes would delete is
    refused too), and again before the backend builds the kernel.

    fp8 values are loaded, stored, converted from and multiplied (``tl.dot``)
    on every arch; rounding to f8e4nv uses ``cvt.rn.satfinite``, which sm_89
    brought (rounding to f8e5 has a software path before it, as in Triton, and
    rounding to fp8e4b15, which no PTX conversion knows, always takes one).
    """
    for op in module.walk():
        _reject_emulator_only_fp8(op)
        if isinstance(op, DotOp):
            _check_dot_k(op)
        if not isinstance(op, CastOp) or arch_number(arch) >= 89:
            continue
        elem = element_type(op.result.type)
        if isinstance(elem, ScalarType) and elem.is_fp8() and elem.name not in SOFT_FP8:
            raise error(
                op.loc,
                f"converting to {elem!r} on the GPU needs sm_89 or newer (this kernel is "
                f"compiled for {arch})",
                help="convert on the host, pass arch='sm_89' or newer, "
                "or run with backend='emulator'",
                needs_arch=89,
            )


#: fp8 formats of Triton's for AMD GPUs only: Triton refuses them on NVIDIA GPUs too.
EMULATOR_ONLY_FP8 = frozenset({"f8e4b8", "f8e5b16"})
#: fp8 formats that every arch can round to (in software where PTX has no conversion).
SOFT_FP8 = frozenset({"f8e5", "f8e4b15"})


#: The smallest K of a ``tl.dot`` on the GPU, by operand bit width: Triton's bounds for
#: NVIDIA GPUs, a tensor-core instruction's K (M and N may be as small as 1).
MIN_DOT_K = {8: 32, 16: 16, 32: 8, 64: 4}


def _check_dot_k(op: DotOp) -> None:
    """A located error for a dot whose K is below Triton's bound (the emulator runs any K)."""
    a_type, result = op.operands[0].type, op.results[0].type
    assert isinstance(a_type, BlockType) and isinstance(result, BlockType)
    m, k = a_type.shape[-2:]
    n = result.shape[-1]
    elem = a_type.element
    min_k = MIN_DOT_K.get(elem.bitwidth if isinstance(elem, ScalarType) else 16, 16)
    if k < min_k:
        raise error(
            op.loc,
            f"Input shapes should have M >= 1, N >= 1 and K >= {min_k} on the GPU; got "
            f"M={m}, N={n}, K={k}",
            help=f"make K (the shared dimension) {min_k} or more, padding with zeros; "
            "the emulator runs any K",
        )


def _reject_emulator_only_fp8(op: Operation) -> None:
    for value in [*op.operands, *op.results]:
        elem = element_type(value.type)
        if isinstance(elem, PointerType):
            elem = elem.pointee
        if isinstance(elem, ScalarType) and elem.name in EMULATOR_ONLY_FP8:
            raise error(
                op.loc,
                f"type {elem!r} not supported in this architecture: {elem!r} is not supported "
                "by the GPU backend (Triton has it only on AMD GPUs)",
                help="use tl.float8e4nv or tl.float8e5, or run with backend='emulator'",
            )
