"""The child side of compiler grading: the student's functions, answering questions.

The grader (:mod:`~minitriton.course.compiler_sandbox`) runs this file's
*source* as ``python -c`` in a child whose ``sys.path`` starts with the
student's copy, so every ``import minitriton`` here is the student's code.
It reads requests from one pipe and writes answers to another: each request
names an exercise function (``HANDLERS``) and gives plain data (integers,
type names, IR text, arrays); each answer is plain data again (JSON, arrays
as ``.npy`` bytes). Nothing here decides whether an answer is right; the
grader's tests do that in their own process.
"""

from __future__ import annotations

import base64
import io
import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, cast

import numpy as np


def _send(fd: int, message: dict[str, Any]) -> None:
    data = json.dumps(message).encode("utf-8")
    os.write(fd, len(data).to_bytes(8, "little") + data)


def _receive(fd: int) -> dict[str, Any]:
    size = int.from_bytes(_read_exactly(fd, 8), "little")
    return json.loads(_read_exactly(fd, size).decode("utf-8"))


def _read_exactly(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def array_text(a: np.ndarray) -> str:
    """``a`` as base64 ``.npy`` bytes (never pickled)."""
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(a), allow_pickle=False)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def text_array(text: str) -> np.ndarray:
    """The array :func:`array_text` wrote."""
    return np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False)


# ---------------------------------------------------------------- IR by text


def _func_and_ops(text: str) -> tuple[Any, list[Any]]:
    from minitriton.ir import parse_module

    func = parse_module(text, "<grader>").funcs[0]
    return func, list(func.walk())


def _value_ref(value: Any, index: dict[int, int]) -> list[int]:
    owner = getattr(value, "owner", None)
    if owner is None or id(owner) not in index:
        raise TypeError("a replacement value must be the result of an op of the function")
    return [index[id(owner)], owner.results.index(value)]


# ---------------------------------------------------------------- handlers


def _int_div(a: int, b: int) -> Any:
    from minitriton.passes import folding

    return folding._int_div(a, b)


def _int_rem(a: int, b: int) -> Any:
    from minitriton.passes import folding

    return folding._int_rem(a, b)


def _integer_promote(a: str, b: str) -> str:
    from minitriton.frontend import promotion
    from minitriton.ir.types import ScalarType

    out = promotion.integer_promote(ScalarType(a), ScalarType(b))
    return str(getattr(out, "name", out))


def _tile(fields: list[Any]) -> Any:
    from minitriton.backend.shared_layout import SharedTile

    shape, contig, eb, swizzle = fields
    return SharedTile(tuple(shape), contig, eb, swizzle)


def _linear(fields: list[Any], row: int, col: int) -> Any:
    return _tile(fields).linear(row, col)


def _physical(fields: list[Any], row: int, col: int) -> Any:
    return _tile(fields).physical(row, col)


def _memory_order(contig: list[int], shape: list[int]) -> Any:
    from minitriton.backend import coalesce

    out = coalesce.memory_order(tuple(contig), tuple(shape))
    return list(out) if isinstance(out, tuple) else out


def _is_effect_free(text: str, at: int) -> Any:
    from minitriton.passes import dce

    _, ops = _func_and_ops(text)
    return bool(dce.is_effect_free(ops[at]))


def _remove_dead_ops(text: str) -> dict[str, Any]:
    from minitriton.passes import dce
    from minitriton.passes.rewriting import is_attached

    func, ops = _func_and_ops(text)
    changed = dce._remove_dead_ops(func)
    erased = [i for i, op in enumerate(ops) if not is_attached(op, func)]
    return {"changed": bool(changed), "erased": erased}


def _cse(text: str) -> list[Any]:
    from minitriton.passes import cse
    from minitriton.passes.rewriting import use_index

    func, ops = _func_and_ops(text)
    index = {id(op): i for i, op in enumerate(ops)}
    done: list[Any] = []
    real = cse.replace_op

    def recording(op: Any, values: Any, root: Any) -> None:
        values = list(values)
        done.append([index[id(op)], [_value_ref(v, index) for v in values]])
        real(op, values, root)

    cse.replace_op = recording
    try:
        with use_index(func):
            cse._cse_block(func.body.block, [], func)
    finally:
        cse.replace_op = real
    return done


class _Handle:
    """A value of the recording builder: ``n`` is its index in the answer."""

    def __init__(self, n: int) -> None:
        self.n = n


class _RecordingBuilder:
    """Stands for llvmlite's IRBuilder: records the calls, to be replayed by the grader."""

    def __init__(self) -> None:
        self.calls: list[list[Any]] = []

    def __getattr__(self, method: str) -> Any:
        if method.startswith("_"):
            raise AttributeError(method)

        def record(*args: Any, **kwargs: Any) -> _Handle:
            if kwargs:
                raise TypeError(f"builder.{method}: pass arguments by position")
            self.calls.append([method, [_plain(a) for a in args]])
            return _Handle(len(self.calls) + 1)  # 0 and 1 are the operands

        return record


def _plain(arg: Any) -> Any:
    if isinstance(arg, _Handle):
        return {"value": arg.n}
    if isinstance(arg, (str, int)) and not isinstance(arg, bool):
        return arg
    raise TypeError(f"the builder got {type(arg).__name__} {arg!r}: only values and names")


def _int_binary(name: str, st: str) -> dict[str, Any]:
    from types import SimpleNamespace

    from minitriton.backend.lower import arith
    from minitriton.ir.types import ScalarType

    builder = _RecordingBuilder()
    self = SimpleNamespace(b=builder)
    # A stand-in for the lowering context: the function only uses its builder.
    out = arith._int_binary(cast(Any, self), name, ScalarType(st), _Handle(0), _Handle(1))
    if not isinstance(out, _Handle):
        raise TypeError(f"_int_binary returned {type(out).__name__}, not the builder's value")
    return {"calls": builder.calls, "result": out.n}


def _reduce(arrays: list[str], batched: list[bool], size: int, axis: Any) -> list[Any]:
    from types import SimpleNamespace

    from minitriton.emulator.ops import reduce as ops_reduce
    from minitriton.emulator.values import RVal

    def combine(region: Any, state: Any, left: Any, right: Any) -> list[np.ndarray]:
        # The combiner region runs in the grader: send the operands, wait for the values.
        sides = [[array_text(np.asarray(a)) for a in side] for side in (left, right)]
        _send(OUT, {"combine": sides})
        answer = _receive(IN)
        if "error" in answer:
            raise ValueError(answer["error"])
        return [text_array(t) for t in answer["arrays"]]

    op = SimpleNamespace(attrs={} if axis is None else {"axis": axis}, regions=[None])
    state = SimpleNamespace(size=size)
    xs = [RVal(text_array(t), b) for t, b in zip(arrays, batched)]
    real = ops_reduce._combine
    ops_reduce._combine = combine
    try:
        out = ops_reduce._reduce(op, state, *xs)
    finally:
        ops_reduce._combine = real
    return [[array_text(np.asarray(r.data)), bool(r.batched)] for r in out]


HANDLERS: dict[str, Callable[..., Any]] = {
    "int_div": _int_div,
    "int_rem": _int_rem,
    "integer_promote": _integer_promote,
    "linear": _linear,
    "physical": _physical,
    "memory_order": _memory_order,
    "is_effect_free": _is_effect_free,
    "remove_dead_ops": _remove_dead_ops,
    "cse": _cse,
    "int_binary": _int_binary,
    "reduce": _reduce,
}


def _located(exc: BaseException) -> str:
    """``file:line`` of the deepest frame in the student's copy, if any."""
    # This file runs as ``python -c``: its own frames are "<string>".
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != "<string>"]
    if not frames:
        return ""
    f = frames[-1]
    return f"{f.filename}:{f.lineno}"


def serve() -> None:
    """Answer requests until the grader closes the pipe."""
    while True:
        try:
            request = _receive(IN)
        except EOFError:
            return
        try:
            answer = {"ok": HANDLERS[request["call"]](*request["args"])}
            json.dumps(answer)  # an answer must be plain data
        except Exception as e:  # noqa: BLE001 - the student's error is the answer
            answer = {"raise": [type(e).__name__, str(e), _located(e)]}
        _send(OUT, answer)


if __name__ == "__main__":
    IN, OUT = int(sys.argv[1]), int(sys.argv[2])
    serve()
