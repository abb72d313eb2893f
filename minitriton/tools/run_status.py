"""Running a user's script for a CLI tool: errors become messages and an exit status."""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any


def prepare_script(script: str, script_args: list[str], backend: str | None = "emulator") -> Path:
    """Check the file, choose ``backend`` (None: leave it), set ``sys.argv`` / ``sys.path``.

    A kernel file written by torch.compile gets MiniTriton's stand-ins for
    Inductor's runtime (:mod:`minitriton.inductor`).
    """
    from minitriton.cli import CliError
    from minitriton.jit import BACKEND_ENV, set_backend

    path = Path(script)
    if not path.is_file():
        raise CliError(f"{script}: no such file")
    if backend is not None:
        os.environ[BACKEND_ENV] = backend  # child processes of the script agree
        set_backend(backend)
    sys.argv = [str(path), *script_args]
    sys.path.insert(0, str(path.resolve().parent))
    _prepare_inductor_file(path, backend)
    return path


def _prepare_inductor_file(path: Path, backend: str | None) -> None:
    """A kernel file that torch.compile wrote runs on MiniTriton's Inductor runtime."""
    from minitriton.inductor import install, is_inductor_file

    if is_inductor_file(path):
        install(backend)


def script_runner(path: Path) -> Callable[[], Any]:
    """A function that runs the script as ``__main__``."""
    return lambda: runpy.run_path(str(path), run_name="__main__")


def run_reporting_errors(run: Callable[[], Any], script: Path) -> int:
    """Call ``run()``; kernel errors print as diagnostics, others as the user's traceback."""
    from minitriton.cli import user_traceback
    from minitriton.diagnostics import full_traceback
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
        if is_user_error(e) and full_traceback():  # MINITRITON_TRACEBACK=1: our frames too
            traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
        elif is_user_error(e):
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
