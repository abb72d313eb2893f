"""The help line of an out-of-bounds access: the mask that would have prevented it.

An access ``tl.load(x_ptr + offs)`` that runs past the end of ``x_ptr``
gets ``help: mask=offs < n_elements``, worked out from the kernel:

* the offset's name is the variable the kernel assigned it to (the IR keeps
  it as the value's name hint), found only when the pointer is the
  parameter's own pointer plus that offset (through splats and broadcasts);
  anything else gets the generic ``offsets``;
* the bound is an integer parameter of the kernel that looks like one: its
  value at this launch is at most the array's length (so ``offs < bound``
  keeps every lane out of bounds off), and it is named like a bound (``n``,
  ``n_elements``, ``size``, ``numel``) or equals the array's length; the
  largest such value wins, the one that disables the fewest lanes. Without
  one, the generic ``N`` is named with the array's length;
* negative offsets ask for ``offs >= 0`` as well.

When the access had a mask already, the help says which enabled lane the
mask did not cover, since the mask is then the user's and only its bound
needs fixing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from minitriton.ir.core import BlockArgument, Operation, OpResult, Value
from minitriton.ir.ops import AddPtrOp, BroadcastOp, ExpandDimsOp, SplatOp
from minitriton.ir.types import ScalarType

#: Parameter names that read as a bound on offsets.
_BOUND_NAME = re.compile(r"^(n|n_.*|n[A-Z0-9].*|num_.*|.*size.*|.*numel.*|.*len.*)$")


def mask_help(
    op: Operation,
    params: Sequence[tuple[Value, object]],
    buf_name: str,
    size: int,
    offsets: np.ndarray,
    masked: bool,
    lane: str,
) -> str:
    """The help line for an access at ``op`` whose enabled ``offsets`` fell outside.

    ``params`` pairs the kernel's parameters with their values at this
    launch; ``lane`` names the first lane out of bounds.
    """
    name = offset_name(op.operands[0], buf_name) or "offsets"
    mask = suggested_mask(name, params, buf_name, size, offsets)
    if masked:
        first = int(offsets.reshape(-1)[0])
        return f"the mask did not cover lane {lane} (offset {first}); use {mask}"
    return mask


def suggested_mask(
    name: str, params: Sequence[tuple[Value, object]], buf_name: str, size: int,
    offsets: np.ndarray,
) -> str:  # fmt: skip
    """``mask=offs < n``, ``mask=offs >= 0`` or both, for the out-of-bounds ``offsets``."""
    below, above = bool((offsets < 0).any()), bool((offsets >= size).any())
    bound = bound_name(params, size) if above else None
    upper = f"{name} < {bound or 'N'}"
    if below and above:
        text = f"mask=({name} >= 0) & ({upper})"
    else:
        text = f"mask={name} >= 0" if below else f"mask={upper}"
    if above and bound is None:
        text += f", N at most {size} (the length of '{buf_name}')"
    return text


def bound_name(params: Sequence[tuple[Value, object]], size: int) -> str | None:
    """The integer parameter that reads as the array's bound, if one does (see the module)."""
    best: tuple[int, str] | None = None
    for param, value in params:
        hint = param.name_hint
        if hint is None or not isinstance(param.type, ScalarType) or not param.type.is_int():
            continue
        number = int(np.asarray(value).reshape(-1)[0]) if np.asarray(value).size else None
        if number is None or not 0 < number <= size:
            continue
        if number != size and not _BOUND_NAME.match(hint):
            continue
        if best is None or number > best[0]:
            best = (number, hint)
    return best[1] if best else None


def offset_name(ptr: Value, buf_name: str) -> str | None:
    """The name of the offset added to parameter ``buf_name``'s pointer, if the IR says."""
    ptr = _through_views(ptr)
    if not isinstance(ptr, OpResult) or not isinstance(ptr.owner, AddPtrOp):
        return None
    base, offset = ptr.owner.operands[:2]
    base = _through_views(base)
    if not isinstance(base, BlockArgument) or base.name_hint != buf_name:
        return None
    return _through_views(offset).name_hint or offset.name_hint


def _through_views(value: Value) -> Value:
    """The value under splats, broadcasts and expand_dims (which keep its name)."""
    while (
        value.name_hint is None
        and isinstance(value, OpResult)
        and isinstance(value.owner, (SplatOp, BroadcastOp, ExpandDimsOp))
    ):
        value = value.owner.operands[0]
    return value
