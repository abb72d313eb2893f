"""``triton.language.standard``: the compile-time helpers that libraries import by name.

Triton's ``standard`` module holds the ``tl`` functions written in Triton
itself (``tl.sigmoid``, ``tl.softmax``, the reductions ...) and a few
compile-time helpers. MiniTriton implements the functions as builtins, so
this module re-exports them under their Triton names, and defines the
helpers that code outside Triton imports from here. TorchInductor's runtime
(``torch._inductor.runtime.triton_helpers``) imports ``_log2``; without it,
its sort helper falls back to a stub that raises.

A :func:`constexpr_function` is a plain Python function that a kernel may
call on compile-time values: the call runs while the kernel compiles and
its result is a compile-time value (``n_dims: tl.constexpr = _log2(BLOCK)``).
Called from host code it is the plain function.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from minitriton.language.core import (  # noqa: F401 - Triton's names in this module
    argmax,
    argmin,
    bitonic_merge,
    cdiv,
    constexpr,
    cumprod,
    cumsum,
    flip,
    get_int_dtype,
    interleave,
    max,
    min,
    ravel,
    reduce_or,
    sigmoid,
    softmax,
    sort,
    squeeze,
    sum,
    swizzle2d,
    topk,
    unsqueeze,
    xor_sum,
    zeros,
    zeros_like,
)

R = TypeVar("R")


class ConstexprFunction(Generic[R]):
    """A Python function callable inside a kernel on compile-time values (see the module)."""

    def __init__(self, fn: Callable[..., R]) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> R:
        unwrapped = [a.value if isinstance(a, constexpr) else a for a in args]
        named = {k: v.value if isinstance(v, constexpr) else v for k, v in kwargs.items()}
        return self.fn(*unwrapped, **named)

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """A method of an aggregate: ``self.square()`` in its Python ``__init__`` binds self."""
        if instance is None:
            return self
        return functools.partial(self, instance)

    def __repr__(self) -> str:
        return f"ConstexprFunction({getattr(self.fn, '__name__', self.fn)!r})"


def constexpr_function(fn: Callable[..., R]) -> ConstexprFunction[R]:
    """Mark ``fn`` as callable inside kernels on compile-time values (Triton's decorator)."""
    return ConstexprFunction(fn)


@constexpr_function
def _log2(i: int) -> int:
    """``floor(log2(i))`` of a positive int (0 for ``i <= 1``), as Triton's helper."""
    log2 = 0
    n = i
    while n > 1:
        n >>= 1
        log2 += 1
    return log2


@constexpr_function
def _is_power_of_two(i: int) -> bool:
    """Whether ``i`` is a power of two."""
    return (i & (i - 1)) == 0 and i != 0


_get_int_dtype = constexpr_function(get_int_dtype)
