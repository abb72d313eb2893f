"""Developer tools run as ``python -m minitriton.tools.<name>``."""
