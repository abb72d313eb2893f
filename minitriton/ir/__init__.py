"""The block-level SSA IR: types, ops, printer, parser and verifier."""

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
