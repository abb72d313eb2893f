"""Triton's ahead-of-time entry: ``triton.compile(triton.compiler.ASTSource(fn, signature))``.

The kernel is compiled for the types its signature names, without arguments
or a launch, down to PTX (the ``asm`` stages) for the target's arch.
"""

from __future__ import annotations

from typing import Any

from minitriton.compiler import DEFAULT_ARCH, CompiledKernel, CompileOptions, compile_kernel
from minitriton.diagnostics import CompileError, full_traceback, trimmed
from minitriton.frontend.source import ArgSpec, KernelSource
from minitriton.signature import kernel_params, parse_signature

__all__ = ["ASTSource", "compile"]


def _jit_function(fn: Any) -> Any:
    """The ``@jit`` function under autotune and heuristics wrappers (they keep it as ``.fn``).

    :func:`minitriton.jit.base_jit_function`'s walk, here by attributes: the
    compiler layer may not import the jit layer.
    """
    while not isinstance(getattr(fn, "source", None), KernelSource) and hasattr(fn, "fn"):
        fn = fn.fn
    return fn


class ASTSource:
    """A ``@jit`` function and the types of its arguments, as Triton's ``ASTSource`` takes them.

    ``signature`` maps each parameter's name to a type (``"*fp32"``, ``"i32"``,
    ``"constexpr"``); ``constexprs`` gives the compile-time values, keyed by
    name or by Triton's index path ``(i,)``; ``attrs`` may mark arguments
    ``[["tt.divisibility", 16]]``.
    """

    def __init__(
        self,
        fn: Any,
        signature: dict[str, str],
        constexprs: dict[Any, Any] | None = None,
        attrs: dict[Any, Any] | None = None,
    ) -> None:
        self.fn = fn
        self.signature = dict(signature)
        self.constexprs = dict(constexprs or {})
        self.attrs = dict(attrs or {})

    def arg_specs(self) -> list[ArgSpec]:
        """One spec per parameter of the kernel, in order."""
        params = kernel_params(_jit_function(self.fn).fn)
        names = [p.name for p in params]
        constants = {_name(k, names): v for k, v in self.constexprs.items()}
        divisible = {
            _name(k, names)
            for k, marks in self.attrs.items()
            if any(m[0] == "tt.divisibility" and m[1] == 16 for m in marks)
        }
        specs = []
        for param in params:
            if param.name in constants:
                specs.append(ArgSpec(param.name, "constexpr", value=constants[param.name]))
                continue
            text = self.signature.get(param.name)
            if text is None or text == "constexpr":
                if not param.has_default:
                    raise ValueError(f"ASTSource: no type or value for parameter {param.name!r}")
                specs.append(ArgSpec(param.name, "constexpr", value=param.default))
                continue
            hint = ":16" if param.name in divisible and text.startswith(("*", "i", "u")) else ""
            specs.extend(parse_signature(text + hint, [param]))
        return specs


def _name(key: Any, names: list[str]) -> str:
    """A parameter named by its name or by Triton's index path ``(i,)``."""
    if isinstance(key, tuple):
        key = key[0]
    return names[key] if isinstance(key, int) else str(key)


def compile(  # noqa: A001 - Triton's name
    src: ASTSource, target: Any = None, options: dict[str, Any] | None = None
) -> CompiledKernel:
    """Compile ``src`` down to PTX for ``target`` (a ``GPUTarget``; sm_90 by default).

    ``options`` takes the launch options of :class:`CompileOptions` under
    Triton's names (``num_warps``, ``num_stages``, ``maxnreg``,
    ``enable_fp_fusion`` ...); others, Triton's alone, are left out, as
    Triton leaves out names its backend does not know. ``debug`` keeps
    ``tl.device_assert`` and ``tl.expect_zero`` in the kernel, as Triton's
    does (``CompileOptions.device_asserts``), without MiniTriton's debug
    mode, which checks every memory access (torch's Inductor asks for
    ``debug`` by default, for its indexing asserts). A capability of 90 or
    more compiles for the arch-specific target (``sm_90a``, ``sm_100a``), as
    Triton does. A kernel that does not compile raises a located
    ``CompilationError``.
    """
    known = set(CompileOptions.__dataclass_fields__) - {"arch", "passes", "print_after", "debug"}
    given = {k: v for k, v in (options or {}).items() if k in known}
    if (options or {}).get("debug"):
        given["device_asserts"] = True  # Triton's debug: the kernel's asserts stay in it
    given_arch = getattr(target, "arch", None)
    arch = DEFAULT_ARCH
    if isinstance(given_arch, int):
        arch = f"sm_{given_arch}" + ("a" if given_arch >= 90 else "")
    opts = CompileOptions(**given, arch=arch)
    fn = _jit_function(src.fn)
    try:
        if hasattr(fn, "check_specialization_lists"):
            fn.check_specialization_lists()
        source = fn.source
        return compile_kernel(source, src.arg_specs(), opts, stop_after="ptx")
    except CompileError as e:
        # As at launch: the message alone is chained as the cause, as Triton chains
        # the error a CompilationError wraps (tests read ``str(err.__cause__)``).
        raise trimmed(e) from (None if full_traceback() else e.cause())
