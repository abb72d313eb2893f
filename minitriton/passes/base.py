"""The :class:`Pass` base class and the pass registry.

A pass is a frozen dataclass with a class-level ``name`` and an
``apply(module)`` method that rewrites the module in place. Registering it
with :func:`register_pass` makes it known by name to the pipeline, to
``--print-after`` and to the tools::

    @register_pass
    @dataclass(frozen=True)
    class MyPass(Pass):
        name: ClassVar[str] = "my-pass"

        def apply(self, module: Module) -> None:
            ...

Every pass must leave the IR verifiable (:func:`minitriton.ir.verify_module`);
the tests run the verifier after every pass. A pass that treats each function
on its own derives from :class:`FunctionPass` and defines
``apply_to_function(func)`` instead.

The GPU backend's steps are registered here too, with ``stage = "gpu"``
(:class:`minitriton.backend.passes.GpuPass`): one registry knows every pass
by name, and ``stage`` tells the optimization passes from the backend's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from minitriton.ir.ops import FuncOp, Module


@dataclass(frozen=True)
class Pass:
    """One named rewrite of a whole module (in place)."""

    name: ClassVar[str] = "<pass>"
    #: ``"ir"``: a pass of the optimization pipeline, on the block IR;
    #: ``"gpu"``: a step of the GPU backend (:mod:`minitriton.backend.passes`).
    stage: ClassVar[str] = "ir"
    #: What the pass may do to float results besides keeping them: ``""`` (nothing, the
    #: default), or a phrase naming the rewrite that rounds float sums differently
    #: (``canonicalize`` moves an addition into ``tl.dot``'s accumulator, as Triton
    #: does). The pass checker then accepts results that differ within rounding.
    rounding: ClassVar[str] = ""

    def apply(self, module: Module) -> None:
        """Rewrite ``module`` in place."""
        raise NotImplementedError


@dataclass(frozen=True)
class FunctionPass(Pass):
    """A pass that rewrites each function of the module on its own."""

    def apply(self, module: Module) -> None:
        for func in module.funcs:
            self.apply_to_function(func)

    def apply_to_function(self, func: FuncOp) -> None:
        """Rewrite ``func`` in place."""
        raise NotImplementedError


#: Every registered pass, by name.
PASSES: dict[str, type[Pass]] = {}


def register_pass(cls: type[Pass]) -> type[Pass]:
    """Class decorator: register ``cls`` in :data:`PASSES` under ``cls.name``."""
    known = PASSES.get(cls.name)
    if known is not None and known.__qualname__ != cls.__qualname__:
        raise ValueError(f"two passes are named {cls.name!r}")
    PASSES[cls.name] = cls
    return cls


def get_pass(name: str) -> Pass:
    """An instance of the pass called ``name``; ``ValueError`` if unknown."""
    cls = PASSES.get(name)
    if cls is None:
        known = ", ".join(sorted(PASSES))
        raise ValueError(f"unknown pass {name!r} (known passes: {known})")
    return cls()
