"""Flattening structured frontend values into IR values, and rebuilding them.

IR regions exchange flat lists of values: ``scf.for``/``scf.while`` iter
args, ``scf.yield`` operands, ``scf.if`` results, ``tt.func`` arguments and
``tt.call`` results. A frontend value can be a structure instead: a tuple
(``return acc, l_i, m_i``) or an :class:`~minitriton.frontend.semantic.Aggregate`
such as a block pointer, which holds run-time fields.

:func:`flatten` splits a value into its run-time leaves (IR values) and a
:class:`Structure`, its compile-time rest; :func:`rebuild` puts a structure
back together from new leaves (block arguments or op results). Two values
can flow into the same region boundary only if their structures are equal,
which compares the structure and the leaves' types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from minitriton.frontend import promotion as P
from minitriton.frontend import semantic as S
from minitriton.frontend.builder import Builder
from minitriton.frontend.mangle import mangle_type
from minitriton.frontend.semantic import Aggregate, Tensor
from minitriton.frontend.source import tuple_value


@dataclass(frozen=True)
class Structure:
    """The compile-time shape of a flattened value.

    ``kind`` is ``"value"`` (one run-time leaf; ``key`` is its IR type),
    ``"const"`` (a compile-time value, ``key``), ``"tuple"``/``"list"``
    (``children``; a ``NamedTuple``'s ``key`` is its class), ``"struct"`` (an
    instance of a ``@triton.aggregate`` class, ``key``; ``children`` are its
    fields) or ``"aggregate"``
    (``key`` is the class and its
    :meth:`~minitriton.frontend.semantic.Aggregate.static_key`;
    ``children`` are its fields; ``template`` rebuilds it).
    """

    kind: str
    key: Any = None
    children: tuple[Structure, ...] = ()
    template: Any = field(default=None, compare=False, hash=False)

    @property
    def size(self) -> int:
        """The number of run-time leaves."""
        if self.kind == "value":
            return 1
        return sum(c.size for c in self.children)

    def describe(self) -> str:
        """How the structure reads in a diagnostic."""
        if self.kind == "value":
            return str(self.key)
        if self.kind == "const":
            return S.describe(self.key)
        if self.kind == "aggregate":
            return self.template.describe()
        inner = ", ".join(c.describe() for c in self.children)
        if self.kind == "struct":
            return f"{self.key.__name__}({inner})"
        if self.kind == "tuple":
            return f"{self.key.__name__ if self.key else ''}({inner})"
        return f"[{inner}]"

    def mangle(self) -> str:
        """The structure in a specialized helper's name."""
        if self.kind == "value":
            return mangle_type(self.key)
        if self.kind == "const":
            return f"c{self.key!r}"
        if self.kind == "aggregate":
            return self.template.mangle()
        if self.kind == "struct":
            return self.key.__name__ + "S" + "_".join(c.mangle() for c in self.children) + "S"
        prefix = self.key.__name__ if self.kind == "tuple" and self.key else ""
        return prefix + "T" + "_".join(c.mangle() for c in self.children) + "T"


def struct_fields(value: Any) -> tuple[str, ...] | None:
    """The field names of an instance of a ``@triton.aggregate`` class, else None."""
    fields = getattr(type(value), "__minitriton_fields__", None)
    return fields if fields is not None and not isinstance(value, type) else None


def has_runtime(value: Any) -> bool:
    """True if ``value`` is or contains a run-time value (a tensor or an aggregate)."""
    if isinstance(value, (Tensor, Aggregate)):
        return True
    if isinstance(value, (tuple, list)):
        return any(has_runtime(v) for v in value)
    fields = struct_fields(value)
    if fields is not None:
        return any(has_runtime(getattr(value, f, None)) for f in fields)
    return False


def flatten(b: Builder, value: Any, scalars: bool = False) -> tuple[list[Tensor], Structure]:
    """The run-time leaves of ``value`` and its structure.

    With ``scalars``, Python scalars become run-time constants (made at
    ``b``'s insertion point) instead of compile-time parts of the structure:
    a loop counter ``i = 0`` must be able to change, a constexpr argument
    of a helper must not.
    """
    leaves: list[Tensor] = []
    structure = _flatten(b, value, scalars, leaves)
    return leaves, structure


def _flatten(b: Builder, value: Any, scalars: bool, leaves: list[Tensor]) -> Structure:
    if isinstance(value, Tensor) or (scalars and P.is_py_scalar(value)):
        t = S.to_tensor(b, value)
        leaves.append(t)
        return Structure("value", t.type)
    if isinstance(value, Aggregate):
        children = tuple(_flatten(b, f, False, leaves) for f in value.fields())
        key = (type(value).__name__, value.static_key())
        return Structure("aggregate", key, children, template=value)
    fields = struct_fields(value)
    if fields is not None:
        children = tuple(_flatten(b, getattr(value, f, None), False, leaves) for f in fields)
        return Structure("struct", type(value), children)
    if isinstance(value, (tuple, list)):
        children = tuple(_flatten(b, v, scalars, leaves) for v in value)
        if isinstance(value, list):
            return Structure("list", None, children)
        # A NamedTuple keeps its class (the key) to be rebuilt with its fields' names.
        cls = type(value) if hasattr(type(value), "_fields") else None
        return Structure("tuple", cls, children)
    return Structure("const", value)


def leaf_names(value: Any, prefix: str) -> list[str]:
    """IR value names for the leaves of ``value`` (``p_base``, ``t_0`` ...)."""
    if isinstance(value, Aggregate):
        return [f"{prefix}_{n}" for n in value.field_names()]
    if isinstance(value, (tuple, list)):
        return [n for i, v in enumerate(value) for n in leaf_names(v, f"{prefix}_{i}")]
    fields = struct_fields(value)
    if fields is not None:
        return [n for f in fields for n in leaf_names(getattr(value, f, None), f"{prefix}_{f}")]
    if isinstance(value, Tensor) or P.is_py_scalar(value):
        return [prefix]
    return []


def rebuild(structure: Structure, values: list[Tensor]) -> Any:
    """The value of ``structure`` whose run-time leaves are ``values``, in order."""
    if len(values) != structure.size:
        raise ValueError(f"rebuild: {structure.size} leaves expected, got {len(values)}")
    it = iter(values)
    return _rebuild(structure, it)


def _rebuild(structure: Structure, it: Any) -> Any:
    if structure.kind == "value":
        return next(it)
    if structure.kind == "const":
        return structure.key
    children = [_rebuild(c, it) for c in structure.children]
    if structure.kind == "aggregate":
        return structure.template.with_fields(children)
    if structure.kind == "struct":
        instance = object.__new__(structure.key)
        for name, child in zip(structure.key.__minitriton_fields__, children):
            object.__setattr__(instance, name, child)
        return instance
    if structure.kind == "tuple":
        return tuple_value(structure.key or tuple, children)
    return children


def leaf_types(structure: Structure) -> list[Any]:
    """The IR types of the run-time leaves of ``structure``, in order."""
    if structure.kind == "value":
        return [structure.key]
    return [t for c in structure.children for t in leaf_types(c)]
