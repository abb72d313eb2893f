"""Language features that real Triton kernels use, against NumPy references.

Each feature here was missing once and blocked kernels from public code:
early ``return``, block-pointer ``.dtype``, ``range`` with a negative step,
and the smaller ones. Every test runs on the emulator and on the GPU.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.diagnostics import CompileError
from tests.e2e.ptxas_check import assemble, needs_ptxas

# ---------------------------------------------------------------- early return


@triton.jit
def copy_with_early_exit(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def test_early_return_skips_the_rest(backend: str) -> None:
    x = np.arange(100, dtype=np.float32)
    y = np.full(256, -1.0, dtype=np.float32)
    # 8 programs of 32 elements for 100 elements: programs 4..7 return at once.
    copy_with_early_exit[(8,)](x, y, 100, BLOCK=32, backend=backend)
    np.testing.assert_array_equal(y[:100], x * 2)
    np.testing.assert_array_equal(y[100:], -1.0)


@triton.jit
def nested_early_exits(out_ptr, a, b):
    pid = tl.program_id(0)
    if pid % 2 == 0:
        if pid < a:
            tl.store(out_ptr + pid, 10)
            return
        tl.store(out_ptr + pid, 20)
    elif pid > b:
        return
    else:
        tl.store(out_ptr + pid, 30)
    tl.store(out_ptr + pid + 16, 1)


def test_nested_early_returns(backend: str) -> None:
    out = np.zeros(32, dtype=np.int32)
    nested_early_exits[(16,)](out, 4, 9, backend=backend)
    expected = np.zeros(32, dtype=np.int32)
    for pid in range(16):
        if pid % 2 == 0:
            if pid < 4:
                expected[pid] = 10
                continue
            expected[pid] = 20
        elif pid > 9:
            continue
        else:
            expected[pid] = 30
        expected[pid + 16] = 1
    np.testing.assert_array_equal(out, expected)


@triton.jit
def clamp_helper(x, lo):
    if x < lo:
        return lo
    return x * 2


@triton.jit
def helper_with_early_return(out_ptr, lo):
    pid = tl.program_id(0)
    tl.store(out_ptr + pid, clamp_helper(pid, lo))


def test_helper_returns_from_a_branch(backend: str) -> None:
    out = np.zeros(8, dtype=np.int32)
    helper_with_early_return[(8,)](out, 3, backend=backend)
    np.testing.assert_array_equal(out, [3, 3, 3, 6, 8, 10, 12, 14])


# ---------------------------------------------------------------- block-pointer .dtype


@triton.jit
def block_ptr_cast(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    p_x = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    p_y = tl.make_block_ptr(y_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    b = tl.load(p_x, boundary_check=(0, 1)) * 3.0
    tl.store(p_y, b.to(p_y.dtype.element_ty), boundary_check=(0, 1))
    tl.static_assert(p_y.type.element_ty.element_ty == tl.float16)


def test_block_pointer_dtype_element_ty(backend: str) -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.zeros((3, 4), dtype=np.float16)
    block_ptr_cast[(1,)](x, y, 3, 4, BM=4, BN=4, backend=backend)
    np.testing.assert_array_equal(y, (x * 3).astype(np.float16))


# ---------------------------------------------------------------- negative range step


@triton.jit
def count_down(out_ptr, start, end, STEP: tl.constexpr):
    n = 0
    for i in range(start, end, STEP):
        tl.store(out_ptr + n, i)
        n += 1
    tl.store(out_ptr + 31, n)


@pytest.mark.parametrize(
    ("start", "end", "step"), [(9, -1, -1), (9, 0, -3), (10, 0, -3), (0, 5, -1), (3, 3, -2)]
)
def test_range_with_negative_step(backend: str, start: int, end: int, step: int) -> None:
    out = np.full(32, -7, dtype=np.int32)
    count_down[(1,)](out, start, end, STEP=step, backend=backend)
    expected = list(range(start, end, step))
    assert out[31] == len(expected)
    np.testing.assert_array_equal(out[: len(expected)], expected)


@triton.jit
def reverse_blocks(x_ptr, y_ptr, NUM_BLOCK: tl.constexpr, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(NUM_BLOCK - 1, -1, -1):
        offs = i * BLOCK + tl.arange(0, BLOCK)
        acc = acc * 0.5 + tl.load(x_ptr + offs)
        tl.store(y_ptr + offs, acc)


def test_reverse_scan_over_blocks(backend: str) -> None:
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, dtype=np.float32)
    reverse_blocks[(1,)](x, y, NUM_BLOCK=4, BLOCK=16, backend=backend)
    acc = np.zeros(16, dtype=np.float32)
    expected = np.zeros(64, dtype=np.float32)
    for i in range(3, -1, -1):
        acc = acc * 0.5 + x[i * 16 : (i + 1) * 16]
        expected[i * 16 : (i + 1) * 16] = acc
    np.testing.assert_array_equal(y, expected)


# ---------------------------------------------------------------- .to() on a constexpr


@triton.jit
def constexpr_to(out_ptr, SCALE: tl.constexpr):
    s = SCALE.to(tl.float16)
    tl.static_assert(s.dtype == tl.float16)
    tl.store(out_ptr + tl.arange(0, 4), tl.full((4,), 1.0, tl.float16) * s)


def test_to_on_a_constexpr_float(backend: str) -> None:
    out = np.zeros(4, dtype=np.float16)
    constexpr_to[(1,)](out, SCALE=0.1, backend=backend)
    np.testing.assert_array_equal(out, np.float16(0.1))


# ---------------------------------------------------------------- join, split, interleave


@triton.jit
def join_split_interleave(a_ptr, b_ptr, j_ptr, i_ptr, s_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    j = tl.join(a, b)
    tl.store(j_ptr + offs[:, None] * 2 + tl.arange(0, 2)[None, :], j)
    tl.store(i_ptr + tl.arange(0, 2 * N), tl.interleave(a, b))
    first, second = tl.split(j)
    tl.store(s_ptr + offs, first - second)


def test_join_split_interleave(backend: str) -> None:
    a = np.arange(16, dtype=np.int16) * 3
    b = -np.arange(16, dtype=np.int16)
    joined = np.zeros(32, dtype=np.int16)
    interleaved = np.zeros(32, dtype=np.int16)
    diff = np.zeros(16, dtype=np.int16)
    join_split_interleave[(1,)](a, b, joined, interleaved, diff, N=16, backend=backend)
    np.testing.assert_array_equal(joined, np.stack([a, b], axis=-1).reshape(-1))
    np.testing.assert_array_equal(interleaved, np.stack([a, b], axis=-1).reshape(-1))
    np.testing.assert_array_equal(diff, a - b)


# ---------------------------------------------------------------- PropagateNan, rand seeds, print


@triton.jit
def nan_minmax(x_ptr, y_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(o_ptr + N + offs, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(o_ptr + 2 * N + offs, tl.clamp(x, 0.0, 1.0, propagate_nan=tl.PropagateNan.ALL))


def test_propagate_nan_all(backend: str) -> None:
    x = np.array([1.0, np.nan, 2.0, -1.0], dtype=np.float32)
    y = np.array([np.nan, 0.5, 3.0, -2.0], dtype=np.float32)
    out = np.zeros(12, dtype=np.float32)
    nan_minmax[(1,)](x, y, out, N=4, backend=backend)
    np.testing.assert_array_equal(out[:4], np.maximum(x, y))  # NumPy propagates NaN too
    np.testing.assert_array_equal(out[4:8], np.minimum(x, y))
    np.testing.assert_array_equal(out[8:], np.clip(x, 0, 1))


@triton.jit
def rand_per_row(seed_ptr, o_ptr, ref_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)
    offs = rows[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(o_ptr + offs, tl.rand(tl.load(seed_ptr + rows)[:, None], offs))
    for r in tl.static_range(R):
        row = r * C + tl.arange(0, C)
        tl.store(ref_ptr + row, tl.rand(tl.load(seed_ptr + r), row))


def test_rand_with_a_block_of_seeds(backend: str) -> None:
    seeds = np.array([7, 123, 2**31 - 1, 0], dtype=np.int32)
    out = np.zeros(64, dtype=np.float32)
    ref = np.ones(64, dtype=np.float32)
    rand_per_row[(1,)](seeds, out, ref, R=4, C=16, backend=backend)
    np.testing.assert_array_equal(out, ref)
    assert len(np.unique(out)) == 64  # four different streams


@triton.jit
def print_with_prefix(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    print("x =", x)


def test_print_with_a_string_prefix(capfd: pytest.CaptureFixture[str]) -> None:
    print_with_prefix[(1,)](np.arange(4, dtype=np.int32), backend="emulator")
    out = capfd.readouterr().out  # MiniTriton: "pid (0, 0, 0) x =: [0, 1, 2, 3]"
    assert "x =" in out and all(str(i) in out for i in range(4))


@triton.jit
def print_hex(x_ptr, N: tl.constexpr):
    tl.device_print("x: ", tl.load(x_ptr + tl.arange(0, N)), hex=True)
    tl.device_print("first: ", tl.load(x_ptr), hex=True)


HEX_FLOAT = re.compile(r"-?0x[0-9a-f]+(?:\.[0-9a-f]*)?p[+-]\d+|-?inf|nan")


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_floats_print_in_hex_as_c_does(
    backend: str, dtype: type, capfd: pytest.CaptureFixture[str]
) -> None:
    """As in Triton 3.8: ``hex=True`` prints floats as C's ``%a``, ints as their bits."""
    x = np.array([1.0, 1.5, 0.1, -1.5, -0.0, np.inf, -np.inf, 6.0], dtype)
    print_hex[(1,)](x, N=8, backend=backend)
    found = HEX_FLOAT.findall(capfd.readouterr().out)
    want = [float(v).hex() for v in x] + [float(x[0]).hex()]
    assert sorted(float.fromhex(v).hex() for v in found) == sorted(want)


@needs_ptxas
def test_hex_floats_are_printf_percent_a(tmp_path: Path) -> None:
    ptx = assemble(print_hex, "*fp32, 8", "sm_90a", tmp_path).ptx
    strings = [bytes(int(b) for b in body.split(",")).decode("latin-1")
               for body in re.findall(r"= \{([0-9, ]+)\}", ptx)]  # fmt: skip
    formats = [t for t in strings if "%" in t]
    assert formats and all("%a" in t and "%x" not in t for t in formats)


# ---------------------------------------------------------------- tensor descriptors


@triton.jit
def descriptor_copy(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pid_m = tl.program_id(0)
    for j in range(0, tl.cdiv(N, BN)):
        tile = src.load([pid_m * BM, j * BN])
        dst.store([pid_m * BM, j * BN], (tile * 2).to(dst.dtype))


def test_tensor_descriptor_load_and_store(backend: str) -> None:
    # Strides and the tiles' column offsets are multiples of 16 bytes, as TMA needs.
    x = np.arange(5 * 12, dtype=np.float32).reshape(5, 12) + 1
    y = np.zeros((6, 12), dtype=np.float32)  # a row past the end must stay untouched
    descriptor_copy[(2,)](x, y, 5, 12, BM=4, BN=8, backend=backend)
    np.testing.assert_array_equal(y[:5], x * 2)
    np.testing.assert_array_equal(y[5], 0)


@triton.jit
def descriptor_padding(x_ptr, out_ptr, M, BM: tl.constexpr):
    desc = tl.make_tensor_descriptor(x_ptr, shape=[M], strides=[1], block_shape=[BM])
    tl.store(out_ptr + tl.arange(0, BM), desc.load([BM]))


def test_tensor_descriptor_pads_with_zeros(backend: str) -> None:
    x = np.array([1, 2, 3, 4, 5, 6], dtype=np.int32)
    out = np.full(4, -1, dtype=np.int32)
    descriptor_padding[(1,)](x, out, 6, BM=4, backend=backend)
    np.testing.assert_array_equal(out, [5, 6, 0, 0])


# ---------------------------------------------------------------- f-strings


@triton.jit
def fstring_messages(x_ptr, N: tl.constexpr, SCALE: tl.constexpr):
    tl.static_assert(N % 4 == 0, f"N={N} must be a multiple of 4")
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.device_assert(x >= 0, f"negative input (N={N!r}, scale {SCALE:.2f})")
    tl.store(x_ptr + tl.arange(0, N), x * SCALE)


def test_fstring_in_messages(backend: str) -> None:
    x = np.arange(8, dtype=np.float32)
    fstring_messages[(1,)](x, N=8, SCALE=2.0, backend=backend)
    np.testing.assert_array_equal(x, np.arange(8) * 2)


def test_fstring_message_is_formatted_at_compile_time() -> None:
    with pytest.raises(CompileError, match="N=6 must be a multiple of 4"):
        fstring_messages[(1,)](np.zeros(8, dtype=np.float32), N=6, SCALE=1.0, backend="emulator")


@triton.jit
def fstring_of_a_runtime_value(x_ptr, n):
    tl.static_assert(True, f"n is {n}")  # <- fstring
    tl.store(x_ptr, 1.0)


def test_fstring_of_a_runtime_value_is_a_located_error() -> None:
    with pytest.raises(CompileError) as info:
        fstring_of_a_runtime_value[(1,)](np.zeros(1, dtype=np.float32), 3, backend="emulator")
    d = info.value.first
    lines = Path(__file__).read_text(encoding="utf-8").splitlines()
    line = next(i for i, t in enumerate(lines, 1) if t.rstrip().endswith("# <- fstring"))
    assert (d.loc.line, d.loc.col) == (line, lines[line - 1].index("{n}") + 2)
    assert d.message == "an f-string can only format compile-time values, got i32"


@pytest.mark.gpu
def test_print_with_a_string_prefix_on_the_gpu(capfd: pytest.CaptureFixture[str]) -> None:
    from minitriton.backend.driver import synchronize

    print_with_prefix[(1,)](np.arange(4, dtype=np.int32), backend="gpu")
    synchronize()
    out = capfd.readouterr().out
    assert "x =" in out and all(str(i) in out for i in range(4))
