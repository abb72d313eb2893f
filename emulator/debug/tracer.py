"""Record every load and store of a launch, summarize it, and draw it.

A :class:`Tracer` listener records, for each memory op and each program,
the element offsets of its enabled lanes, its masked-off lanes and any
out-of-bounds attempt. The resulting :class:`Trace` answers the questions a
GPU profiler would, on the emulator:

* :meth:`Trace.summary`: bytes loaded and stored per program and in total,
  mask efficiency (the share of lanes enabled), and for each access site the
  distinct 128-byte segments one access touches against the ideal number
  (coalescing);
* :meth:`Trace.save_pngs`: one picture per buffer showing which program
  touched which element, reads and writes side by side, masked-off lanes and
  out-of-bounds attempts;
* :meth:`Trace.save_html`: the same in one interactive HTML file, where
  hovering a cell names its program, lane, offset and source line, and a
  program's accesses can be stepped through.

From Python::

    from minitriton.emulator.debug.tracer import trace
    t = trace(lambda: add_kernel[grid](x, y, out, n, BLOCK_SIZE=64))
    print(t.summary())
    t.save_pngs("trace/")

From the shell: ``minitriton trace FILE.py --out DIR``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from minitriton.diagnostics import Location
from minitriton.emulator.debug.checks import lane_data, linear_pids
from minitriton.emulator.debug.tools import Launch, Tool, using
from minitriton.emulator.errors import EmulatorError, format_pid
from minitriton.emulator.interpreter import Interpreter, Listener, ProgramState
from minitriton.ir.core import Operation
from minitriton.ir.ops import AtomicCASOp, AtomicRMWOp, LoadOp, StoreOp

SEGMENT_BYTES = 128
_KINDS: dict[type[Operation], str] = {
    LoadOp: "load",
    StoreOp: "store",
    AtomicRMWOp: "atomic",
    AtomicCASOp: "atomic",
}


@dataclass
class Access:
    """One memory op executed by one program."""

    pid: tuple[int, int, int]
    linear: int
    kind: str  # "load", "store" or "atomic"
    loc: Location
    buffer: str
    offsets: np.ndarray  # element offsets of the enabled lanes inside the buffer
    masked: np.ndarray  # offsets of the masked-off lanes
    oob: np.ndarray  # offsets of enabled lanes outside the buffer
    lanes: int  # lanes of the op
    itemsize: int
    base: int  # made-up byte address of the buffer's element 0
    lane_ids: np.ndarray | None = None  # the lane of each of ``offsets``

    @property
    def nbytes(self) -> int:
        """Bytes moved (enabled, in-bounds lanes)."""
        return int(self.offsets.size) * self.itemsize

    def segments(self) -> int:
        """Distinct 128-byte memory segments the enabled lanes touch."""
        if self.offsets.size == 0:
            return 0
        addresses = self.base + self.offsets * self.itemsize
        return int(np.unique(addresses // SEGMENT_BYTES).size)

    def ideal_segments(self) -> int:
        """Segments a perfectly coalesced access of the same bytes would touch."""
        return math.ceil(self.nbytes / SEGMENT_BYTES)


@dataclass
class BufferInfo:
    """A buffer of the launch: its name, element count, dtype and display shape."""

    name: str
    size: int
    dtype: str
    itemsize: int
    shape: tuple[int, ...]


@dataclass
class Trace:
    """Everything one launch loaded and stored."""

    kernel: str
    grid: tuple[int, int, int]
    buffers: dict[str, BufferInfo] = field(default_factory=dict)
    accesses: list[Access] = field(default_factory=list)
    error: EmulatorError | None = None

    # -- tables ------------------------------------------------------------------
    def per_program(self) -> list[tuple[tuple[int, int, int], int, int, int, int]]:
        """``(pid, bytes loaded, bytes stored, enabled lanes, lanes)`` in grid order."""
        rows: dict[int, list[Any]] = {}
        for a in self.accesses:
            row = rows.setdefault(a.linear, [a.pid, 0, 0, 0, 0])
            row[1] += a.nbytes if a.kind in ("load", "atomic") else 0
            row[2] += a.nbytes if a.kind in ("store", "atomic") else 0
            row[3] += int(a.offsets.size + a.oob.size)
            row[4] += a.lanes
        return [tuple(rows[k]) for k in sorted(rows)]

    def per_site(self) -> list[dict[str, Any]]:
        """One entry per (source location, kind, buffer), in source order."""
        sites: dict[tuple[Any, ...], dict[str, Any]] = {}
        for a in self.accesses:
            key = (a.loc.line, a.loc.col, a.kind, a.buffer)
            site = sites.setdefault(key, {"loc": a.loc, "kind": a.kind, "buffer": a.buffer,
                                          "count": 0, "lanes": 0, "enabled": 0,
                                          "segments": 0, "ideal": 0, "bytes": 0})  # fmt: skip
            site["count"] += 1
            site["lanes"] += a.lanes
            site["enabled"] += int(a.offsets.size + a.oob.size)
            site["segments"] += a.segments()
            site["ideal"] += a.ideal_segments()
            site["bytes"] += a.nbytes
        return [sites[k] for k in sorted(sites, key=lambda k: (k[0], k[1]))]

    def summary(self, max_programs: int = 16) -> str:
        """The printed report: per program, in total, and per access site."""
        lines = [f"trace of {self.kernel}, grid {format_pid(self.grid)}: "
                 f"{self._count('load')} loads, {self._count('store')} stores, "
                 f"{self._count('atomic')} atomics"]  # fmt: skip
        lines += ["", *self._program_table(max_programs), "", *self._site_table()]
        if self.error is not None:
            lines += ["", "the launch stopped with an error:", self.error.render()]
        return "\n".join(lines)

    def _count(self, kind: str) -> int:
        return sum(1 for a in self.accesses if a.kind == kind)

    def _program_table(self, max_programs: int) -> list[str]:
        rows = self.per_program()
        out = [f"{'program':<14}{'loaded B':>10}{'stored B':>10}{'mask eff.':>11}"]
        for pid, loaded, stored, enabled, lanes in rows[:max_programs]:
            out.append(f"{format_pid(pid):<14}{loaded:>10}{stored:>10}{_pct(enabled, lanes):>11}")
        if len(rows) > max_programs:
            out.append(f"... ({len(rows) - max_programs} more programs)")
        # Column by column: the rows' first item is a pid, the others counts.
        total = [sum(r[1] for r in rows), sum(r[2] for r in rows)]
        total += [sum(r[3] for r in rows), sum(r[4] for r in rows)]
        out.append(f"{'total':<14}{total[0]:>10}{total[1]:>10}{_pct(total[2], total[3]):>11}")
        return out

    def _site_table(self) -> list[str]:
        head = f"{'site':<24}{'op':<8}{'buffer':<14}{'count':>6}{'mask eff.':>11}"
        out = [head + f"{'segments/access':>17}  (ideal)"]
        for s in self.per_site():
            where = f"{Path(s['loc'].file).name}:{s['loc'].line}:{s['loc'].col} "
            per = s["segments"] / max(s["count"], 1)
            ideal = s["ideal"] / max(s["count"], 1)
            out.append(
                f"{where:<24}{s['kind']:<8}{s['buffer']:<14}{s['count']:>6}"
                f"{_pct(s['enabled'], s['lanes']):>11}{per:>17.1f}  ({ideal:.1f})"
            )
        return out

    # -- pictures ------------------------------------------------------------------
    def element_owners(self, buffer: str, kind: str) -> dict[str, np.ndarray]:
        """Per element of ``buffer`` for accesses of ``kind`` (``"load"``/``"store"``).

        ``owner``: the linear id of the last program that accessed it (-1: none);
        ``count``: how many distinct programs did; ``masked``: masked-off lanes
        pointed at it; ``oob``: out-of-bounds offsets attempted (a flat array).
        """
        info = self.buffers[buffer]
        owner = np.full(info.size, -1, dtype=np.int64)
        count = np.zeros(info.size, dtype=np.int64)
        masked = np.zeros(info.size, dtype=bool)
        oob: list[np.ndarray] = []
        for a in self.accesses:
            if a.buffer != buffer or a.kind not in (kind, "atomic"):
                continue
            fresh = np.unique(a.offsets[owner[a.offsets] != a.linear])
            count[fresh] += 1
            owner[a.offsets] = a.linear
            inside = a.masked[(a.masked >= 0) & (a.masked < info.size)]
            masked[inside] = True
            oob.append(a.oob)
        oob_all = np.concatenate(oob) if oob else np.zeros(0, dtype=np.int64)
        return {"owner": owner, "count": count, "masked": masked & (owner < 0), "oob": oob_all}

    def save_pngs(self, directory: str | Path) -> list[Path]:
        """Write ``<kernel>-<buffer>.png`` for every buffer the launch touched."""
        from minitriton.emulator.debug.trace_plot import PictureWriter

        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        writer = PictureWriter()  # buffers that share a frame draw it once
        touched = {a.buffer for a in self.accesses}
        return [writer.save(self, name, folder / f"{self.kernel}-{name}.png")
                for name in self.buffers if name in touched]  # fmt: skip

    def save_html(self, path: str | Path) -> Path:
        """Write the interactive view (one self-contained HTML file) to ``path``."""
        from minitriton.emulator.debug.trace_html import save_html

        return save_html(self, path)


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


# ---------------------------------------------------------------- recording


class Tracer(Listener):
    """Records every memory access of one launch into :attr:`trace`."""

    def __init__(self, kernel: str = "kernel", shapes: dict[str, tuple[int, ...]] | None = None):
        self.kernel = kernel
        self.shapes = shapes or {}
        self.trace: Trace | None = None

    def checkpoint(self) -> int:
        """How many accesses are recorded (the debugger rewinds to it)."""
        return len(self.trace.accesses) if self.trace else 0

    def rewind(self, token: int) -> None:
        """Forget the accesses after a :meth:`checkpoint`."""
        if self.trace is not None:
            del self.trace.accesses[token:]

    def _start(self, interp: Interpreter) -> Trace:
        trace = Trace(self.kernel, interp.grid)
        for i, buf in enumerate(interp.memory.buffers):
            if buf.root != i:
                continue
            shape = self.shapes.get(buf.name) or _display_shape(buf.flat)
            trace.buffers[buf.name] = BufferInfo(
                buf.name, buf.size, repr(buf.dtype), buf.flat.dtype.itemsize, shape
            )
        return trace

    def will_execute_op(self, op: Operation, state: ProgramState) -> None:
        """Record the access before the op runs (so out-of-bounds attempts are kept)."""
        kind = _KINDS.get(type(op))
        if kind is None:
            return
        if self.trace is None:
            self.trace = self._start(state.interp)
        self.trace.accesses.extend(_accesses(op, state, kind))


def _accesses(op: Operation, state: ProgramState, kind: str) -> list[Access]:
    memory = state.interp.memory
    ptr = state.lookup(op.operands[0])
    buf = memory[ptr.buffer or 0]
    root = memory[buf.root]
    offsets = lane_data(state, op, 0).reshape(state.size, -1)
    m = op.mask_operand()
    enabled = (
        np.ones(offsets.shape, dtype=bool)
        if m is None
        else lane_data(state, op, m).reshape(state.size, -1).astype(bool)
    )
    scale = buf.flat.dtype.itemsize / root.flat.dtype.itemsize
    out = []
    for row, linear in enumerate(linear_pids(state)):
        offs = (offsets[row] * scale).astype(np.int64)
        inside = (offs >= 0) & (offs < root.size)
        on = enabled[row]
        out.append(Access(
            state.pid(row), int(linear), kind, op.loc, root.name,
            offs[on & inside], offs[~on], offs[on & ~inside], offs.size,
            root.flat.dtype.itemsize, root.base_address, np.flatnonzero(on & inside),
        ))  # fmt: skip
    return out


def _display_shape(flat: np.ndarray) -> tuple[int, ...]:
    """Rows of the host's 2-D array (even for a strided view of it), else 1-D."""
    base: Any = flat.base
    for _ in range(4):  # the launcher's flat view may wrap the user's array
        if isinstance(base, np.ndarray) and base.ndim == 2 and base.strides[0] > 0:
            cols = int(base.strides[0] // flat.itemsize) or int(base.shape[1])
            return (-(-int(flat.shape[0]) // cols), cols)
        base = getattr(base, "base", None)
    return (int(flat.shape[0]),)


# ---------------------------------------------------------------- API


class TraceTool(Tool):
    """The tool that traces launches (all of them, or those of one kernel)."""

    def __init__(self, kernel: str | None = None, shapes: dict[str, tuple[int, ...]] | None = None):
        self.kernel = kernel
        self.shapes = shapes
        self.traces: list[Trace] = []
        self._tracers: list[Tracer] = []

    def listeners(self, launch: Launch) -> list[Listener]:
        """A tracer for each launch of the chosen kernel."""
        if self.kernel is not None and launch.name != self.kernel:
            return []
        tracer = Tracer(launch.name, self.shapes)
        self._tracers.append(tracer)
        return [tracer]

    def run(self, launch: Launch, listeners: Sequence[Listener]) -> bool:
        """Run the launch; an emulator error is kept in the trace (and raised again)."""
        interp = Interpreter(launch.module, launch.args, launch.grid, debug=launch.debug,
                             listeners=listeners)  # fmt: skip
        from minitriton.emulator.schedule import run_grid

        tracers = [t for t in listeners if isinstance(t, Tracer) and t in self._tracers]
        try:
            run_grid(interp, serial=True if tracers else None)  # grid order, one by one
        except EmulatorError as err:
            self._collect(tracers, interp, err)
            raise
        self._collect(tracers, interp, None)
        return True

    def _collect(
        self, tracers: list[Tracer], interp: Interpreter, err: EmulatorError | None
    ) -> None:
        for tracer in tracers:
            trace = tracer.trace or tracer._start(interp)
            trace.error = err
            self.traces.append(trace)


def trace(
    run: Callable[[], Any],
    kernel: str | None = None,
    shapes: dict[str, tuple[int, ...]] | None = None,
) -> Trace:
    """Call ``run()`` (which launches kernels) and return the trace of the last launch.

    An emulator error (an out-of-bounds access...) does not propagate: it is
    kept in :attr:`Trace.error`, and the trace shows what happened up to it.
    """
    tool = TraceTool(kernel, shapes)
    with using(tool):
        try:
            run()
        except EmulatorError:
            if not tool.traces:
                raise
    if not tool.traces:
        raise RuntimeError("trace(): the function launched no kernel on the emulator")
    return tool.traces[-1]
