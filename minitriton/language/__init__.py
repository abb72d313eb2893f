"""``minitriton.language``: import it as ``tl``, as in Triton."""

from minitriton.language import extra, libdevice, math, random  # noqa: E402, F401 - tl.math, tl.extra
from minitriton.language.core import *  # noqa: F403
from minitriton.language.core import BUILTINS, builtin, builtin_name, constexpr, tensor  # noqa: F401
from minitriton.language.core import abs as abs
from minitriton.language.core import max as max  # noqa: A004
from minitriton.language.core import min as min
from minitriton.language.core import range as range  # noqa: A004
from minitriton.language.core import sum as sum
from minitriton.language.core import tuple as tuple  # noqa: A004

# The star import brought core's own imports too: a kernel sees only Triton's names.
del Any, Callable, TypeVar, F, annotations  # noqa: F821
