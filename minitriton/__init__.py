"""MiniTriton: an educational reference compiler for Triton's kernel language.

A kernel written for real Triton runs unchanged with::

    import minitriton as triton
    import minitriton.language as tl

This module is the Triton-compatible surface: :func:`jit`, :func:`autotune`,
:class:`Config`, :func:`heuristics`, :func:`cdiv`, :func:`next_power_of_2`,
plus MiniTriton's own :func:`set_backend` / :func:`get_backend` (``"gpu"``
or ``"emulator"``) and :class:`CompileError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# The launcher, always: it is what `@triton.jit` needs, and it plugs the launch of
# a compiled kernel into the compiler (minitriton.compiled_api.RUN_COMPILED). A
# function named as its module (jit, autotune) is bound here, after its module:
# a lazy one would be shadowed by the module once anything imported that.
from minitriton.autotune import Autotuner, Config, Heuristics, autotune, heuristics
from minitriton.diagnostics import CompileError, UserError, install_excepthook
from minitriton.jit import (
    JITFunction,
    KernelInterface,
    aggregate,
    get_backend,
    jit,
    must_use_result,
    set_backend,
)
from minitriton.lazy import lazy_attributes
from minitriton.version import __version__

if TYPE_CHECKING:
    from minitriton import knobs, language, runtime, testing
    from minitriton.compiler import CompiledKernel
    from minitriton.language.standard import constexpr_function
    from minitriton.launch_checks import LaunchError, LaunchTypeError, bfloat16_view
    from minitriton.runtime.allocation import set_allocator
    from minitriton.runtime.errors import OutOfResources
    from minitriton.torch_interop import TensorWrapper, reinterpret

#: Triton's names for the errors: a kernel that does not compile raises a
#: CompilationError (a CompileError here), and every error Triton raises about
#: the user's code is a TritonError (a UserError here).
CompilationError = CompileError
TritonError = UserError

# An uncaught kernel error prints the user's frames and the diagnostic alone;
# every other exception reaches the previous hook unchanged (see install_excepthook).
install_excepthook()

__all__ = [
    "AsyncCompileMode",
    "Autotuner",
    "CompilationError",
    "CompileError",
    "CompiledKernel",
    "Config",
    "FutureKernel",
    "Heuristics",
    "InterpreterError",
    "JITFunction",
    "KernelInterface",
    "LaunchError",
    "LaunchTypeError",
    "MockTensor",
    "OutOfResources",
    "TensorWrapper",
    "TritonError",
    "UserError",
    "__version__",
    "aggregate",
    "autotune",
    "backends",
    "bfloat16_view",
    "cdiv",
    "compile",
    "constexpr_function",
    "empty",
    "get_backend",
    "heuristics",
    "jit",
    "knobs",
    "language",
    "must_use_result",
    "next_power_of_2",
    "reinterpret",
    "runtime",
    "set_allocator",
    "testing",
    "tools",
    "set_backend",
]


# Everything else on first use (PEP 562): `import minitriton` stays cheap.
_LAUNCH_CHECKS = "minitriton.launch_checks"
_TORCH = "minitriton.torch_interop"
__getattr__ = lazy_attributes(
    __name__,
    {
        "CompiledKernel": "minitriton.compiler",
        "AsyncCompileMode": "minitriton.runtime._async_compile",
        "FutureKernel": "minitriton.runtime._async_compile",
        "backends": "minitriton.backends",
        "tools": "minitriton.tools",
        "InterpreterError": "minitriton.runtime.errors",
        "MockTensor": "minitriton.jit",
        "compile": "minitriton.compiler.compiler",
        "constexpr_function": "minitriton.language.standard",
        "LaunchError": _LAUNCH_CHECKS,
        "LaunchTypeError": _LAUNCH_CHECKS,
        "bfloat16_view": _LAUNCH_CHECKS,
        "OutOfResources": "minitriton.runtime.errors",
        "set_allocator": "minitriton.runtime.allocation",
        "TensorWrapper": _TORCH,
        "reinterpret": _TORCH,
        "knobs": "minitriton.knobs",
        "language": "minitriton.language",
        "runtime": "minitriton.runtime",
        "testing": "minitriton.testing",
    },
)


def cdiv(x: int, y: int) -> int:
    """Ceiling division of two Python ints: ``cdiv(98432, 1024) == 97``."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of two ``>= n``, as in Triton (``0`` for ``n <= 0``)."""
    n = int(n)
    if n <= 0:
        return 0
    return 1 << (n - 1).bit_length()


def empty(shape: int | tuple[int, ...], dtype: object = "float32") -> object:
    """A NumPy array whose elements count as *uninitialized* for the emulator.

    Reading an element of it before anything wrote it is a located error when
    the emulator's checks are on (see the debugging guide); otherwise it is
    an ordinary ``np.empty`` array.
    """
    from minitriton.emulator.debug.checks import empty as emulator_empty

    return emulator_empty(shape, dtype)
