"""Cooperative scheduling: programs that wait for each other still finish.

A spin-wait on a flag that a *later* program sets (program N loops on
``tl.atomic_add(flag, 0)`` until program N+1 stores to it) never ends when
programs run one after another to completion. On a GPU both programs are
resident and it finishes. So when a kernel can spin, its programs run as
coroutines, one at a time (there is never more than one running, so memory
needs no locking), in grid order, and a program gives way to the next one
when it spins: when it runs the same atomic, or a load in the condition of
a ``scf.while``, inside a ``scf.while`` loop for the second time in a row.
The others run until they finish or spin in turn; then the first program
resumes and re-reads memory. A program that never spins runs to completion
without a switch, so a kernel whose locks a program takes and releases by
itself runs exactly as before.

``tl.atomic_poll`` waits inside one op: while the flag differs, the op calls
:meth:`Interpreter.give_way <minitriton.emulator.interpreter.Interpreter.give_way>`,
which hands the baton on. When no other program ran an op since the poller
last gave way, nobody can change the flag any more (the others have finished
or are polling too), and ``give_way`` says so: the poll then reports a
deadlock, or with a timeout returns False.

Each program is a thread that holds the one baton while it runs; a thread is
started only when the baton first reaches it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from minitriton.emulator.interpreter import Interpreter, Listener, ProgramState
from minitriton.ir.core import Operation
from minitriton.ir.ops import AtomicCASOp, AtomicPollOp, AtomicRMWOp, LoadOp, Module, WhileOp

#: Consecutive runs of one spin op after which a program gives way.
SPINS_BEFORE_YIELD = 2


def spin_ops(module: Module) -> set[int]:
    """Ids of the ops a program may spin on: atomics in a loop, loads in a loop condition."""
    found: set[int] = set()
    for op in module.walk():
        atomic = isinstance(op, (AtomicRMWOp, AtomicCASOp))
        if (atomic or isinstance(op, LoadOp)) and _in_while(op, condition_only=not atomic):
            found.add(id(op))
    return found


def waits(module: Module) -> bool:
    """Whether a program of the kernel may wait for another: a spin op or an ``atomic_poll``."""
    return bool(spin_ops(module)) or any(isinstance(op, AtomicPollOp) for op in module.walk())


def _in_while(op: Operation, condition_only: bool) -> bool:
    child, parent = op, op.parent_op
    while parent is not None:
        if isinstance(parent, WhileOp):
            if not condition_only:
                return True
            return _region_index(parent, child) == 0  # the "before" region: the condition
        child, parent = parent, parent.parent_op
    return False


def _region_index(op: Operation, inner: Operation) -> int:
    for i, region in enumerate(op.regions):
        if any(inner is o for o in region.block.ops):
            return i
    return -1


class _Abort(Exception):
    """Raised in waiting programs when another program failed."""


class _Scheduler(Listener):
    """Hands one baton round-robin to the programs of a grid (see the module doc)."""

    def __init__(self, interp: Interpreter, pids: np.ndarray, spins: set[int]) -> None:
        self.interp = interp
        self.pids = pids
        self.spins = spins
        self.cond = threading.Condition()
        self.current = 0
        self.done = [False] * len(pids)
        self.threads: dict[int, threading.Thread] = {}
        self.local = threading.local()
        self.error: BaseException | None = None
        #: Ops run by all programs together: a poller that gets the baton back with
        #: this unchanged knows that nobody can change its flag any more.
        self.ops_run = 0

    # -- the listener: count spins, give way ----------------------------------
    def did_execute_op(self, op: Operation, state: ProgramState, results: list) -> None:
        """After a spin op: give way if this program ran it twice in a row."""
        self.ops_run += 1
        if id(op) not in self.spins:
            return
        me = self.local.index
        count = self.local.counts.get(id(op), 0) + 1
        self.local.counts = {id(op): count}  # another op in between resets the count
        if count >= SPINS_BEFORE_YIELD:
            self._pass_baton(me)

    def give_way(self) -> bool:
        """Let the other programs run while this one waits; False if none changed anything."""
        me = self.local.index
        before = self.ops_run
        with self.cond:
            if self._next(me) in (None, me):
                return False
        self._pass_baton(me)
        return self.ops_run != before

    # -- the baton ---------------------------------------------------------------
    def run(self) -> None:
        """Run every program; re-raise the first program's error."""
        self.interp.listeners.append(self)
        self.interp.yield_to_others = self.give_way
        try:
            self._start(0)
            with self.cond:
                while not all(self.done) and self.error is None:
                    self.cond.wait()
        finally:
            self.interp.listeners.remove(self)
            self.interp.yield_to_others = None
            self._abort_all()
        if self.error is not None:
            raise self.error

    def _start(self, index: int) -> None:
        thread = threading.Thread(target=self._program, args=(index,), daemon=True)
        self.threads[index] = thread
        thread.start()

    def _program(self, index: int) -> None:
        self.local.index, self.local.counts = index, {}
        try:
            self._wait_for(index)
            self.interp.run_batch(self.pids[index][None, :])
        except _Abort:
            return
        except BaseException as e:  # noqa: BLE001 - handed to the launching thread
            with self.cond:
                self.error = self.error or e
                self.cond.notify_all()
            return
        with self.cond:
            self.done[index] = True
        self._pass_baton(index, finished=True)

    def _next(self, index: int) -> int | None:
        n = len(self.pids)
        for step in range(1, n + 1):
            other = (index + step) % n
            if not self.done[other]:
                return other
        return None

    def _pass_baton(self, index: int, finished: bool = False) -> None:
        with self.cond:
            nxt = self._next(index)
            if nxt is None:
                self.cond.notify_all()
                return
            self.current = nxt
            if nxt not in self.threads:
                self._start(nxt)
            self.cond.notify_all()
        if not finished:
            self._wait_for(index)

    def _wait_for(self, index: int) -> None:
        with self.cond:
            while self.current != index:
                if self.error is not None:
                    raise _Abort
                self.cond.wait()
            if self.error is not None:
                raise _Abort

    def _abort_all(self) -> None:
        with self.cond:
            if self.error is None and all(self.done):
                return
            self.error = self.error or RuntimeError("the grid stopped before every program ended")
            self.cond.notify_all()


def run_cooperative(interp: Interpreter, pids: np.ndarray | Sequence[Sequence[int]]) -> None:
    """Run the programs ``pids`` (``(n, 3)``, grid order) cooperatively."""
    spins = spin_ops(interp.module)
    _Scheduler(interp, np.asarray(pids), spins).run()
