"""Entry point for ``python -m minitriton``; same as the ``minitriton`` command."""

from minitriton.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
