"""Running a user's script for a CLI tool: errors become messages and an exit status."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def run_reporting_errors(run: Callable[[], Any], script: Path) -> int:
    """Call ``run()``; kernel errors print as diagnostics, others as the user's traceback."""
    from minitriton.cli import user_traceback
    from minitriton.jit import is_user_error

    try:
        run()
    except SystemExit as e:
        return exit_status(e.code)
    except KeyboardInterrupt as e:
        if str(e):  # a kernel's interrupt says which kernel, program and line were running
            print(e, file=sys.stderr)
        return 130
    except Exception as e:
        if is_user_error(e):
            print(e, file=sys.stderr)
        else:
            print(user_traceback(e, script), file=sys.stderr, end="")
        return 1
    return 0


def exit_status(code: Any) -> int:
    """The status of ``SystemExit(code)``; a message is printed, as Python does."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
