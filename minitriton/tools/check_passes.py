"""``minitriton check-passes FILE.py``: find the pass that changes a kernel's results.

Every launch the script makes is run on the emulator after each pass of the
pipeline (on copies of its arguments) and compared with the IR before any
pass; the first pass whose results differ is reported with the changed
elements and the IR changes it made. Exit status 1 if any pass is guilty.
The GPU backend's passes follow (unless ``--no-gpu-passes``) as long as
their IR has emulator semantics; for those that leave GPU-only ops the
report says so instead.
"""

from __future__ import annotations

import argparse
from typing import Any

from minitriton.tools.debug_cli import script_command


def add_parser(subparsers: Any) -> None:
    """Register ``minitriton check-passes``."""
    with script_command(subparsers, "check-passes", run_check_passes) as p:
        p.add_argument("--passes", metavar="P,Q", help="check these passes instead of the pipeline")
        p.add_argument(
            "--no-gpu-passes", action="store_true",
            help="check the optimization passes only, not the GPU backend's",
        )  # fmt: skip


def run_check_passes(args: argparse.Namespace) -> int:
    """report the first pass that changes a script's kernel results

    Run FILE.py on the emulator; for every launch, run the kernel after each pass of the
    pipeline on copies of its arguments and compare the results.
    """
    from minitriton.cli import CliError
    from minitriton.compiler import check_pass_names
    from minitriton.emulator.debug.passcheck import PassChecker
    from minitriton.emulator.debug.tools import using
    from minitriton.tools.debug_cli import split_options
    from minitriton.tools.run_status import prepare_script, run_reporting_errors, script_runner

    script_args = split_options(args)  # options written after FILE.py count too
    passes = [n.strip() for n in args.passes.split(",") if n.strip()] if args.passes else None
    try:
        check_pass_names(passes or [], stage="ir")
    except ValueError as e:
        raise CliError(str(e)) from None
    path = prepare_script(args.script, script_args)
    checker = PassChecker(passes, gpu=not args.no_gpu_passes)
    with using(checker):
        status = run_reporting_errors(script_runner(path), path)
    if not checker.reports:
        print("no kernel was launched")
    for number, (launch, report) in enumerate(checker.reports, 1):
        print(f"launch {number} ({launch.name}, grid {launch.grid}): {report}")
    bad = any(not report.ok for _, report in checker.reports)
    return 1 if bad else status
