"""Source locations and diagnostics.

One location type, :class:`Location`, runs through the AST, every IR op and
every diagnostic. Errors render the way Triton renders them::

    kernel.py:12:5: error: unsupported construct: lambda
        f = lambda x: x
            ^
    help: define a @jit helper function instead

Diagnostics are collected in a :class:`DiagnosticBag` and raised once, as a
single :class:`CompileError`.
"""

from __future__ import annotations

import functools
import importlib.util
import linecache
import os
import sys
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType

from minitriton.env import TRACEBACK_ENV


def full_traceback() -> bool:
    """True when ``MINITRITON_TRACEBACK`` asks for MiniTriton's own frames too."""
    return os.environ.get(TRACEBACK_ENV, "") not in ("", "0")


def trimmed(err: BaseException) -> BaseException:
    """``err`` without the frames below the current one, unless ``MINITRITON_TRACEBACK`` is set.

    ``raise trimmed(e) from None`` re-raises a user error so that its
    traceback starts at the re-raising frame: the compiler's or emulator's
    frames below it say nothing about the user's kernel.
    """
    return err if full_traceback() else err.with_traceback(None)


@dataclass(frozen=True)
class Location:
    """A position in a kernel's own source file (1-based line and column)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def shifted(self, line_offset: int, col_offset: int = 0) -> Location:
        """Return this location moved by ``line_offset`` lines (and columns)."""
        return Location(self.file, self.line + line_offset, self.col + col_offset)


UNKNOWN = Location("<unknown>", 0, 0)


def source_line(loc: Location) -> str | None:
    """Return the text of the source line at ``loc``, if it can be read."""
    if loc.line <= 0:
        return None
    text = linecache.getline(loc.file, loc.line)
    return text.rstrip("\n") if text else None


@dataclass
class Diagnostic:
    """One located message: ``file:line:col: error: message``."""

    loc: Location
    message: str
    severity: str = "error"
    help: str | None = None
    #: Triton's own words for this error, where tests written for Triton compare them:
    #: the message :meth:`CompileError.cause` chains (our message is the one rendered).
    triton: str | None = None
    #: For a GPU refusal of an older target on purpose ("needs sm_89"): the oldest arch
    #: number that compiles the construct (tools tell these from real failures by it).
    needs_arch: int | None = None
    #: The kernel or ``@jit`` function ``loc`` lies in: its name and where its ``def`` is.
    function: tuple[str, Location] | None = None

    def in_function(self) -> str | None:
        """Where ``loc`` is as Triton's errors say it: ``at 2:4: in kernel``.

        Line 1 is the function's ``def``; the column counts from 0 in the
        function's dedented source. None outside a known function.
        """
        if self.function is None:
            return None
        name, start = self.function
        return f"at {self.loc.line - start.line + 1}:{self.loc.col - start.col}: in {name}"

    def render(self) -> str:
        """Render as ``file:line:col: severity: message``, source line and caret.

        In a kernel or ``@jit`` function, the caret also says where it points
        as Triton's errors do (``at 2:4: in kernel``, see :meth:`in_function`).
        """
        lines = [f"{self.loc}: {self.severity}: {self.message}"]
        text = source_line(self.loc)
        if text is not None:
            lines.append(f"    {text}")
            caret = "    " + " " * max(self.loc.col - 1, 0) + "^"
            where = self.in_function()
            lines.append(f"{caret} {where}" if where else caret)
        if self.help:
            lines.append(f"help: {self.help}")
        return "\n".join(lines)


class UserError(BaseException):
    """Base of every error that describes the user's mistake, not MiniTriton's.

    Its message is complete: a located diagnostic (``file:line:col``, the
    source line, a caret and what to write instead) or a sentence naming the
    parameter or option to change. Tools print it without a traceback, and
    :func:`excepthook` prints it without MiniTriton's own frames.

    It derives from :class:`BaseException` only so that a Ctrl-C in a kernel
    (a ``KeyboardInterrupt``) can be one too; every other user error also
    derives from :class:`Exception`, as :class:`CompileError` does.
    """

    def _render_traceback_(self) -> list[str]:
        """The short report IPython and Jupyter show for an uncaught user error.

        IPython calls this method when an exception has it; raising makes it
        fall back to its own full traceback, which ``MINITRITON_TRACEBACK=1``
        asks for.
        """
        if full_traceback():
            raise NotImplementedError("MINITRITON_TRACEBACK is set: the full traceback")
        frames = [f for f in user_frames(self.__traceback__) if not _is_ipython(f.filename)]
        return short_report(type(self), self, frames).rstrip("\n").split("\n")


class CompileError(UserError, Exception):
    """Raised once with every diagnostic collected for a kernel.

    ``str(err)`` is the rendered text of all diagnostics, so an uncaught
    error still reads like a compiler message rather than a traceback from
    MiniTriton's internals.
    """

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(d.render() for d in self.diagnostics))

    @property
    def first(self) -> Diagnostic:
        """The first diagnostic (the one most tests assert on)."""
        return self.diagnostics[0]

    @property
    def error_message(self) -> str:
        """The first diagnostic's message without its location, in Triton's wording
        where it differs (Triton's ``CompilationError.error_message``)."""
        return self.first.triton or self.first.message

    def cause(self) -> CompileMessage | None:
        """The first diagnostic's message without its location, as an exception.

        A launch raises a compile error *from* it: Triton's CompilationError
        chains the error it wraps as ``__cause__``, and tests written for
        Triton read ``str(err.__cause__)``. An error inside a ``@jit`` helper
        (one followed by the notes of its calls) chains, as Triton's does, the
        helper's own located error, which chains the message.
        """
        message = CompileMessage(self.first.triton or self.first.message)
        if len(self.diagnostics) < 2 or self.diagnostics[1].severity != "note":
            return message
        located = CompileMessage(self.first.render())
        located.__cause__ = message
        return located


class CompileMessage(Exception):
    """The message of a :class:`CompileError`, chained as its ``__cause__`` at launch."""


class CompileTimeAssertionFailure(CompileError):
    """A ``tl.static_assert`` whose condition is false (Triton's name for it)."""

    def cause(self) -> CompileMessage | None:
        """None: Triton raises a failed static_assert itself, chaining nothing."""
        return None


class UnsupportedLanguageConstruct(CompileError):
    """An operation that Triton's code generator itself refuses (Triton's name for it).

    Triton raises these without chaining an error, so ``__cause__`` is None
    (an error raised inside a builtin chains that builtin's error instead).
    """

    def cause(self) -> CompileMessage | None:
        """None: nothing is chained, as in Triton."""
        return None


def unsupported(loc: Location, message: str, help: str | None = None) -> CompileError:
    """A located :class:`UnsupportedLanguageConstruct`."""
    return UnsupportedLanguageConstruct([Diagnostic(loc, message, help=help)])


def error(
    loc: Location,
    message: str,
    help: str | None = None,
    triton: str | None = None,
    needs_arch: int | None = None,
) -> CompileError:
    """Build a :class:`CompileError` holding a single diagnostic.

    ``triton`` is Triton's wording of the same error, chained as the cause
    (see :meth:`CompileError.cause`) where it differs from ours; ``needs_arch``
    marks a construct the target arch lacks (``90`` for "needs sm_90").
    """
    diagnostic = Diagnostic(loc, message, help=help, triton=triton, needs_arch=needs_arch)
    return CompileError([diagnostic])


def warn(loc: Location, message: str) -> None:
    """A located ``UserWarning`` while compiling, as Triton warns (``tl.where`` on ints).

    It names the kernel's line, so Python's warning filters report it once per line.
    """
    warnings.warn_explicit(message, UserWarning, filename=loc.file, lineno=max(loc.line, 1))


def internal_error(loc: Location, where: str, cause: BaseException) -> CompileError:
    """The diagnostic for a failure of MiniTriton itself (a bug), located at the kernel.

    Python's own message stays out of it (it is chained as ``__cause__``):
    it speaks of the compiler's objects, not of the kernel.
    """
    return error(
        loc,
        f"internal compiler error in {where}: this is a bug in MiniTriton, please report it",
        help=f"include this kernel and the error's kind ({type(cause).__name__}); "
        "MINITRITON_DUMP_DIR=DIR saves the kernel's IR",
    )


@dataclass
class DiagnosticBag:
    """Collects diagnostics so that a pass can report all of them at once."""

    items: list[Diagnostic] = field(default_factory=list)
    #: The class of the error raised: the first recorded error's (a failed
    #: static_assert stays a CompileTimeAssertionFailure).
    kind: type[CompileError] = CompileError

    def error(self, loc: Location, message: str, help: str | None = None) -> None:
        """Record an error."""
        self.items.append(Diagnostic(loc, message, help=help))

    def raise_if_any(self) -> None:
        """Raise one :class:`CompileError` if anything was recorded."""
        if self.items:
            raise self.kind(self.items)


@functools.cache
def internal_dirs() -> tuple[str, ...]:
    """Folders of MiniTriton's own code: this package and the emulator's.

    In a source checkout the emulator lives outside this package (installed
    as ``minitriton.emulator``), so its folder is looked up, not assumed.
    """
    dirs = [str(Path(__file__).resolve().parent)]
    spec = importlib.util.find_spec("minitriton.emulator")
    for location in (spec.submodule_search_locations or []) if spec else []:
        dirs.append(str(Path(location).resolve()))
    return tuple(dirs)


def _is_ours(filename: str) -> bool:
    path = str(Path(filename).resolve())
    return any(path.startswith(d + "/") for d in internal_dirs())


def _is_ipython(filename: str) -> bool:
    """True for a frame of IPython's own code (its ``run_code``), which IPython hides too."""
    return "/IPython/" in filename.replace("\\", "/")


def user_frames(tb: TracebackType | None) -> traceback.StackSummary:
    """The frames of ``tb`` that are the user's code, not MiniTriton's."""
    frames = traceback.extract_tb(tb)
    return traceback.StackSummary.from_list([f for f in frames if not _is_ours(f.filename)])


def user_frame() -> FrameType | None:
    """The innermost frame of the running stack that is the user's code, not MiniTriton's."""
    frame = sys._getframe(1)
    while frame is not None and _is_ours(frame.f_code.co_filename):
        frame = frame.f_back  # type: ignore[assignment]
    return frame


def call_location(frame: FrameType) -> Location:
    """Where ``frame`` is: its file, line, and the column of the call it is making."""
    line, col = frame.f_lineno, 1
    co_positions = getattr(frame.f_code, "co_positions", None)  # Python 3.11 and later
    positions = list(co_positions()) if co_positions is not None else []
    index = frame.f_lasti // 2  # one position per 2-byte code unit
    if 0 <= index < len(positions):
        start_line, _, start_col, _ = positions[index]
        if start_line is not None and start_col is not None:
            line, col = start_line, start_col + 1
    return Location(frame.f_code.co_filename, line, col)


def short_report(
    kind: type[BaseException], err: BaseException, frames: traceback.StackSummary | list
) -> str:
    """A traceback of ``frames`` only, then the error's full message."""
    summary = traceback.StackSummary.from_list(list(frames))
    lines = ["Traceback (most recent call last):\n", *summary.format()]
    lines.append(f"{kind.__module__}.{kind.__qualname__}: {err}\n")
    return "".join(lines)


def excepthook(kind: type[BaseException], err: BaseException, tb: TracebackType | None) -> None:
    """Print uncaught diagnostics without MiniTriton's own frames.

    A kernel error in a plain ``python script.py`` run then shows the user's
    call site and the located diagnostic (``file:line:col``, source line,
    caret), never a traceback through the compiler's internals. Every other
    exception, and every exception under ``MINITRITON_TRACEBACK=1``, goes to
    the previous hook unchanged.
    """
    if not issubclass(kind, UserError) or full_traceback():
        _previous_hook(kind, err, tb)
        return
    sys.stderr.write(short_report(kind, err, user_frames(tb)))


_previous_hook = sys.excepthook


def install_excepthook() -> None:
    """Make :func:`excepthook` the interpreter's hook (idempotent).

    ``import minitriton`` calls this: the hook handles :class:`UserError`
    alone, whose message is already the whole story (a located diagnostic),
    and hands every other exception to the hook it replaced, unchanged; so a
    plain ``python script.py`` shows a kernel error as the ``minitriton``
    command does, and nothing else changes. A hook installed later (a
    debugger, IPython's) simply takes over.
    """
    if sys.excepthook is not excepthook:
        global _previous_hook
        _previous_hook = sys.excepthook
        sys.excepthook = excepthook
