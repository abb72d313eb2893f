"""``minitriton debug FILE.py``: step through a kernel of a script, like pdb.

::

    minitriton debug FILE.py [--kernel NAME] [--pid X[,Y,Z]] [--launch N]
                     [-c COMMAND ...] [--no-checks] [-- script args...]

The script runs on the emulator. At the chosen kernel's launch (default: the
first kernel launched) the debugger stops at the first source line of the
chosen program and reads commands (``help`` lists them) from the terminal,
or from piped stdin, which it echoes so that a session reads as a
transcript. ``-c`` commands run first. At the end of input the script runs
to its end.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from minitriton.cli import CliError, add_command


def add_parser(subparsers: Any) -> None:
    """Register ``minitriton debug``."""
    with script_command(subparsers, "debug", run_debug) as p:
        p.add_argument("--kernel", help="the kernel to debug (default: the first one launched)")
        p.add_argument("--pid", default="0", help="program id X[,Y,Z] to debug (default: 0)")
        p.add_argument("--launch", type=int, default=1, help="debug the N-th launch of the kernel")
        p.add_argument("-c", "--command", action="append", default=[], dest="commands",
                       help="a debugger command to run first (repeatable)")  # fmt: skip
        p.add_argument(
            "--no-checks",
            action="store_true",
            help="turn off the race, uninitialized-read and overflow checks",
        )


@contextmanager
def script_command(
    subparsers: Any, name: str, func: Callable[[argparse.Namespace], int]
) -> Iterator[argparse.ArgumentParser]:
    """Add ``minitriton NAME FILE.py [options] [args...]``, a command that runs a script.

    ``func`` runs the command, and its docstring is the command's help
    (:func:`minitriton.cli.add_command`). Inside the ``with`` block, add the
    command's options to the parser it gives; they may also be written after
    FILE.py (:func:`split_options`). Every other argument is the script's.
    """
    p = add_command(subparsers, name, func)
    p.add_argument("script", metavar="FILE.py")
    yield p
    p.add_argument("script_args", nargs=argparse.REMAINDER, metavar="args")
    p.set_defaults(own_options=own_options(p))


def own_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """A parser for the options alone, to read them after FILE.py too."""
    own = argparse.ArgumentParser(add_help=False)
    for action in parser._actions:
        if action.option_strings and action.dest != "help":
            own._add_action(action)
    return own


def split_options(args: argparse.Namespace) -> list[str]:
    """Read this command's options written after FILE.py; returns the script's arguments.

    Everything after ``--`` goes to the script untouched.
    """
    rest = list(args.script_args)
    cut = rest.index("--") if "--" in rest else len(rest)
    head, tail = rest[:cut], rest[cut + 1 :]
    _, unknown = args.own_options.parse_known_args(head, namespace=args)
    return [*unknown, *tail]


def parse_pid(text: str) -> tuple[int, ...]:
    """``"1,2"`` -> ``(1, 2)``."""
    try:
        pid = tuple(int(p) for p in text.replace(" ", "").split(",") if p)
    except ValueError:
        raise CliError(f"--pid {text!r}: expected X[,Y,Z]") from None
    if not 1 <= len(pid) <= 3:
        raise CliError(f"--pid {text!r}: expected X[,Y,Z]")
    return pid


def run_debug(args: argparse.Namespace) -> int:
    """step through a kernel of a script on the emulator (pdb-like)

    Run FILE.py on the emulator and stop at the first line of one program of a kernel launch;
    then read debugger commands ('help' lists them).
    """
    from minitriton.diagnostics import UserError
    from minitriton.emulator.debug.debugger import Debugger, DebuggerQuit
    from minitriton.emulator.errors import EmulatorError
    from minitriton.tools.run_status import prepare_script, script_runner

    path = prepare_script(args.script, split_options(args))
    dbg = Debugger(script_runner(path), kernel=args.kernel, pid=parse_pid(args.pid),
                   launch=args.launch, checks=not args.no_checks)  # fmt: skip
    print(dbg.intro)
    dbg.intro = ""
    for command in args.commands:
        if dbg.finished:
            break
        print(f"{dbg.prompt}{command}")
        print(dbg.command(command))
    dbg.interact()
    error = dbg.result
    if error is None and dbg.missed_launch() is not None:
        return 1  # '--kernel NAME' or '--launch N' matched nothing: said above
    if error is None or isinstance(error, DebuggerQuit):
        return 0
    if isinstance(error, SystemExit):
        return error.code if isinstance(error.code, int) else 1
    if not isinstance(error, EmulatorError | UserError):  # diagnostics were printed
        from minitriton.cli import user_traceback

        print(user_traceback(error, path), file=sys.stderr, end="")
    return 1
