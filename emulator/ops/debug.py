"""Semantics of ``tt.print`` and ``tt.assert``.

``tt.print`` prints once per program (not once per GPU thread, which is
what confuses users of Triton, triton#1469), the whole block at once::

    pid (0, 0, 0) x: [0.0, 1.0, 2.0, 3.0]

Output of a batch is collected and printed in grid order. ``tt.assert``
is checked only when the launch has ``debug=True``; a failure is a located
:class:`EmulatorError` that shows the failing lanes and, when the condition
is a comparison, the values compared.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, SupportsInt

import numpy as np

from minitriton.emulator.errors import Side, assert_report, format_pid
from minitriton.emulator.interpreter import ProgramState
from minitriton.emulator.memory import RAW_ADDRESSES
from minitriton.emulator.registry import semantics
from minitriton.emulator.values import RVal, to_compute
from minitriton.ir.core import Operation, OpResult, Value
from minitriton.ir.ops import AssertOp, CmpOp, PrintOp
from minitriton.ir.types import ScalarType, element_type


def format_value(
    data: np.ndarray, value: Value, state: ProgramState, hex: bool, indent: int
) -> str:
    """One program's value as readable text (bf16 decoded, pointers as ``name+offsets``)."""
    elem = element_type(value.type)
    prefix = ""
    if isinstance(elem, ScalarType):
        data = to_compute(data, elem)
    else:
        rval = state.lookup(value)
        if rval.buffer == RAW_ADDRESSES:  # an integer cast to a pointer: its address
            hex = True
        else:
            prefix = f"{state.interp.memory[rval.buffer or 0].name}+"
    # str() of a NumPy scalar is its shortest round-trip text: 0.1, not 0.10000000149.
    # With hex=True floats print as C's %a (0x1.8p+0), as Triton 3.8 prints them.
    floats = data.dtype.kind == "f"
    text: Callable[[Any], str] = str
    if hex:
        text = hex_float_text if floats else (lambda v: hex_text(v, data.dtype))
    formatter = {"float_kind": hex_float_text if hex else str, "int": text}
    if np.ndim(data) == 0:
        return prefix + text(np.asarray(data)[()])
    return prefix + np.array2string(
        np.asarray(data),
        separator=", ",
        threshold=sys.maxsize,
        max_line_width=100,
        prefix=" " * (indent + len(prefix)),
        formatter=formatter,  # type: ignore[arg-type]
    )


def hex_float_text(v: Any) -> str:
    """A float as C's ``%a`` prints it: ``0x1.8p+0``, ``-0x0p+0``, ``inf``, ``nan``."""
    x = float(v)
    if not np.isfinite(x):
        return "nan" if np.isnan(x) else ("-inf" if x < 0 else "inf")
    mantissa, exponent = x.hex().split("p")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}p{int(exponent):+d}"


def hex_text(v: SupportsInt, dtype: np.dtype) -> str:
    """Two's complement hex of the value's width (``0xffffffff`` for int32 -1)."""
    bits = np.dtype(dtype).itemsize * 8
    return f"0x{int(v) & ((1 << bits) - 1):0{bits // 4}x}"


@semantics(PrintOp)
def _print(op: Operation, state: ProgramState, *values: RVal) -> None:
    """Print the operands once per program of the batch, in grid order."""
    prefix = str(op.attrs.get("prefix", ""))
    if prefix.strip() and not prefix.rstrip().endswith(":"):
        prefix = prefix.rstrip() + ": "  # as Triton: the label always ends with ": " (triton#2532)
    hex = bool(op.attrs.get("hex", False))
    for row in range(state.size):
        head = f"pid {format_pid(state.pid(row))} {prefix}"
        parts = [
            format_value(v.program(row), ir_value, state, hex, len(head))
            for v, ir_value in zip(values, op.operands)
        ]
        state.interp.emit_print(state.pid(row), head + " ".join(parts))


@semantics(AssertOp)
def _assert(op: Operation, state: ProgramState, cond: RVal) -> None:
    """In debug mode, fail with the first program (grid order) whose condition is false."""
    if not state.interp.debug or np.all(cond.data):
        return
    failed = ~np.asarray(cond.data, dtype=bool)
    row = 0
    if cond.batched:
        row = int(np.argmax(failed.reshape(failed.shape[0], -1).any(axis=1)))
        failed = failed[row]
    shape = op.operands[0].shape
    lanes = np.flatnonzero(failed)
    sides = []
    compare = op.operands[0]
    if isinstance(compare, OpResult) and isinstance(compare.owner, CmpOp):
        names = op.compared_names() if isinstance(op, AssertOp) else ["", ""]
        for side, operand, name in zip(("lhs", "rhs"), compare.owner.operands, names):
            sides.append(_operand_values(side, name, operand, state, row, lanes))
    message, details = assert_report(str(op.attrs.get("message") or ""), shape, lanes, sides)
    raise state.interp.error(op, state, message, details, row)


def _operand_values(
    side: str, name: str, operand: Value, state: ProgramState, row: int, lanes: np.ndarray
) -> Side:
    data = np.asarray(state.value_of(operand, row))
    picked = data.reshape(-1)[lanes[:3]] if data.ndim else data.reshape(1)
    items = [str(v.item()) for v in picked]
    return side, name, items, bool(data.ndim and len(lanes) > 3)
