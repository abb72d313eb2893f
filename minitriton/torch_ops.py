"""MiniTriton kernels inside PyTorch programs: custom ops and ``torch.compile``.

:func:`custom_op` is ``torch.library.custom_op`` for a function that
allocates its outputs and launches MiniTriton kernels, as
``torch.library.triton_op`` is for Triton kernels::

    from minitriton.torch_ops import custom_op

    @custom_op("mylib::add", mutates_args=())
    def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        return out

The op then composes with ``torch.compile`` (it stays in the graph: no graph
break), autograd (``add.register_autograd(...)``) and ``torch.export``. Its
fake implementation, which those need to know the outputs' shapes, is the
function itself run on fake tensors with every kernel launch skipped; give
your own with ``add.register_fake`` when the function reads tensor data on
the host.

Without a custom op, ``torch.compile`` captures each ``kernel[grid](...)``
as one ``minitriton::launch`` op (every tensor argument counted as
written), or, when the op cannot describe the launch, runs it eagerly in a
graph break: :func:`skip_in_dynamo` keeps TorchDynamo out of the launcher
and makes the capture. This module imports torch; ``import minitriton``
does not.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch

from minitriton.jit import (
    IGNORED_OPTIONS,
    KERNELS,
    LAUNCH_OPTIONS,
    JITFunction,
    KernelInterface,
    launch_hook,
)
from minitriton.signature import NO_DEFAULT

_dynamo_compiling = torch.compiler.is_dynamo_compiling

__all__ = ["custom_op", "no_launches", "skip_in_dynamo"]

_skipped = False
#: Files of the ``minitriton`` package that TorchDynamo may trace: helpers user code calls
#: in a compiled region (``triton.cdiv``, ``tl`` dtypes) and nothing that launches.
_TRACEABLE = ("__init__.py", "language", "__pycache__", "torch_ops.py")


def skip_in_dynamo() -> None:
    """Add MiniTriton's launch machinery and the emulator to TorchDynamo's skip list.

    A call into a skipped file is a graph break, and the call runs as plain
    Python: TorchDynamo neither traces nor compiles the launcher, the
    compiler, the emulator or the GPU driver's bindings. ``triton.cdiv``,
    ``triton.next_power_of_2`` and ``tl``'s dtypes stay traceable. Called on
    import of TorchDynamo (or by ``@jit`` after it); repeated calls do nothing.
    It also gives the kernel classes a ``__getitem__`` that, while TorchDynamo
    traces, captures the launch (:func:`_captured`).
    """
    global _skipped
    if _skipped:
        return
    _skipped = True
    from torch._dynamo import trace_rules

    import minitriton
    from minitriton import emulator

    package = os.path.dirname(minitriton.__file__)
    names = [
        f"minitriton.{entry.removesuffix('.py')}"
        for entry in sorted(os.listdir(package))
        if entry not in _TRACEABLE and (entry.endswith(".py") or "." not in entry)
    ]
    names.append(emulator.__name__)  # installed under minitriton, kept elsewhere in a checkout
    for name in names:
        trace_rules.add(name)
    for cls in (KernelInterface, JITFunction):
        cls.__getitem__ = _capturing(cls.__dict__["__getitem__"])  # type: ignore[method-assign]


def _capturing(eager: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``__getitem__`` that, while TorchDynamo traces, captures the launch as an op."""

    def __getitem__(self: Any, grid: Any) -> Any:
        # True only in TorchDynamo's trace (about 30 ns in eager code); a fake
        # implementation, which runs while torch compiles, launches eagerly.
        if _dynamo_compiling():
            return _captured(self, grid, eager)
        return eager(self, grid)

    return __getitem__


def _captured(kernel: Any, grid: Any, eager: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    """A launcher that TorchDynamo traces: one ``minitriton::launch`` op in the graph.

    Arguments other than tensors, ints, floats, bools, strings and None (and
    an in-place launch, where a tensor comes twice) launch eagerly instead,
    in a graph break.
    """
    base = kernel
    while not isinstance(base, JITFunction):  # under @autotune / @heuristics
        base = base.fn
    names = base.arg_names
    defaults = [(p.name, p.default) for p in base.params if p.default is not NO_DEFAULT]

    def launcher(*args: Any, **kwargs: Any) -> Any:
        bound = dict(zip(names, args))
        bound.update(kwargs)
        for name, default in defaults:  # a grid function may read them, as at a launch
            if name not in bound:
                bound[name] = default
        tensors: list[Any] = []
        ints: list[Any] = []
        floats: list[float] = []
        layout = []
        for name, value in bound.items():
            if isinstance(value, torch.Tensor):
                for seen in tensors:
                    if seen is value:
                        return eager(kernel, grid)(*args, **kwargs)
                layout.append(name + ":t")
                tensors.append(value)
            elif (
                value is None
                or isinstance(value, bool)
                or (
                    isinstance(value, str) and ";" not in value  # the layout's separator
                )
            ):
                layout.append(name + ":c" + repr(value))
            elif isinstance(value, int):
                layout.append(name + ":i")
                ints.append(value)
            elif isinstance(value, float):
                layout.append(name + ":f")
                floats.append(value)
            else:
                return eager(kernel, grid)(*args, **kwargs)
        if callable(grid) and not isinstance(kernel, JITFunction):
            # Its meta-parameters come from a config or a heuristic, at the launch.
            return eager(kernel, grid)(*args, **kwargs)
        dims = grid(bound) if callable(grid) else grid
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        _launch_op(tensors, id(kernel), ";".join(layout), ints, floats, list(dims))
        return None

    return launcher


@torch.library.custom_op("minitriton::launch", mutates_args=("tensors",))
def _launch_op(
    tensors: list[torch.Tensor], kernel: int, layout: str, ints: list[int], floats: list[float],
    grid: list[int],
) -> None:  # fmt: skip
    """Launch ``KERNELS[kernel]`` with the arguments that ``layout`` names, in order."""
    values: dict[str, Any] = {}
    pools = {"t": iter(tensors), "i": iter(ints), "f": iter(floats)}
    for item in layout.split(";") if layout else ():
        name, _, code = item.partition(":")
        values[name] = ast.literal_eval(code[1:]) if code[0] == "c" else next(pools[code])
    KERNELS[kernel][tuple(grid)](**values)


@_launch_op.register_fake
def _(tensors: Any, kernel: Any, layout: Any, ints: Any, floats: Any, grid: Any) -> None:
    return None


def _skip_launch(kernel: Any, grid: Any) -> Callable[..., None]:
    """A launcher that launches nothing (fake tensors hold no data).

    A ``@jit`` kernel's arguments are still bound, so that a missing or an
    unknown one is reported while tracing; under ``@autotune`` and
    ``@heuristics`` some parameters come from the configs, so nothing is.
    """
    if not isinstance(kernel, JITFunction):
        return lambda *args, **kwargs: None

    def launcher(*args: Any, **kwargs: Any) -> None:
        options = set(LAUNCH_OPTIONS + IGNORED_OPTIONS) - set(kernel.arg_names)
        kernel.bind(args, {k: v for k, v in kwargs.items() if k not in options})

    return launcher


def no_launches() -> Any:
    """A context in which ``kernel[grid](...)`` launches nothing (it still checks the arguments).

    :func:`custom_op` runs the op's function in it, on fake tensors, as the
    op's fake implementation; use it the same way in a ``register_fake``
    function of your own.
    """
    return launch_hook(_skip_launch)


def custom_op(
    name: str,
    fn: Callable[..., Any] | None = None,
    /,
    *,
    mutates_args: str | Iterable[str],
    device_types: str | Sequence[str] | None = None,
    schema: str | None = None,
) -> Any:
    """``torch.library.custom_op`` for a function that launches MiniTriton kernels.

    Same arguments and result as torch's (a ``CustomOpDef``: call it, and use
    its ``register_autograd``, ``register_fake``, ``register_kernel``), plus a
    fake implementation: ``fn`` itself, run on fake tensors under
    :func:`no_launches`. ``mutates_args`` names the arguments the kernels
    write in place (``()`` when the function only writes tensors it
    allocates), as torch requires.
    """

    def decorator(f: Callable[..., Any]) -> Any:
        op = torch.library.custom_op(
            name, mutates_args=mutates_args, device_types=device_types, schema=schema
        )(f)

        def fake(*args: Any, **kwargs: Any) -> Any:
            with no_launches():
                return f(*args, **kwargs)

        op.register_fake(fake)
        return op

    return decorator(fn) if fn is not None else decorator
