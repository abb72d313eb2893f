"""Lowering: the located AST of a ``@jit`` kernel -> typed block-level SSA IR.

Entry point: :func:`lower_kernel` (the launcher calls it once per
specialization). It walks the kernel's AST with an environment that maps
names to *compile-time* values (plain Python objects, folded with Python's
own semantics) or *run-time* values (:class:`~minitriton.frontend.semantic.Tensor`).

* Names resolve like Python: locals, then the function's globals (``tl``
  under any alias, ``tl.constexpr`` and plain number globals, other
  ``@jit`` functions), then a few Python builtins (``range``, ``min``,
  ``max``, ``float``, ``int``, ``len``, ``print``).
* ``if`` on a compile-time value lowers only the taken branch; on a run-time
  scalar it becomes ``scf.if`` yielding the variables the branches assign.
* ``for ... in range/tl.range`` becomes ``scf.for`` whose iter args are the
  variables assigned in the body and live before it; ``tl.static_range``
  and tuples unroll at compile time; ``while`` becomes ``scf.while``.
* Structured values (block pointers, tuples holding run-time values) cross
  every region boundary (loop iter args, ``scf.if`` results, helper
  arguments and results) flattened to one IR value per run-time field and
  are rebuilt on the other side (:mod:`minitriton.frontend.aggregate`).
* Calls to other ``@jit`` functions become ``tt.call`` of a private
  ``tt.func`` specialized on the argument types and compile-time values.

Every op carries the location of the AST node it came from; every error is
a located :class:`~minitriton.diagnostics.CompileError`.
"""

from __future__ import annotations

import builtins
import difflib
import functools
import inspect
import math
import operator
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from minitriton import language as tl_module
from minitriton.diagnostics import (
    UNKNOWN,
    CompileError,
    Diagnostic,
    DiagnosticBag,
    Location,
    error,
    internal_error,
    unsupported,
)
from minitriton.frontend import ast, capture
from minitriton.frontend import libdevice as _libdevice  # noqa: F401 - registers its IMPLS
from minitriton.frontend import promotion as P
from minitriton.frontend import scaled_dot as _scaled_dot  # noqa: F401 - registers dot_scaled
from minitriton.frontend import semantic as S
from minitriton.frontend.aggregate import (
    Structure,
    flatten,
    has_runtime,
    leaf_names,
    leaf_types,
    rebuild,
    struct_fields,
)
from minitriton.frontend.blockptr import BlockPointer
from minitriton.frontend.builder import Builder
from minitriton.frontend.builtins import COMPILING_OPTIONS, IMPLS
from minitriton.frontend.early_return import contains_return, with_continuation
from minitriton.frontend.libdevice import extern_call
from minitriton.frontend.mangle import mangle_name
from minitriton.frontend.parser import check_block_index
from minitriton.frontend.purecalls import PureCallMemo
from minitriton.frontend.semantic import Tensor
from minitriton.frontend.source import ArgSpec, JITBase, KernelSource, tuple_value
from minitriton.frontend.tensordesc import TensorDescriptor, from_kernel_args
from minitriton.ir import ops
from minitriton.ir.core import Attr, Block, BlockArgument, Region
from minitriton.ir.ops import FuncOp, Module
from minitriton.ir.types import I1, I64, BlockType, PointerType, ScalarType, Type
from minitriton.ir.types import scalar as scalar_type_named
from minitriton.language import core as tl_core
from minitriton.language.core import BUILTINS, builtin_name, constexpr
from minitriton.language.libdevice import LIBDEVICE
from minitriton.language.standard import ConstexprFunction


def lower_kernel(src: KernelSource, args: list[ArgSpec]) -> Module:
    """Lower the kernel ``src`` specialized for ``args`` into a verified-ready module.

    The module holds the kernel ``tt.func`` (its arguments are the
    non-constexpr parameters, in order) followed by one private ``tt.func``
    per specialized ``@jit`` helper it calls.
    """
    compiler = Compiler()
    try:
        kernel = compiler.lower_kernel(src, args)
    except CompileError as e:
        if not compiler.bag.items:
            raise
        compiler.record(e)
    except RecursionError:
        compiler.record(error(compiler.loc, "expression or call chain is nested too deeply"))
    except Exception as e:  # last resort: never show our traceback to users
        if not compiler.bag.items:
            raise internal_error(compiler.loc, "the frontend", e) from e
        # After a reported error the frontend went on with poisoned values (see
        # FunctionLowerer.lower_stmt); a failure of ours there is a consequence of it.
    compiler.bag.raise_if_any()
    return Module([kernel, *compiler.helpers])


# ---------------------------------------------------------------------------
# Compile-time objects that are not plain Python values
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Undefined:
    """A variable that is not defined on every path to here (see ``reason``)."""

    reason: str

    def describe(self) -> str:
        """How a diagnostic names it."""
        return "an undefined variable"


class Poison:
    """The value of a variable whose statement failed with a reported error.

    Lowering goes on after an error (the kernel's independent mistakes are
    reported together); a statement that uses a poisoned variable is
    skipped without a diagnostic of its own, since its error would only be
    a consequence of the first one.
    """

    def describe(self) -> str:
        """How a diagnostic names it."""
        return "a value whose definition failed"


@dataclass(frozen=True)
class Call:
    """A call of a ``@jit`` function: where, from which function (name, ``def``), of which."""

    loc: Location
    caller: tuple[str, Location] | None
    callee: str


def _last_line(fdef: ast.FunctionDef) -> int:
    """The last line that a node of ``fdef`` starts on."""
    return max(node.loc.line for node in ast.walk(fdef) if hasattr(node, "loc"))


def _within(loc: Location, start: Location, last_line: int) -> bool:
    """Whether ``loc`` is in the function whose ``def`` is at ``start``."""
    return loc.file == start.file and start.line <= loc.line <= last_line


class PoisonUse(CompileError):
    """Raised by a use of a :class:`Poison` value: no diagnostic, the statement is skipped."""

    def __init__(self) -> None:
        super().__init__([])


@dataclass(frozen=True)
class PyBuiltin:
    """A Python builtin the kernel language understands (``range``, ``min`` ...)."""

    name: str

    def describe(self) -> str:
        """How a diagnostic names it."""
        return f"the Python builtin '{self.name}'"


@dataclass(frozen=True)
class BoundMethod:
    """``x.sum`` / ``x.to``: a ``tl`` builtin with its first argument bound."""

    builtin: str
    self_value: Any  # a Tensor, a tensor descriptor or a constexpr number

    def describe(self) -> str:
        """How a diagnostic names it."""
        return f"the method {self.self_value.type}.{self.builtin}"


@dataclass(frozen=True)
class BoundHelper:
    """``obj.method`` of a ``@triton.aggregate`` instance: a ``@jit`` (or
    ``constexpr_function``) method with ``self`` bound."""

    fn: Any
    self_value: Any

    def describe(self) -> str:
        """How a diagnostic names it."""
        return f"the method {type(self.self_value).__name__}.{getattr(self.fn, '__name__', '?')}"


@dataclass(frozen=True)
class LogicalMethod:
    """``x.logical_and`` / ``x.logical_or``: Triton's tensor methods for ``and`` / ``or``."""

    op: str  # "and" or "or"
    self_value: Tensor

    def describe(self) -> str:
        """How a diagnostic names it."""
        return f"the method {self.self_value.type}.logical_{self.op}"


@dataclass
class Carry:
    """Variables carried through a loop, flattened to IR values (see aggregate.py).

    ``names`` are the variables, ``structures`` their flattened forms;
    ``inits`` and ``leaf_names`` are flat, one entry per IR value.
    """

    names: list[str]
    structures: list[Structure]
    inits: list[Tensor]
    leaf_names: list[str]

    @property
    def types(self) -> list[Type]:
        """The IR types of the carried values."""
        return [t.type for t in self.inits]

    def rebuilt(self, values: list[Any]) -> dict[str, Any]:
        """Each variable rebuilt from the flat IR ``values`` (block args or results)."""
        out: dict[str, Any] = {}
        i = 0
        for name, structure in zip(self.names, self.structures):
            out[name] = rebuild(structure, [Tensor(v) for v in values[i : i + structure.size]])
            i += structure.size
        return out


PY_BUILTINS = {n: PyBuiltin(n) for n in ("range", "min", "max", "float", "int", "bool", "len")}
PY_BUILTINS |= {n: PyBuiltin(n) for n in ("print", "abs", "isinstance", "tuple", "getattr")}
PY_BUILTINS |= {n: PyBuiltin(n) for n in ("hasattr", "list")}

#: Tensor methods, by the ``tl`` builtin they call with the tensor first.
TENSOR_METHODS = {"to": "cast", "T": "trans"}
TENSOR_METHODS |= {
    n: n
    for n in [
        "reshape",
        "view",
        "trans",
        "permute",
        "expand_dims",
        "broadcast_to",
        "sum",
        "max",
        "min",
        "argmax",
        "argmin",
        "cumsum",
        "cumprod",
        "sort",
        "xor_sum",
        "reduce_or",
        "histogram",
        "gather",
        "flip",
        "ravel",
        "item",
        "reduce",
        "associative_scan",
        "exp",
        "exp2",
        "log",
        "log2",
        "sqrt",
        "rsqrt",
        "abs",
        "sin",
        "cos",
        "floor",
        "ceil",
        "erf",
        "sigmoid",
        "softmax",
        "cast",
        "sqrt_rn",
        "cdiv",
        "split",
        "store",
        "atomic_add",
        "atomic_and",
        "atomic_cas",
        "atomic_max",
        "atomic_min",
        "atomic_or",
        "atomic_poll",
        "atomic_xchg",
        "atomic_xor",
    ]
}

_PY_BINOPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "<<": operator.lshift,
    ">>": operator.rshift,
    "@": operator.matmul,
}
_PY_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "is": operator.is_,
    "is not": operator.is_not,
    "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b,
}


def is_constexpr_annotation(annotation: Any) -> bool:
    """True if a parameter annotation means ``tl.constexpr``."""
    if annotation is constexpr:
        return True
    return isinstance(annotation, str) and annotation.split(".")[-1] == "constexpr"


class SemanticHandle:
    """What a library's builtin gets as ``_semantic``: its calls are lowered in this kernel.

    Triton hands its builtins its semantic object, and a library's own
    builtins (``@core.extern`` functions, an aggregate's ``__init__`` that
    takes ``_semantic``) pass it on to ``tl`` builtins and to
    ``core.extern_elementwise``. The stubs of :mod:`minitriton.language` see
    this handle and lower the call here.
    """

    def __init__(self, lowerer: FunctionLowerer, node: ast.Call) -> None:
        self.lowerer = lowerer
        self.node = node

    def call_builtin(self, name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """Lower ``tl.<name>(*args, **kwargs)`` (``libdevice.<name>`` too)."""
        values = [unwrap(a) for a in args]
        named = {k: unwrap(v) for k, v in kwargs.items()}
        return self.lowerer.call_builtin(name, values, named, self.node.loc, self.node)

    @property
    def options(self) -> Any:
        """The compile options (``num_warps`` ...), as Triton's ``_semantic.builder.options``."""
        return COMPILING_OPTIONS.get()

    @property
    def builder(self) -> SemanticHandle:
        """Triton's builtins read ``_semantic.builder.options``: the handle itself."""
        return self

    def grid_dependency_wait(self) -> None:
        """``tl.extra.cuda.gdc_wait()``."""
        with self.lowerer.b.located(self.node.loc):
            self.lowerer.b.create(ops.GridDependencyOp, [], [], {"kind": "wait"})

    def grid_dependency_launch_dependents(self) -> None:
        """``tl.extra.cuda.gdc_launch_dependents()``."""
        with self.lowerer.b.located(self.node.loc):
            self.lowerer.b.create(ops.GridDependencyOp, [], [], {"kind": "launch_dependents"})

    def make_aggregate(self, cls: type, fields: dict[str, Any]) -> Any:
        """``cls(**fields)`` of an aggregate class, built as in a kernel (``aggregate_replace``)."""
        return self.lowerer._make_struct(cls, [], fields, self.node)

    def extern_elementwise(
        self, lib_name: str, lib_path: str, args: Sequence[Any], table: dict, is_pure: bool
    ) -> Any:
        """``core.extern_elementwise``: see :func:`minitriton.frontend.libdevice.extern_call`."""
        with self.lowerer.b.located(self.node.loc):
            return extern_call(self.lowerer, lib_name, [unwrap(a) for a in args], table)


def _semantic_arguments(fn: Any, handle: SemanticHandle) -> dict[str, Any]:
    """``{"_semantic": handle}`` (or ``_builder``, Triton's name before 3.3) if ``fn`` takes it."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    return {name: handle for name in ("_semantic", "_builder") if name in params}


def unwrap(value: Any) -> Any:
    """A global or argument as a frontend value (``tl.constexpr`` unwrapped)."""
    return value.value if isinstance(value, constexpr) else value


# ---------------------------------------------------------------------------
# The compiler: state shared by the kernel and its helpers
# ---------------------------------------------------------------------------


#: ``tl.range``'s integer hints that travel to its ``scf.for``: the least value, an example.
_INT_LOOP_HINTS = {"num_stages": (0, 3), "loop_unroll_factor": (1, 2)}

#: How many statements ``tl.static_range`` loops may unroll in one kernel, in all.
UNROLL_BUDGET = 2**12


class Compiler:
    """Holds the helpers lowered so far and the location being worked on."""

    def __init__(self) -> None:
        self.helpers: list[FuncOp] = []
        self.signatures: dict[str, list[Type]] = {}
        self.in_progress: set[str] = set()
        self.loc: Location = UNKNOWN
        self._returns: dict[str, Structure] = {}
        self.unrolled = 0  # statements lowered by tl.static_range iterations so far
        self.bag = DiagnosticBag()  # the errors of the statements lowering went past

    def record(self, err: CompileError, diagnostics: list[Diagnostic] | None = None) -> None:
        """Keep ``err``'s diagnostics (or ``diagnostics``) for the one error raised at the end.

        A helper that fails is lowered again at its next call, with the same
        error: a repeated error is left out, with the notes that follow it.
        """
        if not self.bag.items:
            self.bag.kind = type(err)
        seen = {(d.loc, d.message) for d in self.bag.items}
        repeated = False
        for d in err.diagnostics if diagnostics is None else diagnostics:
            if d.severity != "note":
                repeated = (d.loc, d.message) in seen
            if not repeated:
                self.bag.items.append(d)
                seen.add((d.loc, d.message))

    def spend_unroll(self, loc: Location, statements: int, trips: str) -> None:
        """Count one static_range iteration of ``statements``; over the budget, an error."""
        self.unrolled += max(statements, 1)
        if self.unrolled > UNROLL_BUDGET:
            raise error(
                loc,
                f"tl.static_range unrolls too much: this loop of {trips} iterations takes the "
                f"kernel past {UNROLL_BUDGET} unrolled statements",
                help="use tl.range (a run-time loop), or fewer iterations",
            )

    def parse(self, src: KernelSource) -> ast.FunctionDef:
        """The AST of ``src`` (parsed once per function, kept by ``src``)."""
        return src.parsed()

    def lower_kernel(self, src: KernelSource, args: list[ArgSpec]) -> FuncOp:
        """Build the kernel's ``tt.func``."""
        fdef = self.parse(src)
        self.loc = fdef.loc
        specs = {a.name: a for a in args}
        defaults = _python_defaults(src)
        block = Block()
        env: dict[str, Any] = {}
        arg_attrs: list[dict[str, Any]] = []
        for param in fdef.params:
            if param.star:
                raise error(param.loc, "a kernel cannot take '*args'; only @jit helpers can",
                            help="list the kernel's parameters, or pass a tuple")  # fmt: skip
            spec = specs.get(param.name)
            if spec is None:
                env[param.name] = _default_value(param, defaults)
                continue
            env[param.name] = _kernel_arg(Builder(block, fdef.loc), spec, arg_attrs)
        attrs: dict[str, Any] = {"sym_name": fdef.name, "result_types": []}
        if any(arg_attrs):
            attrs["arg_attrs"] = arg_attrs
        if not getattr(COMPILING_OPTIONS.get(), "enable_fp_fusion", True):
            attrs["fp_fusion"] = False  # enable_fp_fusion=False: the GPU keeps mul and add apart
        if not getattr(COMPILING_OPTIONS.get(), "enable_reflect_ftz", True):
            attrs["reflect_ftz"] = False  # exp2 and rsqrt keep subnormals (no .ftz)
        func = FuncOp(attrs=attrs, regions=[Region(block)], loc=fdef.loc)
        lowerer = FunctionLowerer(self, src, Builder(block, fdef.loc), env, is_kernel=True)
        returned = lowerer.lower_body(fdef)
        if returned is not None:
            raise error(lowerer.return_loc or fdef.loc, "a kernel cannot return a value")
        lowerer.b.create(ops.ReturnOp, [], loc=lowerer.end_loc(fdef))
        return func

    def call_helper(
        self, caller: FunctionLowerer, fn: JITBase, args: list[Any], kwargs: dict[str, Any]
    ) -> Any:
        """Lower a call to the ``@jit`` function ``fn``: ``tt.call`` of its specialization."""
        src = fn.source
        fdef = self.parse(src)
        bound = _bind_helper(caller.b.loc, src, fdef.name, args, kwargs)
        runtime: list[Tensor] = []
        structures: dict[str, Structure] = {}
        key_parts: list[str] = []
        constants: list[str] = []
        for i, (name, value) in enumerate(bound.items()):
            # Like Triton, a helper's tl.constexpr annotations do not apply to calls
            # from a kernel: tutorial 06 passes the offs_m block to `offs_m: tl.constexpr`.
            if has_runtime(value):
                # Tensors, block pointers and tuples holding them: one IR argument per leaf.
                leaves, structures[name] = flatten(caller.b, value)
                runtime.extend(leaves)
                key_parts.append(structures[name].mangle())
            else:
                constants.append(f"{i}c{value!r}")
        name = mangle_name(fdef.name, key_parts, constants)
        if name not in self.signatures:
            self._lower_helper(caller, name, src, fdef, bound, structures)
        results = self.signatures[name]
        call = caller.b.create(ops.CallOp, [t.handle for t in runtime], results, {"callee": name})
        return rebuild(self._returns[name], [Tensor(r) for r in call.results])

    def _lower_helper(
        self,
        caller: FunctionLowerer,
        name: str,
        src: KernelSource,
        fdef: ast.FunctionDef,
        bound: dict[str, Any],
        structures: dict[str, Structure],
    ) -> None:
        if name in self.in_progress:
            raise error(self.loc, f"recursive call of @jit function '{fdef.name}' is not supported")
        self.in_progress.add(name)
        saved_loc = self.loc
        try:
            self._lower_helper_body(caller, name, src, fdef, bound, structures)
        finally:
            # A helper that failed is no recursion at its next call.
            self.in_progress.discard(name)
            self.loc = saved_loc

    def _lower_helper_body(
        self,
        caller: FunctionLowerer,
        name: str,
        src: KernelSource,
        fdef: ast.FunctionDef,
        bound: dict[str, Any],
        structures: dict[str, Structure],
    ) -> None:
        block = Block()
        env: dict[str, Any] = {}
        for pname, value in bound.items():
            structure = structures.get(pname)
            if structure is None:
                env[pname] = value
                continue
            types_ = leaf_types(structure)
            args = [_add_block_arg(block, t, n) for t, n in zip(types_, leaf_names(value, pname))]
            env[pname] = rebuild(structure, [Tensor(a) for a in args])
        calls = caller.call_of(fdef.name)
        lowerer = FunctionLowerer(self, src, Builder(block, fdef.loc), env, False, calls)
        returned = lowerer.lower_body(fdef)
        lowerer.raise_if_failed()
        end = lowerer.return_loc or lowerer.end_loc(fdef)
        with lowerer.b.located(end):
            # A compile-time result stays one, as Triton's constexpr returns do: the helper is
            # lowered once per specialization, so every call with it returns that value.
            tensors, self._returns[name] = flatten(lowerer.b, returned)
        lowerer.b.create(ops.ReturnOp, [t.handle for t in tensors], loc=end)
        result_types = [t.type for t in tensors]
        attrs = {"sym_name": name, "result_types": result_types, "private": True}
        func = FuncOp(attrs=attrs, regions=[Region(block)], loc=fdef.loc)
        self.helpers.append(func)
        self.signatures[name] = result_types

    def inline_helper(self, caller: FunctionLowerer, fn: JITBase, args: list[Any]) -> Any:
        """Lower ``fn``'s body in place (a ``tt.reduce``/``tt.scan`` combiner)."""
        src = fn.source
        fdef = self.parse(src)
        bound = _bind_helper(caller.b.loc, src, fdef.name, args, {})
        calls = caller.call_of(fdef.name)
        lowerer = FunctionLowerer(self, src, caller.b, dict(bound), False, calls)
        lowerer.depth = 0
        saved = self.loc
        returned = lowerer.lower_body(fdef)
        self.loc = saved
        lowerer.raise_if_failed()
        return returned


def _add_block_arg(block: Block, t: Type | None, name: str) -> Any:
    if t is None:
        raise error(UNKNOWN, f"argument '{name}' has no type")
    arg = BlockArgument(t, len(block.args), name)
    block.args.append(arg)
    return arg


def _default_value(param: ast.Param, defaults: dict[str, Any]) -> Any:
    """The value of a kernel parameter given no argument: its Python default."""
    if param.name not in defaults:
        raise error(param.loc, f"no argument given for parameter '{param.name}'")
    return unwrap(defaults[param.name])


def _python_defaults(src: KernelSource) -> dict[str, Any]:
    try:
        params = inspect.signature(src.fn).parameters
    except (TypeError, ValueError):
        return {}
    return {n: p.default for n, p in params.items() if p.default is not inspect.Parameter.empty}


def _bind_helper(
    loc: Location, src: KernelSource, name: str, args: list[Any], kwargs: dict[str, Any]
) -> dict[str, Any]:
    """Bind call arguments to a helper's parameters, with Python's rules."""
    try:
        sig = inspect.signature(src.fn)
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise error(loc, f"wrong arguments for @jit function '{name}': {e}") from None
    bound.apply_defaults()
    return {k: unwrap(v) for k, v in bound.arguments.items()}


# ---------------------------------------------------------------------------
# Syntactic helpers
# ---------------------------------------------------------------------------


#: The operators whose signed-integer overflow debug mode reports, by Triton's names.
_SANITIZED = {"+": "add", "-": "sub", "*": "mul"}


def _check_constexpr_min_max(name: str, args: list[Any], loc: Location) -> None:
    """Triton refuses NaN and -0.0 in a compile-time ``min``/``max``: Python's answer for them
    depends on the order of the arguments, and ``tl.minimum``'s may differ."""
    for arg in args:
        if not isinstance(arg, float):
            continue
        if math.isnan(arg):
            raise error(loc, f"constexpr {name} does not support NaN values",
                        help=f"use tl.{name}imum(a, b, propagate_nan=...) on tensors")  # fmt: skip
        if arg == 0.0 and math.copysign(1.0, arg) < 0:
            raise error(loc, f"constexpr {name} does not support negative zero",
                        help="write 0.0, or compare the values yourself")  # fmt: skip


def _value_type(value: Any) -> Any:
    """``value.type`` as Triton gives it: a tensor's type, a ``tl.tuple_type`` of the
    items' types, or ``tl.constexpr_type(value)`` for a compile-time value."""
    if isinstance(value, Tensor):
        return value.type
    if isinstance(value, tuple):
        fields = getattr(type(value), "_fields", None)
        return tl_module.tuple_type([_value_type(v) for v in value], fields)
    return tl_module.constexpr_type(value)


def _holds_py_scalar(value: Any) -> bool:
    """True for a (nested) tuple with a Python scalar among its items."""
    if not isinstance(value, tuple):
        return False
    return any(P.is_py_scalar(v) or _holds_py_scalar(v) for v in value)


def _unpack_message(targets: int, values: int) -> str:
    """CPython's words (and Triton's) for a tuple assignment of the wrong length."""
    if values > targets:
        return f"too many values to unpack (expected {targets}): {values} values, {targets} targets"
    return f"not enough values to unpack (expected {targets}, got {values})"


def assigned_names(stmts: list[ast.Stmt]) -> dict[str, Location]:
    """Names assigned anywhere in ``stmts`` (nested blocks included) -> last location."""
    found: dict[str, Location] = {}
    for stmt in stmts:
        for node in ast.walk(stmt):
            for name in _target_names(node):
                found[name] = node.loc
    return found


def _target_names(node: ast.Node) -> list[str]:
    """The names ``node`` assigns (tuple targets included), in source order."""
    return [
        name_node.id
        for target in _targets(node)
        for name_node in ast.walk(target)
        if isinstance(name_node, ast.Name)
    ]


def _targets(node: ast.Node) -> list[ast.Expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)):
        return [node.target]
    return []


def _reads_outside_loops(fdef: ast.FunctionDef) -> set[str]:
    """Names read somewhere in ``fdef`` outside every ``for`` loop that has them as target."""
    reads: set[str] = set()

    def visit(node: ast.Node, bound: frozenset[str]) -> None:
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            bound = bound | {node.target.id}
        stored = {id(n) for t in _targets(node) for n in ast.walk(t) if isinstance(n, ast.Name)}
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Name):
                if id(child) not in stored and child.id not in bound:
                    reads.add(child.id)
                continue
            visit(child, bound)

    visit(fdef, frozenset())
    return reads


# ---------------------------------------------------------------------------
# The function lowerer
# ---------------------------------------------------------------------------

#: The help for an ``if`` / ``while`` on a block: ``{cond}`` is the condition as written.
_BLOCK_CONDITION_HELP = {
    "if": "choose per element with tl.where({cond}, a, b) (a where it holds, b elsewhere); "
    "or test one scalar, e.g. if tl.max(({cond}).to(tl.int32)) > 0: (any element)",
    "while": "a loop runs for the whole block: loop while any element holds with "
    "while tl.max(({cond}).to(tl.int32)) > 0:, and update only those elements with "
    "tl.where({cond}, new, old)",
}

# The environment entry that carries a branch's returned value to the merge
# of a run-time if (not a valid Python name, so it cannot clash).
_RETURN = "<return>"

#: The signatures of the ``tl`` builtins' stubs (library functions that never change):
#: ``inspect.signature`` costs more than the rest of binding a call.
_STUB_SIGNATURES: dict[Any, inspect.Signature] = {}


def _stub_signature(stub: Any) -> inspect.Signature:
    sig = _STUB_SIGNATURES.get(stub)
    if sig is None:
        sig = _STUB_SIGNATURES[stub] = inspect.signature(stub)
    return sig


class FunctionLowerer:
    """Lowers one function body (kernel or helper) into ``self.b``'s block."""

    def __init__(
        self,
        compiler: Compiler,
        src: KernelSource,
        builder: Builder,
        env: dict[str, Any],
        is_kernel: bool,
        calls: tuple[Call, ...] = (),
    ) -> None:
        self.compiler = compiler
        self.src = src
        self.calls = calls  # the calls that led here, from the kernel's on
        self.fdef: ast.FunctionDef | None = None
        self.globals = src.globals
        self.nonlocals = src.nonlocals()
        self.b = builder
        self.env = env
        self.is_kernel = is_kernel
        self.failed = False  # a statement of this function failed (and was recorded)
        self.depth = 0  # run-time regions (scf.if/for/while bodies) we are inside
        self.loop_depth = 0  # loops (run-time or unrolled) we are inside
        self.returned = False
        self.return_value: Any = None
        self.return_loc: Location | None = None
        self.pure_calls = PureCallMemo()  # repeated tl.rand(...) calls lowered once
        self._reads: set[str] | None = None  # names read outside loops that bind them

    # -- entry ----------------------------------------------------------------
    def lower_body(self, fdef: ast.FunctionDef) -> Any:
        """Lower the statements of ``fdef``; returns the returned value, if any."""
        self.fdef = fdef
        self.lower_stmts(fdef.body)
        return self.return_value

    def call_of(self, callee: str) -> tuple[Call, ...]:
        """The calls that lead into ``callee``, called from here."""
        here = (self.fdef.name, self.fdef.loc) if self.fdef else None
        return (*self.calls, Call(self.b.loc, here, callee))

    def placed(self, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
        """``diagnostics`` placed in this function, then a note for each call that led here.

        Their carets then say where they are as Triton's errors do (``at 2:4:
        in kernel``), and an error in a helper shows how the kernel reached it.
        """
        if self.fdef is None or not diagnostics:
            return diagnostics  # none: a helper's error, recorded with its calls already
        here, last = (self.fdef.name, self.fdef.loc), _last_line(self.fdef)
        placed = [
            replace(d, function=here) if d.function is None and _within(d.loc, here[1], last) else d
            for d in diagnostics
        ]
        if any(d.message.endswith(CALLED_HERE) for d in placed):
            return placed  # an inner helper's error already has its calls
        notes = [
            Diagnostic(c.loc, f"'{c.callee}' {CALLED_HERE}", "note", function=c.caller)
            for c in reversed(self.calls)
        ]
        return placed + notes

    def end_loc(self, fdef: ast.FunctionDef) -> Location:
        """Where the implicit ``return`` at the end of ``fdef`` is located."""
        last = fdef.body[-1] if fdef.body else fdef
        return last.loc

    # -- statements -----------------------------------------------------------
    def lower_stmts(self, stmts: list[ast.Stmt]) -> None:
        """Lower statements in order, stopping after a ``return``.

        An ``if`` that contains a ``return`` takes the statements after it
        into its branches (see :mod:`minitriton.frontend.early_return`).
        """
        for i, stmt in enumerate(stmts):
            if self.returned:
                return
            rest = stmts[i + 1 :]
            if isinstance(stmt, ast.If) and rest and self.loop_depth == 0 and contains_return(stmt):
                self.lower_stmt(with_continuation(stmt, rest))
                return
            self.lower_stmt(stmt)

    def lower_stmt(self, stmt: ast.Stmt) -> None:
        """Dispatch one statement.

        A statement that fails is recorded and skipped: the variables it
        assigns are poisoned (:class:`Poison`) and lowering goes on with the
        next statement, so that independent mistakes are reported together,
        each once. In a ``@jit`` helper too: once its body is done, the
        caller's statement fails with no diagnostic of its own
        (:meth:`raise_if_failed`).
        """
        self.compiler.loc = stmt.loc
        saved = (self.env, self.depth, self.loop_depth)
        try:
            with self.b.located(stmt.loc):
                method = getattr(self, "stmt_" + type(stmt).__name__)
                method(stmt)
        except CompileError as err:
            self.env, self.depth, self.loop_depth = saved
            self.failed = True
            self.compiler.record(err, self.placed(err.diagnostics))
            for node in ast.walk(stmt):
                for name in _target_names(node):
                    self.env[name] = Poison()

    def raise_if_failed(self) -> None:
        """After a helper's body: make the caller's statement fail if one of ours did."""
        if self.failed:
            raise PoisonUse()  # each failing statement was recorded where it failed

    def stmt_PassStmt(self, node: ast.PassStmt) -> None:  # noqa: N802
        """``pass``: nothing to lower."""

    def stmt_Raise(self, node: ast.Raise) -> None:  # noqa: N802
        """``raise``, reached: kernels cannot raise (one in a branch left out is fine)."""
        raise error(
            node.loc,
            "unsupported construct: raise statement",
            help="use tl.device_assert(cond, msg) to check at run time, or "
            "tl.static_assert(cond, msg) while compiling",
        )

    def stmt_ExprStmt(self, node: ast.ExprStmt) -> None:  # noqa: N802
        """An expression statement (a call, usually).

        A call of a function marked ``@triton.must_use_result`` (``tl.advance``
        too, which moves nothing by itself) is an error here: its result is dropped.
        """
        if not isinstance(node.value, ast.Call):
            self.eval(node.value)
            return
        call = node.value
        self.compiler.loc = call.loc  # as eval() of the call would set it
        with self.b.located(call.loc):
            fn = self.eval(call.func)  # once: the check and the call share it
            self._check_result_used(call, fn)
            self._call_node(call, fn)

    def _check_result_used(self, call: ast.Call, fn: Any) -> None:
        if isinstance(fn, BoundMethod):
            fn = BUILTINS.get(fn.builtin)
        note = getattr(fn, "_must_use_result", False) or getattr(
            getattr(fn, "fn", None), "_must_use_result", False
        )
        if not note:
            return
        message = f"The result of {_expr_text(call.func)} is not being used."
        raise error(
            call.loc,
            f"{message} {note}" if isinstance(note, str) else message,
            help="assign it: x = f(...)",
        )

    def stmt_Assign(self, node: ast.Assign) -> None:  # noqa: N802
        """``a = b = value`` and tuple unpacking."""
        value = self.eval(node.value)
        for target in node.targets:
            self.bind(target, value)

    def stmt_AnnAssign(self, node: ast.AnnAssign) -> None:  # noqa: N802
        """``x: tl.constexpr = value``: an assignment, as in Triton, which also takes a
        run-time value there (``n: tl.constexpr = BLOCK * runtime_count``)."""
        if node.value is None:
            return
        self.bind(node.target, self.eval(node.value))

    def stmt_AugAssign(self, node: ast.AugAssign) -> None:  # noqa: N802
        """``x op= value``."""
        if not isinstance(node.target, ast.Name):
            raise error(node.target.loc, "only variables can be targets of augmented assignment")
        left = self.lookup(node.target)
        right = self.eval(node.value)
        self.bind(node.target, self.binop(node.op, left, right, node.loc))

    def stmt_Return(self, node: ast.Return) -> None:  # noqa: N802
        """``return [value]``: at the end, or inside ``if`` branches (not inside loops)."""
        if self.loop_depth > 0:
            raise error(
                node.loc,
                "Cannot have `return` statements inside `while` or `for` statements in triton",
                help="set a flag, stop the loop with it, and test it after the loop",
            )
        self.return_value = self.eval(node.value) if node.value is not None else None
        self.return_loc = node.loc
        self.returned = True

    def stmt_Assert(self, node: ast.Assert) -> None:  # noqa: N802
        """``assert cond, msg``: static if compile-time, else ``tt.assert``."""
        cond = self.eval(node.test)
        msg = self.eval(node.msg) if node.msg is not None else ""
        self.call_builtin(
            "static_assert" if not isinstance(cond, Tensor) else "device_assert",
            [cond, msg],
            {},
            node.loc,
        )

    def stmt_If(self, node: ast.If) -> None:  # noqa: N802
        """Compile-time ``if`` picks a branch; run-time ``if`` becomes ``scf.if``."""
        cond = self.eval(node.test)
        if not isinstance(cond, Tensor):
            self.lower_stmts(node.body if _truth(self.b.loc, cond) else node.orelse)
            return
        with self.b.located(node.test.loc):
            flag = self._scalar_condition(cond, "if", node.test)
        self._lower_runtime_if(node, flag)

    def _scalar_condition(self, cond: Tensor, what: str, test: ast.Expr) -> Tensor:
        if cond.is_block and math.prod(cond.shape) == 1:  # one truth value: Triton unsplats it
            cond = self.call_builtin("item", [cond], {}, self.b.loc)
        if cond.is_block:
            raise error(
                self.b.loc,
                f"the condition of {what} must be a scalar, got a block ({cond.type}): "
                "it has one truth value per element",
                help=_BLOCK_CONDITION_HELP[what].format(cond=_source_text(test, "cond")),
            )
        return S.to_bool(self.b, cond)

    def _lower_runtime_if(self, node: ast.If, flag: Tensor, unify: str | None = None) -> None:
        """``scf.if`` for ``node``; with ``unify``, that variable's values in the two
        branches are first brought to one type and shape (a conditional expression's)."""
        before = self.env
        then_block, else_block = Block(), Block()
        then_env, then_ret = self._lower_branch(node.body, then_block, before)
        else_env, else_ret = self._lower_branch(node.orelse, else_block, before)
        if unify is not None:
            self._unify(unify, (then_block, then_env), (else_block, else_env))
        returns = then_ret or else_ret
        if returns:
            self._check_return_paths(node, then_env, else_env)
            # The statements after the if were moved into its branches (early_return):
            # nothing follows it, so only the returned value merges, not the variables.
            then_env, else_env = ({_RETURN: env.get(_RETURN)} for env in (then_env, else_env))
        self.env = dict(before)
        names, then_vals, else_vals = self._merge_plan(node, before, then_env, else_env)
        then_t, then_s = self._materialize(then_block, then_vals)
        else_t, else_s = self._materialize(else_block, else_vals)
        for name, a, c in zip(names, then_s, else_s):
            if a != c:
                _check_const_merge(node, name, a, c, self.fdef.loc if self.fdef else node.loc)
                raise error(
                    node.loc,
                    f"variable '{name}' has type {a.describe()} in the then-branch "
                    f"but {c.describe()} in the else-branch",
                    help=_branch_type_help(name, has_else=bool(node.orelse)),
                )
        with self.b.at(then_block):
            self.b.create(ops.YieldOp, [t.handle for t in then_t], loc=node.loc)
        with self.b.at(else_block):
            self.b.create(ops.YieldOp, [t.handle for t in else_t], loc=node.loc)
        regions = [Region(then_block), Region(else_block)]
        op = self.b.create(
            ops.IfOp, [flag.handle], [t.type for t in then_t], loc=node.loc, regions=regions
        )
        hints = [n for name, v in zip(names, then_vals) for n in leaf_names(v, name)]
        for hint, result in zip(hints, op.results):
            result.name_hint = hint
        merged = Carry(names, then_s, then_t, hints)
        self.env.update(merged.rebuilt(op.results))
        if returns:
            # Both branches run to the end of the function (early_return), so
            # the function returns here, with the merged value.
            self.returned = True
            self.return_value = self.env.pop(_RETURN, None)

    def _unify(self, name: str, *branches: tuple[Block, dict[str, Any]]) -> None:
        """Promote ``name``'s value in each branch as ``tl.where`` would its operands."""
        values = [env.get(name) for _, env in branches]
        kinds = [isinstance(v, Tensor) or P.is_py_scalar(v) for v in values]
        if not all(kinds) or not any(isinstance(v, Tensor) for v in values):
            return  # compile-time values, None or structures: merged as they are
        if any(isinstance(v, Tensor) and isinstance(v.dtype, PointerType) for v in values):
            return  # pointers are not promoted: equal types merge, others are reported
        dtype = S.computation_type(self.b, values[0], values[1], P.ARITH)
        shape = S.broadcast_shapes(self.b, *(S.shape_of(v) for v in values))
        for (block, env), value in zip(branches, values):
            with self.b.at(block):
                env[name] = S.convert(self.b, value, dtype, shape)

    def _lower_branch(
        self, stmts: list[ast.Stmt], block: Block, env: dict[str, Any]
    ) -> tuple[dict, bool]:
        """Lower one branch; returns its environment and whether it returned."""
        self.env = dict(env)
        self.depth += 1
        with self.b.at(block):
            self.lower_stmts(stmts)
        self.depth -= 1
        returned = self.returned
        if returned:
            self.env[_RETURN] = self.return_value
        self.returned, self.return_value = False, None
        return self.env, returned

    def _check_return_paths(self, node: ast.If, then_env: dict, else_env: dict) -> None:
        """A function that returns a value on one path must return one on every path."""
        has_value = [env.get(_RETURN) is not None for env in (then_env, else_env)]
        if has_value[0] == has_value[1]:
            return
        raise error(
            self.return_loc or node.loc,
            "this function returns a value on some paths but not on others "
            f"(see the if at line {node.loc.line})",
            help="return a value on every path, or on none",
        )

    def _merge_plan(
        self, node: ast.If, before: dict, then_env: dict, else_env: dict
    ) -> tuple[list[str], list[Any], list[Any]]:
        """Decide, per variable, whether it is unchanged, undefined or yielded."""
        names: list[str] = []
        then_vals: list[Any] = []
        else_vals: list[Any] = []
        for name in dict.fromkeys([*then_env, *else_env]):
            a, c = then_env.get(name), else_env.get(name)
            if a is before.get(name) and c is before.get(name):
                continue
            if isinstance(a, Poison) or isinstance(c, Poison):
                self.env[name] = Poison()  # a branch's statement failed: reported there
                continue
            branches = (("then", then_env, a), ("else", else_env, c))
            missing = [w for w, env, v in branches if name not in env or _undef(v)]
            if missing:
                where = "else" if missing == ["then"] else "then"
                reason = (
                    f"it is assigned only in the {where}-branch of the if at line {node.loc.line}"
                    if len(missing) == 1
                    else f"it is not defined before the if at line {node.loc.line}"
                )
                self.env[name] = Undefined(reason)
                continue
            if _same_compile_time(a, c):
                self.env[name] = a
                continue
            names.append(name)
            then_vals.append(a)
            else_vals.append(c)
        return names, then_vals, else_vals

    def _materialize(self, block: Block, values: list[Any]) -> tuple[list[Tensor], list[Structure]]:
        """Flatten each value to IR values at the end of ``block`` (scalars become constants)."""
        leaves: list[Tensor] = []
        structures: list[Structure] = []
        with self.b.at(block):
            for v in values:
                flat, structure = flatten(self.b, v, scalars=True)
                leaves.extend(flat)
                structures.append(structure)
        return leaves, structures

    # -- loops ------------------------------------------------------------------
    def stmt_While(self, node: ast.While) -> None:  # noqa: N802
        """``while cond: body`` -> ``scf.while``."""
        assigned = assigned_names(node.body)
        carry = self._loop_carried(assigned, set(), node.loc)
        types_ = carry.types
        before = Block(types_, carry.leaf_names)
        after = Block(types_, carry.leaf_names)
        outer_env = self.env
        self.env = dict(outer_env)
        self.env.update(carry.rebuilt(before.args))
        with self.b.at(before):
            cond = self.eval(node.test)
            if not isinstance(cond, Tensor):
                self.env = outer_env
                _check_static_while(node, cond)
                return
            with self.b.located(node.test.loc):
                flag = self._scalar_condition(cond, "while", node.test)
            self.b.create(ops.ConditionOp, [flag.handle, *before.args], loc=node.loc)
        self.env = dict(outer_env)
        self.env.update(carry.rebuilt(after.args))
        body_env = self._lower_loop_body(node, after, carry, assigned)
        self.env = outer_env
        op = self.b.create(
            ops.WhileOp,
            [t.handle for t in carry.inits],
            types_,
            loc=node.loc,
            regions=[Region(before), Region(after)],
        )
        self._after_loop(op, carry, assigned, body_env, node, "while")

    def stmt_For(self, node: ast.For) -> None:  # noqa: N802
        """``for`` over ``range``/``tl.range`` (scf.for), ``tl.static_range`` or a tuple."""
        it = node.iter
        if isinstance(it, ast.Call):
            fn = self.eval(it.func)
            kind = _range_kind(fn)
            if kind is not None:
                bounds = self._range_bounds(kind, fn, it)
                if kind == "static_range":
                    return self._unroll(node, range(*bounds), it.loc)
                return self._lower_scf_for(node, bounds, self._loop_hints(kind, it))
        value = self.eval(it)
        if isinstance(value, (tuple, list)):
            return self._unroll(node, value)
        raise error(
            it.loc,
            "for loops must iterate over range(...), tl.range(...), "
            "tl.static_range(...) or a compile-time tuple",
        )

    def _range_bounds(self, kind: str, fn: Any, call: ast.Call) -> tuple[Any, Any, Any]:
        args = [self.eval(a) for a in call.args]
        kwargs = {k.name: self.eval(k.value) for k in call.keywords}
        if kind == "pyrange":
            _check_pyrange_args(call, len(args), list(kwargs))
            start, end, step = _range_triple(args)
        else:
            bound = self.bind_builtin(kind, BUILTINS[kind], args, kwargs, call)
            if bound["arg1"] is None:
                raise error(
                    call.loc,
                    f"tl.{kind}() needs an end bound, got None",
                    help=f"write tl.{kind}(N) or tl.{kind}(start, end)",
                )
            start, end, step = _range_triple(
                [v for v in (bound["arg1"], bound["arg2"], bound["step"]) if v is not None]
            )
        if kind == "static_range" and any(isinstance(v, Tensor) for v in (start, end, step)):
            raise error(call.loc, "tl.static_range needs compile-time bounds")
        for v in (start, end, step):
            _check_range_bound(call.loc, v)
        if not isinstance(step, Tensor) and step == 0:
            raise error(call.loc, "range() step must not be zero")
        return start, end, step

    def _loop_hints(self, kind: str, call: ast.Call) -> dict[str, Attr]:
        """The ``tl.range`` hints the GPU backend reads, as ``scf.for`` attributes.

        ``num_stages=N`` (this loop's pipelining depth, read by the
        ``software-pipeline`` pass), ``warp_specialize=True`` (read by the
        ``warp-specialize`` pass) and ``loop_unroll_factor=F`` (read by the
        ``loop-unroll`` pass) travel; the other hints are accepted and
        ignored.
        """
        hints: dict[str, Attr] = {}
        if kind != "range":
            return hints
        for k in call.keywords:
            if k.name != "warp_specialize" and k.name not in _INT_LOOP_HINTS:
                continue
            value = self.eval(k.value)
            value = value.value if isinstance(value, constexpr) else value
            if k.name == "warp_specialize" and isinstance(value, (bool, int)) and value:
                hints["warp_specialize"] = True  # a constexpr flag, 1 or True
            elif k.name in _INT_LOOP_HINTS and value is not None:
                low, example = _INT_LOOP_HINTS[k.name]
                if isinstance(value, bool) or not isinstance(value, int) or value < low:
                    raise error(
                        k.value.loc,
                        f"tl.range's {k.name} must be a compile-time int >= {low}, got {value!r}",
                        help=f"pass a literal or a tl.constexpr, e.g. {k.name}={example}",
                    )
                hints[k.name] = value
        return hints

    def _unroll(self, node: ast.For, values: Any, budget_loc: Location | None = None) -> None:
        """Lower the body once per value; ``budget_loc``: a static_range, counted in the budget."""
        self.depth += 1
        self.loop_depth += 1
        for value in values:
            if self.returned:
                break
            if budget_loc is not None:
                self.compiler.spend_unroll(budget_loc, len(node.body), _trip_text(values))
            self.bind(node.target, value)
            self.lower_stmts(node.body)
        self.depth -= 1
        self.loop_depth -= 1

    def _lower_scf_for(
        self, node: ast.For, bounds: tuple[Any, Any, Any], hints: dict[str, Attr] | None = None
    ) -> None:
        if not isinstance(node.target, ast.Name):
            raise error(node.target.loc, "the target of a for loop over a range must be a name")
        start, step = bounds[0], bounds[2]
        # Only a Python number can count down; anything else is checked by _loop_bounds.
        negative = isinstance(step, (int, float)) and step < 0
        if negative:
            bounds = self._count_down(bounds, node.iter.loc)
        with self.b.located(node.iter.loc):
            lb, ub, step_t = self._loop_bounds(bounds)
        target = node.target.id
        assigned = assigned_names(node.body)
        carry = self._loop_carried(assigned, {target}, node.loc)
        with self.b.located(node.loc):
            first = S.cast(self.b, start, lb.dtype) if negative else lb
            last = self._carry_last_value(node, carry, first)
        types_ = carry.types
        body = Block([lb.type, *types_], [target if not negative else "k", *carry.leaf_names])
        outer_env = self.env
        self.env = dict(outer_env)
        self.env[target] = Tensor(body.args[0])
        if negative:  # the k-th iteration's value: start + k * step
            with self.b.at(body):
                k_step = self.binop("*", Tensor(body.args[0]), step, node.iter.loc)
                self.env[target] = self.binop("+", start, k_step, node.iter.loc)
        self.env.update(carry.rebuilt(body.args[1:]))
        body_env = self._lower_loop_body(node, body, carry, assigned, last)
        self.env = outer_env
        operands = [lb.handle, ub.handle, step_t.handle, *(t.handle for t in carry.inits)]
        op = self.b.create(
            ops.ForOp, operands, types_, hints or None, loc=node.loc, regions=[Region(body)]
        )
        self._after_loop(op, carry, assigned, body_env, node, "for")
        if last is not None:
            self.env[target] = self.env.pop(last)

    def _carry_last_value(self, node: ast.For, carry: Carry, first: Tensor) -> str | None:
        """Carry the loop variable's last value out of the loop, if the function uses it.

        As in Python, ``i`` after ``for i in range(...)`` is its value in the
        last iteration. It is carried as a hidden loop variable, only when
        ``i`` appears outside the loop (so other loops keep their form). If
        the loop runs no iteration, ``i`` keeps the value it had before the
        loop, or, where it had none (Python would raise ``NameError``), the
        range's start.
        """
        assert isinstance(node.target, ast.Name)
        target = node.target.id
        if not self._used_outside(node, target):
            return None
        before = self.env.get(target)
        init = first
        if isinstance(before, Tensor) and before.type == first.type:
            init = before
        elif (
            type(before) is int and isinstance(first.dtype, ScalarType) and first.dtype.is_signed()
        ):
            init = S.cast(self.b, before, first.dtype)  # a constant, checked to fit
        hidden = f"<last {target}>"  # not a Python name: it cannot clash
        carry.names.append(hidden)
        carry.structures.append(flatten(self.b, init, scalars=True)[1])
        carry.inits.append(init)
        carry.leaf_names.append(target)
        return hidden

    def _used_outside(self, node: ast.For, name: str) -> bool:
        """Whether the function reads ``name`` outside every loop whose variable it is.

        A later ``for off in ...`` rebinds ``off``, so reads inside it do not
        need this loop's last value (layer norm's loops all use ``off``).
        """
        if self._reads is None:
            self._reads = _reads_outside_loops(self.compiler.parse(self.src))
        return name in self._reads

    def _lower_loop_body(
        self,
        node: ast.For | ast.While,
        block: Block,
        carry: Carry,
        assigned: dict[str, Location],
        last: str | None = None,
    ) -> dict[str, Any]:
        """Lower ``node.body`` into ``block``, ending it with the yield of the carried values.

        ``last``: the hidden variable that carries a for loop's variable out
        (see :meth:`_carry_last_value`). Returns the environment at the end
        of the body; the caller restores its own.
        """
        self.depth += 1
        self.loop_depth += 1
        with self.b.at(block):
            self.lower_stmts(node.body)
            if last is not None:
                self._set_last(node, carry, last)
            yields = self._loop_yields(carry, assigned)
            self.b.create(ops.YieldOp, [t.handle for t in yields], loc=node.loc)
        self.depth -= 1
        self.loop_depth -= 1
        return self.env

    def _set_last(self, node: ast.For | ast.While, carry: Carry, last: str) -> None:
        """At the end of the body: the hidden ``last`` variable takes the loop variable's value."""
        assert isinstance(node, ast.For) and isinstance(node.target, ast.Name)
        init = carry.inits[carry.names.index(last)]
        value = self.env.get(node.target.id)
        if not isinstance(value, Tensor) or value.is_block or not value.dtype.is_int():
            value = init  # the body rebound it to something else: keep the carried value
        with self.b.located(node.loc):
            self.env[last] = S.cast(self.b, value, init.dtype)

    def _count_down(self, bounds: tuple[Any, Any, Any], loc: Location) -> tuple[Any, Any, Any]:
        """``range(start, end, -s)`` as ``range(0, trips, 1)``; the body computes the value.

        ``scf.for`` counts up, so a loop with a compile-time negative step
        counts its iterations instead: ``trips = (start - end + s - 1) // s``,
        which is zero or negative (no iteration) when ``start <= end``.
        """
        start, end, step = bounds
        self._loop_bounds((start, end, 1))  # the bounds must be integer scalars
        span = self.binop("-", start, end, loc)
        trips = self.binop("//", self.binop("+", span, -step - 1, loc), -step, loc)
        return 0, trips, 1

    def _loop_bounds(self, bounds: tuple[Any, Any, Any]) -> tuple[Tensor, Tensor, Tensor]:
        """Rule 8 on the bounds: one integer type for lb, ub and step."""
        tys = []
        for v in bounds:
            t = v.dtype if isinstance(v, Tensor) else P.literal_type(v) if P.is_py_scalar(v) else v
            if (
                not isinstance(t, ScalarType)
                or not t.is_int()
                or isinstance(v, Tensor)
                and v.is_block
            ):
                raise error(
                    self.b.loc, f"range bounds must be integer scalars, got {S.describe(v)}"
                )
            tys.append(t)
        ivt = P.integer_promote(P.integer_promote(tys[0], tys[1]), tys[2])
        return tuple(S.cast(self.b, v, ivt) for v in bounds)  # type: ignore[return-value]

    def _loop_carried(
        self, assigned: dict[str, Location], exclude: set[str], loc: Location
    ) -> Carry:
        """Variables assigned in a loop body and live before it, flattened to run-time inits.

        Tensors and Python scalars are carried as one IR value; block pointers
        and tuples holding run-time values as one IR value per leaf.
        """
        carry = Carry([], [], [], [])
        for name in assigned:
            value = self.env.get(name)
            if name in exclude or value is None or _undef(value):
                continue
            # A tuple of Python scalars is carried too: Triton makes tensors of them.
            if not (P.is_py_scalar(value) or has_runtime(value) or _holds_py_scalar(value)):
                continue
            with self.b.located(loc):
                leaves, structure = flatten(self.b, value, scalars=True)
            carry.names.append(name)
            carry.structures.append(structure)
            carry.inits.extend(leaves)
            carry.leaf_names.extend(leaf_names(value, name))
        return carry

    def _loop_yields(self, carry: Carry, assigned: dict[str, Location]) -> list[Tensor]:
        yields: list[Tensor] = []
        for name, init in zip(carry.names, carry.structures):
            value = self.env.get(name)
            loc = assigned.get(name, self.b.loc)  # a hidden variable is assigned nowhere
            if isinstance(value, Poison):
                raise PoisonUse()  # the body's statement that failed was reported
            if value is None or _undef(value):
                raise error(
                    loc,
                    f"loop-carried variable '{name}' is not defined on every path "
                    "through the loop body",
                )
            with self.b.located(loc):
                leaves, structure = flatten(self.b, value, scalars=True)
            if structure != init:
                raise error(
                    loc,
                    f"loop-carried variable '{name}' changes type from {init.describe()} "
                    f"to {structure.describe()}",
                    help="give it its final type before the loop (e.g. with .to())",
                )
            yields.extend(leaves)
        return yields

    def _after_loop(
        self,
        op: Any,
        carry: Carry,
        assigned: dict[str, Location],
        body_env: dict,
        node: ast.For | ast.While,
        what: str,
    ) -> None:
        for hint, result in zip(carry.leaf_names, op.results):
            result.name_hint = hint
        self.env.update(carry.rebuilt(op.results))
        # The names assigned in the body but not carried: those first defined in
        # the loop and the for loop's variable are undefined after it; a
        # compile-time value the body changed cannot be merged, so it is an error.
        for name in assigned:
            if name in carry.names:
                continue
            before = self.env.get(name)
            if isinstance(before, Poison) or isinstance(body_env.get(name), Poison):
                self.env[name] = Poison()
                continue
            if before is None or _undef(before):
                self.env[name] = Undefined(
                    f"it is only defined inside the {what} loop at line {node.loc.line}"
                )
                continue
            if body_env.get(name) is before:
                continue
            if isinstance(node, ast.For) and name == getattr(node.target, "id", None):
                self.env[name] = Undefined(
                    f"it is the loop variable of the for loop at line {node.loc.line}"
                )
                continue
            raise error(
                assigned[name],
                f"variable '{name}' holds a compile-time "
                f"{type(before).__name__} and cannot change inside a {what} loop",
            )

    # -- binding ------------------------------------------------------------------
    def bind(self, target: ast.Expr, value: Any) -> None:
        """Assign ``value`` to ``target`` (a name or a tuple of targets)."""
        if isinstance(target, ast.Name):
            if isinstance(value, Tensor) and value.handle.name_hint is None:
                value.handle.name_hint = target.id
            self.env[target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, Tensor) or not isinstance(value, (tuple, list)):
                raise error(target.loc, f"cannot unpack {S.describe(value)}")
            if len(value) != len(target.elts):
                raise error(target.loc, _unpack_message(len(target.elts), len(value)))
            for t, v in zip(target.elts, value):
                self.bind(t, v)
            return
        raise error(target.loc, "only names and tuples of names can be assigned to")

    # -- expressions ----------------------------------------------------------------
    def eval(self, node: ast.Expr) -> Any:
        """The value of an expression (compile-time or run-time)."""
        self.compiler.loc = node.loc
        with self.b.located(node.loc):
            return getattr(self, "expr_" + type(node).__name__)(node)

    def expr_Constant(self, node: ast.Constant) -> Any:  # noqa: N802
        """A literal."""
        return node.value

    def expr_Name(self, node: ast.Name) -> Any:  # noqa: N802
        """A variable, global or Python builtin."""
        return self.lookup(node)

    def lookup(self, node: ast.Name) -> Any:
        """Resolve a name like Python: locals, closure variables, globals, builtins."""
        name = node.id
        if name in self.env:
            value = self.env[name]
            if isinstance(value, Poison):
                raise PoisonUse()
            if isinstance(value, Undefined):
                raise error(
                    node.loc,
                    f"variable '{name}' is not defined on every path to this use: {value.reason}",
                )
            return value
        for scope in (self.nonlocals, self.globals):
            if name in scope:
                return unwrap(self.captured(node, scope[name]))
        if name in PY_BUILTINS:
            return PY_BUILTINS[name]
        raise error(node.loc, f"name '{name}' is not defined")

    def captured(self, node: ast.Name, value: Any) -> Any:
        """A global or closure variable, unless Triton's compiler rule refuses it (capture.py)."""
        if capture.refuses(value):
            raise capture.refused_global(node.loc, node.id, value)
        return value

    def expr_Tuple(self, node: ast.Tuple) -> Any:  # noqa: N802
        """``(a, b)``."""
        return tuple(self.eval(e) for e in node.elts)

    def expr_List(self, node: ast.List) -> Any:  # noqa: N802
        """``[a, b]`` (a compile-time list, e.g. a shape)."""
        return [self.eval(e) for e in node.elts]

    def expr_Dict(self, node: ast.Dict) -> Any:  # noqa: N802
        """Dicts are not part of the kernel language."""
        raise error(node.loc, "dict literals are not supported in kernels")

    def expr_Slice(self, node: ast.Slice) -> Any:  # noqa: N802
        """A slice outside a subscript."""
        raise error(node.loc, "a slice is only allowed inside a subscript")

    def expr_BinOp(self, node: ast.BinOp) -> Any:  # noqa: N802
        """``a op b``."""
        left = self.eval(node.left)
        right = self.eval(node.right)
        return self.binop(node.op, left, right, node.loc)

    def binop(self, op: str, left: Any, right: Any, loc: Location) -> Any:
        """``left op right``: folded in Python if both are compile-time."""
        with self.b.located(loc):
            if not isinstance(left, Tensor) and not isinstance(right, Tensor):
                return _fold(loc, _PY_BINOPS[op], left, right, op)
            if op == "@":
                return self.call_builtin("dot", [left, right], {}, loc)
            result = S.binary(self.b, op, left, right)
            if op in _SANITIZED and getattr(COMPILING_OPTIONS.get(), "debug", False):
                self._check_overflow(op, left, right, result)
            return result

    def _check_overflow(self, op: str, left: Any, right: Any, result: Tensor) -> None:
        """Debug mode: assert that a signed ``+``, ``-`` or ``*`` narrower than 64 bits did
        not overflow, as Triton's ``sanitize_overflow`` does (the exact result, computed
        in int64, must fit the type)."""
        t = result.dtype
        if not (isinstance(t, ScalarType) and t.is_int() and t.is_signed()):
            return
        if t.bitwidth >= 64 or t == I1:
            return
        b = self.b
        left64, right64 = (S.cast(b, S.cast(b, x, t), I64) for x in (left, right))
        wide = S.binary(b, op, left64, right64)
        fits = S.binary(b, "&", S.compare(b, "<=", wide, t.get_int_max_value()),
                        S.compare(b, ">=", wide, t.get_int_min_value()))  # fmt: skip
        message = f"int{t.bitwidth} overflow detected for operation {_SANITIZED[op]}"
        b.create(ops.AssertOp, [S.to_bool(b, fits).handle], [], {"message": message})

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Any:  # noqa: N802
        """``-x``, ``+x``, ``~x``, ``not x``."""
        value = self.eval(node.operand)
        if not isinstance(value, Tensor):
            fns: dict[str, Callable[[Any], Any]] = {
                "-": operator.neg,
                "+": operator.pos,
                "~": operator.invert,
                "not": operator.not_,
            }
            return _fold(node.loc, lambda a, _: fns[node.op](a), value, None, node.op, True)
        if node.op == "-":
            return S.negate(self.b, value)
        if node.op == "~":
            return S.invert(self.b, value)
        if node.op == "not":
            return S.logical_not(self.b, value)
        S.computation_type(self.b, value, value, P.ARITH)
        return value

    def expr_BoolOp(self, node: ast.BoolOp) -> Any:  # noqa: N802
        """``a and b`` / ``a or b``: short-circuit at compile time."""
        result = self.eval(node.values[0])
        for operand in node.values[1:]:
            if not isinstance(result, Tensor):
                truth = _truth(node.loc, result)
                if truth == (node.op == "or"):
                    return result
                result = self.eval(operand)
                continue
            right = self.eval(operand)
            with self.b.located(node.loc):
                result = S.logical(self.b, node.op, result, right)
        return result

    def expr_Compare(self, node: ast.Compare) -> Any:  # noqa: N802
        """A (chained) comparison."""
        left = self.eval(node.left)
        result: Any = True
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp)
            with self.b.located(node.loc):
                one = self._compare(op, left, right, node.loc)
                result = self._and_links(result, one)
            left = right
        return result

    def _and_links(self, result: Any, one: Any) -> Any:
        """``result and one`` for one more link of a chain ``a < b < c``."""
        if not isinstance(result, Tensor) and not isinstance(one, Tensor):
            return result and one
        if result is True:
            return one
        if result is False:  # an earlier compile-time link already failed
            return result
        return S.logical(self.b, "and", result, one)

    def _compare(self, op: str, left: Any, right: Any, loc: Location) -> Any:
        runtime = isinstance(left, Tensor) or isinstance(right, Tensor)
        if op in ("is", "is not", "in", "not in"):
            if runtime and op in ("in", "not in"):
                raise error(loc, f"'{op}' is not supported on run-time values")
            return _PY_COMPARE[op](left, right)
        if not runtime:
            return _fold(loc, _PY_COMPARE[op], left, right, op)
        return S.compare(self.b, op, left, right)

    def expr_IfExp(self, node: ast.IfExp) -> Any:  # noqa: N802
        """``a if cond else b``: compile-time pick, or ``arith.select`` on a scalar."""
        cond = self.eval(node.test)
        if not isinstance(cond, Tensor):
            return self.eval(node.body if _truth(node.test.loc, cond) else node.orelse)
        if cond.is_block:
            parts = (_source_text(n, d) for n, d in zip(_where_parts(node), ("cond", "a", "b")))
            raise error(
                node.test.loc,
                "a conditional expression needs a scalar condition; use tl.where for blocks",
                help="choose per element with tl.where({}, {}, {})".format(*parts),
            )
        if _has_call(node.body) or _has_call(node.orelse):
            return self._runtime_ifexp(node, S.to_bool(self.b, cond))
        body, orelse = self.eval(node.body), self.eval(node.orelse)
        if isinstance(body, Tensor) and isinstance(orelse, Tensor):
            _check_const_ternary(node, body.type, orelse.type)
        return S.where(self.b, cond, body, orelse)

    def _runtime_ifexp(self, node: ast.IfExp, flag: Tensor) -> Any:
        """``a if cond else b`` whose branches call something (a load, a store): as in
        Triton, an ``scf.if`` that runs only the chosen branch, not a select of both."""
        result = f"ifexp@{node.loc.line}:{node.loc.col}"  # not a Python name: no clash
        target = ast.Name(result, loc=node.loc)
        branch = ast.If(
            node.test,
            [ast.Assign([target], node.body, loc=node.body.loc)],
            [ast.Assign([target], node.orelse, loc=node.orelse.loc)],
            loc=node.loc,
        )
        self._lower_runtime_if(branch, flag, unify=result)
        return self.env.pop(result, None)  # absent: both branches gave None (a store)

    def expr_Subscript(self, node: ast.Subscript) -> Any:  # noqa: N802
        """``x[:, None]`` on blocks; indexing on compile-time tuples."""
        value = self.eval(node.value)
        if isinstance(value, Tensor):
            return self._index_tensor(node, value)
        index = [self._py_index(i) for i in node.index]
        key = index[0] if len(index) == 1 else tuple(index)
        method = inspect.getattr_static(type(value), "__getitem__", None)
        if isinstance(method, JITBase):  # an aggregate's @jit __getitem__
            return self.compiler.call_helper(self, method, [value, key], {})
        try:
            return value[key]
        except Exception:  # noqa: BLE001 - any Python error becomes a diagnostic
            raise error(
                node.loc, f"cannot index {S.describe(value)} with {S.describe(key)}"
            ) from None

    def _py_index(self, item: ast.Expr) -> Any:
        if isinstance(item, ast.Slice):
            parts = [
                self.eval(p) if p is not None else None for p in (item.lower, item.upper, item.step)
            ]
            return slice(*parts)
        return self.eval(item)

    def _index_tensor(self, node: ast.Subscript, value: Tensor) -> Tensor:
        check_block_index(node.index)
        result = value
        for dim, item in enumerate(node.index):
            if isinstance(item, ast.Constant) and item.value is None:
                result = S.expand_dims(self.b, result, dim)
                continue
            # ``x[:, None]``; ``x[None:]`` and ``x[::None]`` are the same whole slice.
            full = isinstance(item, ast.Slice) and all(
                p is None or self.eval(p) is None for p in (item.lower, item.upper, item.step)
            )
            if not full:
                raise error(
                    item.loc,
                    "unsupported tensor index: blocks can only be indexed with ':' and None",
                    help="to read element i of a pointer p, use tl.load(p + i)",
                )
        return result

    def expr_JoinedStr(self, node: ast.JoinedStr) -> str:  # noqa: N802
        """An f-string: every value must be known at compile time, as in Triton."""
        return "".join(self._format_part(p) for p in node.values)

    def _format_part(self, part: ast.Constant | ast.FormattedValue) -> str:
        if isinstance(part, ast.Constant):
            return str(part.value)
        value = unwrap(self.eval(part.value))
        if isinstance(value, Tensor) or has_runtime(value):
            raise error(
                part.loc,
                f"an f-string can only format compile-time values, got {S.describe(value)}",
                help='print run-time values with tl.device_print("x", x)',
            )
        converters: dict[str | None, Callable[[object], str]] = {"r": repr, "s": str, "a": ascii}
        convert = converters.get(part.conversion)
        try:
            return format(convert(value) if convert else value, part.format_spec)
        except (TypeError, ValueError) as e:
            raise error(part.loc, f"cannot format {S.describe(value)}: {e}") from None

    def expr_Attribute(self, node: ast.Attribute) -> Any:  # noqa: N802
        """``tl.load``, ``x.dtype``, ``x.to`` ..."""
        value = self.eval(node.value)
        return self.get_attribute(value, node.attr, node)

    def get_attribute(self, value: Any, attr: str, node: ast.Attribute) -> Any:
        """Attribute access on compile-time objects and run-time values."""
        if isinstance(value, Tensor):
            return self._tensor_attribute(value, attr, node)
        if isinstance(value, types.ModuleType):
            return self._module_attribute(value, attr, node)
        if attr == "type" and (isinstance(value, tuple) or P.is_py_scalar(value) or value is None):
            return _value_type(value)  # Triton's constexpr_type and tuple_type
        compile_time = not has_runtime(value) and not isinstance(value, types.ModuleType)
        if attr == "value" and compile_time and not hasattr(value, "value"):
            # Triton wraps compile-time values in tl.constexpr, whose .value is the value:
            # helpers written for it read `dtype.value`, `n.value`.
            return value
        if isinstance(value, (ScalarType, PointerType, BlockType)):
            return _type_attribute(node.loc, value, attr)
        if struct_fields(value) is not None and attr not in vars(value):
            method = inspect.getattr_static(type(value), attr, None)
            if isinstance(method, (JITBase, ConstexprFunction)):
                return BoundHelper(method, value)
        is_block_ptr = isinstance(value, BlockPointer) and not isinstance(value, TensorDescriptor)
        if is_block_ptr and attr == "advance":  # Triton's block pointers are tensors
            return BoundMethod("advance", value)
        if isinstance(value, TensorDescriptor) and attr in _DESCRIPTOR_METHODS:
            return BoundMethod(f"{attr}_tensor_descriptor", value)
        if attr == "to" and P.is_py_scalar(value):
            return BoundMethod("cast", value)  # a constexpr float's .to(tl.float16)
        if attr == "dtype" and P.is_py_scalar(value):
            return P.literal_type(value)  # `v = 1` then `v.dtype`: Triton's scalar is an i32
        try:
            result = unwrap(getattr(value, attr))
        except AttributeError:
            raise error(node.loc, f"{S.describe(value)} has no attribute '{attr}'") from None
        if isinstance(value, S.Aggregate) and type(result) is tuple:
            return S.Shape(result)  # desc.block_shape == [BM, BN], as Triton's lists compare
        return result

    def _tensor_attribute(self, value: Tensor, attr: str, node: ast.Attribute) -> Any:
        if attr == "dtype":
            return value.dtype
        if attr == "shape" and not value.is_block and value.dtype.is_ptr():
            raise error(
                node.loc,
                "a pointer argument has no shape: the kernel sees only the address "
                "of the first element",
                help="pass the sizes as arguments (x.shape[0] on the host) or as tl.constexpr",
            )
        if attr == "shape":
            return S.Shape(value.shape)
        if attr == "type":
            return value.type
        if attr == "numel":
            return value.type.numel if isinstance(value.type, BlockType) else 1
        if attr == "T":
            return self.call_builtin("trans", [value], {}, node.loc)
        if attr in TENSOR_METHODS:
            return BoundMethod(TENSOR_METHODS[attr], value)
        if attr in ("logical_and", "logical_or"):
            return LogicalMethod(attr.removeprefix("logical_"), value)
        raise error(node.loc, f"a block value has no attribute '{attr}'")

    def _module_attribute(self, module: types.ModuleType, attr: str, node: ast.Attribute) -> Any:
        is_language = module is tl_module or module.__name__.startswith("minitriton.language")
        if hasattr(module, attr) and (not is_language or _is_tl_public(attr, module)):
            return unwrap(getattr(module, attr))
        if module.__name__ == "minitriton" and attr == "cdiv":
            return BUILTINS["cdiv"]
        name = _expr_text(node.value)
        names = [n for n in dir(module) if not is_language or _is_tl_public(n, module)]
        close = difflib.get_close_matches(attr, names, n=1)
        hint = f"did you mean '{name}.{close[0]}'?" if close else None
        if is_language and attr in NOT_YET:
            message = f"{name}.{attr} is Triton's, but MiniTriton does not support it yet"
            raise error(node.loc, message, help=NOT_YET[attr])
        if is_language:
            raise error(node.loc, f"unknown function '{name}.{attr}'", help=hint)
        raise error(node.loc, f"module '{name}' has no attribute '{attr}'", help=hint)

    def expr_Call(self, node: ast.Call) -> Any:  # noqa: N802
        """Calls of builtins, ``@jit`` helpers, tensor methods and Python builtins."""
        return self._call_node(node, self.eval(node.func))

    def _call_node(self, node: ast.Call, fn: Any) -> Any:
        """The call ``node`` of ``fn`` (its callee, evaluated): arguments, then dispatch."""
        args: list[Any] = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self._starred_items(a))
            else:
                args.append(self.eval(a))
        kwargs = {k.name: self.eval(k.value) for k in node.keywords}
        return self.call(fn, args, kwargs, node)

    def _starred_items(self, node: ast.Starred) -> tuple[Any, ...] | list[Any]:
        """The items ``*t`` passes: ``t`` must be a tuple (or list) known at compile time."""
        value = self.eval(node.value)
        if isinstance(value, Tensor) or not isinstance(value, (tuple, list)):
            raise error(
                node.loc,
                f"'*' unpacks a tuple, got {S.describe(value)}",
                help="pass each argument explicitly",
            )
        return value

    def expr_Starred(self, node: ast.Starred) -> Any:  # noqa: N802
        """``*t`` outside a call's arguments."""
        raise error(node.loc, "'*' unpacking is only allowed in a call's arguments")

    def expr_ListComp(self, node: ast.ListComp) -> tuple[Any, ...]:  # noqa: N802
        """``[f(v) for v in values]`` over a compile-time tuple: a tuple, as in Triton.

        The body is lowered once per item, as if unrolled; the loop variable
        is local to the comprehension, as in Python.
        """
        items = self.eval(node.iter)
        if isinstance(items, Tensor) or not isinstance(items, (tuple, list)):
            raise error(
                node.iter.loc,
                f"a comprehension in a kernel iterates over a tuple, got {S.describe(items)}",
                help="map a tuple's items, [f(v) for v in values]; for a block use block "
                "operations, for a range write a tl.static_range loop",
            )
        names = [n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)]
        saved = {n: self.env[n] for n in names if n in self.env}
        results = []
        try:
            for item in items:
                self.bind(node.target, item)
                if all(self._comprehension_filter(cond) for cond in node.ifs):
                    results.append(self.eval(node.elt))
        finally:
            for n in names:
                self.env.pop(n, None)
            self.env.update(saved)
        return tuple(results)

    def _comprehension_filter(self, cond: ast.Expr) -> bool:
        """An ``if`` of a comprehension: a compile-time condition, as in Triton."""
        value = self.eval(cond)
        if has_runtime(value):
            raise error(
                cond.loc,
                "a comprehension's 'if' must be a compile-time condition",
                help="filter on constexpr values, or keep every item and use tl.where",
            )
        return bool(value)

    def expr_NamedExpr(self, node: ast.NamedExpr) -> Any:  # noqa: N802
        """``(x := value)``: assign, then the expression is worth the value (as in Triton)."""
        self.bind(node.target, self.eval(node.value))
        return self.lookup(node.target)

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        """Dispatch a call on what ``fn`` resolved to."""
        with self.b.located(node.loc):
            name = builtin_name(fn)
            if name is not None:
                return self.call_builtin(name, args, kwargs, node.loc, node)
            if isinstance(fn, BoundMethod):
                return self.call_builtin(fn.builtin, [fn.self_value, *args], kwargs, node.loc, node)
            if isinstance(fn, JITBase):
                return self.compiler.call_helper(self, fn, args, kwargs)
            if isinstance(fn, BoundHelper) and isinstance(fn.fn, JITBase):
                return self.compiler.call_helper(self, fn.fn, [fn.self_value, *args], kwargs)
            if isinstance(fn, BoundHelper):  # a constexpr_function method: Python, now
                method = functools.partial(fn.fn.fn, fn.self_value)
                functools.update_wrapper(method, fn.fn.fn)
                return self._call_python(method, args, kwargs, node)
            if isinstance(fn, LogicalMethod):
                if len(args) != 1 or kwargs:
                    raise error(node.loc, f"logical_{fn.op}() takes exactly one argument")
                return S.logical(self.b, fn.op, fn.self_value, args[0])
            if isinstance(fn, PyBuiltin):
                return self._call_py_builtin(fn.name, args, kwargs, node)
            if fn is constexpr:
                return args[0] if args else None
            return self._call_python(fn, args, kwargs, node)

    def _call_python(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        """Plain Python callables run at compile time on compile-time arguments, as in Triton."""
        fname = getattr(fn, "__name__", type(fn).__name__)
        if not callable(fn):
            raise error(node.loc, f"{S.describe(fn)} is not callable")
        if fn is PointerType:
            return _pointer_type(node.loc, args, kwargs)
        if fn is ScalarType:
            return _scalar_type(node.loc, args, kwargs)
        if getattr(fn, "__triton_builtin__", False):
            return self._call_triton_builtin(fn, fname, args, kwargs, node)
        if _is_namedtuple_class(fn):
            return self._make_namedtuple(fn, args, kwargs, node)
        if isinstance(fn, type) and hasattr(fn, "__minitriton_fields__"):
            return self._make_struct(fn, args, kwargs, node)
        runtime = _first_runtime(fn, args, kwargs)
        if runtime is not None:
            if fname == "cdiv":
                return self.call_builtin("cdiv", args, kwargs, node.loc, node)
            which, value = runtime
            if getattr(fn, "__module__", None) == "math":
                shown = ", ".join(_source_text(a, "x") for a in node.args)
                raise _math_on_runtime(node.loc, fname, value, shown)
            runtime_error = error(
                node.loc,
                f"the Python function '{fname}' runs at compile time, so its arguments must be "
                f"compile-time values, but {which} is a run-time {S.describe(value)}",
                help=f"decorate '{fname}' with @triton.jit to call it on run-time values",
            )
            if not _callable_at_compile_time(fn):
                raise runtime_error
            # As in Triton, a Python function may pass run-time values through (an
            # aggregate's factory method); one that computes with them fails, and is told so.
            try:
                return unwrap(fn(*args, **kwargs))
            except CompileError:
                raise
            except Exception as e:  # noqa: BLE001 - one of the two messages says what to do
                if _fails_on_runtime(e, [*args, *kwargs.values()]):
                    raise runtime_error from None
                raise _python_call_failed(node.loc, fname, e, args, kwargs) from None
        if not _callable_at_compile_time(fn):
            raise error(
                node.loc,
                f"a kernel cannot call {S.describe(fn)}: kernels call tl builtins, @jit functions, "
                "Python functions of compile-time values and the Python builtins "
                f"{', '.join(sorted(PY_BUILTINS))}",
                help="decorate it with @triton.jit, or compute the value outside the kernel "
                "and pass it as a tl.constexpr",
            )
        try:
            return unwrap(fn(*args, **kwargs))
        except CompileError:
            raise
        except Exception as e:  # noqa: BLE001 - the user's function failed: say how
            raise _python_call_failed(node.loc, fname, e, args, kwargs) from None

    def _make_struct(
        self, cls: type, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> Any:
        """``Pair(a, b)`` of a ``@triton.aggregate`` class: its ``__init__`` (a
        ``constexpr_function``) runs now and sets the fields, run-time values included."""
        init = inspect.getattr_static(cls, "__init__", None)
        if isinstance(init, JITBase):
            raise error(
                node.loc,
                f"{cls.__name__}.__init__ is a @triton.jit function; MiniTriton builds an "
                "aggregate with a @triton.constexpr_function __init__",
                help="compute the fields in the kernel and pass them to the constructor",
            )
        instance: Any = object.__new__(cls)
        body = init.fn if isinstance(init, ConstexprFunction) else init
        try:
            if body is object.__init__ or getattr(body, "__minitriton_auto_init__", False):
                for name, value in tl_module.core.aggregate_field_values(cls, args, kwargs).items():
                    object.__setattr__(instance, name, value)
            else:
                extra = _semantic_arguments(body, SemanticHandle(self, node))
                body(instance, *args, **kwargs, **extra)
        except CompileError:
            raise
        except Exception as e:  # noqa: BLE001 - the user's constructor failed: say how
            raise error(
                node.loc, f"making a {cls.__name__} failed: {type(e).__name__}: {e}"
            ) from None
        missing = [f for f in cls.__minitriton_fields__ if not hasattr(instance, f)]  # type: ignore[attr-defined]
        if missing:
            raise error(node.loc, f"{cls.__name__}.__init__ did not set {', '.join(missing)}")
        return instance

    def _make_namedtuple(
        self, cls: type, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> Any:
        """``Point(x=a, y=b)``: a ``NamedTuple`` whose fields may hold run-time values, as in
        Triton."""
        try:
            return cls(*args, **kwargs)
        except TypeError as e:
            raise error(node.loc, f"cannot make a {cls.__name__}: {e}") from None

    def _call_triton_builtin(
        self, fn: Any, fname: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> Any:
        """A function marked ``__triton_builtin__`` (TorchInductor's ``triton_builtin``).

        Such a function runs at compile time on Triton's values: compile-time
        arguments arrive wrapped in ``tl.constexpr``, run-time values as they
        are (it can only pass them through), and its result is unwrapped.
        """

        def wrap(v: Any) -> Any:
            return v if isinstance(v, Tensor) or has_runtime(v) else constexpr(v)

        extra = _semantic_arguments(fn, SemanticHandle(self, node))
        try:
            result = fn(*map(wrap, args), **{k: wrap(v) for k, v in kwargs.items()}, **extra)
        except CompileError:
            raise
        except Exception as e:  # noqa: BLE001 - the library's function failed: say how
            raise error(
                node.loc, f"the builtin '{fname}' failed at compile time: {type(e).__name__}: {e}"
            ) from None
        return unwrap(result)

    def _call_py_builtin(
        self, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> Any:
        runtime = any(isinstance(v, Tensor) for v in [*args, *kwargs.values()])
        if name in ("min", "max") and runtime:
            if len(args) < 2 or set(kwargs) - {"propagate_nan"}:
                raise error(node.loc, f"{name}() of run-time values needs 2 or more arguments")
            result = args[0]
            for other in args[1:]:
                result = self.call_builtin(f"{name}imum", [result, other], kwargs, node.loc)
            return result
        if name in ("min", "max"):
            _check_constexpr_min_max(name, args, node.loc)
        if name == "print":  # as in Triton, print(prefix, *values) is device_print
            has_prefix = bool(args) and isinstance(args[0], str)
            prefix, values = (args[0], args[1:]) if has_prefix else ("", args)
            return self.call_builtin("device_print", [prefix, *values], {}, node.loc)
        if name == "abs" and runtime:
            return self.call_builtin("abs", args, kwargs, node.loc, node)
        if name == "range":
            raise error(node.loc, "range() can only be used as the iterable of a for loop")
        if name == "isinstance" and len(args) == 2 and not kwargs:
            return _isinstance(args[0], args[1])
        if name in ("getattr", "hasattr") and 2 <= len(args) <= 3 and isinstance(args[1], str):
            return self._py_getattr(name, args, node)
        if runtime:
            raise error(
                node.loc,
                f"{name}() needs compile-time arguments",
                help="use x.to(tl.float32) / x.to(tl.int32) to convert run-time values",
            )
        fn = __builtins__[name] if isinstance(__builtins__, dict) else getattr(__builtins__, name)
        try:
            return fn(*args, **kwargs)
        except Exception:  # noqa: BLE001
            shown = ", ".join(S.describe(a) for a in [*args, *kwargs.values()])
            raise error(node.loc, f"{name}() cannot take {shown or 'no arguments'}") from None

    def _py_getattr(self, name: str, args: list[Any], node: ast.Call) -> Any:
        """``getattr(x, "name"[, default])`` and ``hasattr(x, "name")``, run-time ``x`` too:
        the attribute as ``x.name`` reads it (``hasattr(x, "dtype")`` in generic helpers)."""
        attribute = ast.Attribute(node.args[0], args[1], loc=node.loc)
        try:
            found = self.get_attribute(args[0], args[1], attribute)
        except CompileError:
            if name == "hasattr":
                return False
            if len(args) == 3:
                return args[2]
            raise
        return True if name == "hasattr" else found

    # -- builtins -------------------------------------------------------------
    def bind_builtin(
        self,
        name: str,
        stub: Any,
        args: list[Any],
        kwargs: dict[str, Any],
        node: ast.Call | None,
    ) -> dict[str, Any]:
        """Bind arguments with the stub's signature (located errors for bad keywords)."""
        sig = _stub_signature(stub)
        params = sig.parameters
        for key in kwargs:
            if key in params and params[key].kind != inspect.Parameter.VAR_POSITIONAL:
                continue
            loc = _keyword_loc(node, key) if node is not None else self.b.loc
            close = difflib.get_close_matches(key, list(params), n=1)
            hint = f"did you mean '{close[0]}'?" if close else None
            raise error(loc, f"tl.{name}() got an unexpected keyword argument '{key}'", help=hint)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise error(self.b.loc, f"tl.{name}(): {e}") from None
        bound.apply_defaults()
        return {k: unwrap(v) for k, v in bound.arguments.items()}

    def call_builtin(
        self,
        name: str,
        args: list[Any],
        kwargs: dict[str, Any],
        loc: Location,
        node: ast.Call | None = None,
    ) -> Any:
        """Bind and lower a call of the ``tl`` builtin ``name``."""
        stub = BUILTINS.get(name) or LIBDEVICE.get(name)
        if stub is None:
            raise error(loc, f"unknown function 'tl.{name}'")
        with self.b.located(loc):
            bound = self.bind_builtin(name, stub, args, kwargs, node)
            impl = IMPLS.get(name)
            if impl is None:
                raise error(loc, f"tl.{name} is not supported here")
            key = self.pure_calls.key(name, self.b.block, bound)
            result = self.pure_calls.lookup(key, self.b)
            if result is None:
                result = impl(self, **bound)
                self.pure_calls.remember(key, result)
            return result

    def call_combine(self, fn: Any, args: list[Tensor]) -> Any:
        """Call a combine function (``@jit`` helper inlined, or a builtin)."""
        if isinstance(fn, JITBase):
            return self.compiler.inline_helper(self, fn, args)
        name = builtin_name(fn)
        if name is not None:
            return self.call_builtin(name, args, {}, self.b.loc)
        raise error(self.b.loc, f"combine_fn must be a @jit function, got {S.describe(fn)}")


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------


def _undef(value: Any) -> bool:
    return isinstance(value, Undefined)


def _same_compile_time(a: Any, c: Any) -> bool:
    if isinstance(a, Tensor) or isinstance(c, Tensor):
        return a is c
    if type(a) is not type(c):
        return False
    try:
        return bool(a == c)
    except Exception:  # noqa: BLE001
        return a is c


def _truth(loc: Location, value: Any) -> bool:
    try:
        return bool(value)
    except Exception:  # noqa: BLE001
        raise error(loc, f"cannot use {S.describe(value)} as a condition") from None


#: Compile-time integers are Python ints, but one of more bits than this is a mistake
#: (``2**2**31`` would take seconds and gigabytes to fold).
MAX_FOLD_BITS = 4096


def _fold(
    loc: Location, fn: Callable[[Any, Any], Any], a: Any, c: Any, op: str, unary: bool = False
) -> Any:
    """Evaluate a compile-time operation with Python's semantics (``unary``: of ``a`` alone)."""
    _check_fold_size(loc, a, c, op)
    mixed = (isinstance(a, tuple) and isinstance(c, list)) or (
        isinstance(a, list) and isinstance(c, tuple)
    )
    if op == "+" and mixed:
        # Triton's shapes are lists, ours tuples: x.shape[:-1] + [n] joins them as Triton does.
        return list(a) + list(c)
    try:
        return fn(a, c)
    except ZeroDivisionError:
        raise error(loc, "division by zero in a compile-time expression") from None
    except Exception:  # noqa: BLE001
        if unary:
            raise unsupported(loc, f"bad operand type for unary '{op}': {S.describe(a)}") from None
        raise error(
            loc, f"unsupported operand types for '{op}': {S.describe(a)} and {S.describe(c)}"
        ) from None


def _check_fold_size(loc: Location, a: Any, c: Any, op: str) -> None:
    """Refuse to fold ``**`` and ``<<`` into an integer of more than MAX_FOLD_BITS bits."""
    if not (type(a) is int and type(c) is int) or op not in ("**", "<<") or c <= 0:
        return
    if op == "**":
        bits = a.bit_length() * c if abs(a) > 1 else 0
    else:
        bits = a.bit_length() + c if a else 0
    if bits > MAX_FOLD_BITS:
        raise error(
            loc,
            f"the compile-time integer result of '{op}' would have more than {MAX_FOLD_BITS} bits",
        )


def _check_static_while(node: ast.While, cond: Any) -> None:
    """A compile-time ``while`` condition must be false: without ``break`` it never ends."""
    if not _truth(node.test.loc, cond):
        return
    raise error(
        node.test.loc,
        "while loop with a compile-time true condition never ends (break is not supported)",
    )


#: Python code that a kernel calls at compile time, as Triton calls any Python function.
_PYTHON_CODE = (types.FunctionType, types.MethodType, functools.partial, ConstexprFunction)

#: Modules whose C functions are pure computations (``math.log2``), safe to call while compiling.
_PURE_MODULES = frozenset({"math", "cmath", "operator", "_operator", "builtins"})


def _callable_at_compile_time(fn: Any) -> bool:
    """Python functions (a ``def``, ``math.log2``), methods of plain values and ``tl`` dtypes.

    Like Triton, the kernel calls them while it compiles, with the
    compile-time arguments the call gives (a run-time argument is refused
    before). C functions of other modules (``os.system``) are refused: they
    act on the machine, not on values. Classes other than the ``tl`` type
    constructors are refused: a kernel has no objects of its own.
    """
    if isinstance(fn, _PYTHON_CODE):
        return True
    if isinstance(fn, types.BuiltinFunctionType):
        if type(fn.__self__) in (int, float, bool, str, tuple):  # (1024).bit_length
            return True
        return (getattr(fn, "__module__", None) or "") in _PURE_MODULES
    type_makers = (tl_module.constexpr_type, tl_module.tuple_type, tl_module.slice)
    return fn in (BlockType, ScalarType, *type_makers, tl_module.tensor_descriptor_type)


#: Functions of Python's ``math`` module whose ``tl`` equivalent has another name.
_MATH_RENAMED = {"fabs": "abs"}


def _tl_equivalent(name: str) -> str | None:
    """The ``tl`` function that does what ``math.<name>`` does, elementwise, if there is one."""
    name = _MATH_RENAMED.get(name, name)
    if name in BUILTINS and _is_tl_public(name, tl_module):
        return f"tl.{name}"
    if hasattr(tl_module.math, name):
        return f"tl.math.{name}"
    return None


def _math_on_runtime(loc: Location, name: str, value: Any, args: str) -> CompileError:
    """``math.exp(x)`` of a run-time ``x``: Python's math runs at compile time, on numbers.

    ``args``: the call's arguments as written, for the help's example.
    """
    tl_name = _tl_equivalent(name)
    message = (
        f"math.{name} runs at compile time on Python numbers, "
        f"but its argument is a run-time {S.describe(value)}"
    )
    if tl_name is None:
        return error(loc, message, help=f"tl has no math.{name}: compute it from tl functions")
    return error(loc, message, help=f"write {tl_name}({args}), which computes it elementwise")


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _python_call_failed(
    loc: Location, fname: str, e: Exception, args: list[Any], kwargs: dict[str, Any]
) -> CompileError:
    """A compile-time call of a Python function raised ``e``: its own error, at the call."""
    shown = ", ".join(S.describe(a) for a in [*args, *kwargs.values()])
    detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__  # a bare ``assert``
    return error(
        loc,
        f"calling the Python function '{fname}' at compile time failed: {detail}",
        help=f"its arguments were: {shown or 'none'}",
    )


def _fails_on_runtime(e: Exception, values: list[Any]) -> bool:
    """Whether ``e`` is Python refusing an operation on a run-time value among ``values``
    (``n * 2`` on a tensor raises a TypeError naming ``Tensor``), not the function's own
    error (an ``assert`` or a ``ValueError`` on its compile-time arguments)."""
    if not isinstance(e, (TypeError, AttributeError)):
        return False
    kinds = {"Tensor"} | {
        type(v).__name__ for v in values if has_runtime(v) and not isinstance(v, (tuple, list))
    }
    return any(kind in str(e) for kind in kinds)


def _first_runtime(fn: Any, args: list[Any], kwargs: dict[str, Any]) -> tuple[str, Any] | None:
    """The first run-time argument of a call (how a diagnostic names it, and the value)."""
    for i, value in enumerate(args):
        if isinstance(value, Tensor) or has_runtime(value):
            try:
                params = list(inspect.signature(fn).parameters.values())
            except (TypeError, ValueError):
                params = []
            positional = i < len(params) and params[i].kind in _POSITIONAL
            name = f" ('{params[i].name}')" if positional else ""
            return f"argument {i + 1}{name}", value
    for key, value in kwargs.items():
        if isinstance(value, Tensor) or has_runtime(value):
            return f"argument '{key}'", value
    return None


def _pointer_type(loc: Location, args: list[Any], kwargs: dict[str, Any]) -> PointerType:
    """``tl.pointer_type(element_ty, address_space=1, const=False)``: a pointer dtype."""

    def signature(element_ty: Any, address_space: Any = 1, const: Any = False) -> Any:
        return element_ty, address_space, const

    try:
        element, space, const = signature(*args, **kwargs)
    except TypeError as e:
        raise error(loc, f"tl.pointer_type(): {e}") from None
    if not isinstance(element, ScalarType):
        raise error(
            loc,
            f"tl.pointer_type() needs a tl dtype, got {S.describe(element)}",
            help="write tl.pointer_type(tl.float16)",
        )
    if space != 1:
        raise error(
            loc, f"tl.pointer_type(): only global memory (address_space=1) exists, got {space!r}"
        )
    if not isinstance(const, bool):
        raise error(loc, f"tl.pointer_type(): const must be True or False, got {S.describe(const)}")
    return PointerType(element, const=const)


def _scalar_type(loc: Location, args: list[Any], kwargs: dict[str, Any]) -> ScalarType:
    """``tl.dtype("fp32")``: a dtype by its name (Triton's or the IR's)."""
    name = args[0] if len(args) == 1 and not kwargs else None
    try:
        return scalar_type_named(name) if isinstance(name, str) else scalar_type_named("")
    except ValueError:
        shown = ", ".join(S.describe(a) for a in [*args, *kwargs.values()])
        raise error(
            loc,
            f"tl.dtype() needs the name of a type, got {shown or 'no arguments'}",
            help='write tl.dtype("fp32"), or use the dtype itself: tl.float32',
        ) from None


#: Triton's ``tl`` functions that MiniTriton lacks, with what to write instead.
NOT_YET: dict[str, str] = {}

#: A tensor descriptor's methods, each the builtin ``<name>_tensor_descriptor``.
_DESCRIPTOR_METHODS = ("load", "store", "gather", "scatter", "atomic_add", "atomic_min",
                       "atomic_max", "atomic_and", "atomic_or", "atomic_xor")  # fmt: skip

#: ``tl`` names that are neither builtins nor dtypes but part of Triton's surface.
_TL_PUBLIC = frozenset(
    {"constexpr", "tensor", "dtype", "pointer_type", "block_type", "get_int_dtype"}
    | {"TRITON_MAX_TENSOR_NUMEL", "N_ROUNDS_DEFAULT"}
    | {"_unwrap_if_constexpr"}  # tl.core's helper, which TorchInductor's kernels call
    | {"aggregate_replace", "extern", "extern_elementwise"}
    | {"void", "str_to_ty"}  # Triton's void dtype; its signature-string parser
)


def _is_tl_public(attr: str, module: types.ModuleType) -> bool:
    """True for Triton's public ``tl`` names (not ``tl.TypeVar``, an import of ours)."""
    value = getattr(module, attr)
    if attr in _TL_PUBLIC or builtin_name(value) is not None:
        return True
    if isinstance(value, ConstexprFunction) or getattr(value, "__triton_builtin__", False):
        return True  # tl.standard._log2, tl.extra.cuda.num_warps
    if attr.startswith("_"):
        return False
    # Our own submodules (tl.math, tl.extra) and classes (tl.PropagateNan); not imports.
    own = (
        value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", "")
    )
    if isinstance(value, (type, types.ModuleType)) and str(own).startswith("minitriton.language"):
        return True
    return isinstance(value, (ScalarType, PointerType)) or (
        value is None and attr.startswith("float8")
    )


def _range_kind(fn: Any) -> str | None:
    if isinstance(fn, PyBuiltin) and fn.name == "range":
        return "pyrange"
    name = builtin_name(fn)
    return name if name in ("range", "static_range") else None


def _trip_text(values: Any) -> str:
    """How many iterations ``values`` has, as text (a range may be too long for ``len``)."""
    try:
        return str(len(values))
    except OverflowError:
        return "more than 2**63"


def _without_const(t: Any) -> Any:
    """``t`` with plain pointers for const ones (types, and the structures of values)."""
    if isinstance(t, Structure):
        key = _without_const(t.key) if t.kind == "value" else t.key
        return Structure(t.kind, key, tuple(_without_const(c) for c in t.children), t.template)
    if isinstance(t, PointerType):
        return PointerType(t.pointee)
    if isinstance(t, BlockType) and isinstance(t.element, PointerType):
        return BlockType(t.shape, PointerType(t.element.pointee))
    return t


def _const_only(a: Any, c: Any) -> bool:
    """True when ``a`` and ``c`` differ, but only in pointers being const in one."""
    return a != c and _without_const(a) == _without_const(c)


_CONST_MERGE_HELP = (
    "a tl.const pointer and a plain pointer are different types; pick the pointer with a "
    "tl.constexpr condition, or give both values the same const-ness"
)


def _check_const_ternary(node: ast.IfExp, a: Type, c: Type) -> None:
    """``c_ptr if cond else ptr`` with a run-time condition (Triton's words)."""
    if _const_only(a, c):
        raise error(
            node.loc,
            f"Ternary expression with dynamic condition has inconsistent types {a} and {c}",
            help=_CONST_MERGE_HELP,
        )


#: How a note about a call that led to an error ends.
CALLED_HERE = "is called here"


def _check_const_merge(
    node: ast.If, name: str, a: Structure, c: Structure, def_loc: Location
) -> None:
    """A run-time ``if`` whose two paths give ``name`` types that differ only in const-ness
    (or in anything, for a helper's returned value or a conditional expression's, which
    is not promoted further): Triton's words for each.

    A returned value's mismatch is the function's, as Triton locates it (at its
    ``def``, ``def_loc``); a note then points at the ``if``."""
    if name == _RETURN:
        help = _CONST_MERGE_HELP if _const_only(a, c) else "return one type on every path"
        message = f"Return type mismatch: {a.describe()} and {c.describe()}"
        raise CompileError([
            Diagnostic(def_loc, message, help=help),
            Diagnostic(node.loc, "the two paths of this if return different types", "note"),
        ])  # fmt: skip
    if name.startswith("ifexp@"):  # a conditional expression's value (_runtime_ifexp)
        raise error(
            node.loc,
            "Ternary expression with dynamic condition has inconsistent types "
            f"{a.describe()} and {c.describe()}",
            help=_CONST_MERGE_HELP if _const_only(a, c) else "give both values one type",
        )
    if not _const_only(a, c):
        return
    raise error(
        node.loc,
        f"Mismatched type for {name} between then block ({a.describe()}) "
        f"and else block ({c.describe()})",
        help=_CONST_MERGE_HELP,
    )


def _branch_type_help(name: str, has_else: bool) -> str:
    """What to write when ``name`` leaves an ``if``'s two paths with different types."""
    if has_else:
        return f"give '{name}' one type in both branches (convert it with .to(...) in one)"
    # Without an else-branch the other path is the value from before the if, which the
    # message calls the else-branch as Triton does: say where that value comes from.
    return (
        f"the if has no else-branch: where its condition is false, '{name}' keeps its value "
        "from before the if; give that value the branch's type (e.g. with .to(...)), "
        f"or set '{name}' in an else-branch too"
    )


def _check_range_bound(loc: Location, v: Any) -> None:
    """A compile-time range bound must be an integer that fits in 64 bits."""
    if isinstance(v, Tensor):
        return  # run-time bounds are checked by type in _loop_bounds
    if not isinstance(v, int):
        raise error(
            loc,
            f"range bounds must be integers, got {S.describe(v)}",
            help="convert with int(...) or pass the value as a tl.constexpr int",
        )
    if not -(2**63) <= v < 2**64:
        raise error(
            loc,
            "a range bound does not fit in 64 bits",
            help="loop bounds must be int32 or int64 values",
        )


def _check_pyrange_args(call: ast.Call, n_args: int, keywords: list[str]) -> None:
    """Python's ``range`` in a kernel takes 1 to 3 bounds, by position only.

    Triton's compiler reads only the positional bounds of ``range`` and drops
    any keyword (``range(a, b, step=s)`` steps by 1 there), while its
    interpreter raises Python's TypeError: a keyword is refused here, with the
    spelling that does what it says.
    """
    if keywords:
        given = ", ".join(f"{k}=" for k in keywords)
        if keywords == ["step"] and n_args == 2:
            hint = "pass the step by position: range(start, end, step)"
        else:
            hint = "use tl.range, which takes step=, num_stages=, ... by keyword"
        raise error(
            _keyword_loc(call, keywords[0]),
            f"range() takes no keyword arguments, got {given}",
            help=f"{hint} (Triton's compiler would silently drop the keyword)",
        )
    if not 1 <= n_args <= 3:
        raise error(
            call.loc,
            f"range() takes 1 to 3 positional arguments, got {n_args}",
            help="write range(end), range(start, end) or range(start, end, step)",
        )


def _range_triple(args: list[Any]) -> tuple[Any, Any, Any]:
    if len(args) == 1:
        return 0, args[0], 1
    if len(args) == 2:
        return args[0], args[1], 1
    return args[0], args[1], args[2]


def _keyword_loc(node: ast.Call, key: str) -> Location:
    for kw in node.keywords:
        if kw.name == key:
            return kw.loc
    return node.loc


def _where_parts(node: ast.IfExp) -> tuple[ast.Expr, ast.Expr, ast.Expr]:
    """``a if cond else b`` as (cond, a, b), in ``tl.where``'s order."""
    return node.test, node.body, node.orelse


def _source_text(node: ast.Expr, default: str) -> str:
    """Simple expressions as the user wrote them (``x > 0``), for a help's example."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return repr(node.value)
    if isinstance(node, ast.Attribute):
        return f"{_source_text(node.value, default)}.{node.attr}"
    if isinstance(node, ast.BinOp):
        left = _operand_text(node.left, node.op, False, default)
        right = _operand_text(node.right, node.op, True, default)
        return f"{left} {node.op} {right}"
    if isinstance(node, ast.UnaryOp):
        operand = _source_text(node.operand, default)
        if isinstance(node.operand, (ast.BinOp, ast.Compare)):
            operand = f"({operand})"
        return f"not {operand}" if node.op == "not" else f"{node.op}{operand}"
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, right = (_source_text(n, default) for n in (node.left, node.comparators[0]))
        return f"{left} {node.ops[0]} {right}"
    if isinstance(node, ast.Call) and not node.keywords:
        args = ", ".join(_source_text(a, default) for a in node.args)
        return f"{_source_text(node.func, default)}({args})"
    return default


#: Binding strength of the binary operators, for the parentheses of :func:`_source_text`.
_PRECEDENCE = {"|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5, "**": 7}
_PRECEDENCE |= {op: 6 for op in ("*", "/", "//", "%", "@")}


def _operand_text(node: ast.Expr, op: str, right: bool, default: str) -> str:
    """An operand of ``op`` as text, in parentheses where it binds less tightly."""
    text = _source_text(node, default)
    if isinstance(node, ast.Compare) or (isinstance(node, ast.UnaryOp) and op == "**"):
        return f"({text})"
    if isinstance(node, ast.BinOp):
        inner, outer = _PRECEDENCE.get(node.op, 0), _PRECEDENCE.get(op, 0)
        if inner < outer or (inner == outer and right):
            return f"({text})"
    return text


def _expr_text(node: ast.Expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_expr_text(node.value)}.{node.attr}"
    return "module"


#: Numbers that Triton's dtypes carry (see ScalarType).
_DTYPE_NUMBERS = ("primitive_bitwidth", "int_bitwidth", "fp_mantissa_width", "exponent_bias")

_DTYPE_PREDICATES = {
    "is_floating": lambda t: t.is_float(),
    "is_int": lambda t: t.is_int(),
    "is_int_signed": lambda t: t.is_signed(),
    "is_int_unsigned": lambda t: t.kind == "uint",
    "is_bool": lambda t: t.is_bool(),
    "is_ptr": lambda t: t.is_ptr(),
    "is_const": lambda t: isinstance(t, PointerType) and t.const,
    "is_fp16": lambda t: t.name == "f16",
    "is_bf16": lambda t: t.name == "bf16",
    "is_fp32": lambda t: t.name == "f32",
    "is_fp64": lambda t: t.name == "f64",
}


def _type_attribute(loc: Location, t: Any, attr: str) -> Any:
    """``dtype.element_ty``, ``dtype.primitive_bitwidth``, ``dtype.is_floating()`` ..."""
    if attr == "element_ty":
        return (
            t.pointee
            if isinstance(t, PointerType)
            else t.element
            if isinstance(t, BlockType)
            else t
        )
    if isinstance(t, ScalarType) and (attr in _DTYPE_NUMBERS or attr.startswith(("is_", "get_"))):
        try:
            return getattr(t, attr)  # Triton's dtype API (see ScalarType)
        except (AttributeError, KeyError):
            raise error(loc, f"type {t!r} has no attribute '{attr}'") from None
    if attr in _DTYPE_PREDICATES and not isinstance(t, BlockType):
        predicate = _DTYPE_PREDICATES[attr]
        return lambda: predicate(t)
    if attr in ("shape", "scalar", "numel", "pointee", "element", "name", "bitwidth", "const"):
        try:
            return getattr(t, attr)
        except AttributeError:
            pass
    raise error(loc, f"type {t!r} has no attribute '{attr}'")


def _isinstance(value: Any, classes: Any) -> bool:
    """``isinstance`` in a kernel, as Triton answers it: a run-time value is a
    ``tl.tensor``, a compile-time one a ``tl.constexpr``, a tuple a ``tl.tuple``, a
    descriptor a ``tl.tensor_descriptor``."""
    for cls in classes if isinstance(classes, tuple) else (classes,):
        if isinstance(cls, PyBuiltin):  # `int`, `float`, `tuple` inside a kernel
            cls = getattr(builtins, cls.name)
        if cls is tl_core.tensor and isinstance(value, Tensor):
            return True
        descriptor_types = (tl_core.tensor_descriptor, tl_core.tensor_descriptor_base)
        if cls in descriptor_types and isinstance(value, TensorDescriptor):
            return True
        if cls is constexpr and not has_runtime(value):
            return True
        if builtin_name(cls) == "tuple" and isinstance(value, tuple):
            return True
        if isinstance(cls, type) and not isinstance(value, Tensor) and isinstance(value, cls):
            return True
    return False


def _has_call(node: ast.Expr) -> bool:
    """True if ``node`` calls anything (which may load, store or be costly)."""
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _is_namedtuple_class(fn: Any) -> bool:
    """True for a ``NamedTuple`` (or ``collections.namedtuple``) class."""
    return isinstance(fn, type) and issubclass(fn, tuple) and hasattr(fn, "_fields")


def _kernel_arg(b: Builder, spec: ArgSpec, arg_attrs: list[dict[str, Any]]) -> Any:
    """The kernel's value for one argument; its block arguments are added to ``b``'s block.

    A constexpr is its Python value, an int equal to 1 the constant 1 (as in
    Triton), a descriptor a :class:`TensorDescriptor` of its fields, a tuple
    a tuple of its items' values.
    """
    if spec.kind == "constexpr":
        return unwrap(spec.value)
    if spec.kind == "tuple":
        cls, items = spec.value
        return tuple_value(cls, [_kernel_arg(b, item, arg_attrs) for item in items])
    if spec.kind == "descriptor":
        fields = spec.kernel_params()
        args_ = [Tensor(_add_block_arg(b.block, f.type, f.name)) for f in fields]
        arg_attrs.extend(_descriptor_attrs(spec, fields))
        block_shape, padding = spec.value[:2]
        return from_kernel_args(b, args_, block_shape, padding)
    arg = _add_block_arg(b.block, spec.type, spec.name)
    arg_attrs.append({"divisibility": 16} if spec.divisible_by_16 else {})
    return 1 if spec.equal_to_1 else Tensor(arg)


def _descriptor_attrs(spec: ArgSpec, fields: list[ArgSpec]) -> list[dict[str, Any]]:
    """The ``arg_attrs`` of a host descriptor's base, sizes and strides.

    A host descriptor's strides are multiples of 16 bytes (the descriptor
    checks it, as Triton's does), so a stride that is not a multiple of 16
    elements is still one of ``16 / itemsize``: the TMA form needs no more.
    """
    rank = len(spec.value[0])
    itemsize = max(1, spec.type.pointee.bitwidth // 8) if isinstance(spec.type, PointerType) else 1
    attrs: list[dict[str, Any]] = []
    for i, f in enumerate(fields):
        if f.divisible_by_16:
            attrs.append({"divisibility": 16})
        elif i > rank and 16 // itemsize > 1:  # a stride (field 0 is the base)
            attrs.append({"divisibility": 16 // itemsize})
        else:
            attrs.append({})
    return attrs
