"""``triton._filecheck``: the frontend helpers Triton's own test files import.

Triton's ``test_frontend.py`` and ``test_line_info.py`` start with
``from triton._filecheck import filecheck_test, run_filecheck, run_parser``.
With this module they import, so their tests that only need a kernel to
compile, or to be refused, run on MiniTriton:

* :func:`run_parser` compiles a kernel through MiniTriton's frontend, without
  launching it, and returns the module (its text is our IR). A kernel that
  does not compile raises the located ``CompilationError``, as in Triton.
* :func:`filecheck_test` and :func:`run_filecheck` check Triton's MLIR text
  with LLVM's FileCheck. MiniTriton's IR is not that MLIR, so such a test is
  skipped (under pytest) or raises ``NotImplementedError``, saying why.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: Why a FileCheck test cannot run here.
NO_MLIR = (
    "FileCheck tests compare Triton's MLIR text; MiniTriton's IR is its own "
    "(see `minitriton compile --stage ir`), so this test does not apply"
)


class ParsedModule:
    """What :func:`run_parser` returns: the compiled kernel's IR module."""

    def __init__(self, module: Any) -> None:
        self.module = module

    def str_nodebug(self) -> str:
        """The IR's text without locations (MiniTriton's IR, not Triton's MLIR)."""
        from minitriton.ir.printer import print_module

        return print_module(self.module)

    def __str__(self) -> str:
        from minitriton.ir.printer import print_module

        return print_module(self.module, with_locs=True)


def run_parser(
    kernel_fn: Any,
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
    target: Any = None,
) -> ParsedModule:
    """Compile ``kernel_fn`` for ``args`` and ``kwargs`` up to the unoptimized IR; do not run it.

    ``target`` is accepted for Triton's signature; the frontend does not depend on it.
    Raises ``CompilationError`` (located) for a kernel that does not compile.
    """
    from minitriton.compiler import compile_kernel
    from minitriton.diagnostics import CompileError, trimmed
    from minitriton.jit import MockTensor, base_jit_function

    fn = base_jit_function(kernel_fn)
    given = {k: MockTensor.wrap_dtype(v) for k, v in dict(kwargs or {}).items()}
    given.pop("sanitize_overflow", None)
    options, _, given = fn._split_options(given)
    bound = fn.bind(tuple(MockTensor.wrap_dtype(a) for a in args), given)
    try:
        compiled = compile_kernel(fn.source, fn.specialize(bound), options, stop_after="ir")
    except CompileError as e:
        raise trimmed(e) from e.cause()
    return ParsedModule(compiled.module)


def _not_applicable() -> None:
    try:
        import pytest
    except ImportError:
        raise NotImplementedError(NO_MLIR) from None
    pytest.skip(NO_MLIR)


def run_filecheck(name: str, module_str: str, check_template: str) -> None:
    """Triton checks ``module_str`` against FileCheck lines; here the test is skipped."""
    _not_applicable()


def run_filecheck_test(
    kernel_fn: Any, args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None
) -> None:
    """Compile ``kernel_fn`` (so that a kernel which does not compile still fails), then skip."""
    run_parser(kernel_fn, args, kwargs)
    _not_applicable()


def filecheck_test(fn: Any) -> Callable[[], None]:
    """Triton's decorator that makes a kernel a FileCheck test (:func:`run_filecheck_test`)."""

    @functools.wraps(fn)
    def test_fn() -> None:
        run_filecheck_test(fn)

    return test_fn
