"""The help line of an out-of-bounds access: the mask that would have prevented it.

An access ``tl.load(x_ptr + offs)`` that runs past the end of ``x_ptr``
gets ``help: mask=offs < n_elements``, worked out from the kernel:

* the offset's name is the variable the kernel assigned it to (the IR keeps
  it as the value's name hint): the last offset added to the pointer
  (``cols`` in ``in_ptr + row * stride + cols``), found through splats and
  broadcasts; anything else gets the generic ``offsets`` (the offsets into
  the array);
* the bound is an integer parameter of the kernel that reads as one: at
  this launch its value is above 0 and at most every out-of-bounds value of
  the offset (so the mask turns all of them off), and it is named like a
  bound (``n``, ``n_elements``, ``n_cols``, ``size``, ``numel``...) and the
  offset has a name, or, for offsets into the array itself, equals the
  array's length. The largest
  such value wins, the one that turns off the fewest lanes. Without one,
  the generic ``N`` is left for the user to fill in;
* negative values ask for ``>= 0`` as well.

When the access had a mask already, the help says which enabled lane the
mask did not cover, and suggests a mask only for a named offset (an offset
of unknown origin under the user's own mask says nothing about what the mask
should be; the pointer may be the bug).

The GPU backend's debug mode gives the same help line
(:func:`help_line`) where its record tells enough: the record holds the
addresses of the lanes out of bounds, so the offsets into the array, and
none of the kernel's other values. An unnamed offset, and a named one added
to a parameter's pointer itself, get the emulator's words; a named part of
an offset (``cols`` in ``x_ptr + rows * N + cols``) gets no help line there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from minitriton.ir.core import BlockArgument, Operation, OpResult, Value
from minitriton.ir.ops import AddPtrOp, BroadcastOp, ExpandDimsOp, SplatOp
from minitriton.ir.types import ScalarType

#: Parameter names that read as a bound on offsets.
_BOUND_NAME = re.compile(r"^(n|n_.*|n[A-Z0-9].*|num_.*|.*size.*|.*numel.*|.*len.*)$", re.I)


class Offsets(NamedTuple):
    """What a help line knows of an access's offsets at the lanes that fell outside."""

    name: str  # the kernel's name for them, or the generic "offsets"
    values: np.ndarray  # their values at those lanes
    whole: bool  # they are the whole offset into the array (added to a parameter's pointer)
    derived: bool  # the name and values come from the kernel, not from the addresses alone


def mask_help(
    op: Operation, state: Any, row: int, buf_name: str, size: int, lanes: np.ndarray,
    offsets: np.ndarray, masked: bool,
) -> str:  # fmt: skip
    """The help line for an access at ``op`` whose enabled ``lanes`` fell outside.

    ``state`` is the program state (its values, at the batch's ``row``);
    ``offsets`` are the offsets into the array of those lanes.
    """
    found = Offsets("offsets", offsets, True, False)
    named = named_offset(op.operands[0])
    if named is not None:
        values = _lane_values(state, named[1], row, op.operands[0].shape, lanes)
        if values is not None:
            found = Offsets(named[0], values, named[2], True)
        elif named[2]:  # the whole offset into the array: its values are the offsets
            found = Offsets(named[0], offsets, True, True)
    where = f"lane {lane_text(lanes[0], op.operands[0].shape)} (offset {int(offsets[0])}"
    params = int_params(state.interp.kernel.body.args, [v.data for v in state.interp.args])
    return help_line(found, masked, where, buf_name, size, params)


def help_line(
    found: Offsets, masked: bool, where: str, buf_name: str, size: int,
    params: Sequence[tuple[str, int]],
) -> str:  # fmt: skip
    """The help line itself; the GPU's debug mode asks it too (``where``: the first lane's text).

    ``params`` are the kernel's named integer parameters and their values at
    this launch (:func:`int_params`); ``size`` is the array's length.
    """
    if masked and not found.derived:  # the mask is the user's, and nothing says what it should be
        return f"the mask did not cover {where}; '{buf_name}' has {size} elements)"
    bound = None
    if (found.values >= 0).any():
        length = size if found.whole else None
        bound = bound_name(params, found.values, length, found.derived)
    mask = _mask_text(found.name, found.values, bound, found.whole, buf_name, size)
    return f"the mask did not cover {where}); use {mask}" if masked else mask


def int_params(args: Sequence[Value], values: Sequence[object]) -> list[tuple[str, int]]:
    """The named integer parameters among a kernel's ``args``, with their ``values``."""
    out = []
    for param, value in zip(args, values):
        hint = param.name_hint
        if hint is None or not isinstance(param.type, ScalarType) or not param.type.is_int():
            continue
        data = np.asarray(value)
        out.append((hint, int(data.reshape(-1)[0]) if data.size else 0))
    return out


def _mask_text(
    name: str, values: np.ndarray, bound: str | None, whole: bool, buf_name: str, size: int
) -> str:
    """``mask=offs < n``, ``mask=offs >= 0`` or both."""
    below, above = bool((values < 0).any()), bool((values >= 0).any())
    upper = f"{name} < {bound or 'N'}"
    if below and above:
        text = f"mask=({name} >= 0) & ({upper})"
    else:
        text = f"mask={name} >= 0" if below else f"mask={upper}"
    if above and bound is None and whole:
        text += f", N at most {size} (the length of '{buf_name}')"
    return text


def lane_text(lane: int, shape: Sequence[int]) -> str:
    if len(shape) <= 1:
        return str(int(lane))
    return "(" + ", ".join(str(int(c)) for c in np.unravel_index(int(lane), tuple(shape))) + ")"


def bound_name(
    params: Sequence[tuple[str, int]], values: np.ndarray, length: int | None, named: bool
) -> str | None:
    """The integer parameter that reads as the bound of ``values`` (see the module), if any.

    ``params`` are the named integer parameters and their values
    (:func:`int_params`); ``length`` is the array's length when ``values``
    are offsets into it; a parameter's name counts only for a ``named``
    offset (offsets of an unknown expression are bounded by the array's
    length alone).
    """
    limit = int(values[values >= 0].min())
    best: tuple[int, str] | None = None
    for hint, number in params:
        if not 0 < number <= limit:
            continue
        if number != length and not (named and _BOUND_NAME.match(hint)):
            continue
        if best is None or number > best[0]:
            best = (number, hint)
    return best[1] if best else None


def named_offset(ptr: Value) -> tuple[str, Value, bool] | None:
    """The name and value of the last offset added to ``ptr``, if the IR names it.

    The flag says whether the offset is the whole offset into the array (it
    is added to a kernel parameter's pointer itself).
    """
    ptr = _through_views(ptr)
    if not isinstance(ptr, OpResult) or not isinstance(ptr.owner, AddPtrOp):
        return None
    base, offset = ptr.owner.operands[:2]
    named = offset if offset.name_hint else _through_views(offset)
    if named.name_hint is None:
        return None
    return named.name_hint, offset, isinstance(_through_views(base, True), BlockArgument)


def _lane_values(
    state: Any, value: Value, row: int, shape: Sequence[int], lanes: np.ndarray
) -> np.ndarray | None:
    """The values of ``value`` at ``lanes`` of the program at ``row``, if still known."""
    try:
        found = state.lookup(value)
    except KeyError:  # freed after its last use
        return None
    data = np.asarray(found.data)
    if found.batched:
        data = data[row]
    try:
        return np.broadcast_to(data, tuple(shape)).reshape(-1)[lanes].astype(np.int64)
    except ValueError:
        return None


def _through_views(value: Value, named_too: bool = False) -> Value:
    """The value under splats, broadcasts and expand_dims (unnamed ones, or ``named_too``).

    Also under the GPU backend's layout conversions, for its debug mode's
    reports: they move values between threads and change nothing else.
    """
    while (
        (value.name_hint is None or named_too)
        and isinstance(value, OpResult)
        and (
            isinstance(value.owner, (SplatOp, BroadcastOp, ExpandDimsOp))
            or value.owner.name == "ttg.convert_layout"
        )
    ):
        value = value.owner.operands[0]
    return value
