"""``tl.argmax``/``tl.argmin`` skip NaN, as ``tl.max``/``tl.min`` do, on both backends.

Triton's combine (``value1 > value2``) is not commutative once a NaN takes
part, so the answer hung on the order a backend combined in: the GPU's
shuffle tree and the emulator's differed. A number now beats a NaN on either
side, so every order gives NumPy's ``nanargmax``/``nanargmin``.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl


@triton.jit
def arg_extremes(x_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr, LEFT: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=float("nan"))
    tl.store(out_ptr, tl.argmax(x, axis=0, tie_break_left=LEFT))
    tl.store(out_ptr + 1, tl.argmin(x, axis=0, tie_break_left=LEFT))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("case", [[np.nan, 6, 8], [3, 5, np.nan], [3, np.nan, 1], "random"])
def test_nan_is_skipped(backend, left, case):
    if case == "random":
        rng = np.random.default_rng(11)
        x = rng.permutation(1000).astype(np.float32)  # distinct: no ties
        x[rng.choice(1000, 300, replace=False)] = np.nan
    else:
        x = np.array(case, np.float32)
    out = np.zeros(2, np.int32)
    block = triton.next_power_of_2(x.size)
    arg_extremes[(1,)](x, out, x.size, block, left, backend=backend)
    assert out.tolist() == [np.nanargmax(x), np.nanargmin(x)]
