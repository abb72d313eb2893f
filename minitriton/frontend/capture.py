"""Which globals a kernel may read: Triton's rule for captured names.

A kernel's source names values it does not define: modules (``tl``,
``math``), other ``@jit`` functions, dtypes, and constants. Triton's
compiler reads them when it compiles, so a constant that changes later
would not change the compiled kernel. Its rule: a global (or a closure
variable of the function that defines the kernel) must be one of

* a ``tl.constexpr`` instance: ``BLOCK = tl.constexpr(128)``;
* a module, a ``@jit`` or ``@constexpr_function`` function, a builtin of
  ``tl`` or of a library (``__triton_builtin__``), an aggregate class, a
  named-tuple class, or a dtype (``tl.float16``, ``tl.pointer_type(tl.int32)``);
* anything else from ``tl`` itself.

A plain ``BLOCK = 128``, ``BLOCK: tl.constexpr = 128`` (the annotation does
not make the value one), a plain Python function or another object is
refused, in Triton's words. Triton's interpreter (``TRITON_INTERPRET=1``)
runs Python and reads them all.

MiniTriton does the same per backend: a compile for the GPU (``ptx`` and
``gpu`` stages: GPU launches, ``triton.compile``, ``minitriton compile
--emit ptx``) refuses them, located at the name and with the fix; the
emulator reads them, as Triton's interpreter does. So a kernel that reads
``BLOCK = 128`` runs on a laptop and gets the compiler's error on the GPU,
as it would with Triton. ``TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1`` (or
``triton.knobs.compilation.allow_non_constexpr_globals = True``) lifts the
rule, as in Triton. Parameter defaults are Python's business and may name
any global.
"""

from __future__ import annotations

import functools
import os
import reprlib
import types
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from minitriton.diagnostics import CompileError, Location, error
from minitriton.frontend.source import JITBase
from minitriton.ir.types import Type
from minitriton.language.core import constexpr
from minitriton.language.standard import ConstexprFunction

#: Triton's switch that lets kernels read any global.
ALLOW_ENV = "TRITON_ALLOW_NON_CONSTEXPR_GLOBALS"

#: The modules whose objects a kernel may always name (ours, and Triton's under the alias).
_LANGUAGE_MODULES = ("minitriton.language", "triton.language")


#: Whether the compile under way refuses what Triton's compiler refuses (a GPU compile).
_STRICT: ContextVar[bool] = ContextVar("minitriton_strict_globals", default=False)


@contextmanager
def compiler_rule(strict: bool) -> Iterator[None]:
    """Lower under Triton's compiler rule (``strict``) or its interpreter's."""
    token = _STRICT.set(strict)
    try:
        yield
    finally:
        _STRICT.reset(token)


def compiling_for_gpu() -> bool:
    """True while a kernel is lowered for a GPU compile (Triton's compiler, not its interpreter)."""
    return _STRICT.get()


def refuses(value: Any) -> bool:
    """True if the compile under way must refuse reading ``value`` from a global."""
    return _STRICT.get() and not readable(value) and not non_constexpr_globals_allowed()


def non_constexpr_globals_allowed() -> bool:
    """Whether ``TRITON_ALLOW_NON_CONSTEXPR_GLOBALS`` is on (Triton's spellings of true)."""
    return os.environ.get(ALLOW_ENV, "").strip().lower() in ("1", "true", "yes", "on", "y")


def readable(value: Any) -> bool:
    """True if a kernel may read ``value`` from a global or closure variable."""
    if isinstance(value, (constexpr, types.ModuleType, Type, JITBase, ConstexprFunction)):
        return True
    if getattr(value, "__triton_builtin__", False) or hasattr(value, "__minitriton_fields__"):
        return True
    if isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields"):
        return True  # a named-tuple class
    module = getattr(value, "__module__", None)
    return isinstance(module, str) and module.startswith(_LANGUAGE_MODULES)


def refused_global(loc: Location, name: str, value: Any) -> CompileError:
    """The located error for a global that is not a compile-time constant."""
    triton = (
        f"Cannot access global variable {name} from within @jit'ed function. Triton kernels can "
        "only access global variables that are instanstiated as constexpr "
        "(`x = triton.language.constexpr(42)`). Note that this is different from annotating a "
        "variable as constexpr (`x: triton.language.constexpr = 42`), which is not supported.  "
        "Alternatively, set the envvar TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1, but we do not "
        "promise to support this forever."
    )
    return error(
        loc,
        f"Cannot access global variable {name} from within @jit'ed function: kernels read only "
        f"globals that are compile-time constants, and {name} is a {_kind(value)}",
        help=f"{_fix(name, value)} (TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1 lifts the rule, as in "
        "Triton)",
        triton=triton,
    )


def _kind(value: Any) -> str:
    return "class" if isinstance(value, type) else type(value).__name__


#: Functions a kernel calls: made readable by a decorator, not by ``tl.constexpr``.
_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial)


def _fix(name: str, value: Any) -> str:
    """What to write instead, by the kind of object ``name`` holds (Triton reads the same)."""
    if isinstance(value, type):
        # Triton's compiler reads a class only as an aggregate (``__triton_aggregate__``,
        # which @triton.aggregate sets) or a named tuple, whose values a kernel can build.
        return (
            f"decorate the class {name} with @triton.aggregate, or make it a named tuple: "
            f"class {name}(typing.NamedTuple)"
        )
    if isinstance(value, _FUNCTIONS):
        return (
            f"decorate {name} with @triton.jit (a device function) or with "
            "@triton.constexpr_function (a function of compile-time values)"
        )
    shown = reprlib.repr(value)
    return f"make it a constant: {name} = tl.constexpr({shown}), or pass it as a parameter"
