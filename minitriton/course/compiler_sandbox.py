"""Grading a compiler exercise without running the student's code in the grader.

``check cN`` runs the exercise's tests in a pytest process of its own whose
``minitriton`` is the real package. Before the tests are collected, a plugin
(:func:`install`) replaces each function that the exercise stubs by a
*proxy*. A proxy sends its arguments, as plain data, to a child process
that imports the student's copy (:mod:`.compiler_worker`), and turns the
plain-data answer back into what the real function would return:

==============  ==========================================  =====================================
exercise        the child is asked                          the grader applies the answer
==============  ==========================================  =====================================
c1-fold         ``_int_div(a, b)``, ``_int_rem(a, b)``      the integer (or None)
c2-dce          ``_remove_dead_ops`` on the function's IR   erases the ops the child erased
c3-cse          ``_cse_block`` on the function's IR         the child's replacements, one by one
c4-promotion    ``integer_promote(a, b)`` on type names     the named type
c5-reduce       ``_reduce`` on the operand arrays           the arrays; the combiner region runs
                                                            here, asked for by the child
c6-lower        ``_int_binary(name, type)``                 replays the builder calls (a fixed
                                                            list of integer instructions)
c7-swizzle      ``SharedTile.linear`` / ``physical``        the integer
c8-coalesce     ``memory_order(contig, shape)``             the tuple of dims (or None)
==============  ==========================================  =====================================

So the tests, their assertions, the JUnit report and the score all live in
processes that never import the student's code: a student file that patches
grader functions patches only the child, and what it prints is shown, never
parsed. A child that exits, hangs or answers with anything but plain data
fails the call that needed it, and a run in which the child stopped scores
nothing (:func:`read_status`).
"""

from __future__ import annotations

import builtins
import json
import os
import select
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from minitriton.course import compiler_worker as wire

if TYPE_CHECKING:
    from llvmlite import ir

    from minitriton.backend.lower.context import LoweringContext
    from minitriton.ir.types import ScalarType

CALL_TIMEOUT_S = 60
#: Builder methods the child may ask for in exercise c6 (integer instructions only).
_INTEGER_INSTRUCTIONS = "add sub mul sdiv udiv srem urem shl ashr lshr and_ or_ xor neg not_"
BUILDER_METHODS = frozenset(
    [*_INTEGER_INSTRUCTIONS.split(), "icmp_signed", "icmp_unsigned", "select"]
)


class StudentStopped(AssertionError):
    """The child that runs the student's code exited, hung or broke the protocol."""


class Worker:
    """The child process holding the student's copy, and the pipes to it."""

    def __init__(self, copy: Path, log: Path) -> None:
        to_child, self._out = os.pipe()
        self._in, from_child = os.pipe()
        env = {k: v for k, v in os.environ.items() if not k.startswith("MINITRITON_SANDBOX")}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(copy), env.get("PYTHONPATH")]))
        env.setdefault("MPLBACKEND", "Agg")
        source = Path(wire.__file__).read_text(encoding="utf-8")
        self._log = open(log, "ab")  # noqa: SIM115 - open for the child's lifetime
        self.proc = subprocess.Popen(
            [sys.executable, "-c", source, str(to_child), str(from_child)],
            cwd=copy,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            pass_fds=(to_child, from_child),
        )
        os.close(to_child)
        os.close(from_child)
        self.stopped = ""
        self.calls = 0

    def call(self, name: str, *args: Any, callback: Callable[[dict], dict] | None = None) -> Any:
        """The child's answer to ``name(*args)``; its exception is raised here."""
        if self.stopped:
            raise StudentStopped(self.stopped)
        self.calls += 1
        try:
            wire._send(self._out, {"call": name, "args": list(args)})
            answer = self._receive()
            while "combine" in answer and callback is not None:
                wire._send(self._out, callback(answer))
                answer = self._receive()
        except (OSError, EOFError, ValueError, KeyError) as e:
            self._stop(f"the child running your code stopped answering ({type(e).__name__})")
        if "raise" in answer:
            kind, message, where = answer["raise"]
            raise _exception(kind, message + (f" ({where})" if where else ""))
        if "ok" not in answer:
            self._stop("the child running your code sent something that is not an answer")
        return answer["ok"]

    def _receive(self) -> dict[str, Any]:
        ready, _, _ = select.select([self._in], [], [], CALL_TIMEOUT_S)
        if not ready:
            self.proc.kill()
            self._stop(f"your code ran for more than {CALL_TIMEOUT_S} s on one call: stopped")
        message = wire._receive(self._in)
        if not isinstance(message, dict):
            raise ValueError("not a message")
        return message

    def _stop(self, why: str) -> None:
        try:
            rc = self.proc.wait(timeout=5)
            why += f" (exit status {rc})"
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.stopped = why + "; nothing is graded"
        raise StudentStopped(self.stopped)

    def close(self) -> None:
        """End the child (closing its pipe ends its loop)."""
        os.close(self._out)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        if self.proc.returncode not in (0, None) and not self.stopped:
            self.stopped = f"the child running your code exited with status {self.proc.returncode}"
        os.close(self._in)
        self._log.close()


def _exception(kind: str, message: str) -> Exception:
    """The student's exception, as a builtin of the same name when there is one."""
    cls = getattr(builtins, kind, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(message)
        except TypeError:
            pass
    return RuntimeError(f"{kind}: {message}")


# ---------------------------------------------------------------- proxies


def _int_answer(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} returned {value!r}, not an integer")
    return value


def _int_or_none(value: Any, what: str) -> int | None:
    return None if value is None else _int_answer(value, what)


def _c1(w: Worker) -> None:
    from minitriton.passes import folding

    for fn in ("int_div", "int_rem"):

        def proxy(a: int, b: int, _fn: str = fn, _memo: dict = {}) -> int | None:  # noqa: B006
            if (a, b) not in _memo:
                _memo[a, b] = _int_or_none(w.call(_fn, a, b), f"_{_fn}({a}, {b})")
            return _memo[a, b]

        setattr(folding, f"_{fn}", proxy)


def _c4(w: Worker) -> None:
    from minitriton.frontend import promotion
    from minitriton.ir.types import scalar

    def integer_promote(a: ScalarType, b: ScalarType) -> ScalarType:
        name = w.call("integer_promote", a.name, b.name)
        try:
            return scalar(str(name))
        except ValueError:
            raise TypeError(f"integer_promote({a}, {b}) returned {name!r}, not a type") from None

    promotion.integer_promote = integer_promote


def _c7(w: Worker) -> None:
    from minitriton.backend.shared_layout import SharedTile

    memo: dict[tuple, int] = {}
    for method in ("linear", "physical"):

        def proxy(self: SharedTile, row: int, col: int, _m: str = method) -> int:
            key = (_m, self.shape, self.contig, self.eb, self.swizzle, row, col)
            if key not in memo:
                fields = [list(self.shape), self.contig, self.eb, self.swizzle]
                memo[key] = _int_answer(w.call(_m, fields, row, col), f"{_m}({row}, {col})")
            return memo[key]

        setattr(SharedTile, method, proxy)


def _c8(w: Worker) -> None:
    from minitriton.backend import coalesce

    memo: dict[tuple, tuple[int, ...] | None] = {}

    def memory_order(contig: Sequence[int], shape: Sequence[int]) -> tuple[int, ...] | None:
        key = (tuple(int(c) for c in contig), tuple(int(s) for s in shape))
        if key not in memo:
            what = f"memory_order({list(key[0])}, {list(key[1])})"
            answer = w.call("memory_order", list(key[0]), list(key[1]))
            if answer is not None and not isinstance(answer, list):
                raise TypeError(f"{what} returned {answer!r}, not a tuple of dims or None")
            memo[key] = None if answer is None else tuple(_int_answer(d, what) for d in answer)
        return memo[key]

    coalesce.memory_order = memory_order


def _func_text(func: Any) -> str:
    from minitriton.ir import print_module
    from minitriton.ir.ops import Module

    return print_module(Module([func]))


def _enclosing_func(op: Any) -> Any:
    from minitriton.ir.ops import FuncOp

    while op is not None and not isinstance(op, FuncOp):
        op = op.parent_op
    if op is None:
        raise ValueError("is_effect_free: the op is not in a function")
    return op


def _c2(w: Worker) -> None:
    from minitriton.passes import dce
    from minitriton.passes.rewriting import erase_op, is_attached

    def is_effect_free(op: Any) -> bool:
        func = _enclosing_func(op)
        at = next(i for i, o in enumerate(func.walk()) if o is op)
        return bool(w.call("is_effect_free", _func_text(func), at))

    def _remove_dead_ops(func: Any) -> bool:
        ops = list(func.walk())
        erased = w.call("remove_dead_ops", _func_text(func))["erased"]
        if not all(isinstance(i, int) and 0 < i < len(ops) for i in erased):
            raise ValueError("_remove_dead_ops erased the function itself, or ops it never had")
        changed = False
        for i in sorted(erased):
            if is_attached(ops[i], func):  # nested ops go with their parent
                erase_op(ops[i])
                changed = True
        return changed  # what was erased, whatever the child said

    dce.is_effect_free = is_effect_free
    dce._remove_dead_ops = _remove_dead_ops


def _c3(w: Worker) -> None:
    from minitriton.passes import cse
    from minitriton.passes.rewriting import is_attached, replace_op

    def _cse_block(block: Any, outer: list, func: Any) -> None:
        if outer or block is not func.body.block:
            raise ValueError("_cse_block: the grader only calls it on a function's body")
        ops = list(func.walk())
        for at, refs in w.call("cse", _func_text(func)):
            op = ops[at]
            values = [ops[o].results[r] for o, r in refs]
            if not is_attached(op, func) or len(values) != len(op.results):
                raise ValueError(f"_cse_block replaced {op.name} twice, or by the wrong values")
            replace_op(op, values, func)

    cse._cse_block = _cse_block


def _c5(w: Worker) -> None:
    import numpy as np

    from minitriton.emulator.ops import reduce as ops_reduce
    from minitriton.emulator.registry import SEMANTICS
    from minitriton.emulator.values import RVal

    real_reduce, combine = ops_reduce._reduce, ops_reduce._combine

    def _reduce(op: Any, state: Any, *xs: RVal) -> list[RVal]:
        def run_region(message: dict) -> dict:
            try:
                left, right = ([wire.text_array(t) for t in side] for side in message["combine"])
                out = combine(op.regions[0], state, left, right)
                return {"arrays": [wire.array_text(np.asarray(o)) for o in out]}
            except Exception as e:  # noqa: BLE001 - the student's operands were wrong
                return {"error": f"the combiner could not run on those operands: {e}"}

        answer = w.call(
            "reduce",
            [wire.array_text(np.asarray(x.data)) for x in xs],
            [bool(x.batched) for x in xs],
            state.size,
            op.attrs.get("axis"),
            callback=run_region,
        )
        return [RVal(wire.text_array(t), bool(b)) for t, b in answer]

    ops_reduce._reduce = _reduce
    for key in [k for k, fn in SEMANTICS.items() if fn is real_reduce]:
        SEMANTICS[key] = _reduce


def _c6(w: Worker) -> None:
    from minitriton.backend.lower import arith

    memo: dict[tuple[str, str], dict] = {}

    def _int_binary(
        ctx: LoweringContext, name: str, st: ScalarType, a: ir.Value, b: ir.Value
    ) -> ir.Value:
        if (name, st.name) not in memo:
            memo[name, st.name] = w.call("int_binary", name, st.name)
        plan = memo[name, st.name]
        values = [a, b]
        for method, args in plan["calls"]:
            if method not in BUILDER_METHODS:
                raise ValueError(f"_int_binary used builder.{method}: not an integer instruction")
            resolved = [values[x["value"]] if isinstance(x, dict) else x for x in args]
            values.append(getattr(ctx.b, method)(*resolved))
        return values[plan["result"]]

    arith._int_binary = _int_binary


PROXIES: dict[str, Callable[[Worker], None]] = {
    "c1-fold": _c1,
    "c2-dce": _c2,
    "c3-cse": _c3,
    "c4-promotion": _c4,
    "c5-reduce": _c5,
    "c6-lower": _c6,
    "c7-swizzle": _c7,
    "c8-coalesce": _c8,
}

# ---------------------------------------------------------------- the plugin's side

SETTINGS_ENV = "MINITRITON_SANDBOX"


def install(settings: dict[str, str]) -> Worker:
    """Start the child for ``settings["copy"]`` and put the proxies of its marker in place."""
    worker = Worker(Path(settings["copy"]), Path(settings["log"]))
    PROXIES[settings["marker"]](worker)
    return worker


def write_status(worker: Worker, path: Path) -> None:
    """After the tests: whether the child stopped, and how many calls it answered."""
    worker.close()
    status = {"stopped": worker.stopped, "calls": worker.calls}
    path.write_text(json.dumps(status), encoding="utf-8")


def read_status(path: Path) -> str:
    """Why the run scores nothing ("" if it may be scored)."""
    try:
        status = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "the grading run did not finish"
    if status.get("stopped"):
        return str(status["stopped"])
    if not status.get("calls"):
        return "the tests never reached your code"
    return ""


PLUGIN_SOURCE = f"""
import json
import os

import pytest

from minitriton.course import compiler_sandbox

_SETTINGS = json.loads(os.environ.pop({SETTINGS_ENV!r}))
_WORKER = compiler_sandbox.install(_SETTINGS)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    compiler_sandbox.write_status(_WORKER, compiler_sandbox.Path(_SETTINGS["status"]))
"""
