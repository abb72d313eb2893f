"""Where debugging tools plug into kernel launches.

The debugger, the checks, the tracer and the pass checker all need to see a
launch that the user's code makes with ``kernel[grid](...)``. While a tool is
active (``with using(tool): ...``), :mod:`minitriton.jit` sends every
emulator launch to :func:`run_launch` instead of the plain emulator; with no
tool active nothing changes. ``using(tool, thread_only=True)`` shows it the
launches of this thread only: the debugger runs its script in a thread of its
own, and a paused session must not take over the launches that the rest of
the program (a notebook's next cell) makes. A tool may add listeners to the
launch (:meth:`Tool.listeners`) or run the launch itself (:meth:`Tool.run`)::

    class CountStores(Tool):
        def listeners(self, launch):
            return [MyListener()]

    with using(CountStores()):
        add_kernel[grid](x, y, out, n, BLOCK_SIZE=128)

Setting ``MINITRITON_CHECKS`` (``all``, or a list such as ``races,uninit``)
turns the checks of :mod:`minitriton.emulator.debug.checks` on for every launch,
without any code change (``passes`` adds the pass checker).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minitriton.emulator.interpreter import Interpreter, Listener
from minitriton.emulator.schedule import run_grid
from minitriton.env import CHECKS_ENV
from minitriton.ir.ops import Module


@dataclass
class Launch:
    """One launch as a tool sees it: the compiled kernel, the grid, the host values."""

    compiled: Any  # minitriton.compiler.CompiledKernel
    grid: tuple[int, int, int]
    args: list[Any]  # one host value per kernel block argument (arrays are written in place)
    _frontend: Module | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        """The kernel's name."""
        return str(self.compiled.name)

    @property
    def module(self) -> Module:
        """The optimized IR, what a plain launch runs."""
        return self.compiled.module

    @property
    def debug(self) -> bool:
        """Whether the kernel was compiled in debug mode (``device_assert`` active)."""
        return bool(self.compiled.options.debug)

    def frontend_module(self) -> Module:
        """The IR before any pass: every source variable is still there.

        Falls back to the optimized IR when the kernel's source is unknown.
        """
        if self._frontend is None:
            source = getattr(self.compiled, "source", None)
            if source is None:
                return self.module
            from minitriton.compiler import lower

            options = self.compiled.options
            module = lower(source, self.compiled.arg_specs, options)
            module.target = options.arch  # the arch whose dots the emulator models
            self._frontend = module
        return self._frontend

    def constexprs(self) -> dict[str, Any]:
        """The values of the constexpr parameters (folded into the IR)."""
        return {s.name: s.value for s in self.compiled.arg_specs if s.kind == "constexpr"}

    def param_names(self) -> list[str]:
        """Names of the kernel's runtime parameters, in order."""
        return [a.name_hint or f"arg{i}" for i, a in enumerate(self.module.kernel.body.args)]

    def copy_args(self) -> list[Any]:
        """Fresh copies of the argument arrays (scalars are shared)."""
        return [a.copy() if isinstance(a, np.ndarray) else a for a in self.args]


class Tool:
    """Base class of the tools that watch or take over launches."""

    def listeners(self, launch: Launch) -> list[Listener]:
        """Listeners to attach to this launch (fresh objects per launch)."""
        return []

    def run(self, launch: Launch, listeners: Sequence[Listener]) -> bool:
        """Run the launch yourself and return True, or return False to let it run normally."""
        return False


class _ThreadTools(threading.local):
    """The tools active for this thread's launches only."""

    def __init__(self) -> None:
        self.tools: list[Tool] = []


_ACTIVE: list[Tool] = []  # for every thread's launches
_THREAD = _ThreadTools()
#: Activations in force, in any thread: the launch hook stays installed while there are any.
_users = 0
_LOCK = threading.Lock()


@contextlib.contextmanager
def using(*tools: Tool, thread_only: bool = False) -> Iterator[None]:
    """Activate ``tools`` for the launches made inside the ``with`` block.

    With ``thread_only``, for the launches this thread makes only.
    """
    # ``minitriton.jit`` the attribute is the decorator: fetch the module itself.
    jit: Any = importlib.import_module("minitriton.jit")
    global _users
    where = _THREAD.tools if thread_only else _ACTIVE
    with _LOCK:
        _users += 1
        where.extend(tools)
        jit.EMULATOR_HOOK = run_launch
    try:
        yield
    finally:
        with _LOCK:
            for tool in tools:
                where.remove(tool)
            _users -= 1
            if not _users:
                jit.EMULATOR_HOOK = None


def tools_in_use() -> int:
    """How many ``using`` blocks are in force, in any thread (0: launches run plainly)."""
    return _users


def active_tools() -> list[Tool]:
    """The tools this thread's launches see, with those ``MINITRITON_CHECKS`` asks for."""
    return [*env_tools(), *_ACTIVE, *_THREAD.tools]


def env_tools() -> list[Tool]:
    """Tools named by the ``MINITRITON_CHECKS`` environment variable."""
    text = os.environ.get(CHECKS_ENV, "").strip()
    if not text or text == "0":
        return []
    from minitriton.emulator.debug.checks import CheckOptions, Checks

    try:
        options = CheckOptions.parse(text)
    except ValueError as e:
        from minitriton.launch_checks import LaunchError

        raise LaunchError(f"{CHECKS_ENV}={text!r}: {e} (or all)") from None
    tools: list[Tool] = [Checks(options)]
    if "passes" in text.split(","):
        from minitriton.emulator.debug.passcheck import PassChecker

        tools.append(PassChecker(raise_on_difference=True))
    return tools


def run_launch(compiled: Any, grid: tuple[int, int, int], args: list[Any]) -> None:
    """The launch hook: give the active tools their say, then run the grid."""
    tools = active_tools()
    if not tools:  # tools of another thread's only installed the hook: run as without it
        from minitriton.emulator import launch as emulate

        emulate(compiled.module, grid, args, debug=compiled.options.debug)
        return
    launch = Launch(compiled, grid, list(args))
    listeners = [listener for tool in tools for listener in tool.listeners(launch)]
    for tool in reversed(tools):  # the innermost tool decides first
        if tool.run(launch, listeners):
            return
    interp = Interpreter(launch.module, launch.args, grid, debug=launch.debug, listeners=listeners)
    run_grid(interp)
