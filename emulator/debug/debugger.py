"""A source-level debugger for kernels, on the emulator.

It stops a launch at the first line of one program and lets you step
through the kernel line by line, print any kernel expression, set
breakpoints with conditions, step *back*, and switch to another program::

    dbg = Debugger(lambda: add_kernel[(4,)](x, y, out, n, BLOCK_SIZE=64), pid=2)
    dbg.next(); dbg.next()
    dbg.print("offsets[:8]")          # a DebugValue: shows readably in Jupyter
    print(dbg.command("locals"))      # any command of the CLI, as text
    dbg.cont()

``minitriton debug FILE.py`` runs a script and reads the same commands
(pdb's names: ``s n c b p l w q``, plus ``locals``, ``ir``, ``pid``,
``back``, ``finish``) from the terminal or from piped stdin.

How it works. The launch runs in its own thread, on the IR *before* the
passes (every variable still exists, lines stay in order). Programs before
the chosen one in grid order run first, so memory is as the chosen program
would see it; the chosen program then runs op by op, and a listener
(:class:`Stepper`, with the interpreter's ``will_execute_op`` hook) pauses
the thread whenever a new source line starts and the controller (this
class) wants it to stop. Source variables are the IR values named after
them (the frontend's value name hints). Memory is snapshotted before the
program runs, so ``back`` restores it and replays the program to the
previous stop (the emulator is deterministic); ``pid`` restores the launch's
starting memory and runs the programs before the new one.
"""

from __future__ import annotations

import contextlib
import html
import linecache
import os
import queue
import re
import sys
import textwrap
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from minitriton.diagnostics import Location, UserError, trimmed
from minitriton.emulator.debug.debug_expr import ExprError, Pointer, Scope, check_syntax, evaluate
from minitriton.emulator.debug.tools import Launch, Tool, using
from minitriton.emulator.errors import EmulatorError, format_pid
from minitriton.emulator.interpreter import Interpreter, Listener, ProgramState
from minitriton.emulator.schedule import program_ids
from minitriton.emulator.values import RVal
from minitriton.ir.core import Operation, Value
from minitriton.ir.ops import CallOp, Module, PrintOp, ReduceOp, ScanOp, SortOp
from minitriton.ir.printer import Printer
from minitriton.ir.traits import LoopLike
from minitriton.ir.types import PointerType, element_type

Pid = tuple[int, int, int]
_COMBINERS = (ReduceOp, ScanOp, SortOp)


class Output(str):
    """Text the debugger printed; shows as plain text in a REPL or notebook."""

    def __repr__(self) -> str:
        return str(self)


class DebuggerQuit(BaseException):  # noqa: N818 - like bdb.BdbQuit
    """Raised in the launching code when the user quits the debugger."""


# ---------------------------------------------------------------- values for display


@dataclass
class DebugValue:
    """A value shown by the debugger: a NumPy array plus its kernel type.

    ``repr()`` gives the text the CLI prints; in Jupyter ``_repr_html_``
    shows a small table. ``.value`` is the NumPy data (pointers: offsets).
    """

    value: Any
    type: str = ""
    buffer: str | None = None  # for pointers: the parameter they point into
    name: str = ""

    @property
    def shape(self) -> tuple[int, ...]:
        """The block's shape (``()`` for a scalar)."""
        return tuple(np.shape(self.value))

    def __repr__(self) -> str:
        if not isinstance(self.value, np.ndarray | np.generic):
            return repr(self.value)
        data = np.asarray(self.value)
        if self.buffer is not None:
            return f"{self.buffer} + {_array_text(data)}"
        if data.ndim == 0:
            return str(data[()])  # NumPy's shortest text: 6.6425333, not 6.642533302307129
        return f"{self.type} {_array_text(data, prefix=len(self.type) + 1)}"

    def preview(self, width: int = 60) -> str:
        """One line: the first and last elements, and for masks how many are set."""
        data = np.asarray(self.value)
        if data.ndim == 0 or not isinstance(self.value, np.ndarray | np.generic):
            return repr(self)
        text = np.array2string(data.reshape(-1), threshold=6, edgeitems=3, separator=", ",
                               max_line_width=10**6)  # fmt: skip
        if self.buffer is not None:
            text = f"{self.buffer} + {text}"
        if data.dtype == np.bool_:
            text += f"  ({int(data.sum())} of {data.size} true)"
        return text if len(text) <= width + 30 else text[: width + 27] + "..."

    def _repr_html_(self) -> str:
        data = np.asarray(self.value)
        if data.ndim == 0 or data.ndim > 2 or data.size > 4096:
            return f"<pre>{html.escape(repr(self))}</pre>"
        # 1-D blocks fold into rows of 16; each row is labelled with its first index.
        width = max(min(16, data.size) if data.ndim == 1 else data.shape[1], 1)
        flat = [_cell(v) for v in data.reshape(-1)]
        body = "".join(
            f"<tr><th>{start if data.ndim == 1 else start // width}</th>"
            + "".join(f"<td>{html.escape(v)}</td>" for v in flat[start : start + width])
            + "</tr>"
            for start in range(0, len(flat), width)
        )
        title = html.escape(f"{self.name} : {self.type}" if self.name else self.type)
        if self.buffer is not None:
            title += html.escape(f" (offsets into {self.buffer})")
        style = "font-family:monospace;text-align:right"
        return f"<div><b>{title}</b><table style='{style}'>{body}</table></div>"


def _cell(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float | np.floating) else str(v)


def _array_text(data: np.ndarray, prefix: int = 0) -> str:
    return np.array2string(data, separator=", ", threshold=256, edgeitems=8, max_line_width=88,
                           prefix=" " * prefix)  # fmt: skip


def _type_text(value: Value, data: np.ndarray) -> str:
    elem = element_type(value.type)
    name = f"ptr<{elem.pointee!r}>" if isinstance(elem, PointerType) else repr(elem)
    shape = value.shape
    return f"{name}[{', '.join(str(d) for d in shape)}]" if shape else name


def as_debug_value(value: Any, name: str = "") -> DebugValue:
    """Wrap an expression result for display."""
    if isinstance(value, DebugValue):
        return value
    if isinstance(value, Pointer):
        return DebugValue(value.offsets, f"ptr{list(value.shape)}", value.name, name)
    if isinstance(value, np.ndarray | np.generic):
        data = np.asarray(value)
        dtype = {"bool": "int1", "float32": "fp32", "float16": "fp16", "float64": "fp64"}.get(
            data.dtype.name, data.dtype.name
        )
        shape = f"[{', '.join(str(d) for d in data.shape)}]" if data.ndim else ""
        return DebugValue(value, dtype + shape, None, name)
    return DebugValue(value, type(value).__name__, None, name)


# ---------------------------------------------------------------- where the program is


@dataclass
class Frame:
    """One function on the kernel's call stack."""

    func: str  # the IR function (a helper's name carries its specialization)
    name: str = ""  # the Python function's name
    line: int | None = None  # the source line running now
    loc: Location | None = None  # location of the op about to run
    state: ProgramState | None = None  # the scope that op runs in


@dataclass
class Stop:
    """An event from the launch thread: a pause, an error, or the end."""

    kind: str  # "line", "return", "finished", "error", "done"
    pid: Pid | None = None
    op: Operation | None = None
    frames: list[Frame] = field(default_factory=list)
    event: int = -1  # number of the line event in this program run
    reason: str = ""  # "breakpoint 1", ...
    error: BaseException | None = None
    output: list[str] = field(default_factory=list)  # device prints since the last event
    returned: list[Any] = field(default_factory=list)  # a helper's return values

    @property
    def loc(self) -> Location | None:
        """Where the program is."""
        return self.frames[-1].loc if self.frames else None


@dataclass
class Breakpoint:
    """``break LINE [, COND]``: stop before ``file:line`` when ``cond`` holds."""

    number: int
    file: str
    line: int
    cond: str | None = None
    hits: int = 0


# Commands from the controller to the launch thread.
@dataclass
class _Resume:
    mode: str  # "step", "next", "until", "continue", "finish", "finish all"
    depth: int = 0
    line: int = 0  # until: stop at a line >= this one


@dataclass
class _Restart:
    index: int  # grid-order index of the program to debug
    replay_to: int = 0  # line event to stop at


class _Quit:
    pass


class _RestartSignal(BaseException):  # noqa: N818 - unwinds the interpreter, not an error
    def __init__(self, cmd: _Restart) -> None:
        self.cmd = cmd


class _Channel:
    """Two queues: events from the launch thread, commands from the controller."""

    def __init__(self) -> None:
        self.events: queue.Queue[Stop] = queue.Queue()
        self.commands: queue.Queue[Any] = queue.Queue()

    def pause(self, stop: Stop) -> Any:
        """Launch thread: report ``stop`` and wait for a command."""
        self.events.put(stop)
        return self.commands.get()

    def resume(self, command: Any) -> Stop:
        """Controller: send ``command`` and wait for the next event."""
        self.commands.put(command)
        return self.events.get()


# ---------------------------------------------------------------- the launch thread


class Stepper(Listener):
    """Pauses the launch thread at source lines; runs in the launch thread."""

    def __init__(self, session: DebugSession, module: Module) -> None:
        self.session = session
        self.active = False
        self.mode = "step"
        self.depth = 0
        self.until = 0  # 'until': the line to reach
        self.replay_to = -1
        self.frames: list[Frame] = []
        self.events = 0
        self.pid: Pid = (0, 0, 0)
        self.state: ProgramState | None = None
        self.silent = False  # replaying: device output was shown already
        self.combining = 0  # inside a reduce/scan/sort combiner: never stop there
        self._names = {f.sym_name: source_name(f) for f in module.funcs}
        self._loop_heads = {
            id(r.block.ops[0])
            for op in module.walk()
            if op.has_trait(LoopLike)
            for r in op.regions
            if r.block.ops
        }

    def begin(self, pid: Pid, mode: str, replay_to: int = -1) -> None:
        """Start stepping a program run."""
        self.active, self.pid, self.mode, self.replay_to = True, pid, mode, replay_to
        name = self.session.kernel_name
        self.frames = [Frame(name, self._names.get(name, name))]
        self.events, self.depth, self.state, self.combining = 0, 1, None, 0
        self.silent = replay_to >= 0

    # -- hooks ------------------------------------------------------------------
    def will_execute_op(self, op: Operation, state: ProgramState) -> None:
        """Count line events; pause where the controller wants."""
        if not self.active or self.combining or op.loc is None or op.loc.line <= 0:
            return
        frame = self.frames[-1]
        frame.loc, frame.state = op.loc, state
        self.state = state
        if id(op) in self._loop_heads:
            frame.line = None  # a new iteration starts the line over
        if frame.line != op.loc.line:
            frame.line = op.loc.line
            self._line_event(op)
        if isinstance(op, CallOp):
            callee = str(op.attrs["callee"])
            self.frames.append(Frame(callee, self._names.get(callee, callee)))
        if isinstance(op, _COMBINERS):
            self.combining += 1

    def did_execute_op(self, op: Operation, state: ProgramState, results: list[RVal]) -> None:
        """Pop helper frames; collect device prints as they happen."""
        if not self.active:
            return
        if isinstance(op, _COMBINERS):
            self.combining -= 1
        if self.combining:
            return
        if isinstance(op, CallOp) and len(self.frames) > 1:
            self._return_event(op, state, results)
            self.frames.pop()
            self.frames[-1].state = state
        if isinstance(op, PrintOp):
            self.session.collect_prints(state.interp, self.silent)

    def _line_event(self, op: Operation) -> None:
        index = self.events
        self.events += 1
        reason = self._stop_reason(op, index)
        if reason is None:
            return
        self.silent = False
        stop = Stop("line", self.pid, op, [_copy(f) for f in self.frames], index, reason)
        self.obey(self.session.pause(stop))

    def _return_event(self, call: CallOp, state: ProgramState, results: list[RVal]) -> None:
        """A helper returns: ``s``, or ``n``/``until`` inside it, stop there (pdb's --Return--)."""
        index = self.events
        self.events += 1  # counted always, so that 'back' replays to the same stops
        if self.mode == "replay":
            stop = index == self.replay_to
        else:
            stop = self.mode == "step" or (
                self.mode in ("next", "until") and len(self.frames) <= self.depth
            )
        if not stop:
            return
        self.silent = False
        frames = [_copy(f) for f in self.frames]
        values = [_runtime_value(v, state) for v in call.results]
        stop_ = Stop("return", self.pid, call, frames, index, "--Return--", returned=values)
        self.obey(self.session.pause(stop_))

    def _stop_reason(self, op: Operation, index: int) -> str | None:
        if self.mode == "replay":
            return "" if index == self.replay_to else None
        if self.mode in ("finish", "finish all"):
            return None
        hit = self.session.breakpoint_hit(op, self)
        if hit is not None:
            return hit
        if self.mode == "step":
            return ""
        if self.mode == "next" and len(self.frames) <= self.depth:
            return ""
        if self.mode == "until" and len(self.frames) <= self.depth and op.loc.line >= self.until:
            return ""
        if self.mode == "until" and len(self.frames) < self.depth:
            return ""  # the function returned before reaching the line
        return None

    def obey(self, command: Any) -> None:
        """Apply a controller command (in the launch thread)."""
        if isinstance(command, _Quit):
            raise DebuggerQuit
        if isinstance(command, _Restart):
            raise _RestartSignal(command)
        assert isinstance(command, _Resume)
        self.mode, self.depth = command.mode, command.depth or len(self.frames)
        self.until = command.line


def _copy(frame: Frame) -> Frame:
    return Frame(frame.func, frame.name, frame.line, frame.loc, frame.state)


def source_name(func: Any) -> str:
    """The Python name of a ``tt.func`` (helpers are named after their specialization)."""
    loc = func.loc
    if loc is not None:
        for n in range(loc.line, loc.line + 3):
            match = re.match(r"\s*(?:async\s+)?def\s+(\w+)", linecache.getline(loc.file, n))
            if match:
                return match.group(1)
    return str(func.sym_name)


@dataclass
class DebugSession:
    """State shared by the controller and the launch thread."""

    kernel: str | None
    pid: Pid
    launch_number: int
    checks: bool
    channel: _Channel = field(default_factory=_Channel)
    breakpoints: list[Breakpoint] = field(default_factory=list)
    kernel_name: str = ""
    launch: Launch | None = None
    interp: Interpreter | None = None
    debugged: bool = False  # the chosen launch has been debugged
    output: list[str] = field(default_factory=list)
    shown: set[int] = field(default_factory=set)  # programs whose prints were shown
    launched: dict[str, int] = field(default_factory=dict)  # launches seen, per kernel
    _bp_counter: int = 0

    # -- launch thread -------------------------------------------------------------
    def pause(self, stop: Stop) -> Any:
        """Hand ``stop`` (with the pending device output) to the controller."""
        stop.output, self.output = self.output, []
        return self.channel.pause(stop)

    def collect_prints(self, interp: Interpreter, silent: bool) -> None:
        """Move the interpreter's queued device prints to the pending output."""
        if not silent:
            self.output.extend(text for _, text in sorted(interp.prints, key=lambda p: p[0]))
        interp.prints.clear()

    def breakpoint_hit(self, op: Operation, stepper: Stepper) -> str | None:
        """``"breakpoint N"`` if a breakpoint at ``op``'s line fires."""
        for bp in self.breakpoints:
            if bp.line != op.loc.line or not _same_file(bp.file, op.loc.file):
                continue
            if bp.cond is not None and not self._condition(bp, stepper):
                continue
            bp.hits += 1
            return f"breakpoint {bp.number}"
        return None

    def constants(self, frame: Frame, pid: Pid, caller: Frame | None) -> dict[str, Any]:
        """The compile-time values a frame sees: the kernel's constexprs, or the
        constant arguments of a helper's call (folded away in its IR, so they are
        read again from the call's source in the caller)."""
        assert self.launch is not None
        if frame.func == self.kernel_name:
            return dict(self.launch.constexprs())
        if caller is None or caller.loc is None:
            return {}
        runtime = {v.name_hint for v in self.interp_func(frame.func).body.args if v.name_hint}
        found: dict[str, Any] = {}
        for name, text in helper_arguments(self.interp_func(frame.func), caller.loc).items():
            if name in runtime:
                continue
            try:
                found[name] = evaluate(text, self.scope(caller, pid))
            except ExprError:
                continue  # not an expression the debugger evaluates: leave it out
        return found

    def interp_func(self, name: str) -> Any:
        """The ``tt.func`` called ``name``."""
        assert self.interp is not None
        return self.interp.module.lookup(name)

    def _condition(self, bp: Breakpoint, stepper: Stepper) -> bool:
        caller = stepper.frames[-2] if len(stepper.frames) > 1 else None
        try:
            value = evaluate(bp.cond or "True", self.scope(stepper.frames[-1], stepper.pid, caller))
            return bool(np.all(value))
        except ExprError as err:
            self.output.append(f"*** breakpoint {bp.number}: condition {bp.cond!r} failed: {err}")
            return True

    def scope(self, frame: Frame, pid: Pid, caller: Frame | None = None) -> Scope:
        """The names an expression sees in ``frame`` (``caller``: the frame that called it)."""
        assert self.interp is not None and self.launch is not None
        values: dict[str, Any] = {}
        values.update(self.constants(frame, pid, caller))
        for name, (value, state) in visible_values(frame.state).items():
            values[name] = _runtime_value(value, state)
        return Scope(values, pid, self.interp.grid, self.interp.memory)


def helper_arguments(func: Any, call: Location) -> dict[str, str]:
    """A helper's parameter -> the source text of its argument in the call at ``call``."""
    import ast
    import inspect

    if func.loc is None:
        return {}
    lines = linecache.getlines(func.loc.file)
    try:
        fdef = ast.parse(textwrap.dedent("".join(inspect.getblock(lines[func.loc.line - 1 :]))))
        line = _source_line(call.file, call.line).strip()
        tree = ast.parse(line if not line.endswith(":") else line + " pass")
    except (SyntaxError, IndexError):
        return {}
    defs = [n for n in fdef.body if isinstance(n, ast.FunctionDef)]
    if not defs:
        return {}
    params = [a.arg for a in defs[0].args.args]
    for node in ast.walk(tree):
        callee = getattr(node, "func", None)
        name = getattr(callee, "id", None) or getattr(callee, "attr", None)
        if isinstance(node, ast.Call) and name == defs[0].name:
            texts = dict(zip(params, (ast.unparse(a) for a in node.args)))
            texts.update({k.arg: ast.unparse(k.value) for k in node.keywords if k.arg})
            return texts
    return {}


def visible_values(state: ProgramState | None) -> dict[str, tuple[Value, ProgramState]]:
    """Source variable -> (its latest IR value, the state to read it in), for ``state``'s scope."""
    chain = []
    while state is not None:
        chain.append(state)
        state = state.parent
    out: dict[str, tuple[Value, ProgramState]] = {}
    outer: set[int] = set()  # values of enclosing scopes (a child caches what it reads)
    for scope in reversed(chain):
        for value in scope.env:
            if value.name_hint and id(value) not in outer:
                out[value.name_hint] = (value, chain[0])
        outer.update(id(v) for v in scope.env)
    return out


def _runtime_value(value: Value, state: ProgramState) -> Any:
    elem = element_type(value.type)
    if isinstance(elem, PointerType):
        rval = state.lookup(value)
        return Pointer(
            state.interp.memory, rval.buffer or 0, np.asarray(rval.program(0), dtype=np.int64)
        )
    return np.asarray(state.value_of(value))


def _same_file(a: str, b: str) -> bool:
    return a == b or Path(a).name == Path(b).name and os.path.abspath(a) == os.path.abspath(b)


class DebugLaunch:
    """Runs one launch under the debugger (in the launch thread)."""

    def __init__(
        self, session: DebugSession, launch: Launch, listeners: Sequence[Listener]
    ) -> None:
        self.session = session
        self.launch = launch
        module = launch.frontend_module()
        self.stepper = Stepper(session, module)
        self.others = list(listeners)
        if session.checks and not any(type(x).__name__ == "Checker" for x in self.others):
            from minitriton.emulator.debug.checks import Checker

            self.others.append(Checker())
        self.interp = Interpreter(module, launch.args, launch.grid, debug=True,
                                  listeners=[*self.others, self.stepper])  # fmt: skip
        self.interp.defer_prints = True  # the session shows them as they happen
        self.pids = program_ids(self.interp.grid, 0, int(np.prod(self.interp.grid)))
        session.interp, session.launch, session.kernel_name = self.interp, launch, launch.name
        self.start_memory = self.interp.memory.snapshot()
        self.start_tokens = self._checkpoint()
        self.ran = 0  # programs [0, ran) have run on the current memory

    def _checkpoint(self) -> list[Any]:
        return [x.checkpoint() if hasattr(x, "checkpoint") else None for x in self.others]

    def _rewind(self, tokens: list[Any]) -> None:
        for x, token in zip(self.others, tokens):
            if hasattr(x, "rewind"):
                x.rewind(token)

    def run(self, index: int, mode: str) -> None:
        """Debug from the program at ``index`` (grid order) until the launch ends.

        Programs before ``index`` run without stopping (but an error stops
        there, post-mortem); ``mode`` says how the debugged program starts.
        """
        replay_to = -1
        while index < len(self.pids):
            try:
                self._bring_memory_to(index)
            except _RestartSignal as signal:  # 'pid' or 'back' after an earlier program failed
                index, replay_to, mode = signal.cmd.index, signal.cmd.replay_to, "step"
                continue
            outcome = self._debug_program(index, mode, replay_to)
            if isinstance(outcome, _Restart):
                index, replay_to = outcome.index, outcome.replay_to
                mode = "step"
                continue
            mode, replay_to = outcome, -1
            index += 1

    def _bring_memory_to(self, index: int) -> None:
        if self.ran > index:
            self.interp.memory.restore(self.start_memory)
            self._rewind(self.start_tokens)
            self.ran = 0
        while self.ran < index:
            outcome = self._debug_program(self.ran, "finish all", -1)
            if isinstance(outcome, _Restart):
                raise _RestartSignal(outcome)

    def _debug_program(self, index: int, mode: str, replay_to: int) -> Any:
        """Run program ``index`` op by op; returns the next mode or a restart."""
        pid = _pid_tuple(self.pids[index])
        # Snapshots make 'back' cheap for the program being stepped; other
        # programs restart from the launch's first snapshot.
        stepping = mode in ("step", "next") or replay_to >= 0
        saved = (self.interp.memory.snapshot(), self._checkpoint()) if stepping else None
        self.stepper.begin(pid, mode if replay_to < 0 else "replay", replay_to)
        # A program re-run only to restore memory does not print again.
        silent = index in self.session.shown and mode == "finish all"
        self.stepper.silent = self.stepper.silent or silent
        self.session.shown.add(index)
        try:
            self.interp.run_batch(self.pids[index][None, :])
            self.stepper.active = False
            self.session.collect_prints(self.interp, self.stepper.silent)
            command = self._at_end(pid)
        except _RestartSignal as signal:
            command = signal.cmd
        except EmulatorError as err:
            self.stepper.active = False
            frames = [_copy(f) for f in self.stepper.frames]
            command = self.session.pause(
                Stop("error", pid, None, frames, self.stepper.events, error=err)
            )
            if isinstance(command, _Resume):
                raise trimmed(err) from None
        return self._after_program(command, index, saved)

    def _at_end(self, pid: Pid) -> Any:
        """Stop at the end of a stepped program; ``continue`` and ``finish all`` go on."""
        if self.stepper.mode in ("continue", "finish all"):
            return _Resume(self.stepper.mode)
        frames = [_copy(f) for f in self.stepper.frames]  # its variables stay readable
        return self.session.pause(Stop("finished", pid, None, frames, self.stepper.events))

    def _after_program(self, command: Any, index: int, saved: Any) -> Any:
        self.stepper.active = False
        if isinstance(command, _Quit):
            raise DebuggerQuit
        if isinstance(command, _Restart):
            self._undo(index, saved)
            return command
        self.ran = index + 1
        if command.mode == "continue" and not self.session.breakpoints:
            return "finish all"  # nothing can stop the rest of the launch but an error
        return {"next": "step", "until": "step", "finish": "continue"}.get(
            command.mode, command.mode
        )

    def _undo(self, index: int, saved: Any) -> None:
        """Back to the memory before program ``index`` (or before the launch)."""
        if saved is None:
            self.interp.memory.restore(self.start_memory)
            self._rewind(self.start_tokens)
            self.ran = 0
            return
        memory, tokens = saved
        self.interp.memory.restore(memory)
        self._rewind(tokens)
        self.ran = index


def _pid_tuple(row: np.ndarray) -> Pid:
    return (int(row[0]), int(row[1]), int(row[2]))


class DebugTool(Tool):
    """Takes over the chosen launch (and later launches when breakpoints are set)."""

    def __init__(self, session: DebugSession) -> None:
        self.session = session
        self.counts: dict[str, int] = {}  # launches seen, per kernel

    def run(self, launch: Launch, listeners: Sequence[Listener]) -> bool:
        """Debug this launch, or let it run normally."""
        s = self.session
        s.launched[launch.name] = s.launched.get(launch.name, 0) + 1
        if s.kernel is not None and launch.name != s.kernel:
            return False
        self.counts[launch.name] = self.counts.get(launch.name, 0) + 1
        first = not s.debugged and self.counts[launch.name] >= s.launch_number
        if not first and not s.breakpoints:
            return False
        s.debugged = True
        debug = DebugLaunch(s, launch, listeners)
        mode = "step" if first else "continue"
        index = 0
        if first and _inside_grid(s.pid, debug.interp.grid):
            index = _grid_index(s.pid, debug.interp.grid)
        elif first:
            s.output.append(f"program {format_pid(s.pid)} is outside the grid: debugging (0, 0, 0)")
            s.pid = (0, 0, 0)
        if first:
            s.output.append(
                f"debugging {launch.name}, grid {format_pid(debug.interp.grid)}, "
                f"program {format_pid(s.pid)}"
                + (" (the programs before it in grid order ran first)" if index else "")
            )
        try:
            debug.run(index, mode)
        finally:
            _flush_output(s)
        return True


def _inside_grid(pid: Pid, grid: tuple[int, int, int]) -> bool:
    return all(0 <= p < g for p, g in zip(pid, grid))


def _grid_index(pid: Pid, grid: tuple[int, int, int]) -> int:
    for p, g in zip(pid, grid):
        if not 0 <= p < g:
            message = f"program {format_pid(pid)} is outside the grid {format_pid(grid)}"
            raise EmulatorError(Location("<debugger>", 0, 0), message)
    return pid[0] + grid[0] * (pid[1] + grid[1] * pid[2])


def _flush_output(session: DebugSession) -> None:
    if session.output:
        print("\n".join(session.output))
        session.output.clear()


# ---------------------------------------------------------------- the controller

_HELP = """\
commands (pdb names where pdb has one):
  s(tep)              run to the next source line, into @jit helpers
  n(ext)              run to the next source line of this function
  c(ont(inue))        run to a breakpoint (in this or a later program)
  unt(il) [LINE]      run to a later line of this function (out of a loop), or to LINE
  b(reak) [WHERE [, COND]]  set a breakpoint, or list them; WHERE: LINE, FILE:LINE or
                      FUNCTION (its first line); COND: a kernel expression
  cl(ear) [N]         delete breakpoint N, or all
  p(rint) EXPR        evaluate a kernel expression: x, x.shape, offs[:8], tl.max(x, 0)
  display [EXPR]      show EXPR at every stop where its value changed (no EXPR: list)
  undisplay [EXPR]    stop displaying EXPR (no EXPR: all)
  locals              every variable: type, shape and a preview
  l(ist)              the source around the current line
  w(here)             kernel, helper stack, program id, line
  u(p) / d(own) [N]   select the caller's / the callee's frame for p, locals and l
  ir                  the IR ops of the current line
  pid X[,Y,Z]         debug another program instead (memory as in grid order)
  back                step back to the previous stop
  finish [all]        finish this program (or the whole launch, without stopping)
  q(uit)              stop the script"""


class Debugger:
    """Step through one program of a launch; see the module docstring.

    ``run`` is any callable that launches kernels (it runs in a separate
    thread); ``kernel`` picks the kernel by name (default: the first one
    launched), ``launch`` which of its launches (1 = the first), ``pid`` the
    program to debug, ``checks`` the race, uninitialized-read and overflow
    checks. The constructor returns when the program is stopped at its first
    line (or when ``run`` launched nothing).
    """

    prompt = "(mtdb) "

    def __init__(
        self,
        run: Callable[[], Any],
        *,
        kernel: str | None = None,
        pid: int | Sequence[int] = 0,
        launch: int = 1,
        checks: bool = True,
        start: bool = True,
    ) -> None:
        self.session = DebugSession(kernel, _pid3(pid), launch, checks)
        self.stop: Stop | None = None
        self.finished = False
        self.result: BaseException | None = None
        self._run = run
        self._last = ""
        self.intro = ""
        self.displays: dict[str, str] = {}  # 'display' expressions -> their last text
        self.frame_index = -1  # the frame 'up' and 'down' selected (-1: the innermost)
        if start:
            self.intro = self._start()

    @classmethod
    def launch(cls, kernel: Any, grid: Any, *args: Any, pid: int | Sequence[int] = 0,
               checks: bool = True, **kwargs: Any) -> Debugger:  # fmt: skip
        """Debug ``kernel[grid](*args, **kwargs)`` on the emulator."""
        kwargs["backend"] = "emulator"
        return cls(lambda: kernel[grid](*args, **kwargs), pid=pid, checks=checks)

    # -- starting and events -----------------------------------------------------
    def _start(self) -> str:
        tool = DebugTool(self.session)

        def target() -> None:
            error: BaseException | None = None
            try:
                with using(tool, thread_only=True):  # not the notebook's other launches
                    self._run()
            except BaseException as exc:  # noqa: BLE001 - reported to the controller
                error = exc
            _flush_output(self.session)
            self.session.channel.events.put(Stop("done", error=error))

        threading.Thread(target=target, daemon=True, name="minitriton-debug").start()
        return self._event(self.session.channel.events.get())

    def _send(self, command: Any) -> str:
        if self.finished:
            return Output("the script has finished")
        return Output(self._event(self.session.channel.resume(command)))

    def _event(self, stop: Stop) -> str:
        lines = list(stop.output)
        self.stop = stop
        self.frame_index = len(stop.frames) - 1
        if stop.kind == "done":
            self.finished, self.result = True, stop.error
            lines.append(self._done_text(stop.error))
        elif stop.kind == "line":
            lines += self._header(stop)
            lines += self._display_changes()
        elif stop.kind == "return":
            lines.append("--Return--")
            lines += self._header(stop)
            shown = [repr(as_debug_value(v)) for v in stop.returned]
            lines.append("returns " + (", ".join(shown) if shown else "nothing"))
            lines += self._display_changes()
        elif stop.kind == "finished":
            lines.append(
                f"program {format_pid(stop.pid or (0, 0, 0))} finished ('c' runs the rest of the "
                "launch, 's' starts the next program, 'back' steps back)"
            )
        elif stop.kind == "error":
            assert isinstance(stop.error, EmulatorError)
            lines.append(stop.error.render())
            lines.append(
                "post-mortem: 'p', 'locals', 'back' and 'pid' still work; "
                "'c' ends the launch with this error"
            )
        return "\n".join(lines)

    def _done_text(self, error: BaseException | None) -> str:
        if error is None:
            missed = self.missed_launch()
            return "the script finished" + (f"\n*** {missed}" if missed else "")
        if isinstance(error, DebuggerQuit):
            return "quit"
        if isinstance(error, EmulatorError):
            return error.render()
        if isinstance(error, UserError):
            return str(error)  # a located diagnostic: it says it all
        return f"the script raised {type(error).__name__}: {error}"

    def _header(self, stop: Stop, index: int = -1) -> list[str]:
        frame = stop.frames[index]
        loc = frame.loc
        assert loc is not None
        pid = format_pid(stop.pid or (0, 0, 0))
        head = f"> {_short(loc.file)}:{loc.line} {frame.name}, program {pid}"
        if stop.reason and index == -1 and stop.kind == "line":
            head += f" ({stop.reason})"
        return [head, f"-> {_source_line(loc.file, loc.line).strip()}"]

    def _display_changes(self) -> list[str]:
        """pdb's ``display``: each expression whose value changed since the last stop."""
        lines = []
        for expr, old in self.displays.items():
            new = self._display_text(expr)
            if new != old:
                self.displays[expr] = new
                lines.append(f"display {expr}: {new}" + (f"  [old: {old}]" if old else ""))
        return lines

    def _display_text(self, expr: str) -> str:
        try:
            return repr(self.print(expr))
        except ExprError as err:
            return f"** {err} **"

    def missed_launch(self) -> str | None:
        """Why nothing was debugged, when the chosen kernel or launch never came."""
        s = self.session
        if s.debugged:
            return None
        launched = ", ".join(f"{k} ({n}x)" for k, n in s.launched.items()) or "no kernel"
        if s.kernel is not None and s.kernel not in s.launched:
            return f"no kernel named '{s.kernel}' was launched (the script launched: {launched})"
        if s.launched:
            name = s.kernel or next(iter(s.launched))
            return (f"{name} was launched {s.launched[name]} time(s): there is no launch "
                    f"number {s.launch_number} to debug")  # fmt: skip
        return None

    # -- the command line -----------------------------------------------------------
    def command(self, line: str) -> str:
        """Run one CLI command; returns what it prints."""
        line = line.strip() or self._last
        self._last = line if line.split()[:1] not in (["q"], ["quit"]) else ""
        if not line:
            return ""
        word, _, rest = line.partition(" ")
        handler = _COMMANDS.get(word)
        if handler is None:
            return f"*** unknown command {word!r} (type 'help')"
        return Output(handler(self, rest.strip()))

    def __repr__(self) -> str:
        if self.finished or self.stop is None:
            return "<Debugger: the script has finished>"
        return _cmd_where(self, "") + "\n" + _cmd_list(self, "")

    def interact(self, stdin: Any = None, stdout: Any = None) -> None:
        """Read commands until the script ends: from a terminal, or piped (echoed)."""
        stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
        if self.intro:
            print(self.intro, file=stdout)
        echo = not stdin.isatty()
        terminal = not echo and stdin is sys.stdin and stdout is sys.stdout
        if terminal:
            _enable_line_editing()
        while not self.finished:
            if terminal:  # input() edits the line and keeps history (the Up arrow)
                try:
                    line = input(self.prompt) + "\n"
                except EOFError:
                    line = ""
            else:
                stdout.write(self.prompt)
                stdout.flush()
                line = stdin.readline()
            if not line:  # end of input: let the script run to its end
                stdout.write("\n" if not echo else "(end of input: finishing)\n")
                print(self._send(_Resume("finish all")), file=stdout)
                continue
            if echo:
                stdout.write(line if line.endswith("\n") else line + "\n")
            out = self.command(line)
            if out:
                print(out, file=stdout)

    # -- the Python API: each returns what the CLI prints, or a value ----------------------
    def step(self) -> str:
        """Run to the next source line, stepping into helpers."""
        return self._resume("step")

    def next(self) -> str:
        """Run to the next source line of the current function."""
        return self._resume("next")

    def cont(self) -> str:
        """Run to the next breakpoint (possibly in a later program)."""
        return self._resume("continue")

    def finish(self, all: bool = False) -> str:  # noqa: A002 - the CLI word
        """Finish this program (``all=True``: the whole launch) without stopping."""
        return self._resume("finish all" if all else "finish")

    def _resume(self, mode: str) -> str:
        if self.finished:
            return "the script has finished"
        assert self.stop is not None
        if self.stop.kind == "error" and mode in ("step", "next"):
            return "*** the program stopped with an error: use 'back', 'pid' or 'c'"
        depth = len(self.stop.frames) if mode in ("next", "until") else 0
        return self._send(_Resume(mode, depth))

    def until(self, line: int | None = None) -> str:
        """pdb's ``until``: run to a line greater than this one (or to ``line`` or later).

        Like ``n`` it stays in this function, and it also stops when the function
        returns. Without a line it runs a loop to its end.
        """
        if self.finished:
            return "the script has finished"
        assert self.stop is not None
        if self.stop.kind == "error":
            return "*** the program stopped with an error: use 'back', 'pid' or 'c'"
        here = self.stop.loc.line if self.stop.loc is not None else 0
        if line is not None and line <= here:
            return f'*** "until" line number is smaller than current line number ({here})'
        target = here + 1 if line is None else line
        return self._send(_Resume("until", len(self.stop.frames), target))

    def up(self, count: int = 1) -> str:
        """Select the caller's frame (``p`` and ``locals`` then read its variables)."""
        return self._select(self.frame_index - count, "Oldest frame")

    def down(self, count: int = 1) -> str:
        """Select the frame of the function that the current one called."""
        return self._select(self.frame_index + count, "Newest frame")

    def _select(self, index: int, limit: str) -> str:
        if self.stop is None or not self.stop.frames or self.finished:
            return "*** the program is not running"
        if not 0 <= index < len(self.stop.frames):
            return f"*** {limit}"
        self.frame_index = index
        return "\n".join(self._header(self.stop, index))

    def back(self) -> str:
        """Step back one source line (memory and variables as they were then).

        From the end of a program or from an error, go back to its last line
        (the failing one, before it ran).
        """
        if self.stop is None or self.finished or self.stop.pid is None:
            return "*** nothing to step back to"
        target = self.stop.event - 1
        if target < 0:
            return "*** already at the first line of this program"
        index = _grid_index(self.stop.pid, self._grid())
        return self._send(_Restart(index, target))

    def switch(self, pid: int | Sequence[int]) -> str:
        """Debug program ``pid`` instead, from its first line."""
        if self.finished:
            return "the script has finished"
        target = _pid3(pid)
        try:
            index = _grid_index(target, self._grid())
        except EmulatorError as err:
            return f"*** {err.diagnostic.message}"
        return self._send(_Restart(index, 0))

    def quit(self) -> str:
        """Stop the launch and the code that made it."""
        return self._send(_Quit())

    def eval(self, expr: str) -> Any:
        """The value of a kernel expression in the current program (NumPy / Pointer)."""
        frame = self._frame()
        pid = self.stop.pid or (0, 0, 0)  # type: ignore[union-attr]
        return evaluate(expr, self.session.scope(frame, pid, self._caller()))

    def print(self, expr: str) -> DebugValue:
        """A kernel expression's value as a :class:`DebugValue`."""
        return as_debug_value(self.eval(expr), expr)

    def locals(self) -> dict[str, DebugValue]:
        """Every variable of the current function (constexprs included)."""
        frame = self._frame()
        session = self.session
        out: dict[str, DebugValue] = {}
        pid = self.stop.pid or (0, 0, 0)  # type: ignore[union-attr]
        for name, value in session.constants(frame, pid, self._caller()).items():
            out[name] = DebugValue(value, "constexpr", None, name)
        for name, (value, state) in sorted(visible_values(frame.state).items()):
            data = _runtime_value(value, state)
            block = as_debug_value(data, name)
            block.type = _type_text(value, np.asarray(getattr(data, "offsets", data)))
            out[name] = block
        return out

    def break_(
        self, line: int | str, cond: str | None = None, file: str | None = None
    ) -> Breakpoint:
        """Set a breakpoint at ``line`` of the kernel's file (or ``file``).

        ``line`` may be a ``@jit`` function's name: the breakpoint goes on its
        first line of code, as pdb's ``break FUNCTION`` does.
        """
        if isinstance(line, str):
            file, line = self._function_line(line)
        file = file or self._current_file()
        if cond is not None:
            check_syntax(cond)
        if not self._has_code(file, line):
            raise ValueError(f"line {line} of {_short(file)} has no kernel code")
        self.session._bp_counter += 1
        bp = Breakpoint(self.session._bp_counter, file, line, cond)
        self.session.breakpoints.append(bp)
        return bp

    # -- helpers -------------------------------------------------------------------
    def _frame(self) -> Frame:
        if self.stop is None or not self.stop.frames:
            raise ExprError("the program is not running (no variables)")
        return self.stop.frames[min(self.frame_index, len(self.stop.frames) - 1)]

    def _caller(self) -> Frame | None:
        """The frame that called the selected one (None for the kernel's)."""
        assert self.stop is not None
        index = min(self.frame_index, len(self.stop.frames) - 1)
        return self.stop.frames[index - 1] if index > 0 else None

    def _grid(self) -> tuple[int, int, int]:
        assert self.session.interp is not None
        return self.session.interp.grid

    def _current_file(self) -> str:
        if self.stop is not None and self.stop.loc is not None:
            return self.stop.loc.file
        launch = self.session.launch
        return launch.module.kernel.loc.file if launch is not None else ""

    def _module(self) -> Module:
        assert self.session.interp is not None
        return self.session.interp.module

    def _function_line(self, name: str) -> tuple[str, int]:
        """The file and first line of code of the ``@jit`` function ``name``."""
        funcs = self._module().funcs
        for func in funcs:
            if source_name(func) != name:
                continue
            lines = [op.loc for op in func.walk() if op.loc is not None and op.loc.line > 0
                     and op is not func]  # fmt: skip
            if lines:
                first = min(lines, key=lambda loc: loc.line)
                return first.file, first.line
        known = ", ".join(sorted({source_name(f) for f in funcs}))
        raise ValueError(f"no @jit function named '{name}' in this launch (functions: {known})")

    def _has_code(self, file: str, line: int) -> bool:
        return any(op.loc is not None and op.loc.line == line and _same_file(op.loc.file, file)
                   for op in self._module().walk())  # fmt: skip


def _enable_line_editing() -> None:
    """Line editing and history for the prompt, where Python has ``readline``."""
    # Importing it is what makes input() edit lines; without it (Windows),
    # input() still works.
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401


def _pid3(pid: int | Sequence[int]) -> Pid:
    items = [int(pid)] if isinstance(pid, int | np.integer) else [int(p) for p in pid]
    items += [0] * (3 - len(items))
    return (items[0], items[1], items[2])


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


def _source_line(file: str, line: int) -> str:
    return linecache.getline(file, line).rstrip("\n")


# ---------------------------------------------------------------- command handlers


def _cmd_print(dbg: Debugger, arg: str) -> str:
    if not arg:
        return "*** usage: p EXPR"
    try:
        return repr(dbg.print(arg))
    except ExprError as err:
        return f"*** {err}"


def _cmd_locals(dbg: Debugger, arg: str) -> str:
    try:
        blocks = dbg.locals()
    except ExprError as err:
        return f"*** {err}"
    width = max((len(n) for n in blocks), default=4) + 2
    types = max((len(b.type) for b in blocks.values()), default=4) + 2
    return "\n".join(f"{n:<{width}}{b.type:<{types}}{b.preview()}" for n, b in blocks.items())


def _cmd_list(dbg: Debugger, arg: str) -> str:
    stop = dbg.stop
    if stop is None or stop.loc is None:
        return "*** no current line"
    loc = stop.frames[dbg.frame_index].loc or stop.loc
    file, line = loc.file, loc.line
    marks = {bp.line for bp in dbg.session.breakpoints if _same_file(bp.file, file)}
    lines = []
    for n in range(max(1, line - 5), line + 6):
        if not linecache.getline(file, n):
            break  # past the end of the file
        text = _source_line(file, n)
        flag = ("B" if n in marks else " ") + ("->" if n == line else "  ")
        lines.append(f"{n:>4} {flag} {text}")
    return "\n".join(lines)


def _cmd_where(dbg: Debugger, arg: str) -> str:
    stop = dbg.stop
    if stop is None or not stop.frames:
        return "*** the program is not running"
    pid = format_pid(stop.pid or (0, 0, 0))
    out = [f"program {pid} of grid {format_pid(dbg._grid())}"]
    for depth, frame in enumerate(stop.frames):
        arrow = ">" if depth == dbg.frame_index else " "
        where = f"{_short(frame.loc.file)}:{frame.loc.line}" if frame.loc else "?"
        source = _source_line(frame.loc.file, frame.loc.line).strip() if frame.loc else ""
        out.append(f"{arrow} {'  ' * depth}{frame.name}  {where}  {source}")
    return "\n".join(out)


def _cmd_ir(dbg: Debugger, arg: str) -> str:
    stop = dbg.stop
    if stop is None or stop.loc is None:
        return "*** no current line"
    func = dbg._module().lookup(stop.frames[-1].func)
    printer = _LinePrinter()
    printer.print_func(func)
    out = []
    for op, text in printer.op_lines:
        if (
            op.loc is not None
            and op.loc.line == stop.loc.line
            and _same_file(op.loc.file, stop.loc.file)
        ):
            out.append(("-> " if op is stop.op else "   ") + text.strip())
    return "\n".join(out) or "*** no IR ops on this line"


class _LinePrinter(Printer):
    """A printer that remembers the first printed line of each op."""

    def __init__(self) -> None:
        super().__init__(with_locs=False)
        self.op_lines: list[tuple[Operation, str]] = []

    def print_op(self, op: Operation, depth: int) -> None:
        """Print and remember ``op``'s header line."""
        start, slot = len(self.lines), len(self.op_lines)
        self.op_lines.append((op, ""))  # keep source order: an op before its region's ops
        super().print_op(op, depth)
        self.op_lines[slot] = (op, self.lines[start])


def _cmd_break(dbg: Debugger, arg: str) -> str:
    if not arg:
        if not dbg.session.breakpoints:
            return "no breakpoints"
        return "\n".join(
            f"{bp.number}: {_short(bp.file)}:{bp.line}" + (f", {bp.cond}" if bp.cond else "")
            + f"  (hit {bp.hits} times)" for bp in dbg.session.breakpoints
        )  # fmt: skip
    where, _, cond = arg.partition(",")
    file, _, line_text = where.strip().rpartition(":")
    target: int | str = line_text
    if line_text.isdigit():
        target = int(line_text)
    elif file or not line_text.isidentifier():
        return f"*** bad breakpoint {where.strip()!r}: expected LINE, FILE:LINE or FUNCTION"
    try:
        bp = dbg.break_(target, cond.strip() or None, file or None)
    except (ValueError, ExprError) as err:
        return f"*** {err}"
    text = f"Breakpoint {bp.number} at {_short(bp.file)}:{bp.line}"
    return text + (f", if {bp.cond}" if bp.cond else "")


def _cmd_clear(dbg: Debugger, arg: str) -> str:
    bps = dbg.session.breakpoints
    if not arg:
        bps.clear()
        return "deleted all breakpoints"
    keep = [bp for bp in bps if str(bp.number) != arg]
    if len(keep) == len(bps):
        return f"*** no breakpoint {arg}"
    bps[:] = keep
    return f"deleted breakpoint {arg}"


def _cmd_pid(dbg: Debugger, arg: str) -> str:
    try:
        pid = [int(p) for p in arg.replace(",", " ").split()]
    except ValueError:
        pid = []
    if not pid:
        return "*** usage: pid X[,Y,Z]"
    return dbg.switch(pid)


def _cmd_finish(dbg: Debugger, arg: str) -> str:
    return dbg.finish(all=arg == "all")


def _cmd_until(dbg: Debugger, arg: str) -> str:
    if arg and not arg.isdigit():
        return "*** usage: until [LINE]"
    return dbg.until(int(arg) if arg else None)


def _cmd_display(dbg: Debugger, arg: str) -> str:
    if not arg:
        lines = [f"{expr}: {dbg._display_text(expr)}" for expr in dbg.displays]
        return "\n".join(["Currently displaying:", *lines])
    try:
        check_syntax(arg)
    except ExprError as err:
        return f"*** {err}"
    dbg.displays[arg] = dbg._display_text(arg)
    return f"display {arg}: {dbg.displays[arg]}"


def _cmd_undisplay(dbg: Debugger, arg: str) -> str:
    if not arg:
        dbg.displays.clear()
        return ""
    if dbg.displays.pop(arg, None) is None:
        return f"** {arg} not in the display list **"
    return ""


def _cmd_up_down(step: int) -> Callable[[Debugger, str], str]:
    def command(dbg: Debugger, arg: str) -> str:
        if arg and not arg.isdigit():
            return "*** usage: up [COUNT] / down [COUNT]"
        count = int(arg) if arg else 1
        return dbg.up(count) if step < 0 else dbg.down(count)

    return command


_COMMANDS: dict[str, Callable[[Debugger, str], str]] = {}
for _names, _fn in [
    (("s", "step"), lambda d, a: d.step()),
    (("n", "next"), lambda d, a: d.next()),
    (("c", "cont", "continue"), lambda d, a: d.cont()),
    (("b", "break"), _cmd_break),
    (("cl", "clear"), _cmd_clear),
    (("p", "print"), _cmd_print),
    (("locals",), _cmd_locals),
    (("l", "list"), _cmd_list),
    (("w", "where", "bt"), _cmd_where),
    (("ir",), _cmd_ir),
    (("pid",), _cmd_pid),
    (("back",), lambda d, a: d.back()),
    (("finish",), _cmd_finish),
    (("unt", "until"), _cmd_until),
    (("display",), _cmd_display),
    (("undisplay",), _cmd_undisplay),
    (("u", "up"), _cmd_up_down(-1)),
    (("d", "down"), _cmd_up_down(1)),
    (("q", "quit", "exit"), lambda d, a: d.quit()),
    (("h", "help"), lambda d, a: _HELP),
]:
    for _name in _names:
        _COMMANDS[_name] = _fn
