"""The IR's core data structures: values, operations, blocks and regions.

An :class:`Operation` has operands (SSA :class:`Value` objects), results,
attributes (plain Python ints, floats, bools, strings and lists of them) and
regions. A :class:`Region` holds one :class:`Block`; a block has typed
arguments and a list of operations. Every operation carries a
:class:`~minitriton.diagnostics.Location`.

Each concrete op is a small subclass with a ``name``, its ``traits``
(:mod:`minitriton.ir.traits`), its declared signature (``operand_counts``,
``result_count``, ``required_attrs``) and a ``verify_()`` method for the
rules beyond it. It is registered in :data:`OP_REGISTRY` by the list of its
module's ops (:func:`register_ops`), in the spirit of xDSL's dialects.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from minitriton.diagnostics import UNKNOWN, Location
from minitriton.ir.traits import Pure, Terminator, Trait, Traits
from minitriton.ir.types import BlockType, Type

Attr = Any  # int | float | bool | str | list[Attr]


def freeze_attr(attr: Attr) -> Any:
    """A hashable form of an attribute that tells ``0.0`` from ``-0.0`` (CSE's keys use it)."""
    if isinstance(attr, dict):
        return tuple(sorted((k, freeze_attr(v)) for k, v in attr.items()))
    if isinstance(attr, (list, tuple)):
        return tuple(freeze_attr(v) for v in attr)
    # 1 == 1.0 == True and 0.0 == -0.0 in Python, and nan != nan: compare
    # the type and the exact text instead.
    return (type(attr).__name__, repr(attr))


class VerifyError(Exception):
    """Raised when an op breaks the IR's rules."""

    def __init__(self, op: Operation | None, message: str) -> None:
        self.op = op
        self.loc = op.loc if op is not None else UNKNOWN
        name = f"'{op.name}' " if op is not None else ""
        super().__init__(f"{name}{message}")


class Value:
    """An SSA value: the result of an op or the argument of a block."""

    def __init__(self, type: Type, name_hint: str | None = None) -> None:
        self.type = type
        self.name_hint = name_hint

    @property
    def shape(self) -> tuple[int, ...]:
        """The block shape, or ``()`` for scalars."""
        return self.type.shape if isinstance(self.type, BlockType) else ()


class OpResult(Value):
    """The ``index``-th result of ``owner``."""

    def __init__(self, type: Type, owner: Operation, index: int) -> None:
        super().__init__(type)
        self.owner = owner
        self.index = index


class BlockArgument(Value):
    """The ``index``-th argument of a block (loop variable, iter arg, ...)."""

    def __init__(self, type: Type, index: int, name_hint: str | None = None) -> None:
        super().__init__(type, name_hint)
        self.index = index


class Block:
    """A straight-line list of ops with typed arguments."""

    def __init__(self, arg_types: Sequence[Type] = (), arg_names: Sequence[str | None] = ()):
        names = list(arg_names) + [None] * (len(arg_types) - len(arg_names))
        self.args = [BlockArgument(t, i, n) for i, (t, n) in enumerate(zip(arg_types, names))]
        self.ops: list[Operation] = []
        self.parent: Operation | None = None

    def append(self, op: Operation) -> Operation:
        """Append ``op`` and make this block its parent."""
        op.parent = self
        self.ops.append(op)
        return op

    def insert(self, index: int, op: Operation) -> Operation:
        """Insert ``op`` before position ``index``."""
        op.parent = self
        self.ops.insert(index, op)
        return op

    def remove(self, op: Operation) -> None:
        """Remove ``op`` from this block."""
        index = self._find(op)
        del self.ops[index]
        self._hint = index
        op.parent = None

    def index_of(self, op: Operation) -> int:
        """The position of ``op``, searched for near the last one found (see :meth:`_find`)."""
        index = self._find(op)
        self._hint = index
        return index

    def _find(self, op: Operation) -> int:
        """The position of ``op``: passes erase in order, so look near the last erasure.

        DCE sweeps backwards (erasing near the end, or just before the op
        erased last), CSE forwards (just after it); searching from the start
        each time made erasing a long run of ops quadratic. Windows around
        the last position that double in size keep the cost of each search
        proportional to the distance from it, in either direction.
        """
        ops = self.ops
        for i in range(len(ops) - 1, max(len(ops) - 9, -1), -1):
            if ops[i] is op:
                return i
        hint = getattr(self, "_hint", 0)
        try:
            return ops.index(op, max(hint - 1, 0), hint + 16)  # just after: CSE's order
        except ValueError:
            pass
        width = 32
        while True:
            lo, hi = max(hint - width, 0), min(hint + width, len(ops))
            try:
                return ops.index(op, lo, hi)  # ops compare by identity
            except ValueError:
                if lo == 0 and hi == len(ops):
                    raise
            width *= 2

    @property
    def terminator(self) -> Operation | None:
        """The last op, if any."""
        return self.ops[-1] if self.ops else None


class Region:
    """A region of one block, owned by an op (loop body, branch, combiner)."""

    def __init__(self, block: Block | None = None) -> None:
        self.block = block if block is not None else Block()

    @property
    def args(self) -> list[BlockArgument]:
        """The entry block's arguments."""
        return self.block.args

    @property
    def ops(self) -> list[Operation]:
        """The entry block's ops."""
        return self.block.ops


def _either(counts: tuple[int, ...]) -> str:
    """``(2, 3)`` -> ``2 or 3``: operand counts in messages and in the docs."""
    return " or ".join(str(c) for c in counts)


# Names an op class may not set, and what it does instead.
_DERIVED = {
    "pure": "declare traits",
    "is_terminator": "declare traits",
    "verify": "override verify_",
}


class Operation:
    """Base class of every IR op.

    Subclasses set :attr:`name`, :attr:`traits` and the signature they
    accept, and override :meth:`verify_` for any rule beyond it, as xDSL's
    ops declare their operands and attributes and add a ``verify_``.
    Construction never verifies: the verifier runs over whole modules (and
    after every pass in the tests).
    """

    name: ClassVar[str] = "<op>"
    #: What passes may assume about the op (see :mod:`minitriton.ir.traits`).
    traits: ClassVar[Traits] = frozenset()
    #: The operand counts the op accepts; ``None``: any number.
    operand_counts: ClassVar[tuple[int, ...] | None] = None
    #: How many results the op has; ``None``: any number.
    result_count: ClassVar[int | None] = None
    #: The attributes the op must carry.
    required_attrs: ClassVar[tuple[str, ...]] = ()
    #: Where a memory op's optional mask operand goes; ``None``: the op takes none.
    mask_index: ClassVar[int | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # ``pure`` and ``is_terminator`` follow from the traits, and
        # ``verify`` checks the declared signature first: a class that sets
        # them would contradict what it declares, so it fails at import.
        for legacy, instead in _DERIVED.items():
            if legacy in cls.__dict__:
                raise TypeError(f"{cls.__name__} sets '{legacy}': {instead} instead")

    @classmethod
    def has_trait(cls, trait: type[Trait]) -> bool:
        """True if the op declares ``trait``."""
        return trait in cls.traits

    @classmethod
    def signature(cls) -> str:
        """The declared signature in words (``operands 1 or 2; attributes axis``), or ``""``."""
        parts = []
        if cls.operand_counts is not None:
            parts.append(f"operands {_either(cls.operand_counts)}")
        if cls.result_count is not None:
            parts.append(f"results {cls.result_count}")
        if cls.required_attrs:
            parts.append("attributes " + ", ".join(cls.required_attrs))
        return "; ".join(parts)

    def mask_operand(self) -> int | None:
        """The index of this op's mask operand, if it has one (see :attr:`mask_index`)."""
        index = self.mask_index
        return index if index is not None and len(self.operands) > index else None

    @property
    def pure(self) -> bool:
        """True for ops whose only effect is their results (the :class:`Pure` trait)."""
        return Pure in self.traits

    @property
    def is_terminator(self) -> bool:
        """True for ops that end a block (the :class:`Terminator` trait)."""
        return Terminator in self.traits

    def __init__(
        self,
        operands: Sequence[Value] = (),
        result_types: Sequence[Type] = (),
        attrs: dict[str, Attr] | None = None,
        regions: Sequence[Region] = (),
        loc: Location = UNKNOWN,
    ) -> None:
        self.operands = list(operands)
        self.results = [OpResult(t, self, i) for i, t in enumerate(result_types)]
        self.attrs: dict[str, Attr] = dict(attrs or {})
        self.regions = list(regions)
        for region in self.regions:
            region.block.parent = self
        self.loc = loc
        self.parent: Block | None = None

    @property
    def result(self) -> OpResult:
        """The single result (errors if the op has not exactly one)."""
        if len(self.results) != 1:
            raise VerifyError(self, f"expected one result, has {len(self.results)}")
        return self.results[0]

    @property
    def parent_op(self) -> Operation | None:
        """The op whose region holds this op."""
        return self.parent.parent if self.parent is not None else None

    def walk(self) -> Iterator[Operation]:
        """This op, then every op nested in its regions, in order."""
        yield self
        for region in self.regions:
            for op in list(region.ops):
                yield from op.walk()

    def verify(self) -> None:
        """Check the declared signature, then the op's own rules; raise :class:`VerifyError`."""
        counts = self.operand_counts
        if counts is not None and len(self.operands) not in counts:
            raise self.fail(f"expects {_either(counts)} operands, got {len(self.operands)}")
        if self.result_count is not None and len(self.results) != self.result_count:
            raise self.fail(f"expects {self.result_count} results, got {len(self.results)}")
        for attr in self.required_attrs:
            if attr not in self.attrs:
                raise self.fail(f"missing attribute '{attr}'")
        self.verify_()

    def verify_(self) -> None:
        """The op's rules beyond its declared signature (none by default)."""

    def fail(self, message: str) -> VerifyError:
        """Build a :class:`VerifyError` for this op."""
        return VerifyError(self, message)

    def __repr__(self) -> str:
        return f"<{self.name} at {self.loc}>"


OP_REGISTRY: dict[str, type[Operation]] = {}


def register_ops(*classes: type[Operation]) -> None:
    """Make ``classes`` known to the IR parser by their names: a dialect's list of ops.

    As in xDSL, each module of ops ends with the explicit list of the ops it
    defines. A class that names no op of its own, or a name that another
    class has taken, fails when the module is imported.
    """
    named: dict[str, type[Operation]] = {}
    for cls in classes:
        if "name" not in vars(cls):
            raise TypeError(f"{cls.__name__} declares no op name of its own")
        taken = named.get(cls.name) or OP_REGISTRY.get(cls.name)
        if taken is not None and taken is not cls:
            raise TypeError(f"op name {cls.name!r} is taken by {taken.__name__}")
        named[cls.name] = cls
    OP_REGISTRY.update(named)  # all or nothing


def replace_all_uses(root: Operation, old: Value, new: Value) -> None:
    """Replace every use of ``old`` by ``new`` in ``root`` and its regions."""
    for op in root.walk():
        op.operands = [new if v is old else v for v in op.operands]


def use_counts(root: Operation) -> dict[int, int]:
    """Map ``id(value)`` to the number of uses in ``root`` and below."""
    counts: dict[int, int] = {}
    for op in root.walk():
        for v in op.operands:
            counts[id(v)] = counts.get(id(v), 0) + 1
    return counts
