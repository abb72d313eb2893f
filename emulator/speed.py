"""The emulator's speed layer: fast paths that the interpreter tries before an op's semantics.

The emulator is the reference meaning of the IR, so each op's semantics
function (:mod:`minitriton.emulator.registry`) is its plain NumPy meaning:
``arith.add`` adds two arrays, ``tt.load`` checks the enabled lanes and
gathers. What makes it fast is kept apart, here, as *fast paths* registered
beside the semantics under the same op class::

    @fast_path(AddOp)
    def _add(op, state, a, b):
        ...  # a lazy form, or the sum into a dying operand's block
        return DECLINED  # this case is not one of the fast path's: run the semantics

The interpreter calls an op's fast path first; one that returns
:data:`DECLINED` hands the op on to the semantics. The fast paths of the ops
(:mod:`minitriton.emulator.ops.speed`) keep the commonest offsets, masks and
loads in lazy forms (:mod:`minitriton.emulator.lanes`), copy runs of
consecutive offsets through strided views (:mod:`minitriton.emulator.rows`)
and write an elementwise result into the block of an operand that dies at
the op. They exist because a first launch in a fresh process spends most of
its time on fresh pages of memory, and these are the blocks it need not make.

The rule for every fast path: its result equals the semantics' result, value
for value and dtype for dtype, and its errors are the semantics' errors. So
the layer can be switched off, and the whole test suite passes either way:
``MINITRITON_EMULATOR_PLAIN=1`` (read once, at import, into
:data:`minitriton.env.EMULATOR_PLAIN`; the launcher then also leaves its
launch fast path) runs
every op by its plain semantics alone: the way to tell a bug of the meaning
from a bug of the speed machinery. :func:`fast_paths_enabled` switches it
at run time (for tests).

A fast path applies only while its op's semantics is the function it was
registered beside: a tool that puts another function in the registry
(the course's sandboxes do) gets that function's behaviour, undisturbed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from minitriton import env
from minitriton.emulator.registry import SEMANTICS, SemanticsFn
from minitriton.env import EMULATOR_PLAIN_ENV
from minitriton.ir.core import Operation

#: Set to 1 to run every op by its plain semantics, without the fast paths.
PLAIN_ENV: str = EMULATOR_PLAIN_ENV

#: What a fast path returns for a case it does not cover: the semantics then run.
DECLINED: Any = NotImplemented

FastPathFn = Callable[..., Any]

#: Op class -> (its semantics when the fast path was registered, the fast path).
FAST_PATHS: dict[type[Operation], tuple[SemanticsFn, FastPathFn]] = {}

_EMPTY: dict[type[Operation], tuple[SemanticsFn, FastPathFn]] = {}


def fast_path(op_class: type[Operation]) -> Callable[[FastPathFn], FastPathFn]:
    """Register the decorated function as the fast path of ``op_class``.

    The op's semantics must be registered first: the fast path is paired
    with that function, and applies only while it is the registered one.
    """

    def register(fn: FastPathFn) -> FastPathFn:
        plain = SEMANTICS.get(op_class)
        if plain is None:
            raise ValueError(f"{op_class.name} has no semantics to put a fast path before")
        if op_class in FAST_PATHS:
            raise ValueError(f"fast path of {op_class.name} registered twice")
        FAST_PATHS[op_class] = (plain, fn)
        return fn

    return register


#: Runs a combiner region on whole arrays (``emulator/ops/speed.py`` registers it with
#: :func:`combiner_fast_path`): the combined arrays, or None where the region must run.
CombinerFn = Callable[..., Any]
_COMBINER: list[CombinerFn] = []


def combiner_fast_path(fn: CombinerFn) -> CombinerFn:
    """Register the decorated function as the fast path of combiner regions.

    The semantics of reductions and scans (``emulator/ops/reduce.py``) try it
    before they run their combiner: ``fn(region, state, lefts, rights)``
    returns what the region gives on those arrays, or None to let the region
    run one row per pair.
    """
    if _COMBINER:
        raise ValueError("the combiner fast path is registered twice")
    _COMBINER.append(fn)
    return fn


def combine_fast(region: Any, state: Any, lefts: list[Any], rights: list[Any]) -> Any:
    """The combiner fast path's arrays, or None (none registered, or the launch runs plain)."""
    if not _COMBINER or not state.interp.fast_paths:
        return None
    return _COMBINER[0](region, state, lefts, rights)


def active() -> dict[type[Operation], tuple[SemanticsFn, FastPathFn]]:
    """The fast paths a new launch uses: all of them, or none in plain mode."""
    return _EMPTY if env.EMULATOR_PLAIN else FAST_PATHS


def is_enabled() -> bool:
    """True unless the emulator runs plain (``MINITRITON_EMULATOR_PLAIN=1``)."""
    return not env.EMULATOR_PLAIN


@contextmanager
def fast_paths_enabled(enabled: bool) -> Iterator[None]:
    """Within the block, launches run with (True) or without (False) the fast paths.

    This also switches the launch fast path of :mod:`minitriton.jit` (see
    :func:`~minitriton.jit.fast_launch_binder`), which the same variable turns off.
    """
    saved, env.EMULATOR_PLAIN = env.EMULATOR_PLAIN, not enabled
    try:
        yield
    finally:
        env.EMULATOR_PLAIN = saved
