"""The IR builder: where the frontend puts the ops it creates.

A :class:`Builder` has an insertion block (ops are appended at its end) and
a current source location, which every op it creates carries unless the
caller passes another. Lowering sets the location from the AST node it is
working on, so each op points back at the source that made it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from minitriton.diagnostics import UNKNOWN, Location
from minitriton.ir.core import Attr, Block, Operation, Region, Value
from minitriton.ir.ops import ConstantOp
from minitriton.ir.types import ScalarType, Type, element_type, wrap_int


class Builder:
    """Appends ops to :attr:`block`, located at :attr:`loc`."""

    def __init__(self, block: Block, loc: Location = UNKNOWN) -> None:
        self.block = block
        self.loc = loc

    def create(
        self,
        op_class: type[Operation],
        operands: Sequence[Value] = (),
        result_types: Sequence[Type] = (),
        attrs: dict[str, Attr] | None = None,
        loc: Location | None = None,
        regions: Sequence[Region] = (),
    ) -> Operation:
        """Build an op of ``op_class`` and append it to the insertion block."""
        op = op_class(operands, result_types, attrs, regions, loc or self.loc)
        return self.block.append(op)

    def value(
        self,
        op_class: type[Operation],
        operands: Sequence[Value],
        result_type: Type,
        attrs: dict[str, Attr] | None = None,
    ) -> Value:
        """Create a single-result op and return its result."""
        return self.create(op_class, operands, [result_type], attrs).result

    def constant(self, value: int | float | bool, t: Type) -> Value:
        """An ``arith.constant`` of type ``t`` (a block constant is a splat)."""
        elem = element_type(t)
        assert isinstance(elem, ScalarType), t  # pointers have no constants
        value = float(value) if elem.is_float() else wrap_int(int(value), elem)
        return self.value(ConstantOp, [], t, {"value": value})

    @contextmanager
    def at(self, block: Block) -> Iterator[Builder]:
        """Temporarily append to ``block`` (a region being built)."""
        saved = self.block
        self.block = block
        try:
            yield self
        finally:
            self.block = saved

    def located(self, loc: Location) -> _Located:
        """Temporarily locate new ops at ``loc`` (``with b.located(loc): ...``)."""
        return _Located(self, loc)


class _Located:
    """The context of :meth:`Builder.located`: a plain class, not a generator,
    since lowering enters one for nearly every AST node it visits."""

    __slots__ = ("builder", "loc", "saved")

    def __init__(self, builder: Builder, loc: Location) -> None:
        self.builder = builder
        self.loc = loc
        self.saved = loc

    def __enter__(self) -> Builder:
        self.saved = self.builder.loc
        self.builder.loc = self.loc
        return self.builder

    def __exit__(self, *exc: object) -> None:
        self.builder.loc = self.saved


def new_region(arg_types: Sequence[Type] = (), arg_names: Sequence[str | None] = ()) -> Region:
    """A region with one empty block taking ``arg_types``."""
    return Region(Block(arg_types, arg_names))
