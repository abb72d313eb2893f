"""``tl.random``: Triton's random-number module (``tl.random.rand`` is ``tl.rand``).

Every function is also in ``tl`` itself; see :func:`minitriton.language.rand`
for the Philox stream they share, bit for bit with Triton's.
"""

from minitriton.language.core import (  # noqa: F401
    pair_uniform_to_normal,
    philox,
    philox_impl,
    rand,
    rand4x,
    randint,
    randint4x,
    randn,
    randn4x,
    uint_to_uniform_float,
)

#: Philox's default number of rounds, as Triton's constant of that name.
N_ROUNDS_DEFAULT = 10
