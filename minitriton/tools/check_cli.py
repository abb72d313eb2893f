"""``minitriton check FILE.py``: run a script with the emulator's checks on.

Races between programs, reads of uninitialized memory (arrays from
``minitriton.emulator.empty``, or ``--poison PARAM``) and integer overflow
in index arithmetic are reported as located errors, with the program ids
and offsets involved (see :mod:`minitriton.emulator.debug.checks`). A
kernel configuration that the emulator runs but that would not fit the GPU
it stands for (an H200: shared memory, threads) is reported as a warning
(:mod:`minitriton.resources`).
"""

from __future__ import annotations

import argparse
import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from minitriton.tools.debug_cli import script_command


def add_parser(subparsers: Any) -> None:
    """Register ``minitriton check``."""
    with script_command(subparsers, "check", run_check) as p:
        p.add_argument("--checks", default="all", help="all, or some of races,uninit,overflow")
        p.add_argument("--poison", action="append", default=[], metavar="PARAM",
                       help="treat this parameter's memory as unwritten")  # fmt: skip


def run_check(args: argparse.Namespace) -> int:
    """run a script on the emulator with race, uninitialized-read and overflow checks

    Run FILE.py on the emulator with the checks on; the first finding stops the script with a
    located error.
    """
    from dataclasses import replace

    from minitriton.cli import CliError
    from minitriton.emulator.debug.checks import CheckOptions, Checks
    from minitriton.emulator.debug.tools import using
    from minitriton.tools.debug_cli import split_options
    from minitriton.tools.run_status import prepare_script, run_reporting_errors, script_runner

    script_args = split_options(args)  # options written after FILE.py count too
    try:
        options = CheckOptions.parse(args.checks)
    except ValueError as e:
        raise CliError(str(e)) from None
    options = replace(options, poison=tuple(args.poison))
    path = prepare_script(args.script, script_args)
    checks = Checks(options, fits=True)
    with using(checks), _counting_view_warnings(checks.warnings):
        status = run_reporting_errors(script_runner(path), path)
    if status == 0 and checks.warnings:
        count = len(checks.warnings)
        print(f"no errors found; {count} warning{'s' if count > 1 else ''} (above)")
    elif status == 0:
        print("no problems found")
    return status


@contextlib.contextmanager
def _counting_view_warnings(found: list[str]) -> Iterator[None]:
    """Add the launcher's strided-view warnings (loads and stores) to ``found``, shown as ever."""
    show = warnings.showwarning

    def counting(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
        if issubclass(category, RuntimeWarning) and "of the strided view" in str(message):
            found.append(str(message))
        show(message, category, *args, **kwargs)

    warnings.showwarning = counting
    try:
        yield
    finally:
        warnings.showwarning = show
