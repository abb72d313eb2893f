"""Checks on what a launch is given, before anything runs.

``kernel[grid](*args, **options)`` hands MiniTriton Python values of any
kind. Each check here turns a value that cannot work into a
:class:`LaunchError` (a ``ValueError``) or :class:`LaunchTypeError` (a
``TypeError``) whose message names the kernel and the parameter, instead of
a bare error from NumPy or the emulator's internals, a silently changed
value, or wrong results:

* binding: a missing or extra argument is located at the user's
  ``kernel[grid](...)`` line and shows the kernel's signature;
* launch options: ``num_warps`` a power of two in 1..32, ``debug`` a bool;
* the grid: 1 to 3 non-negative ints within CUDA's limits (x below 2^31,
  y and z at most 65535);
* arguments: ints that fit in 64 bits; arrays with a dtype MiniTriton has,
  without negative strides, not ``np.matrix``; no Python lists where an
  array belongs;
* outputs: an array the kernel stores to (found in its IR) must be writable.

After an emulator launch, a strided view whose gaps the kernel wrote or read
(it indexed the view as contiguous memory) is warned about once.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from minitriton.diagnostics import Diagnostic, UserError, call_location, user_frame
from minitriton.frontend.source import F32_PRECISIONS
from minitriton.ir import ops
from minitriton.ir.core import Block, BlockArgument, OpResult, Value
from minitriton.ir.traits import UnknownEffects, WritesMemory
from minitriton.ir.types import element_type
from minitriton.signature import Param, dtype_to_type, is_pointer_arg

#: CUDA's largest grid: x below 2^31, y and z at most 65535.
MAX_GRID = (2**31 - 1, 65535, 65535)
NUM_WARPS = (1, 2, 4, 8, 16, 32)


class LaunchError(UserError, ValueError):
    """A launch that cannot go ahead; the message names the kernel and the parameter."""


class LaunchTypeError(LaunchError, TypeError):
    """A launch given a value of the wrong kind (a list for an array, a float grid)."""


class LaunchOverflowError(LaunchError, OverflowError):
    """An integer argument outside 64 bits (Triton raises ``OverflowError``)."""


class LaunchOptionError(LaunchError, AssertionError):
    """A launch option out of range (Triton asserts on ``num_warps``)."""


# ---------------------------------------------------------------- arguments bound


def argument_error(kernel: str, params: Sequence[Param], problem: str) -> LaunchTypeError:
    """A missing or extra launch argument, located at the user's ``kernel[grid](...)`` line.

    The location is the innermost frame outside MiniTriton (the launch
    itself, or the user's call into an autotuner); the help line shows the
    kernel's signature, which says what the launch should pass.
    """
    frame = user_frame()
    message = f"kernel '{kernel}': {problem}"
    if frame is None:
        return LaunchTypeError(f"{message}; the kernel is {signature_text(kernel, params)}")
    diagnostic = Diagnostic(call_location(frame), message, help=signature_text(kernel, params))
    return LaunchTypeError(diagnostic.render())


def signature_text(kernel: str, params: Sequence[Param]) -> str:
    """``add_kernel(x_ptr, n_elements, BLOCK_SIZE: tl.constexpr)``, defaults included."""
    parts = []
    for p in params:
        text = p.name + (": tl.constexpr" if p.is_constexpr else "")
        if p.has_default:
            text += f" = {p.default!r}" if p.is_constexpr else f"={p.default!r}"
        parts.append(text)
    return f"{kernel}({', '.join(parts)})"


# ---------------------------------------------------------------- options


def check_options(kernel: str, options: dict[str, Any]) -> None:
    """``num_warps``, ``num_stages``, ``num_ctas`` and ``debug`` of a launch."""
    warps = options.get("num_warps")
    if warps is not None and (type(warps) is not int or warps not in NUM_WARPS):
        raise LaunchOptionError(
            f"kernel '{kernel}': num_warps={warps!r}: must be a power of 2 in 1..32"
        )
    for name in ("num_stages", "num_ctas"):
        value = options.get(name)
        if value is not None and (type(value) is not int or value < 1):
            raise LaunchError(f"kernel '{kernel}': {name}={value!r}: expected a positive int")
    debug = options.get("debug")
    if debug is not None and not isinstance(debug, (bool, np.bool_)):
        raise LaunchTypeError(f"kernel '{kernel}': debug={debug!r}: expected True or False")
    precision = options.get("default_dot_input_precision")
    if precision is not None and precision not in F32_PRECISIONS:
        raise LaunchError(f"kernel '{kernel}': default_dot_input_precision={precision!r}: "
                          f"expected one of {', '.join(F32_PRECISIONS)}")  # fmt: skip


def num_warps_problem(value: int) -> str | None:
    """Why ``value`` is not a valid ``num_warps``, or None (for the CLI too)."""
    if value in NUM_WARPS:
        return None
    return f"num_warps must be a power of 2 in 1..32, got {value}"


def normalize_arch(arch: Any) -> Any:
    """``sm_90`` for Triton's spelling ``sm90`` (``arch=`` and ``TRITON_OVERRIDE_ARCH``)."""
    found = re.fullmatch(r"sm(\d+[af]?)", arch) if isinstance(arch, str) else None
    return f"sm_{found.group(1)}" if found else arch


def check_num_ctas(arch: str, num_ctas: int | None) -> None:
    """Triton's check: clusters of several CTAs need Hopper."""
    digits = re.match(r"sm_(\d+)", arch)
    if num_ctas is not None and num_ctas > 1 and digits and int(digits.group(1)) < 90:
        raise ValueError(f"num_ctas > 1 requires NVIDIA SM90+ (Hopper); the target is {arch}")


def arch_problem(arch: str) -> str | None:
    """Why ``arch`` is not an architecture the GPU backend targets, or None."""
    digits = arch[3:].rstrip("af") if arch.startswith("sm_") else ""
    if not digits.isdigit() or not arch[3:].startswith(digits):
        return f"expected an architecture such as sm_80 or sm_90, got {arch!r}"
    if not 75 <= int(digits) <= 121:
        return f"unsupported architecture {arch!r}: the GPU backend targets sm_75 to sm_121"
    return None


# ---------------------------------------------------------------- grid


def check_grid(kernel: str, grid: Any, meta: dict[str, Any]) -> tuple[int, int, int]:
    """The grid as 3 ints, evaluated (a callable takes the meta dict) and checked."""
    if grid is None:
        raise LaunchTypeError(
            f"kernel '{kernel}': the grid is missing: launch with {kernel}[grid](...)"
        )
    if callable(grid):
        grid = grid(meta)
    if isinstance(grid, (int, np.integer)) and not isinstance(grid, bool):
        grid = (grid,)
    if not isinstance(grid, (tuple, list)):
        raise LaunchTypeError(
            f"kernel '{kernel}': the grid must be a tuple of ints, got {_kind(grid)}"
        )
    if not 1 <= len(grid) <= 3:
        raise LaunchError(
            f"kernel '{kernel}': the grid must have 1 to 3 dimensions, got {len(grid)}"
        )
    for axis, dim in enumerate(grid):
        _check_grid_dim(kernel, axis, dim)
    dims = tuple(int(d) for d in grid) + (1,) * (3 - len(grid))
    return dims  # type: ignore[return-value]


def _check_grid_dim(kernel: str, axis: int, dim: Any) -> None:
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise LaunchTypeError(
            f"kernel '{kernel}': grid dimension {axis} must be an int, got {_kind(dim)}"
        )
    if dim < 0:
        raise LaunchError(f"kernel '{kernel}': grid dimension {axis} is negative ({dim})")
    if dim > MAX_GRID[axis]:
        raise LaunchError(
            f"kernel '{kernel}': grid dimension {axis} is {dim}, "
            f"more than CUDA's limit of {MAX_GRID[axis]}"
        )


# ---------------------------------------------------------------- arguments


def check_arguments(kernel: str, params: Sequence[Param], bound: dict[str, Any]) -> None:
    """Every non-constexpr argument of a launch (see the module docstring)."""
    for p in params:
        if not p.is_constexpr:
            check_argument(kernel, p.name, bound[p.name])


def check_argument(kernel: str, name: str, value: Any) -> None:
    """One argument: ints within 64 bits, arrays MiniTriton can pass, no lists."""
    where = f"kernel '{kernel}': argument '{name}'"
    if isinstance(value, list):
        raise LaunchTypeError(
            f"{where} is a Python list; pass a NumPy array (np.asarray(...)) or a tensor"
        )
    if isinstance(value, int) and not isinstance(value, bool):
        if not -(2**63) <= value < 2**64:
            raise LaunchOverflowError(
                f"{where}: the integer {_int_text(value)} does not fit in 64 bits"
            )
        return
    if is_pointer_arg(value):
        _check_array(where, value)


#: torch's tensors without data, which torch.compile and torch.export trace with.
_TRACING_TENSORS = ("FakeTensor", "FunctionalTensor")


def _check_array(where: str, value: Any) -> None:
    if type(value).__name__ in _TRACING_TENSORS:
        raise LaunchTypeError(
            f"{where} is a {type(value).__name__}: torch.compile or torch.export is tracing "
            "the launch, and such a tensor holds no data; wrap the function that launches "
            "the kernel with minitriton.torch_ops.custom_op (its fake implementation "
            "launches nothing)"
        )
    if isinstance(value, np.matrix):
        raise LaunchTypeError(f"{where} is an np.matrix; pass np.asarray(m), a plain array")
    try:
        dtype_to_type(value.dtype)
    except ValueError:
        raise LaunchTypeError(
            f"{where} has dtype {value.dtype}, which has no MiniTriton type "
            "(bool, int8..int64, uint8..uint64, float16, bfloat16, float32, float64)"
        ) from None
    strides = getattr(value, "strides", None)
    if callable(strides):  # torch: strides in elements, by a method
        strides = strides()
    if strides is not None and any(s < 0 for s in strides):
        raise LaunchError(f"{where} has negative strides; pass a copy (np.ascontiguousarray)")


def check_outputs(kernel: str, compiled: Any, bound: dict[str, Any]) -> None:
    """A read-only array that the kernel stores to is rejected before the launch."""
    read_only = [n for n, v in bound.items() if isinstance(v, np.ndarray) and not v.flags.writeable]
    if not read_only:
        return
    written = written_by(compiled)
    for name in read_only:
        if name in written:
            raise LaunchError(
                f"kernel '{kernel}': argument '{name}' is a read-only array, "
                "and the kernel stores to it; "
                "pass a writable array (arr.copy())"
            )


# ---------------------------------------------------------------- a failed launch loses nothing

Saved = list[tuple[str, np.ndarray, np.ndarray]]  # (parameter, array, copy before the launch)


def save_outputs(
    compiled: Any, names: Sequence[str], values: Sequence[Any], only: Sequence[str] | None = None
) -> Saved:
    """Copies of the arrays (among ``values``, named ``names``) the kernel may write.

    The emulator runs on the user's own arrays, so that aliased arguments
    stay aliased; when the launch fails, :func:`restore_outputs` puts every
    array back as it was before the launch. ``only`` limits the copies to
    those parameters: for a launch that cannot fail once it has written
    (:func:`minitriton.emulator.schedule.fails_before_writing`), the strided
    views, which :func:`warn_stores_outside_views` compares afterwards.
    """
    if only is not None and not only:
        return []  # nothing to copy: no need to work out what the kernel writes
    written = written_by(compiled)
    if only is not None:
        written = written & set(only)
    return [(n, v, v.copy()) for n, v in zip(names, values)
            if n in written and isinstance(v, np.ndarray) and v.size]  # fmt: skip


def strided_view(value: Any) -> bool:
    """True for a NumPy array that is not C-contiguous (a strided view of its memory)."""
    return isinstance(value, np.ndarray) and not value.flags.c_contiguous


def restore_outputs(saved: Saved) -> None:
    """Undo a failed launch's stores (see :func:`save_outputs`)."""
    for _, array, copy in saved:
        np.copyto(array, copy)


#: (kernel, parameter) pairs already warned about.
_WARNED_VIEWS: set[tuple[str, str]] = set()


def warn_stores_outside_views(kernel: str, given: dict[str, Any], saved: Saved) -> None:
    """Warn once when a launch changed memory between the elements of a strided view.

    As in Triton, a pointer argument is raw memory: the kernel indexes it
    with its own strides, so that stores may land between the elements of a
    non-contiguous view (``x[:, ::2]``), which is rarely what was meant.
    """
    for name, span, before in saved:
        view = given.get(name)
        layout = strided_layout(view) if isinstance(view, np.ndarray) else None
        if layout is None or (kernel, name) in _WARNED_VIEWS:
            continue
        bits = f"u{span.itemsize}"
        size = min(span.size, _view_span(layout))
        changed = np.ascontiguousarray(span[:size]).view(bits) != before[:size].view(bits)
        if (changed & ~_view_elements(size, layout)).any():
            _WARNED_VIEWS.add((kernel, name))
            warnings.warn(
                f"kernel '{kernel}': stores through argument '{name}' changed memory between the "
                "elements of the strided view it was given (a pointer is raw memory, as in "
                "Triton); pass a contiguous array, or index with the view's strides",
                RuntimeWarning,
                stacklevel=5,  # the kernel[grid](...) call
            )


def strided_layout(value: Any) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The shape and element strides of a non-contiguous NumPy array or torch tensor, else None."""
    if isinstance(value, np.ndarray):
        if value.flags.c_contiguous or not value.itemsize:
            return None
        return value.shape, tuple(s // value.itemsize for s in value.strides)
    stride, contiguous = getattr(value, "stride", None), getattr(value, "is_contiguous", None)
    if not callable(stride) or not callable(contiguous) or contiguous():
        return None
    return tuple(value.shape), tuple(stride())


def _view_span(layout: tuple[tuple[int, ...], tuple[int, ...]]) -> int:
    """How many elements of memory a view spans, its first through its last.

    A torch tensor's argument reaches to its storage's end
    (:func:`minitriton.torch_interop.storage_tail`); only the span has gaps
    to warn about.
    """
    return 1 + sum((n - 1) * s for n, s in zip(*layout))


def _view_elements(size: int, layout: tuple[tuple[int, ...], tuple[int, ...]]) -> np.ndarray:
    """Which of ``size`` elements of memory (first through last) a view with ``layout`` holds."""
    inside = np.zeros(size, dtype=bool)
    np.lib.stride_tricks.as_strided(inside, shape=layout[0], strides=layout[1])[...] = True
    return inside


#: (kernel, parameter) pairs already warned about for their loads.
_WARNED_LOADS: set[tuple[str, str]] = set()


def warn_loads_outside_views(
    kernel: str, given: dict[str, Any], reads: dict[str, np.ndarray | None]
) -> None:
    """Warn once when a launch read memory between the elements of a strided view.

    ``reads`` marks the elements of each strided argument's memory (from its
    first element on) that the kernel's loads read; those between its first
    and its last element count
    (:func:`minitriton.emulator.memory.watching_reads`). A kernel that
    indexes a non-contiguous view (``x[:, ::2]``, a transposed slice) as
    contiguous memory reads the gaps between its elements: values that are
    not the view's, rarely what was meant. A view whose elements fill its
    memory (a transpose) has no gaps, and a wrong order of reads there goes
    unnoticed.
    """
    for name, read in reads.items():
        layout = strided_layout(given.get(name))
        if read is None or layout is None or (kernel, name) in _WARNED_LOADS:
            continue
        size = min(read.size, _view_span(layout))
        if (read[:size] & ~_view_elements(size, layout)).any():
            _WARNED_LOADS.add((kernel, name))
            warnings.warn(
                f"kernel '{kernel}': loads through argument '{name}' read memory between the "
                "elements of the strided view it was given (a pointer is raw memory, as in "
                "Triton); pass a contiguous array, or index with the view's strides",
                RuntimeWarning,
                stacklevel=5,  # the kernel[grid](...) call
            )


# ---------------------------------------------------------------- what a kernel writes


def written_by(compiled: Any) -> set[str]:
    """:func:`written_arguments` of a compiled kernel, worked out once."""
    written = getattr(compiled, "_written_arguments", None)
    if written is None:
        written = written_arguments(compiled.module)
        compiled._written_arguments = written
    return written


def written_arguments(module: Any) -> set[str]:
    """Names of the kernel's pointer arguments that a store or atomic may write through.

    Follows every pointer-typed operand back to the kernel's arguments,
    through ``scf.for``/``scf.if`` results and loop-carried values. Where it
    cannot tell (a ``while`` loop, a call), every pointer argument counts.
    """
    kernel = module.kernel
    args = kernel.body.args
    owners = {id(a): blk for op in kernel.walk() for r in op.regions for blk in [r.block]
              for a in blk.args}  # fmt: skip
    tracer = _Tracer({id(a): a.name_hint or "" for a in args}, owners)
    for op in kernel.walk():
        if op.has_trait(WritesMemory):
            tracer.trace(op.operands[0])
        elif op.has_trait(UnknownEffects):  # a call: its callee may store anything
            for v in op.operands:
                tracer.trace(v)
    if tracer.unknown:
        return {a.name_hint or "" for a in args if element_type(a.type).is_ptr()}
    return tracer.found


class _Tracer:
    """Walks pointer values back to the kernel arguments they come from."""

    def __init__(self, args: dict[int, str], owners: dict[int, Block]) -> None:
        self.args = args
        self.owners = owners
        self.found: set[str] = set()
        self.unknown = False
        self.seen: set[int] = set()

    def trace(self, v: Value) -> None:
        """Record the arguments ``v`` may point into."""
        if id(v) in self.seen or not element_type(v.type).is_ptr():
            return
        self.seen.add(id(v))
        if id(v) in self.args:
            self.found.add(self.args[id(v)])
        elif isinstance(v, BlockArgument):
            self._block_argument(v)
        elif isinstance(v, OpResult):
            self._result(v)

    def _result(self, v: OpResult) -> None:
        op = v.owner
        if isinstance(op, (ops.ForOp, ops.IfOp)):
            self._yields(op, v.index)
            if isinstance(op, ops.ForOp):
                self.trace(op.operands[3 + v.index])
            return
        if op.regions:
            self.unknown = True
            return
        for operand in op.operands:
            self.trace(operand)

    def _block_argument(self, v: BlockArgument) -> None:
        block = self.owners.get(id(v))
        op = block.parent if block is not None else None
        if not isinstance(op, ops.ForOp) or v.index == 0:
            self.unknown = True
            return
        self.trace(op.operands[2 + v.index])  # the init (operands: lb, ub, step, inits)
        self._yields(op, v.index - 1)

    def _yields(self, op: Any, index: int) -> None:
        for region in op.regions:
            last = region.block.terminator
            if last is not None and index < len(last.operands):
                self.trace(last.operands[index])


# ---------------------------------------------------------------- text


def _kind(value: Any) -> str:
    if isinstance(value, (int, float, str)) and len(repr(value)) < 40:
        return f"{type(value).__name__} {value!r}"
    return f"a value of type '{type(value).__name__}'"


def _int_text(value: int) -> str:
    text = str(value)
    return text if len(text) <= 30 else f"of {len(text.lstrip('-'))} digits"


# ---------------------------------------------------------------- bf16 data in uint16 arrays


class _BF16Dtype:
    """The ``dtype`` a :class:`BF16View` reports: its name is what specialization reads."""

    name = "bfloat16"
    itemsize = 2

    def __str__(self) -> str:
        return "bfloat16"


class BF16View:
    """A ``uint16`` array whose elements are bf16 values (the top 16 bits of fp32).

    NumPy has no bf16 dtype, so MiniTriton keeps bf16 data in ``uint16``
    arrays; passed as they are, such arrays are ``*u16`` pointers. Wrap one
    with :func:`bfloat16_view` to pass it as a ``*bf16`` pointer: the kernel
    reads and writes the array's own memory.
    """

    dtype = _BF16Dtype()

    def __init__(self, bits: np.ndarray) -> None:
        if not isinstance(bits, np.ndarray) or bits.dtype != np.uint16:
            got = getattr(bits, "dtype", type(bits).__name__)
            raise LaunchTypeError(f"bfloat16_view() takes a uint16 NumPy array, got {got}")
        self.bits = bits

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape."""
        return self.bits.shape

    @property
    def strides(self) -> tuple[int, ...]:
        """The array's strides in bytes."""
        return self.bits.strides

    def data_ptr(self) -> int:
        """The address of the first element."""
        return int(self.bits.__array_interface__["data"][0])

    def __repr__(self) -> str:
        return f"bfloat16_view(shape={self.shape})"


def bfloat16_view(bits: np.ndarray) -> BF16View:
    """Pass the ``uint16`` array ``bits`` to a kernel as bf16 data (a ``*bf16`` pointer)."""
    return BF16View(bits)
