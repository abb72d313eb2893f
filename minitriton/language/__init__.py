"""``minitriton.language``: import it as ``tl``, as in Triton."""

from minitriton.language import extra, libdevice, math, random  # noqa: E402, F401 - tl.math, tl.extra
from minitriton.language.core import *  # noqa: F403
from minitriton.language.core import BUILTINS, builtin, builtin_name, constexpr, tensor  # noqa: F401
from minitriton.language.core import abs as abs
from minitriton.language.core import max as max  # noqa: A004
from minitriton.language.core import min as min
from minitriton.language.core import range as range  # noqa: A004
from minitriton.language.core import slice as slice  # noqa: A004
from minitriton.language.core import sum as sum
from minitriton.language.core import tuple as tuple  # noqa: A004

# The star import brought core's own imports too: a kernel sees only Triton's names.
del Any, Callable, TypeVar, F, annotations  # noqa: F821

# ``tl.standard`` and ``tl.target_info`` as attributes, loaded on first use (libraries call
# ``tl.target_info.current_target()`` on the host; kernels call ``tl.standard._log2``).
from minitriton.lazy import lazy_attributes as _lazy_attributes  # noqa: E402

__getattr__ = _lazy_attributes(
    __name__,
    {"standard": "minitriton.language.standard", "target_info": "minitriton.language.target_info"},
)
