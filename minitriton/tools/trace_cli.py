"""``minitriton trace FILE.py --out DIR``: record every load and store of a script's launches.

For each launch (or those of ``--kernel``) it prints a summary table (bytes
per program, mask efficiency, 128-byte segments per access) and writes one
PNG per buffer to ``DIR``, showing which program touched which element
(``--html``: also an interactive view, one self-contained HTML file).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from minitriton.tools.debug_cli import script_command


def add_parser(subparsers: Any) -> None:
    """Register ``minitriton trace``."""
    with script_command(subparsers, "trace", run_trace) as p:
        p.add_argument("--out", default="trace", metavar="DIR",
                       help="folder for the PNGs (default: trace)")  # fmt: skip
        p.add_argument("--kernel", help="trace only this kernel")
        p.add_argument("--no-png", action="store_true", help="print the summary only")
        p.add_argument(
            "--html", action="store_true", help="also write DIR/KERNEL.html, an interactive view"
        )


def run_trace(args: argparse.Namespace) -> int:
    """record the loads and stores of a script's kernel launches; tables and pictures

    Run FILE.py on the emulator, record every load and store of every program, print a summary
    per launch and draw one PNG per buffer into DIR.
    """
    from minitriton.emulator.debug.tools import using
    from minitriton.emulator.debug.tracer import TraceTool
    from minitriton.tools.debug_cli import split_options
    from minitriton.tools.run_status import prepare_script, run_reporting_errors, script_runner

    script_args = split_options(args)  # options written after FILE.py count too
    path = prepare_script(args.script, script_args)
    tool = TraceTool(args.kernel)
    with using(tool):
        status = run_reporting_errors(script_runner(path), path)
    if not tool.traces:
        print("no kernel was launched")
    for number, trace in enumerate(tool.traces, 1):
        print(f"== launch {number} ==")
        print(trace.summary())
        folder = Path(args.out) if len(tool.traces) == 1 else Path(args.out) / f"launch{number}"
        if args.html:
            print(f"wrote {trace.save_html(folder / f'{trace.kernel}.html')}")
        if args.no_png:
            continue
        for png in trace.save_pngs(folder):
            print(f"wrote {png}")
    return status
