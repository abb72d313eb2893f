"""The IR interpreter: runs one program, or a batch of programs, op by op.

:class:`Interpreter` owns a launch (module, arguments, grid, memory).
:class:`ProgramState` is one scope of execution: the values computed so far
in one region, for one program or for a batch of ``size`` programs (row
``i`` of a batched value belongs to program ``pids[i]``). A region nested
in a divergent ``scf.if`` or loop runs in a child state over a subset of
its parent's rows; values of the parent are restricted to those rows the
first time the child reads them.

Listeners see every op: ``will_execute_op(op, state)`` before it runs and
``did_execute_op(op, state, results)`` after, which is what a stepping
debugger or a tracer needs. To run a single program op by op::

    interp = Interpreter(module, args, grid=(4, 1, 1), listeners=[MyTracer()])
    state = interp.run_program((2, 0, 0))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minitriton.diagnostics import Location
from minitriton.emulator import budget, speed
from minitriton.emulator.errors import EmulatorError, format_pid
from minitriton.emulator.liveness import dead_after
from minitriton.emulator.memory import RAW_ADDRESSES, Memory
from minitriton.emulator.registry import SEMANTICS
from minitriton.emulator.tf32 import DEFAULT_ARCH
from minitriton.emulator.values import RVal, scalar_constant, storage_dtype, to_compute
from minitriton.ir.core import Block, Operation, Region, Value
from minitriton.ir.ops import FuncOp, Module
from minitriton.ir.traits import ReadsMemory, WritesMemory
from minitriton.ir.types import PointerType, ScalarType, element_type


class NeedSerial(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised when a batch cannot be merged (e.g. programs pick pointers into
    different buffers); the launcher then reruns the grid one program at a time."""


class Listener:
    """Base class of execution listeners; override the hooks you need."""

    def will_execute_op(self, op: Operation, state: ProgramState) -> None:
        """Called before ``op`` runs in ``state``."""

    def did_execute_op(self, op: Operation, state: ProgramState, results: list[RVal]) -> None:
        """Called after ``op`` ran, with its runtime results."""


class ProgramState:
    """The values of one region scope, for a batch of ``size`` programs."""

    def __init__(
        self,
        interp: Interpreter,
        pids: np.ndarray | None,
        parent: ProgramState | None = None,
        rows: np.ndarray | None = None,
    ) -> None:
        self.interp = interp
        # (size, 3) int64: the program ids of the rows; None: the parent's at ``rows``,
        # picked when first read (a combiner's scope has a row per pair of elements,
        # and most combiners never read a program id)
        self._pids = pids
        self.parent = parent
        self.rows = rows  # rows of the parent this state covers (None: all)
        self.env: dict[Value, RVal] = {}  # Values hash by identity
        #: Values of this scope whose last use is the op now running (when values are freed).
        self.dying: tuple[Value, ...] = ()
        #: How many programs the rows stand for, where rows are not programs (a reduction's
        #: combiner runs one row per pair of elements); ``None``: one program per row.
        self.programs: int | None = parent.programs if parent is not None else None

    @property
    def pids(self) -> np.ndarray:
        """The program ids of the rows, ``(size, 3)`` int64."""
        if self._pids is None:
            assert self.parent is not None and self.rows is not None
            self._pids = self.parent.pids[self.rows]
        return self._pids

    @property
    def size(self) -> int:
        """Number of programs in this batch."""
        if self._pids is None:
            assert self.rows is not None
            return int(self.rows.shape[0])
        return int(self._pids.shape[0])

    def lookup(self, value: Value) -> RVal:
        """The runtime value of ``value`` (restricted to this state's rows)."""
        found = self.env.get(value)
        if found is not None:
            return found
        if self.parent is None:
            raise KeyError(value)
        found = self.parent.lookup(value)
        if self.rows is not None:
            found = found.take(self.rows)
        self.env[value] = found
        return found

    def bind(self, value: Value, rval: RVal) -> None:
        """Set the runtime value of ``value``."""
        self.env[value] = rval

    def child(self, rows: np.ndarray | None = None) -> ProgramState:
        """A nested scope over ``rows`` of this batch (all rows if ``None``)."""
        return ProgramState(self.interp, self.pids if rows is None else None, self, rows)

    def pid(self, row: int = 0) -> tuple[int, int, int]:
        """The program id of row ``row``."""
        x, y, z = (int(v) for v in self.pids[row])
        return (x, y, z)

    def value_of(self, value: Value, row: int = 0) -> np.ndarray:
        """The value as a program sees it (bf16 decoded to fp32), for debuggers."""
        rval = self.lookup(value)
        elem = element_type(value.type)
        data = rval.program(row)
        return to_compute(data, elem) if isinstance(elem, ScalarType) else data

    def snapshot(self, row: int = 0) -> dict[str, np.ndarray]:
        """Every named value visible here, as program ``row`` sees it."""
        out: dict[str, np.ndarray] = {}
        chain = []
        state: ProgramState | None = self
        while state is not None:
            chain.append(state)
            state = state.parent
        for scope in reversed(chain):
            for value in scope.env:
                if value.name_hint:
                    out[value.name_hint] = self.value_of(value, row)
        return out


class Interpreter:
    """Runs the kernel of ``module`` on NumPy arguments, for any set of programs."""

    def __init__(
        self,
        module: Module,
        args: Sequence[Any],
        grid: Sequence[int] = (1, 1, 1),
        *,
        debug: bool = False,
        listeners: Sequence[Listener] = (),
    ) -> None:
        self.module = module
        self.kernel: FuncOp = module.kernel
        #: The GPU arch modelled where it shows (how ``tl.dot`` reads fp32 as TF32).
        self.arch: str = getattr(module, "target", None) or DEFAULT_ARCH
        self.grid = _normalize_grid(grid)
        self.debug = debug
        self.listeners = list(listeners)
        self.memory = Memory()
        self.args = _bind_args(self.kernel, args, self.memory)
        self.prints: list[tuple[int, str]] = []
        self.defer_prints = False
        #: Per-op cache for ops whose value never changes (constants).
        self.cache: dict[Operation, RVal] = {}
        #: Drop each value after its last use (set by plain launches; see liveness.py).
        self.free_dead_values = False
        #: Loads may read their buffer when used rather than at once (see lanes.py): set
        #: only where no write can come between (the kernel's one write is its last op).
        self.lazy_loads = False
        #: The fast paths tried before each op's semantics (none in plain mode: see speed.py).
        self.fast_paths = speed.active()
        self._funcs = {f.sym_name: f for f in module.funcs}
        self.steps = 0  # ops executed (the time budget looks at the clock every few)
        self.program_steps = 0  # ops executed, times the programs each ran for
        self.max_steps = budget.max_steps()  # None: no step budget
        self.current: tuple[Operation, ProgramState] | None = None  # for Ctrl-C
        #: Whether an integer became a pointer no array holds (memory ops then resolve it).
        self.raw_pointers = False
        #: Set while programs run cooperatively (cooperative.py): lets the others run.
        self.yield_to_others: Callable[[], bool] | None = None
        # A plain launch that runs long says so on a terminal (tools with
        # listeners, such as the debugger, pause on purpose).
        self.notice = None if self.listeners else budget.long_run_notice(self.kernel.sym_name)

    # -- entry points -----------------------------------------------------
    def run_program(self, pid: Sequence[int]) -> ProgramState:
        """Run the single program ``pid`` to completion; returns its state."""
        pids = np.array([list(_normalize_grid(pid))], dtype=np.int64)
        return self.run_batch(pids)

    def run_batch(self, pids: np.ndarray) -> ProgramState:
        """Run the programs ``pids`` (``(n, 3)``, in order) together."""
        state = ProgramState(self, pids)
        for arg, rval in zip(self.kernel.body.args, self.args):
            state.bind(arg, rval)
        try:
            with np.errstate(all="ignore"):  # integers wrap silently, as on the GPU
                self.run_block(self.kernel.body.block, state)
        finally:
            if not self.defer_prints:
                self.flush_prints()
        return state

    def linear_pid(self, pid: Sequence[int]) -> int:
        """Grid order: axis 0 varies fastest."""
        gx, gy, _ = self.grid
        return int(pid[0]) + gx * (int(pid[1]) + gy * int(pid[2]))

    # -- execution ----------------------------------------------------------
    def run_block(self, block: Block, state: ProgramState) -> list[RVal]:
        """Execute ``block`` in ``state``; returns its terminator's operand values."""
        if self.free_dead_values and not self.listeners:
            return self._run_block_freeing(block, state)
        for op in block.ops:
            if op.is_terminator:
                return [state.lookup(v) for v in op.operands]
            self.execute_op(op, state)
        return []

    def _run_block_freeing(self, block: Block, state: ProgramState) -> list[RVal]:
        """:meth:`run_block`, dropping each value of the block after its last use."""
        env = state.env
        for op, dead in zip(block.ops, dead_after(block)):
            if op.is_terminator:
                state.dying = ()
                return [state.lookup(v) for v in op.operands]
            state.dying = dead
            self.execute_op(op, state)
            for value in dead:
                env.pop(value, None)
        state.dying = ()
        return []

    def run_region(self, region: Region, state: ProgramState, args: Sequence[RVal]) -> list[RVal]:
        """Bind ``args`` to the region's block arguments in ``state`` and run it."""
        for arg, rval in zip(region.args, args):
            state.bind(arg, rval)
        return self.run_block(region.block, state)

    def call(self, name: str, state: ProgramState, args: Sequence[RVal]) -> list[RVal]:
        """Run the helper function ``name`` for the programs of ``state``."""
        func = self._funcs[name]
        scope = ProgramState(self, state.pids)  # a function sees only its arguments
        scope.programs = state.programs
        return self.run_region(func.body, scope, args)

    def execute_op(self, op: Operation, state: ProgramState) -> list[RVal]:
        """Run one op: listeners, its fast path or else its semantics, result binding."""
        cls = type(op)
        fn = SEMANTICS.get(cls)
        if fn is None:
            raise self.error(op, state, f"the emulator cannot execute {op.name}")
        self.current = (op, state)
        self.steps += 1
        if self.steps % budget.CHECK_EVERY == 0 and (budget.has_budget() or self.notice):
            self._check_budget(op, state)
        if self.max_steps is not None:
            self._count_steps(op, state)
        if self.raw_pointers and _touches_memory(cls):
            self._resolve_raw_pointer(op, state)
        for listener in self.listeners:
            listener.will_execute_op(op, state)
        operands = [state.lookup(v) for v in op.operands]
        try:
            out = speed.DECLINED
            fast = self.fast_paths.get(cls)
            if fast is not None and fast[0] is fn:  # the semantics it stands in for
                out = fast[1](op, state, *operands)
            if out is speed.DECLINED:
                out = fn(op, state, *operands)
        except (EmulatorError, NeedSerial):
            raise
        except Exception as exc:  # never show users a traceback from our internals
            raise self.error(op, state, f"internal emulator error in {op.name}: {exc}") from exc
        results = _as_list(out)
        for value, rval in zip(op.results, results):
            state.bind(value, rval)
        for listener in self.listeners:
            listener.did_execute_op(op, state, results)
        return results

    def _resolve_raw_pointer(self, op: Operation, state: ProgramState) -> None:
        """Before a memory op: raw addresses in its pointer become offsets into their array.

        The resolved pointer is bound in ``state``, so listeners (debug checks,
        the tracer) and the op's semantics all see it (see ``memory.py``).
        """
        ptr = state.lookup(op.operands[0])
        if ptr.buffer != RAW_ADDRESSES:
            return
        from minitriton.emulator.ops.arith import resolve_addresses  # the ops import this module

        pointee = element_type(op.operands[0].type)
        assert isinstance(pointee, PointerType)
        index = op.mask_operand()
        mask = state.lookup(op.operands[index]) if index is not None else None
        state.bind(op.operands[0], resolve_addresses(op, state, ptr, pointee.pointee, mask))

    def give_way(self, op: Operation, state: ProgramState) -> bool:
        """Let the other programs run while ``state``'s program waits at ``op``.

        False when that cannot change memory: programs do not run cooperatively
        (one batch, or a debugger's own order), or no other program ran an op
        since this one last gave way. The budgets are checked first, as they
        would be if the waiting program ran ``op`` again.
        """
        if budget.has_budget() or self.notice:
            self._check_budget(op, state)
        if self.max_steps is not None:
            self._count_steps(op, state)
        return self.yield_to_others is not None and self.yield_to_others()

    def _check_budget(self, op: Operation, state: ProgramState) -> None:
        if self.notice is not None:
            self.notice.poll(op.loc, state.pid(0))
        seconds = budget.over_budget()
        if seconds is not None:
            raise self.error(
                op, state,
                f"kernel '{self.kernel.sym_name}' ran past its time budget of {seconds:g} s "
                "(an endless loop, or a lock that is never released?)",
            )  # fmt: skip

    def _count_steps(self, op: Operation, state: ProgramState) -> None:
        self.program_steps += state.size if state.programs is None else state.programs
        if self.max_steps is not None and self.program_steps > self.max_steps:
            raise self.error(
                op, state,
                f"kernel '{self.kernel.sym_name}' ran past its step budget of "
                f"{self.max_steps:,} steps (an endless loop, or a lock that is never released?)",
                ["a step is one op executed by one program; raise max_steps= (or "
                 f"{budget.STEPS_ENV}) if the kernel really needs more"],
            )  # fmt: skip

    def interrupted(self) -> budget.KernelInterrupt:
        """The :class:`KernelInterrupt` for Ctrl-C at the op being executed."""
        op, state = self.current if self.current is not None else (self.kernel, None)
        pid = state.pid(0) if state is not None else (0, 0, 0)
        return budget.KernelInterrupt(self.kernel.sym_name, op.loc, pid)

    # -- printing and errors ------------------------------------------------
    def emit_print(self, pid: tuple[int, int, int], text: str) -> None:
        """Queue one line of device output; lines come out in program order."""
        self.prints.append((self.linear_pid(pid), text))

    def flush_prints(self) -> None:
        """Print queued device output, program by program (stable within one)."""
        for _, text in sorted(self.prints, key=lambda item: item[0]):
            print(text)
        self.prints.clear()

    def error(
        self,
        op: Operation,
        state: ProgramState,
        message: str,
        details: Sequence[str] = (),
        row: int = 0,
        help: str | None = None,
    ) -> EmulatorError:
        """A located error at ``op`` in the program at ``row`` of ``state``."""
        pid = state.pid(row)
        text = f"{message} in program {format_pid(pid)}"
        return EmulatorError(op.loc, text, details, pid, help=help)


_TOUCHES_MEMORY: dict[type[Operation], bool] = {}


def _touches_memory(cls: type[Operation]) -> bool:
    """Loads, stores and atomics: their first operand is the pointer they use."""
    found = _TOUCHES_MEMORY.get(cls)
    if found is None:
        found = _TOUCHES_MEMORY[cls] = bool({ReadsMemory, WritesMemory} & cls.traits)
    return found


def _as_list(out: Any) -> list[RVal]:
    if out is None:
        return []
    if isinstance(out, RVal):
        return [out]
    return list(out)


def _normalize_grid(grid: Sequence[int] | int) -> tuple[int, int, int]:
    dims = [int(grid)] if isinstance(grid, (int, np.integer)) else [int(g) for g in grid]
    if len(dims) > 3 or any(d < 0 for d in dims):
        raise ValueError(f"grid must have 1 to 3 non-negative dimensions, got {grid!r}")
    dims += [1] * (3 - len(dims))
    return (dims[0], dims[1], dims[2])


# ---------------------------------------------------------------- arguments


def _bind_args(kernel: FuncOp, args: Sequence[Any], memory: Memory) -> list[RVal]:
    params = kernel.body.args
    if len(args) != len(params):
        msg = f"@{kernel.sym_name} takes {len(params)} arguments, got {len(args)}"
        raise EmulatorError(kernel.loc, msg)
    return [_bind_arg(kernel, p, a, memory) for p, a in zip(params, args)]


def _bind_arg(kernel: FuncOp, param: Value, arg: Any, memory: Memory) -> RVal:
    name = param.name_hint or f"argument {param.index}"  # type: ignore[attr-defined]
    t = param.type
    if isinstance(t, PointerType):
        return RVal(
            np.array(0, dtype=np.int64), False, _bind_array(kernel.loc, name, t, arg, memory)
        )
    if isinstance(arg, np.ndarray) and arg.ndim > 0:
        raise EmulatorError(kernel.loc, f"argument '{name}' expects a {t!r} scalar, got an array")
    assert isinstance(t, ScalarType)
    value = arg.item() if isinstance(arg, (np.generic, np.ndarray)) else arg
    return RVal(scalar_constant(value, t), False)


def _bind_array(loc: Location, name: str, t: PointerType, arg: Any, memory: Memory) -> int:
    want = t.pointee.numpy
    if not isinstance(arg, np.ndarray):
        got = type(arg).__name__
        msg = f"argument '{name}' expects a NumPy array of {t.pointee!r}, got {got}"
        raise EmulatorError(loc, msg)
    if arg.dtype != want:
        msg = f"argument '{name}' expects a NumPy array of {want} ({t.pointee!r}), got {arg.dtype}"
        raise EmulatorError(loc, msg)
    if not (arg.flags.c_contiguous or arg.flags.f_contiguous):
        msg = f"argument '{name}' is not contiguous: pass np.ascontiguousarray(...)"
        raise EmulatorError(loc, msg)
    return memory.add(name, arg, t.pointee)


def merge_rows(size: int, parts: Sequence[tuple[np.ndarray, RVal]], value: Value) -> RVal:
    """One batched value of ``size`` rows from values computed on disjoint row sets.

    Used where programs of a batch took different paths (divergent ``scf.if``,
    loops with per-program trip counts). Pointers into different buffers
    cannot share one value: that raises :class:`NeedSerial`.
    """
    first = parts[0][1]
    if not first.batched and all(p is first for _, p in parts):
        return first  # e.g. both branches yield the same outer value
    if len({p.buffer for _, p in parts}) > 1:
        raise NeedSerial
    out = np.empty((size, *value.shape), dtype=storage_dtype(value.type))
    for rows, part in parts:
        out[rows] = part.data
    return RVal(out, True, first.buffer)
