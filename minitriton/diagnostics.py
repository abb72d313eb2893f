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

import linecache
from dataclasses import dataclass, field


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

    def render(self) -> str:
        """Render as ``file:line:col: severity: message``, source line and caret."""
        lines = [f"{self.loc}: {self.severity}: {self.message}"]
        text = source_line(self.loc)
        if text is not None:
            lines.append(f"    {text}")
            lines.append("    " + " " * max(self.loc.col - 1, 0) + "^")
        if self.help:
            lines.append(f"help: {self.help}")
        return "\n".join(lines)


class CompileError(Exception):
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


def error(loc: Location, message: str, help: str | None = None) -> CompileError:
    """Build a :class:`CompileError` holding a single diagnostic."""
    return CompileError([Diagnostic(loc, message, help=help)])


@dataclass
class DiagnosticBag:
    """Collects diagnostics so that a pass can report all of them at once."""

    items: list[Diagnostic] = field(default_factory=list)

    def error(self, loc: Location, message: str, help: str | None = None) -> None:
        """Record an error."""
        self.items.append(Diagnostic(loc, message, help=help))

    def raise_if_any(self) -> None:
        """Raise one :class:`CompileError` if anything was recorded."""
        if self.items:
            raise CompileError(self.items)
