"""What the frontend needs to know about a kernel before it compiles it.

:class:`KernelSource` captures a Python function's source text, file and
first line (so diagnostics point into the user's own file) plus the globals
its names resolve through. :class:`ArgSpec` describes one argument of one
specialization: the contract between the launcher (which looks at the
actual arguments) and the frontend (which compiles for them).
"""

from __future__ import annotations

import hashlib
import inspect
import linecache
import os
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from minitriton.ir.types import Type


@dataclass
class KernelSource:
    """The source of one ``@jit`` function."""

    fn: Any
    source: str
    filename: str
    first_line: int
    globals: dict[str, Any] = field(repr=False, default_factory=dict)
    #: Columns the text lost against the file: a patched copy of ``src`` (which is
    #: dedented, as Triton's) of a nested function; diagnostics add them back.
    col_offset: int = 0
    #: The parsed AST, made by :meth:`parsed` on first use (the AST is frozen, so
    #: every specialization and every caller of this function shares it).
    _ast: Any = field(default=None, init=False, repr=False, compare=False)

    @property
    def name(self) -> str:
        """The Python function's name."""
        return self.fn.__name__

    @property
    def param_names(self) -> list[str]:
        """Parameter names in order."""
        return list(inspect.signature(self.fn).parameters)

    @classmethod
    def from_function(cls, fn: Any) -> KernelSource:
        """Capture ``fn``'s source; the text is dedented later by the parser.

        A function defined by ``exec(text)`` has no file: its text is looked
        for among its callers' variables (see :func:`exec_source`).
        """
        try:
            lines, first_line = inspect.getsourcelines(fn)
        except OSError:
            found = exec_source(fn)
            if found is None:
                raise
            return found
        filename = inspect.getsourcefile(fn) or inspect.getfile(fn)
        return cls(fn, "".join(lines), filename, first_line, fn.__globals__)

    def with_text(self, text: str) -> KernelSource:
        """The same function with the source ``text`` (a patched copy of its own).

        Without decorators (Triton's ``src`` starts at ``def``), it is placed
        at the ``def`` line, so diagnostics keep their line numbers.
        """
        first = self.first_line
        if not text.lstrip().startswith("@"):
            first += self.def_index()
        lost = max(0, _indent_of(self.source) - _indent_of(text))
        return replace(self, source=text, first_line=first, col_offset=self.col_offset + lost)

    def def_index(self) -> int:
        """The index of the ``def`` line among the source's lines (after its decorators)."""
        lines = self.source.splitlines()
        return next((i for i, line in enumerate(lines) if line.lstrip().startswith("def ")), 0)

    def from_def(self) -> str:
        """The source from its ``def`` line on, dedented: Triton's ``JITFunction.src``."""
        return textwrap.dedent("".join(self.source.splitlines(keepends=True)[self.def_index() :]))

    def nonlocals(self) -> dict[str, Any]:
        """The function's closure variables and their current values, as Triton sees them.

        A kernel defined inside another function (a test, say) reads that
        function's local variables like globals; they shadow globals of the
        same name, as in Python.
        """
        code = getattr(self.fn, "__code__", None)
        cells = getattr(self.fn, "__closure__", None)
        if code is None or not cells:
            return {}
        found: dict[str, Any] = {}
        for name, cell in zip(code.co_freevars, cells):
            try:
                found[name] = cell.cell_contents
            except ValueError:  # a variable the enclosing function has not assigned yet
                continue
        return found

    def parsed(self) -> Any:
        """The function's ``ast.FunctionDef``, parsed once per function.

        Syntax errors are not remembered: each call raises them again.
        """
        if self._ast is None:
            from minitriton.frontend import parser

            self._ast = parser.parse_function(
                self.source, self.filename, self.first_line, self.col_offset
            )
        return self._ast

    @property
    def dedented(self) -> str:
        """The source without its common indentation."""
        return textwrap.dedent(self.source)


def _indent_of(text: str) -> int:
    """The indentation of the first non-blank line of ``text``."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    return len(first) - len(first.lstrip(" \t"))


class JITBase:
    """Base class of :class:`minitriton.jit.JITFunction`.

    The frontend treats any global that is an instance of this class as a
    ``@jit`` helper it may call (or pass as a ``combine_fn``).
    """

    source: KernelSource


@dataclass(frozen=True)
class ArgSpec:
    """One kernel argument as specialized for one compilation.

    ``kind`` is ``"constexpr"`` (``value`` is the Python value, folded into
    the IR), ``"pointer"`` or ``"scalar"`` (``type`` is the IR type),
    ``"descriptor"``: a host-side tensor descriptor, ``type`` the pointer to
    its elements and ``value`` its ``(block_shape, padding, flags)``, the
    flags saying which sizes and strides are divisible by 16, or ``"tuple"``:
    a tuple (or ``NamedTuple``) argument, ``value`` its ``(class, items)``
    with one spec per item, named ``NAME_0``, ``NAME_1`` ... Like
    Triton, integers (and pointers) divisible by 16 are marked so the GPU
    backend may vectorize, and integers equal to 1 are folded as constants.
    """

    name: str
    kind: str
    type: Type | None = None
    value: Any = None
    divisible_by_16: bool = False
    equal_to_1: bool = False

    def key(self) -> tuple[Any, ...]:
        """The part of the specialization key this argument contributes."""
        if self.kind == "constexpr":
            return (self.name, "constexpr", repr(self.value))
        if self.kind == "descriptor":
            return (self.name, "descriptor", str(self.type), repr(self.value))
        if self.kind == "tuple":
            cls, items = self.value
            name = f"{cls.__module__}.{cls.__qualname__}"
            return (self.name, "tuple", name, tuple(item.key() for item in items))
        return (self.name, str(self.type), self.divisible_by_16, self.equal_to_1)

    def kernel_params(self) -> list[ArgSpec]:
        """The kernel parameters this argument becomes: itself, or a descriptor's fields.

        A descriptor of rank ``r`` is its base pointer (named as the argument),
        ``r`` sizes ``NAME_shapeD`` (``int32``) and ``r - 1`` strides
        ``NAME_strideD`` (``int64``); the last stride is 1. A tuple is the
        parameters of its items that are not constexprs, in order.
        """
        if self.kind == "tuple":
            items = self.value[1]
            return [p for item in items if item.kind != "constexpr" for p in item.kernel_params()]
        if self.kind != "descriptor":
            return [self]
        from minitriton.ir.types import I32, I64

        rank, flags = len(self.value[0]), self.value[2]
        names = [f"{self.name}_shape{d}" for d in range(rank)]
        names += [f"{self.name}_stride{d}" for d in range(rank - 1)]
        fields = [
            ArgSpec(n, "scalar", I32 if i < rank else I64, divisible_by_16=f)
            for i, (n, f) in enumerate(zip(names, flags))
        ]
        return [ArgSpec(self.name, "pointer", self.type, divisible_by_16=True), *fields]


def exec_source(fn: Any, max_frames: int = 16) -> KernelSource | None:
    """The source of a function that ``exec(text)`` defined, if a caller still holds ``text``.

    Tests build kernels from templates this way (Triton's own ``patch_kernel``
    in its interpreter mode). Each string variable of the calling frames that
    defines a function of that name is compiled, and taken only if it yields
    the very same function: bytecode, line, names, arguments and constants. A
    text that merely looks right is never used. The text is registered with
    :mod:`linecache` under a name of its own, so diagnostics show its lines.
    """
    code = getattr(fn, "__code__", None)
    if code is None or not code.co_filename.startswith("<"):
        return None
    frame = inspect.currentframe()
    try:
        for _ in range(max_frames):
            frame = frame.f_back if frame is not None else None
            if frame is None:
                return None
            for value in list(frame.f_locals.values()):
                defines = isinstance(value, str) and f"def {code.co_name}" in value
                if defines and _defines(value, code):
                    return _registered(fn, value)
    finally:
        del frame
    return None


def _defines(text: str, code: Any) -> bool:
    """True if compiling ``text`` gives a function with exactly ``code``'s bytecode and line."""
    try:
        module = compile(text, code.co_filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    wanted = _fingerprint(code)
    pending = [module]
    while pending:
        current = pending.pop()
        if current.co_name == code.co_name and _fingerprint(current) == wanted:
            return True
        pending += [c for c in current.co_consts if inspect.iscode(c)]
    return False


def _fingerprint(code: Any) -> tuple[Any, ...]:
    """What tells two compiled functions apart: bytecode, line, names, constants (nested)."""
    consts = tuple(_fingerprint(c) if inspect.iscode(c) else (type(c).__name__, repr(c))
                   for c in code.co_consts)  # fmt: skip
    return (code.co_code, code.co_firstlineno, code.co_names, code.co_varnames,
            code.co_argcount, code.co_kwonlyargcount, consts)  # fmt: skip


def _registered(fn: Any, text: str) -> KernelSource:
    """``fn``'s lines out of ``text``, which linecache learns under a name of its own."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    filename = f"<exec {fn.__code__.co_name} {digest}>"
    lines = text.splitlines(keepends=True)
    linecache.cache[filename] = (len(text), None, lines, filename)
    first = fn.__code__.co_firstlineno
    block = inspect.getblock(lines[first - 1 :])
    return KernelSource(fn, "".join(block), filename, first, fn.__globals__)


def tuple_value(cls: type, items: Sequence[Any]) -> tuple[Any, ...]:
    """A tuple of class ``cls`` (a plain tuple or a ``NamedTuple``) holding ``items``."""
    return cls(*items) if cls is not tuple else tuple(items)


#: Triton's variable for the default ``input_precision`` of fp32 dots.
F32_DEFAULT_ENV = "TRITON_F32_DEFAULT"
#: The values ``input_precision`` (and so ``TRITON_F32_DEFAULT``) may take.
F32_PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")


def f32_default_precision() -> str:
    """``TRITON_F32_DEFAULT``, else ``"tf32"``; a value Triton does not know is a ValueError.

    It lives here, beside the other inputs of a compile, so that making a
    launch's options imports no other frontend module.
    """
    value = os.environ.get(F32_DEFAULT_ENV, "").strip() or "tf32"
    if value not in F32_PRECISIONS:
        raise ValueError(
            f"{F32_DEFAULT_ENV} must be one of {', '.join(F32_PRECISIONS)}, got {value!r}"
        )
    return value


def default_fp_fusion() -> bool:
    """Triton's ``TRITON_DEFAULT_FP_FUSION`` (``knobs.language.default_fp_fusion``): whether
    float multiplies and adds may fuse into FMAs when a launch does not say; True unless
    it is ``0``, ``false``, ``off`` or ``no``."""
    value = os.environ.get("TRITON_DEFAULT_FP_FUSION", "1").strip().lower()
    return value not in ("0", "false", "off", "no")
