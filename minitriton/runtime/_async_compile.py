"""Triton's ``AsyncCompileMode``: warm-ups compile in an executor while the host goes on.

Inside ``with triton.AsyncCompileMode(executor):``, a ``kernel.warmup(...)``
that needs a compile hands it to ``executor`` and returns a
:class:`FutureKernel` at once; leaving the block waits for every compile
(and raises the first compile error, unless ``ignore_errors=True``). A
future stands for its :class:`~minitriton.compiler.CompiledKernel`: reading
an attribute (``fut.asm``, ``fut.n_regs``) waits for it, and ``result()``
returns it. The same specialization asked for twice shares one compile.

A launch inside the block compiles as it would outside it, in this thread:
it needs the kernel at once. Compiles run in the executor's threads (a
``ThreadPoolExecutor``); the compiled kernel enters the kernel's cache when
its compile ends, so that later launches find it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from concurrent.futures import Executor, Future, as_completed
from contextvars import ContextVar
from types import TracebackType
from typing import Any

#: The ``AsyncCompileMode`` whose block the current thread is in, if any.
active_mode: ContextVar[AsyncCompileMode | None] = ContextVar(
    "minitriton_async_compile_mode", default=None
)


class FutureKernel:
    """A compile under way in an executor; stands for the compiled kernel it will give."""

    def __init__(self, finalize_compile: Callable[[Any], None], future: Future) -> None:
        self.finalize_compile = finalize_compile
        self.kernel: Any = None
        self.future = future

    def result(self, ignore_errors: bool = False) -> Any:
        """The compiled kernel, once its compile ended (``None`` for a failed one if ignored)."""
        if self.kernel is not None:
            return self.kernel
        try:
            kernel = self.future.result()
        except Exception:
            if ignore_errors:
                return None
            raise
        self.finalize_compile(kernel)
        self.kernel = kernel
        return kernel

    def __getattr__(self, name: str) -> Any:
        # Only names this class lacks get here: they are the compiled kernel's.
        return getattr(self.result(), name)


class AsyncCompileMode:
    """A block whose warm-ups compile in ``executor``; leaving it waits for them all."""

    def __init__(self, executor: Executor, *, ignore_errors: bool = False) -> None:
        self.executor = executor
        self.ignore_errors = ignore_errors
        self.raw_futures: list[Future] = []
        self.future_kernels: dict[Hashable, FutureKernel] = {}
        self._token: Any = None

    def submit(
        self, key: Hashable, compile_fn: Callable[[], Any], finalize_fn: Callable[[Any], None]
    ) -> FutureKernel:
        """Start ``compile_fn`` in the executor, once per ``key``."""
        known = self.future_kernels.get(key)
        if known is not None:
            return known
        future = self.executor.submit(compile_fn)
        self.raw_futures.append(future)
        kernel = FutureKernel(finalize_fn, future)
        self.future_kernels[key] = kernel
        return kernel

    def __enter__(self) -> AsyncCompileMode:
        if active_mode.get() is not None:
            raise RuntimeError("Another AsyncCompileMode is already active")
        self._token = active_mode.set(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        active_mode.reset(self._token)
        by_future = {id(k.future): k for k in self.future_kernels.values()}
        for future in as_completed(self.raw_futures):
            by_future[id(future)].result(self.ignore_errors)
