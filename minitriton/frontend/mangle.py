"""Triton's mangling of types and specialized helpers' names.

A module of its own, below the lowering, so that the structures lowered
values take (:mod:`~minitriton.frontend.aggregate`,
:mod:`~minitriton.frontend.blockptr`) name themselves without importing it.
"""

from __future__ import annotations

from minitriton.ir.types import BlockType, PointerType, Type


def mangle_type(t: Type) -> str:
    """Triton's mangling of a type in a specialized function's name."""
    if isinstance(t, BlockType):
        return f"{mangle_type(t.element)}S{'_'.join(map(str, t.shape))}S"
    if isinstance(t, PointerType):
        # "k" for a const pointer, as in Triton's "*k" signatures: a helper called with a
        # const pointer is another specialization than with a plain one.
        return ("Pk" if t.const else "P") + mangle_type(t.pointee)
    return t.triton_name


def mangle_name(name: str, arg_types: list[str], constants: list[str]) -> str:
    """``helper__fp32_fp32`` (+ ``__1c2`` per compile-time argument)."""
    text = f"{name}__{'_'.join(arg_types)}"
    if constants:
        text += "__" + "_".join(constants)
    text = text.replace(".", "_d_").replace("'", "_sq_").replace("-", "_m_")
    return "".join(c if c.isalnum() or c == "_" else "_" for c in text)
