"""Public names that a package imports on first use (PEP 562), so that importing it stays cheap.

``import minitriton`` must not pay for what a launch may never need (the
parser's grammar, the autotuner, ``triton.testing``): such a package lists
those names in a table and sets ``__getattr__ = lazy_attributes(__name__,
TABLE)``. ``minitriton.X`` then works as an eager import would, and the
first use stores the value in the package, so later uses cost nothing.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_attributes(package: str, table: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__``: ``name`` is ``table[name]``'s attribute of that name.

    A table entry whose module is ``package.name`` itself stands for the
    submodule (``minitriton.testing``). A function named as a submodule
    (``minitriton.autotune``) cannot be lazy: importing the submodule sets
    the package's attribute to the module.
    """

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        loaded = importlib.import_module(module)
        value = loaded if module == f"{package}.{name}" else getattr(loaded, name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
