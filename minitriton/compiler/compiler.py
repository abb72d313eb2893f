"""``triton.compiler.compiler``: the host-side names that tools built on Triton import.

torch's Inductor and other libraries reach for these names even when they
never compile through them: :func:`triton_key` (a key that changes whenever
the compiler changes, for their caches), :func:`make_backend` (the backend
of a target, to read its default options) and :class:`CompiledKernel`.

:func:`compile` of an :class:`ASTSource` is Triton's ahead-of-time entry
(:mod:`minitriton.compiler.aot`).
"""

from __future__ import annotations

from minitriton.backends import make_backend
from minitriton.compiler import CompiledKernel
from minitriton.compiler.aot import ASTSource, compile

__all__ = ["ASTSource", "CompiledKernel", "compile", "make_backend", "triton_key"]


def triton_key() -> str:
    """A key that changes whenever MiniTriton's compiler changes.

    Triton's key hashes its version and its compiler's sources; MiniTriton's
    is its version plus :func:`minitriton.ircache.compiler_digest`, the digest
    of the sources that decide what a kernel compiles to (the one its own
    disk cache keys on).
    """
    import minitriton
    from minitriton.ircache import compiler_digest

    return f"minitriton-{minitriton.__version__}-{compiler_digest()}"
