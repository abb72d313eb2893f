"""Property tests of op semantics through the whole stack, against NumPy.

Hypothesis draws sizes (never a multiple of the block on purpose), dtypes,
values and masks; each example compiles a kernel with the frontend and runs
it on the emulator. The references spell out Triton's GPU semantics: C-style
truncating ``//`` and ``%``, wrap-around, arithmetic vs logical ``>>``, 0 for
a masked load without ``other``, int8/int16 sums accumulating in int32, and
the first index on argmax/argmin ties.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitriton as triton
from tests.kernels.property_kernels import binary_kernel, cumsum_kernel, row_reduce_kernel

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
INT_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint32"]
FLOAT_TYPES = ["float16", "float32"]
INT_OPS = ["add", "sub", "mul", "floordiv", "mod", "shr", "and", "max", "where"]
FLOAT_OPS = ["add", "sub", "mul", "max", "where"]


def c_semantics(op: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x OP y`` as Triton computes it on a GPU (same dtype in, same out)."""
    with np.errstate(all="ignore"):
        if op == "add":
            return x + y
        if op == "sub":
            return x - y
        if op == "mul":
            return x * y
        if op in ("floordiv", "mod"):
            q = (np.abs(x.astype(np.int64)) // np.abs(y.astype(np.int64))).astype(x.dtype)
            q = np.where((x < 0) != (y < 0), -q, q).astype(x.dtype)
            return q if op == "floordiv" else (x - q * y).astype(x.dtype)
        if op == "shr":
            return x >> (y & 7)  # NumPy's >> is arithmetic for signed, logical for unsigned
        if op == "and":
            return x & y
        if op == "max":
            return np.maximum(x, y)
        return np.where(x < y, x, y)


BINARY_CASES = [(t, op) for t in INT_TYPES for op in INT_OPS]
BINARY_CASES += [(t, op) for t in FLOAT_TYPES for op in FLOAT_OPS]


@pytest.mark.parametrize(("dtype", "op"), BINARY_CASES)
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(n=st.integers(1, 700), block=st.sampled_from([16, 64, 256]), seed=st.integers(0, 2**31))
def test_binary_ops_with_random_masks(dtype: str, op: str, n: int, block: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        y = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        y[y == 0] = 1  # integer division by zero is undefined in Triton
        if dt.kind == "i":
            y[y == -1] = 1  # MIN // -1 overflows: undefined as well
    else:
        x = rng.standard_normal(n).astype(dt) * 8
        y = rng.standard_normal(n).astype(dt) * 8
    m = rng.integers(0, 2, n, dtype=np.int8)
    out = np.full(n, 3, dtype=dt)
    grid = (triton.cdiv(n, block),)
    binary_kernel[grid](x, y, m, out, n, OP=op, BLOCK=block, backend="emulator")

    x_seen = np.where(m != 0, x, 0).astype(dt)  # masked load without other: 0
    y_seen = np.where(m != 0, y, 1).astype(dt)
    want = c_semantics(op, x_seen, y_seen)
    np.testing.assert_array_equal(out, want, err_msg=f"{dtype} {op}")


@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "float32"])
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.integers(1, 9), cols=st.integers(1, 300), seed=st.integers(0, 99))
def test_row_reductions_accumulate_and_break_ties_left(
    dtype: str, op: str, rows: int, cols: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    # Few distinct values, so ties are common; int8 sums overflow int8 on purpose.
    x = rng.integers(-3, 100, (rows, cols)).astype(dtype)
    acc = np.int32 if dtype in ("int8", "int16") else np.dtype(dtype)
    out = np.zeros(rows, dtype=acc if op == "sum" else dtype)
    idx = np.zeros(rows, dtype=np.int32)
    block = triton.next_power_of_2(cols)
    row_reduce_kernel[(rows,)](x, out, idx, cols, cols, OP=op, BLOCK=block, backend="emulator")

    padded = np.zeros((rows, block), dtype=dtype)
    padded[:, :cols] = x
    if op == "sum":
        np.testing.assert_allclose(out, x.astype(np.float64).sum(axis=1), rtol=1e-6)
        np.testing.assert_array_equal(idx, padded.argmax(axis=1))  # NumPy: first on ties
    elif op == "max":
        np.testing.assert_array_equal(out, padded.max(axis=1))
        np.testing.assert_array_equal(idx, padded.argmax(axis=1))
    else:
        np.testing.assert_array_equal(out, x.min(axis=1))
        np.testing.assert_array_equal(idx, x.argmin(axis=1))


@SETTINGS
@given(st.integers(1, 5), st.integers(1, 200), st.sampled_from(["int32", "float32"]))
def test_cumsum_matches_numpy(rows: int, cols: int, dtype: str) -> None:
    rng = np.random.default_rng(rows * 1000 + cols)
    x = rng.integers(-50, 50, (rows, cols)).astype(dtype)
    out = np.zeros_like(x)
    block = triton.next_power_of_2(cols)
    cumsum_kernel[(rows,)](x, out, cols, BLOCK=block, backend="emulator")
    np.testing.assert_allclose(out, np.cumsum(x, axis=1), rtol=1e-6)
