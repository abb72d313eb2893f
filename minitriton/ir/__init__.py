"""The block-level SSA IR: types, ops, printer, parser and verifier.

The names below are imported on first use (PEP 562, see
:mod:`minitriton.lazy`): ``minitriton.ir.types``, which the launcher needs,
then loads without the op classes, the parser and the printer.
"""

from typing import TYPE_CHECKING

from minitriton.lazy import lazy_attributes

if TYPE_CHECKING:
    from minitriton.ir import ops
    from minitriton.ir.core import (
        OP_REGISTRY,
        Block,
        BlockArgument,
        Operation,
        OpResult,
        Region,
        Value,
        VerifyError,
    )
    from minitriton.ir.ops import FuncOp, Module
    from minitriton.ir.parser import parse_module
    from minitriton.ir.printer import print_module, print_op
    from minitriton.ir.types import BlockType, PointerType, ScalarType, Type, parse_type
    from minitriton.ir.verifier import verify_module

__all__ = [
    "OP_REGISTRY",
    "Block",
    "BlockArgument",
    "BlockType",
    "FuncOp",
    "Module",
    "OpResult",
    "Operation",
    "PointerType",
    "Region",
    "ScalarType",
    "Type",
    "Value",
    "VerifyError",
    "ops",
    "parse_module",
    "parse_type",
    "print_module",
    "print_op",
    "verify_module",
]

_CORE = "minitriton.ir.core"
_OPS = "minitriton.ir.ops"
_TYPES = "minitriton.ir.types"
_PRINTER = "minitriton.ir.printer"
__getattr__ = lazy_attributes(
    __name__,
    {
        "OP_REGISTRY": _CORE,
        "Block": _CORE,
        "BlockArgument": _CORE,
        "Operation": _CORE,
        "OpResult": _CORE,
        "Region": _CORE,
        "Value": _CORE,
        "VerifyError": _CORE,
        "ops": _OPS,
        "FuncOp": _OPS,
        "Module": _OPS,
        "parse_module": "minitriton.ir.parser",
        "print_module": _PRINTER,
        "print_op": _PRINTER,
        "BlockType": _TYPES,
        "PointerType": _TYPES,
        "ScalarType": _TYPES,
        "Type": _TYPES,
        "parse_type": _TYPES,
        "verify_module": "minitriton.ir.verifier",
    },
)
