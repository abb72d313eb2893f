"""``triton.compiler.errors``: Triton's names for the errors of a kernel that does not compile.

``CompilationError`` is :class:`~minitriton.diagnostics.CompileError`, so
``pytest.raises(CompilationError)`` written for Triton catches MiniTriton's
located diagnostics. A failed ``tl.static_assert`` raises a
``CompileTimeAssertionFailure``, and an operation that Triton's code generator
refuses itself an ``UnsupportedLanguageConstruct`` (with no ``__cause__``), as in
Triton.
"""

from minitriton.diagnostics import (
    CompileError,
    CompileTimeAssertionFailure,
    UnsupportedLanguageConstruct,
    UserError,
)

CompilationError = CompileError
TritonError = UserError


__all__ = [
    "CompilationError",
    "CompileTimeAssertionFailure",
    "TritonError",
    "UnsupportedLanguageConstruct",
]
