"""Hostile kernels for fuzzing: the project's own kernels, mutated.

Shared by the suite's fuzz test (``test_fuzz_hostile.py``, a few thousand
inputs per run) and the long run (``fuzz_long.py``, not in CI). A mutant is
made by 1 to 3 mutations of one of the kernels in ``tests/kernels``, each
drawn from a :class:`random.Random`:

* tokens: a name swapped for another name of the kernel, a token dropped or
  repeated;
* operators, literals (extremes included: ``10**30``, ``float('nan')``,
  ``'a'``, ``None``), ``tl`` builtins and dtypes swapped for others;
* nesting: an expression doubled (``(e) + (e)``) or made a long chain, a
  statement wrapped in ``if``, ``for ... in range`` or ``tl.static_range``.

:func:`check` is the property: the mutant compiles, or it gives our
located diagnostic, within a time limit; never an internal error, never a
Python repr of the compiler's objects or Python's own exception text.
"""

from __future__ import annotations

import os
import random
import re
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend"))

from test_lower_kernels import CASES, kernel_source, load_kernel_module, specs  # noqa: E402

from minitriton.cachefile import CACHE_ENV  # noqa: E402
from minitriton.compiler import compile_kernel  # noqa: E402
from minitriton.diagnostics import CompileError  # noqa: E402

SEEDS: dict[str, tuple[Any, list[Any]]] = {}
for _name, (_file, _fn, _args) in sorted(CASES.items()):
    _src = kernel_source(load_kernel_module(_file), _fn)
    SEEDS[_name] = (_src, specs(_src, _args))

OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "<", "<=", "==", "!=", "&", "|", "^", "<<", ">>"]
LITERALS = ["0", "1", "-1", "3", "16", "0.5", "1e-5", "2**31", "2**63", "10**30", "-(2**64)"]
LITERALS += ["True", "None", "'a'", "float('inf')", "float('nan')", "1e300", "65536", "1048576"]
BUILTINS = ["tl.load", "tl.store", "tl.sum", "tl.max", "tl.dot", "tl.where", "tl.exp", "tl.arange"]
BUILTINS += ["tl.zeros", "tl.program_id", "tl.cumsum", "tl.sort", "tl.atomic_add", "tl.reshape"]
BUILTINS += ["tl.static_range", "tl.full", "tl.broadcast_to", "tl.argmax", "tl.cast", "min", "len"]
DTYPES = ["tl.float16", "tl.float32", "tl.int8", "tl.int64", "tl.uint32", "tl.bfloat16", "tl.int1"]
DTYPES += ["tl.float64", "tl.float8e5"]

IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d*)?|\*\*|//|<<|>>|[<>=!]=|\S")
OP = re.compile(r"(?<=\s)(\*\*|//|<<|>>|<=|==|!=|[-+*/%<&|^])(?=\s)")
NUM = re.compile(r"(?<![A-Za-z_0-9.])\d+(\.\d*)?(e-?\d+)?")
CALL = re.compile(r"\btl\.[a-z_0-9]+")
DTYPE = re.compile(r"\btl\.(float|int|uint|bfloat)\d+")
ASSIGN = re.compile(r"^(?P<indent> +)(?P<lhs>[A-Za-z_][A-Za-z0-9_, ]*) = (?P<rhs>[^\n]+)$", re.M)
STATEMENT = re.compile(r"^(?P<indent> {4,})(?P<stmt>[A-Za-z_][^\n]*[^:\n])$", re.M)

Mutation = Callable[[random.Random, str], str]


def _sub_one(rng: random.Random, pattern: re.Pattern[str], text: str, choices: list[str]) -> str:
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    m = rng.choice(matches)
    return text[: m.start()] + rng.choice(choices) + text[m.end() :]


def swap_name(rng: random.Random, text: str) -> str:
    """A name swapped for another name of the same kernel."""
    return _sub_one(rng, IDENT, text, sorted(set(IDENT.findall(text))))


def swap_operator(rng: random.Random, text: str) -> str:
    """An operator swapped for another."""
    return _sub_one(rng, OP, text, OPERATORS)


def swap_literal(rng: random.Random, text: str) -> str:
    """A number swapped for another literal, extremes and non-numbers included."""
    return _sub_one(rng, NUM, text, LITERALS)


def swap_builtin(rng: random.Random, text: str) -> str:
    """A ``tl`` call swapped for another builtin."""
    return _sub_one(rng, CALL, text, BUILTINS)


def swap_dtype(rng: random.Random, text: str) -> str:
    """A dtype swapped for another (unsupported ones included)."""
    return _sub_one(rng, DTYPE, text, DTYPES)


def _body_tokens(text: str) -> list[re.Match[str]]:
    start = text.find("):\n")  # after the signature: keep the function a function
    return [m for m in TOKEN.finditer(text) if m.start() > start]


def drop_token(rng: random.Random, text: str) -> str:
    """One token of the body removed."""
    tokens = _body_tokens(text)
    if not tokens:
        return text
    m = rng.choice(tokens)
    return text[: m.start()] + text[m.end() :]


def repeat_token(rng: random.Random, text: str) -> str:
    """One token of the body written twice."""
    tokens = _body_tokens(text)
    if not tokens:
        return text
    m = rng.choice(tokens)
    return text[: m.end()] + " " + m.group() + text[m.end() :]


def double_expression(rng: random.Random, text: str) -> str:
    """``x = e`` becomes ``x = (e) OP (e)``, or a chain of many terms."""
    matches = list(ASSIGN.finditer(text))
    if not matches:
        return text
    m = rng.choice(matches)
    rhs = m.group("rhs").split("#")[0].strip()
    # Long chains only of short expressions: the input stays a kernel a person could write.
    terms = rng.choice([2, 2, 3, 50, 400]) if len(rhs) < 80 else 2
    new_rhs = f" {rng.choice(OPERATORS)} ".join([f"({rhs})"] * terms)
    line = f"{m.group('indent')}{m.group('lhs')} = {new_rhs}"
    return text[: m.start()] + line + text[m.end() :]


def wrap_statement(rng: random.Random, text: str) -> str:
    """A statement put inside ``if``, ``for ... in range`` or ``tl.static_range``."""
    matches = list(STATEMENT.finditer(text))
    if not matches:
        return text
    m = rng.choice(matches)
    head = rng.choice(["if True:", "if pid > 0:", "for _i in range(2):", "for _i in range(n):",
                       "for _i in tl.static_range(3):", "while False:"])  # fmt: skip
    head = head.replace("pid", rng.choice(sorted(set(IDENT.findall(text)))))
    indent = m.group("indent")
    block = f"{indent}{head}\n{indent}    {m.group('stmt')}"
    return text[: m.start()] + block + text[m.end() :]


MUTATIONS: list[Mutation] = [swap_name, swap_operator, swap_literal, swap_builtin, swap_dtype]
MUTATIONS += [drop_token, repeat_token, double_expression, wrap_statement]


def mutant(rng: random.Random) -> tuple[str, str]:
    """A (seed kernel name, mutated source) pair."""
    name = rng.choice(sorted(SEEDS))
    text = SEEDS[name][0].source
    for _ in range(rng.randint(1, 3)):
        text = rng.choice(MUTATIONS)(rng, text)
    return name, text


# ---------------------------------------------------------------- the property

#: Text that must never appear in a diagnostic: reprs of our objects and
#: Python's own exception messages.
LEAKS = ("<function", " at 0x", "Tensor(", "PyBuiltin(", "BoundMethod(", "internal compiler error",
         "Traceback", "object has no attribute", "unsupported operand type(s)", "NoneType",
         "<module", "<class", "object is not", "argument of type", "can't multiply sequence",
         "list index out of range", "maximum recursion depth", "cannot be interpreted as",
         "Error:")  # fmt: skip


class Hang(BaseException):  # noqa: N818 - not an Exception: the compiler must not catch it
    """A compile ran past the time limit."""


class TooSlow(AssertionError):
    """The property failed: a compile ran past the time limit."""


class Internal(AssertionError):
    """A compile gave an internal error or a message that leaks Python internals."""


@dataclass
class Outcome:
    """What one input did: ``compiled`` or ``diagnostic`` (anything else raises)."""

    kind: str
    message: str = ""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` past ``seconds`` of CPU time (main thread, Unix).

    CPU time, not wall time: on a loaded machine the verdict stays the same.
    """

    def on_alarm(signum: int, frame: Any) -> None:
        raise Hang(f"ran past {seconds} s of CPU time")

    previous = signal.signal(signal.SIGPROF, on_alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


@contextmanager
def no_disk_cache() -> Iterator[None]:
    """Compile without the on-disk cache: a cached mutant would not measure the compiler,
    and thousands of mutants would fill the user's cache."""
    previous = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = "0"
    try:
        yield
    finally:
        if previous is None:
            del os.environ[CACHE_ENV]
        else:
            os.environ[CACHE_ENV] = previous


def check(name: str, text: str, stop_after: str = "ir-opt", seconds: float = 10.0) -> Outcome:
    """Compile one mutant; raise :class:`Internal` or :class:`TooSlow` if the property fails."""
    src, args = SEEDS[name]
    try:
        with no_disk_cache(), time_limit(seconds):
            compile_kernel(replace(src, source=text), args, stop_after=stop_after)
    except CompileError as err:
        message = str(err)
        loc = err.first.loc
        if loc.file != src.filename or loc.line < 1:
            raise Internal(f"diagnostic not located in the kernel's file:\n{message}") from None
        leaks = [leak for leak in LEAKS if leak in message]
        if leaks:
            raise Internal(f"leaks {leaks[0]!r}:\n{message}") from None
        return Outcome("diagnostic", err.first.message)
    except Hang as e:
        raise TooSlow(str(e)) from None
    except Exception as e:  # noqa: BLE001 - any other exception is the failure looked for
        raise Internal(f"{type(e).__name__}: {e}") from e
    return Outcome("compiled")
