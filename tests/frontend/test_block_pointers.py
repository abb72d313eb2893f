"""Block pointers: ``tl.make_block_ptr``, ``tl.advance`` and loads/stores through them.

The frontend lowers them to plain pointer blocks and bounds masks
(minitriton/frontend/blockptr.py). These tests check the IR against a golden,
run kernels on the emulator against NumPy (ragged sizes, so a missing or
wrong bounds check fails), carry block pointers through loops, ``if``s,
tuples and helpers, and check the located diagnostics for misuse.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.diagnostics import CompileError
from minitriton.frontend.lower import lower_kernel
from minitriton.frontend.source import ArgSpec
from minitriton.ir import parse_module, print_module, verify_module
from minitriton.ir.types import parse_type

THIS = Path(__file__).resolve()
LINES = THIS.read_text(encoding="utf-8").splitlines()


def specs(fn: Any, args: list[Any]) -> list[ArgSpec]:
    """ArgSpecs: type strings for run-time arguments, anything else is a constexpr."""
    out = []
    for name, arg in zip(fn.source.param_names, args):
        if isinstance(arg, str) and arg[0] in "pif":
            kind = "pointer" if arg.startswith("ptr") else "scalar"
            out.append(ArgSpec(name, kind, parse_type(arg)))
        else:
            out.append(ArgSpec(name, "constexpr", value=arg))
    return out


def strides(a: np.ndarray) -> tuple[int, ...]:
    """Strides in elements."""
    return tuple(s // a.itemsize for s in a.strides)


# ---------------------------------------------------------------- kernels


@triton.jit
def row_sums(x_ptr, out_ptr, M, N, stride_m, stride_n, BM: tl.constexpr, BN: tl.constexpr):
    """``out[i] = sum(x[i, :])``: a block pointer advanced along the row in a loop."""
    pid = tl.program_id(0)
    x_block = tl.make_block_ptr(
        base=x_ptr,
        shape=(M, N),
        strides=(stride_m, stride_n),
        offsets=(pid * BM, 0),
        block_shape=(BM, BN),
        order=(1, 0),
    )
    acc = tl.zeros([BM], dtype=tl.float32)
    for _ in range(0, N, BN):
        tile = tl.load(x_block, boundary_check=(0, 1), padding_option="zero")
        acc += tl.sum(tile, axis=1)
        x_block = tl.advance(x_block, (0, BN))
    out_block = tl.make_block_ptr(out_ptr, (M,), (1,), (pid * BM,), (BM,), (0,))
    tl.store(out_block, acc, boundary_check=(0,))


@triton.jit
def padded_tile(x_ptr, out_ptr, M, N, stride_m, stride_n, BM: tl.constexpr, BN: tl.constexpr):
    """Copy the top-left BM x BN tile of ``x`` (NaN-padded) into a dense BM x BN ``out``."""
    x_block = tl.make_block_ptr(x_ptr, (M, N), (stride_m, stride_n), (0, 0), (BM, BN), (1, 0))
    tile = tl.load(x_block, boundary_check=(0, 1), padding_option="nan")
    o_block = tl.make_block_ptr(out_ptr, (BM, BN), (BN, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(o_block, tile)


@triton.jit
def rows_only(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Only dim 0 is checked: rows past M are padded with 0, columns are all in range."""
    pid = tl.program_id(0)
    x_block = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    o_block = tl.make_block_ptr(out_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    tile = tl.load(x_block, boundary_check=(0,), padding_option="zero")
    tl.store(o_block, tile * 2.0, boundary_check=(0,))


@triton.jit
def _skip_rows(p, k):
    return tl.advance(p, (k, 0))


@triton.jit
def if_and_helper(x_ptr, out_ptr, M, N, flag, BM: tl.constexpr, BN: tl.constexpr):
    """A block pointer merged by a run-time ``if`` and returned by a helper."""
    x_block = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    if flag > 0:
        x_block = tl.advance(x_block, (BM, 0))
    x_block = _skip_rows(x_block, 1)
    o_block = tl.make_block_ptr(out_ptr, (BM, BN), (BN, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(o_block, tl.load(x_block, boundary_check=(0, 1), padding_option="zero"))


@triton.jit
def tuple_state(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """A tuple of (accumulator, block pointer) carried through a while loop."""
    x_block = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    state = (tl.zeros([BM, BN], dtype=tl.float32), x_block)
    i = 0
    while i < N:
        acc, p = state
        acc += tl.load(p, boundary_check=(0, 1), padding_option="zero")
        state = (acc, tl.advance(p, (0, BN)))
        i += BN
    o_block = tl.make_block_ptr(out_ptr, (BM, BN), (BN, 1), (0, 0), (BM, BN), (1, 0))
    total, _ = state
    tl.store(o_block, total)


# ---------------------------------------------------------------- IR


def test_row_sums_golden(golden: Any) -> None:
    args = ["ptr<f32>", "ptr<f32>", "i32", "i32", "i32", "i32", 16, 32]
    module = lower_kernel(row_sums.source, specs(row_sums, args))
    verify_module(module)
    text = print_module(module)
    assert print_module(parse_module(text)) == text
    golden(text, "block_pointers.ir")


def test_lowered_ir_has_plain_pointer_ops_only() -> None:
    args = ["ptr<f32>", "ptr<f32>", "i32", "i32", "i32", "i32", 16, 32]
    module = lower_kernel(row_sums.source, specs(row_sums, args))
    names = {op.name for op in module.walk()}
    assert {"tt.addptr", "tt.load", "tt.store", "scf.for"} <= names
    loop = next(op for op in module.walk() if op.name == "scf.for")
    # acc, then the block pointer's base, 2 shapes, 2 strides and 2 offsets
    assert [str(r.type) for r in loop.results] == [
        "tensor<16xf32>",
        "ptr<f32>",
        *["i64"] * 4,
        *["i32"] * 2,
    ]


# ---------------------------------------------------------------- behaviour


@pytest.mark.parametrize(("m", "n"), [(37, 70), (16, 32), (5, 3)])
def test_row_sums(m: int, n: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = np.full(m, np.nan, dtype=np.float32)
    grid = (triton.cdiv(m, 16),)
    row_sums[grid](x, out, m, n, *strides(x), BM=16, BN=32, backend="emulator")
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_row_sums_of_a_transposed_view() -> None:
    rng = np.random.default_rng(1)
    base = rng.standard_normal((50, 20)).astype(np.float32)
    x = base.T  # strides (1, 20): the block pointer's strides do the transpose
    out = np.zeros(20, dtype=np.float32)
    row_sums[(2,)](base, out, 20, 50, 1, 20, BM=16, BN=32, backend="emulator")
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_nan_padding_fills_only_out_of_bounds_lanes() -> None:
    x = np.arange(5 * 7, dtype=np.float32).reshape(5, 7)
    out = np.zeros((8, 16), dtype=np.float32)
    padded_tile[(1,)](x, out, 5, 7, *strides(x), BM=8, BN=16, backend="emulator")
    np.testing.assert_array_equal(out[:5, :7], x)
    assert np.isnan(out[5:, :]).all() and np.isnan(out[:, 7:]).all()


def test_boundary_check_of_one_dimension() -> None:
    m, n = 20, 16
    x = np.arange(m * n, dtype=np.float32).reshape(m, n)
    out = np.full((m + 16, n), -1.0, dtype=np.float32)  # rows past m must stay -1
    rows_only[(2,)](x, out, m, n, BM=16, BN=16, backend="emulator")
    np.testing.assert_array_equal(out[:m], 2 * x)
    assert (out[m:] == -1.0).all()


@pytest.mark.parametrize("flag", [0, 1])
def test_if_merge_and_helper_return(flag: int) -> None:
    m, n = 11, 8
    x = np.arange(m * n, dtype=np.float32).reshape(m, n)
    out = np.full((4, 8), np.nan, dtype=np.float32)
    if_and_helper[(1,)](x, out, m, n, flag, BM=4, BN=8, backend="emulator")
    start = 1 + 4 * flag
    expected = np.zeros((4, 8), dtype=np.float32)
    rows = x[start : start + 4]
    expected[: len(rows)] = rows
    np.testing.assert_array_equal(out, expected)


def test_tuple_with_block_pointer_carried_through_while() -> None:
    m, n = 3, 20
    x = np.arange(m * n, dtype=np.float32).reshape(m, n)
    out = np.zeros((4, 8), dtype=np.float32)
    tuple_state[(1,)](x, out, m, n, BM=4, BN=8, backend="emulator")
    padded = np.zeros((4, 24), dtype=np.float32)
    padded[:m, :n] = x
    np.testing.assert_array_equal(out, padded.reshape(4, 3, 8).sum(axis=1))


# ---------------------------------------------------------------- diagnostics


def marked_line(tag: str) -> int:
    """The 1-based line holding the comment ``# <- tag``."""
    return next(i for i, text in enumerate(LINES, 1) if text.rstrip().endswith(f"# <- {tag}"))


def compile_error(fn: Any, *args: Any) -> CompileError:
    with pytest.raises(CompileError) as info:
        lower_kernel(fn.source, specs(fn, list(args)))
    return info.value


def check(err: CompileError, tag: str, col: int, message: str) -> None:
    d = err.first
    assert (d.loc.file, d.loc.line, d.loc.col) == (str(THIS), marked_line(tag), col), str(err)
    assert d.message == message


@triton.jit
def boundary_check_on_plain_pointer(p, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    x = tl.load(p + offs, boundary_check=(0,))  # <- plain-boundary
    tl.store(p + offs, x)


def test_boundary_check_needs_a_block_pointer() -> None:
    err = compile_error(boundary_check_on_plain_pointer, "ptr<f32>", "i32", 16)
    check(err, "plain-boundary", 9, "boundary_check needs a block pointer (tl.make_block_ptr)")


@triton.jit
def advance_wrong_rank(p, m, n, B: tl.constexpr):
    bp = tl.make_block_ptr(p, (m, n), (n, 1), (0, 0), (B, B), (1, 0))
    bp = tl.advance(bp, (B,))  # <- advance-rank
    tl.store(bp, tl.zeros([B, B], dtype=tl.float32))


def test_advance_with_wrong_number_of_offsets() -> None:
    err = compile_error(advance_wrong_rank, "ptr<f32>", "i32", "i32", 16)
    check(
        err,
        "advance-rank",
        10,
        "tl.advance: expected 2 offsets for a block pointer of rank 2, got 1",
    )


@triton.jit
def make_block_ptr_wrong_rank(p, m, n, B: tl.constexpr):
    bp = tl.make_block_ptr(p, (m, n), (n, 1), (0,), (B, B), (1, 0))  # <- make-rank
    tl.store(bp, tl.zeros([B, B], dtype=tl.float32))


def test_make_block_ptr_with_wrong_number_of_offsets() -> None:
    err = compile_error(make_block_ptr_wrong_rank, "ptr<f32>", "i32", "i32", 16)
    check(
        err,
        "make-rank",
        10,
        "make_block_ptr: offsets must be a tuple of 2 values, one per dimension of "
        "block_shape [16, 16], got tuple (0,)",
    )


@triton.jit
def boundary_dim_out_of_range(p, m, n, B: tl.constexpr):
    bp = tl.make_block_ptr(p, (m, n), (n, 1), (0, 0), (B, B), (1, 0))
    x = tl.load(bp, boundary_check=(0, 2))  # <- bad-dim
    tl.store(bp, x)


def test_boundary_check_dimension_out_of_range() -> None:
    err = compile_error(boundary_dim_out_of_range, "ptr<f32>", "i32", "i32", 16)
    check(
        err, "bad-dim", 9, "boundary_check: int 2 is not a dimension of a block pointer of rank 2"
    )


@triton.jit
def mask_on_block_pointer(p, m, n, B: tl.constexpr):
    bp = tl.make_block_ptr(p, (m, n), (n, 1), (0, 0), (B, B), (1, 0))
    x = tl.load(bp, mask=m > 0)  # <- bp-mask
    tl.store(bp, x)


def test_mask_on_a_block_pointer() -> None:
    err = compile_error(mask_on_block_pointer, "ptr<f32>", "i32", "i32", 16)
    check(err, "bp-mask", 9, "mask and other cannot be used with a block pointer")


@triton.jit
def int64_offsets(p, m, n, B: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * B
    bp = tl.make_block_ptr(p, (m, n), (n, 1), (start, 0), (B, B), (1, 0))  # <- i64-offset
    tl.store(bp, tl.zeros([B, B], dtype=tl.float32))


def test_int64_offsets_are_rejected() -> None:
    err = compile_error(int64_offsets, "ptr<f32>", "i32", "i32", 16)
    check(err, "i64-offset", 10, "block pointer offsets must be int32, got i64")


@triton.jit
def block_shape_changes_in_loop(p, m, n, B: tl.constexpr):
    bp = tl.make_block_ptr(p, (m, n), (n, 1), (0, 0), (B, B), (1, 0))
    for _ in range(4):
        bp = tl.make_block_ptr(p, (m, n), (n, 1), (0, 0), (B, 2 * B), (1, 0))  # <- loop-type
    tl.store(bp, tl.zeros([B, 2 * B], dtype=tl.float32))


def test_loop_carried_block_pointer_keeps_its_type() -> None:
    err = compile_error(block_shape_changes_in_loop, "ptr<f32>", "i32", "i32", 16)
    check(
        err,
        "loop-type",
        9,
        "loop-carried variable 'bp' changes type from block pointer to tensor<16x16xf32> "
        "to block pointer to tensor<16x32xf32>",
    )


@triton.jit
def nan_padding_of_ints(p, m, n, B: tl.constexpr):
    bp = tl.make_block_ptr(p, (m, n), (n, 1), (0, 0), (B, B), (1, 0))
    x = tl.load(bp, boundary_check=(0, 1), padding_option="nan")  # <- int-nan
    tl.store(bp, x)


def test_nan_padding_needs_floats() -> None:
    err = compile_error(nan_padding_of_ints, "ptr<i32>", "i32", "i32", 16)
    check(err, "int-nan", 9, "padding_option 'nan' is not supported for integer block pointers")
