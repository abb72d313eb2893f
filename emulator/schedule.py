"""Running a whole grid: batching, chunking and the serial fallback.

Programs run in grid order (axis 0 fastest). By default they run *batched*:
a chunk of programs executes each op once, as one NumPy operation over a
leading program axis. A chunk holds at most ``CHUNK_ELEMENTS`` elements per
batched value, which bounds memory for huge grids.

Batching reorders work between programs (op by op instead of program by
program). That is invisible unless programs communicate through memory, so
kernels that do are run **one program at a time**, each to completion:

* any ``tt.atomic_cas`` or ``tt.atomic_rmw`` of kind ``xchg`` (spin locks);
* any atomic inside an ``scf.while`` (waiting on other programs);
* any ``tt.atomic_poll`` (it waits for another program).

``serial=True`` forces that mode; ``serial=False`` batches even such kernels
(a spin lock may then never be released). When a batch cannot be merged
(programs of one batch picked pointers into different buffers), the launch
restores the buffers from a snapshot and reruns serially; the snapshot is
taken only for kernels with pointer-typed ``scf``/select results.

Limits of batching:

* Programs of one batch do not see each other's plain stores in sequential
  order (all programs run op 1, then op 2...). Kernels that pass data
  between programs through ordinary loads and stores are not detected:
  launch them with ``serial=True``. Within one store, the highest program id
  wins an address; atomics follow grid order exactly within one atomic op.
* Divergent control flow costs one pass per path (``scf.if``), per
  iteration up to the largest trip count (``scf.for``, ``scf.while``), on
  the sub-batch that takes it.
* An error reports the first failing program (grid order) of the first
  failing op; run serially to get the first failing program overall.
* Combiner regions (``tt.reduce``, ``tt.scan``) may read only their own
  arguments and values shared by the whole batch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

import numpy as np

from minitriton.emulator.budget import KernelInterrupt
from minitriton.emulator.cooperative import run_cooperative, waits
from minitriton.emulator.errors import EmulatorError
from minitriton.emulator.interpreter import Interpreter, Listener, NeedSerial
from minitriton.ir.core import Operation
from minitriton.ir.ops import (
    AtomicCASOp,
    AtomicPollOp,
    AtomicRMWOp,
    CastOp,
    ForOp,
    IfOp,
    Module,
    SelectOp,
    StoreOp,
    WhileOp,
)
from minitriton.ir.traits import UnknownEffects, WritesMemory
from minitriton.ir.types import BlockType, element_type

#: Most elements one batched value may hold (2^18: 1 MiB of fp32).
CHUNK_ELEMENTS = 1 << 18  # bigger chunks spill out of cache: 2^18 ran layer norm 1.8x faster

_MERGING_OPS = (IfOp, ForOp, WhileOp, SelectOp)


def launch(
    module: Module,
    grid: tuple[int, int, int],
    args: Sequence[Any],
    *,
    debug: bool = False,
    serial: bool | None = None,
    listeners: Sequence[Listener] = (),
) -> None:
    """Run the kernel of ``module`` on every program of ``grid``.

    ``args`` match the kernel's parameters one to one: NumPy arrays for
    pointers (written in place; bf16 as uint16 arrays), scalars otherwise.
    ``debug`` enables ``tt.assert``. ``serial`` forces (True) or forbids
    (False) running one program at a time; by default it is chosen from the
    kernel (see :func:`serial_reason`).
    """
    interp = Interpreter(module, args, grid, debug=debug, listeners=listeners)
    interp.free_dead_values = True  # nobody reads the values afterwards
    interp.lazy_loads = not listeners and _facts(module).store_last
    run_grid(interp, serial=serial)


def run_grid(interp: Interpreter, serial: bool | None = None) -> None:
    """Run every program of ``interp.grid``, batched or one at a time."""
    total = math.prod(interp.grid)
    if total == 0:
        return
    try:
        _run_grid(interp, total, serial)
    except KernelInterrupt:
        raise
    except KeyboardInterrupt:  # say where the kernel was, without our traceback
        raise interp.interrupted() from None
    # The last op's state (kept to say where a Ctrl-C landed) points back at the
    # interpreter: break that cycle, so the launch's objects go at once rather
    # than at Python's next garbage collection.
    interp.current = None


def _run_grid(interp: Interpreter, total: int, serial: bool | None) -> None:
    facts = _facts(interp.module)
    if serial is None:
        serial = facts.serial_reason is not None
    if serial:
        run_serial(interp, total)
        return
    saved = interp.memory.snapshot() if facts.may_need_serial else None
    interp.defer_prints = saved is not None  # a rerun must not print twice
    try:
        run_batched(interp, total)
    except EmulatorError:
        interp.flush_prints()  # output printed before the error helps find it
        raise
    except NeedSerial:
        if saved is None:
            raise EmulatorError(
                interp.kernel.loc, "internal emulator error: unmergeable batch"
            ) from None
        interp.memory.restore(saved)
        interp.prints.clear()
        interp.defer_prints = False
        interp.program_steps = 0  # the serial rerun counts its own steps
        run_serial(interp, total)
        return
    interp.defer_prints = False
    interp.flush_prints()


def run_batched(interp: Interpreter, total: int) -> None:
    """Run the programs in grid order, in chunks small enough that memory use stays bounded."""
    size = _chunk_programs(_facts(interp.module).largest_block)
    for start in range(0, total, size):
        interp.run_batch(program_ids(interp.grid, start, min(start + size, total)))


def run_serial(interp: Interpreter, total: int) -> None:
    """Run the programs one at a time, in grid order, each to completion unless it spins.

    A kernel that can spin-wait runs its programs cooperatively (see
    :mod:`minitriton.emulator.cooperative`), so a program waiting for a later
    one gives way to it.
    """
    pids = program_ids(interp.grid, 0, total)
    if waits(interp.module):
        run_cooperative(interp, pids)
        return
    for pid in pids:
        interp.run_batch(pid[None, :])


def program_ids(grid: tuple[int, int, int], start: int, stop: int) -> np.ndarray:
    """Program ids ``(n, 3)`` of linear ids ``start..stop-1`` (axis 0 fastest)."""
    linear = np.arange(start, stop, dtype=np.int64)
    gx, gy, _ = grid
    pids = np.zeros((linear.size, 3), dtype=np.int64)
    pids[:, 0] = linear % gx
    if linear.size and linear[-1] >= gx:  # a 1-D grid needs no more
        pids[:, 1] = (linear // gx) % gy
        pids[:, 2] = linear // (gx * gy)
    return pids


def _chunk_programs(largest_block: int) -> int:
    # Read CHUNK_ELEMENTS on every launch: tests shrink it to force chunking.
    return max(1, CHUNK_ELEMENTS // largest_block)


def _largest_block(ops: Sequence[Operation]) -> int:
    sizes = [1]
    for op in ops:
        sizes += [r.type.numel for r in op.results if isinstance(r.type, BlockType)]
    return max(sizes)


def serial_reason(module: Module) -> str | None:
    """Why the kernel must run one program at a time, or ``None``."""
    return _facts(module).serial_reason


def _serial_reason(ops: Sequence[Operation]) -> str | None:
    for op in ops:
        if isinstance(op, AtomicCASOp):
            return "tt.atomic_cas (spin locks need programs to run to completion)"
        if isinstance(op, AtomicRMWOp) and op.attrs.get("kind") == "xchg":
            return "tt.atomic_rmw xchg (spin locks need programs to run to completion)"
        if isinstance(op, (AtomicRMWOp, AtomicCASOp)) and _inside(op, WhileOp):
            return "an atomic inside scf.while (programs wait on each other)"
        if isinstance(op, AtomicPollOp):
            return "tt.atomic_poll (programs wait on each other)"
    return None


def _inside(op: Operation, cls: type[Operation]) -> bool:
    parent = op.parent_op
    while parent is not None:
        if isinstance(parent, cls):
            return True
        parent = parent.parent_op
    return False


def _may_need_serial(ops: Sequence[Operation]) -> bool:
    # Only ops that merge per-program pointer values can raise NeedSerial.
    # So can a cast of integers to pointers: programs may load addresses of different arrays.
    for op in ops:
        if isinstance(op, _MERGING_OPS) and any(element_type(r.type).is_ptr() for r in op.results):
            return True
        into_ptr = isinstance(op, CastOp) and element_type(op.results[0].type).is_ptr()
        if into_ptr and not element_type(op.operands[0].type).is_ptr():
            return True
    return False


def fails_before_writing(module: Module, grid: tuple[int, int, int]) -> bool:
    """True when a launch over ``grid`` cannot fail once it has written memory.

    That holds when the kernel's one write is a ``tt.store`` just before its
    ``tt.return``, and every program runs in one batch: the store checks all
    its lanes before it writes any, nothing runs after it, and its writes
    complete even through Ctrl-C. Such a launch needs no copy of its outputs
    to undo a failure (tutorial 01's vector add, and most elementwise kernels).
    """
    facts = _facts(module)
    if not facts.store_last or facts.serial_reason is not None or facts.may_need_serial:
        return False
    return math.prod(grid) <= _chunk_programs(facts.largest_block)


def _store_last(module: Module, ops: Sequence[Operation]) -> bool:
    body = module.kernel.body.block.ops
    if len(body) < 2 or not isinstance(body[-2], StoreOp):
        return False
    writers = [op for op in ops if op.has_trait(WritesMemory) or op.has_trait(UnknownEffects)]
    return writers == [body[-2]]


@dataclass(frozen=True)
class _KernelFacts:
    """What :func:`run_grid` needs to know about a module before running it."""

    largest_block: int
    serial_reason: str | None
    may_need_serial: bool
    store_last: bool


# One walk costs a few percent of a small launch, and a jitted kernel
# launches its compiled module (never changed after compilation) again and
# again, so the facts are found once per module object. A module edited in
# place after a launch (run_pipeline on it) must be cloned before the next
# launch. Weak keys: a module dropped by the jit cache is not kept alive here.
_FACTS: WeakKeyDictionary[Module, _KernelFacts] = WeakKeyDictionary()


def _facts(module: Module) -> _KernelFacts:
    facts = _FACTS.get(module)
    if facts is None:
        ops = list(module.walk())
        facts = _KernelFacts(
            _largest_block(ops), _serial_reason(ops), _may_need_serial(ops),
            _store_last(module, ops),
        )  # fmt: skip
        _FACTS[module] = facts
    return facts
