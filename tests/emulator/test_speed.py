"""The emulator's fast paths (``emulator/speed.py``) give exactly what the plain semantics give.

Each kernel runs twice, with the fast paths and without them
(``MINITRITON_EMULATOR_PLAIN=1``), and both runs must write the same bits.
The switch itself is checked too: off, no fast path is called, in this
process and in a fresh one that sets the variable.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator import Listener, launch, speed
from minitriton.emulator.registry import SEMANTICS
from minitriton.ir.ops import AddOp, LoadOp, MakeRangeOp
from minitriton.ir.types import PointerType, element_type

jit_module = importlib.import_module("minitriton.jit")  # `minitriton.jit` is also the decorator

# ---------------------------------------------------------------- kernels


@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)  # fmt: skip


@triton.jit
def strided_rows(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = n > offs  # the bound on the left
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=-1.0)
    y = x * 2.0 - x * x  # products and a difference that may reuse dying blocks
    tl.store(out_ptr + row * stride + offs, y + offs.to(tl.float32), mask=mask)


@triton.jit
def int_loop(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs <= n - 1
    acc = tl.load(x_ptr + offs, mask=mask, other=7)
    for i in range(5):
        acc = acc * 1103515245 + offs  # wraps around int32
        if tl.program_id(0) % 2 == 1:
            acc = acc - i
    tl.store(out_ptr + offs, acc, mask=mask)


@triton.jit
def gather_scatter(idx_ptr, x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    x = tl.load(x_ptr + idx, mask=mask)
    tl.store(out_ptr + idx, x + 1.0, mask=mask)  # repeated addresses: the last lane wins


@triton.jit
def softmax_rows(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=-float("inf")).to(tl.float32)
    z = x - tl.max(x, axis=0)
    e = tl.exp(z)
    tl.store(out_ptr + row * cols + offs, (e / tl.sum(e, axis=0)).to(tl.float16), mask=mask)


@triton.jit
def _minus(a, b):
    return b - a  # not commutative: the order of the operands shows


@triton.jit
def _welford(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    n = n_a + n_b
    delta = mean_b - mean_a
    frac = tl.where(n == 0.0, 0.0, n_b / n)
    return mean_a + delta * frac, m2_a + m2_b + delta * delta * n_a * frac, n


@triton.jit
def _larger_by_if(a, b):
    if a > b:  # noqa: SIM108 - a run-time if: the combiner's region runs, one row per pair
        c = a
    else:
        c = b
    return c


@triton.jit
def reductions(x_ptr, i_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    pid = tl.program_id(0)
    r, c = tl.arange(0, ROWS)[:, None], tl.arange(0, COLS)[None, :]
    x = tl.load(x_ptr + pid * ROWS * COLS + r * COLS + c)  # fp16, with NaNs
    i = tl.load(i_ptr + pid * ROWS * COLS + r * COLS + c)
    out = out_ptr + pid * (5 * COLS + 6 * ROWS + 4)
    cols, rows = tl.arange(0, COLS), tl.arange(0, ROWS)
    tl.store(out + cols, tl.sum(x.to(tl.float32), axis=0))
    tl.store(out + COLS + cols, tl.max(x, axis=0).to(tl.float32))
    tl.store(out + 2 * COLS + rows, tl.min(x, axis=1).to(tl.float32))
    tl.store(out + 2 * COLS + ROWS + rows, tl.reduce(x.to(tl.float32), 1, _minus))
    tl.store(out + 2 * COLS + 2 * ROWS + rows, tl.sum(i * i, axis=1).to(tl.float32))  # wraps
    tl.store(out + 2 * COLS + 3 * ROWS + rows,
             tl.sum(tl.cumsum(x.to(tl.float32), axis=1, reverse=True), axis=1))  # fmt: skip
    tl.store(out + 2 * COLS + 4 * ROWS + cols,
             tl.associative_scan(i, 0, _minus).to(tl.float32).sum(axis=0))  # fmt: skip
    tl.store(out + 3 * COLS + 4 * ROWS + cols, tl.cumprod(i, axis=0).to(tl.float32).sum(axis=0))
    tl.store(out + 4 * COLS + 4 * ROWS, tl.sum(tl.arange(0, COLS)).to(tl.float32))  # unbatched
    big, where = tl.max(x, axis=1, return_indices=True)  # ties and NaNs among the fp16 values
    tl.store(out + 4 * COLS + 4 * ROWS + 1 + rows, big.to(tl.float32) + where.to(tl.float32))
    xf = x.to(tl.float32)
    mean, m2, n = tl.reduce((xf, tl.zeros_like(xf), tl.full(xf.shape, 1.0, tl.float32)), 1,
                            _welford)  # fmt: skip
    tl.store(out + 4 * COLS + 5 * ROWS + 1 + rows, mean + m2 + n)
    # three levels: an odd number, so a swap of the operands cannot cancel out
    tl.store(out + 4 * COLS + 6 * ROWS + 1 + cols, tl.reduce(x.to(tl.float32), 0, _minus))


def _rng() -> np.random.Generator:
    return np.random.default_rng(7)


def _vector_add() -> tuple[Callable[..., Any], tuple[int, ...], list[Any], dict[str, Any]]:
    n = 1000
    x, y = _rng().random(n, dtype=np.float32), _rng().random(n, dtype=np.float32)
    return vector_add, (8,), [x, y, np.zeros(n, np.float32), n], {"BLOCK": 128}


def _strided_rows() -> tuple[Callable[..., Any], tuple[int, ...], list[Any], dict[str, Any]]:
    x = _rng().standard_normal(6 * 40).astype(np.float32)
    return strided_rows, (6,), [x, np.full_like(x, 5.0), 29, 40], {"BLOCK": 32}


def _int_loop() -> tuple[Callable[..., Any], tuple[int, ...], list[Any], dict[str, Any]]:
    n = 300
    x = _rng().integers(-(2**31), 2**31 - 1, n).astype(np.int32)
    return int_loop, (5,), [x, np.zeros(n, np.int32), n], {"BLOCK": 64}


def _gather_scatter() -> tuple[Callable[..., Any], tuple[int, ...], list[Any], dict[str, Any]]:
    n = 500
    idx = _rng().integers(0, 200, n).astype(np.int32)
    x = _rng().random(200, dtype=np.float32)
    return gather_scatter, (4,), [idx, x, np.zeros(200, np.float32), n], {"BLOCK": 128}


def _softmax_rows() -> tuple[Callable[..., Any], tuple[int, ...], list[Any], dict[str, Any]]:
    x = _rng().standard_normal((9, 50)).astype(np.float16)
    return softmax_rows, (9,), [x, np.zeros_like(x), 50], {"BLOCK": 64}


def _reductions() -> tuple[Callable[..., Any], tuple[int, ...], list[Any], dict[str, Any]]:
    rows, cols, programs = 8, 64, 3
    x = _rng().standard_normal(programs * rows * cols).astype(np.float16)
    x[::37] = np.nan
    i = _rng().integers(-(2**31), 2**31 - 1, x.size).astype(np.int32)
    out = np.zeros(programs * (5 * cols + 6 * rows + 4), np.float32)
    return reductions, (programs,), [x, i, out], {"ROWS": rows, "COLS": cols}


CASES = {
    "reductions": _reductions,
    "vector_add": _vector_add,
    "strided_rows": _strided_rows,
    "int_loop": _int_loop,
    "gather_scatter": _gather_scatter,
    "softmax_rows": _softmax_rows,
}


def run_case(name: str, fast: bool) -> list[np.ndarray]:
    """Every array argument after one launch of case ``name``, with or without the fast paths."""
    kernel, grid, args, meta = CASES[name]()
    with speed.fast_paths_enabled(fast):
        kernel[grid](*args, **meta, backend="emulator")
    return [a for a in args if isinstance(a, np.ndarray)]


# ---------------------------------------------------------------- both modes agree


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_and_plain_launches_write_the_same_bits(name: str) -> None:
    fast, plain = run_case(name, fast=True), run_case(name, fast=False)
    for got, want in zip(fast, plain):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_the_cases_compute_what_numpy_computes() -> None:
    """The plain results are right, so agreeing with them means something."""
    x, y, out = run_case("vector_add", fast=False)[:3]
    np.testing.assert_array_equal(out, x + y)
    idx, x, out = run_case("gather_scatter", fast=True)
    want = np.zeros(200, np.float32)
    want[idx] = x[idx] + 1.0
    np.testing.assert_array_equal(out, want)


class Recorder(Listener):
    """Every op's result values, in execution order."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[tuple[bool, np.ndarray]]]] = []

    def did_execute_op(self, op: Any, state: Any, results: list[Any]) -> None:
        values = []
        for value, rval in zip(op.results, results):
            is_ptr = isinstance(element_type(value.type), PointerType)
            values.append((is_ptr, np.array(rval.data, copy=True)))
        self.seen.append((op.name, values))


@pytest.mark.parametrize("name", ["vector_add", "strided_rows", "int_loop"])
def test_every_op_gives_the_same_value_in_both_modes(name: str) -> None:
    """Op by op: the same numbers; the same dtypes but for pointers (whose offsets may
    keep the dtype of the offsets they were made from)."""
    kernel, grid, args, meta = CASES[name]()
    compiled = kernel.warmup(*args, **meta, grid=grid, backend="emulator")
    values = [a for a in args]  # constexprs are not arguments of the compiled kernel
    seen = []
    for fast in (True, False):
        recorder = Recorder()
        with speed.fast_paths_enabled(fast):
            copies = [v.copy() if isinstance(v, np.ndarray) else v for v in values]
            launch(compiled.module, (*grid, 1, 1)[:3], copies, listeners=[recorder])
        seen.append(recorder.seen)
    assert [n for n, _ in seen[0]] == [n for n, _ in seen[1]] and len(seen[0]) > 10
    for (op, fast_values), (_, plain_values) in zip(*seen):
        for (is_ptr, got), (_, want) in zip(fast_values, plain_values):
            assert got.shape == want.shape, op
            assert is_ptr or got.dtype == want.dtype, op
            np.testing.assert_array_equal(got, want, err_msg=op)


# ---------------------------------------------------------------- the switch


def counting_paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every fast path replaced by one that counts its calls, then declines."""
    calls: list[str] = []
    for cls, (plain, _) in list(speed.FAST_PATHS.items()):

        def count(op: Any, state: Any, *args: Any, _name: str = cls.name) -> Any:
            calls.append(_name)
            return speed.DECLINED

        monkeypatch.setitem(speed.FAST_PATHS, cls, (plain, count))
    return calls


def test_off_no_fast_path_is_called(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counting_paths(monkeypatch)
    run_case("vector_add", fast=False)
    assert calls == []
    x, y, out = run_case("vector_add", fast=True)[:3]
    assert {"tt.make_range", "tt.load", "tt.store", "arith.add"} <= set(calls)
    np.testing.assert_array_equal(out, x + y)  # declined every time: the semantics ran


def test_elementwise_combiners_take_the_fast_path_and_others_the_region(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    taken: list[bool] = []
    (whole,) = speed._COMBINER

    def watch(*args: Any) -> Any:
        out = whole(*args)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(speed, "_COMBINER", [watch])
    run_case("reductions", fast=True)
    assert taken and all(taken)  # sums, scans, argmax and Welford's combiner
    # a combiner with an if runs its region
    taken.clear()
    x = np.array([3.0, 7.0, 7.5, 1.0], np.float32)
    out = np.zeros(1, np.float32)
    with speed.fast_paths_enabled(True):
        larger_kernel[(1,)](x, out, N=4, backend="emulator")
    assert out[0] == 7.5 and taken and not any(taken)
    taken.clear()
    run_case("reductions", fast=False)
    assert taken == []  # plain: not even asked


@triton.jit
def larger_kernel(x_ptr, out_ptr, N: tl.constexpr):
    tl.store(out_ptr, tl.reduce(tl.load(x_ptr + tl.arange(0, N)), 0, _larger_by_if))


def test_a_replaced_semantics_is_not_bypassed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool that puts its own function in the registry gets it, fast paths on or not."""
    real = SEMANTICS[AddOp]

    def doubled(op: Any, state: Any, a: Any, b: Any) -> Any:
        total = real(op, state, a, b)
        if total.data.dtype.kind != "f":
            return total  # offsets stay right
        return real(op, state, total, b)  # (a + b) + b

    monkeypatch.setitem(SEMANTICS, AddOp, doubled)
    x, y, out = run_case("vector_add", fast=True)[:3]
    np.testing.assert_array_equal(out, (x + y) + y)


def test_a_fast_path_needs_its_semantics_and_comes_once() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        speed.fast_path(LoadOp)(lambda op, state, *args: speed.DECLINED)

    class Unknown(MakeRangeOp):
        name = "test.unknown"

    with pytest.raises(ValueError, match="no semantics"):
        speed.fast_path(Unknown)(lambda op, state: speed.DECLINED)


PROBE = """
import numpy as np
import minitriton as triton
import minitriton.language as tl
from minitriton.emulator import speed

def refuse(*args):
    raise AssertionError("a fast path ran")

for cls, (plain, _) in list(speed.FAST_PATHS.items()):
    speed.FAST_PATHS[cls] = (plain, refuse)

@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3, mask=offs < n)

x = np.arange(100, dtype=np.float32)
out = np.zeros_like(x)
k[(4,)](x, out, 100, BLOCK=32, backend="emulator")
assert (out == 3 * x).all()
print("plain", speed.is_enabled())
"""


@pytest.mark.parametrize("value", ["1", "0"])
def test_the_variable_switches_the_layer_at_import(value: str, tmp_path: Path) -> None:
    script = tmp_path / "probe.py"  # @jit reads the kernel's source from its file
    script.write_text(PROBE, encoding="utf-8")
    env = {**os.environ, speed.PLAIN_ENV: value}
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    if value == "1":
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "plain False"
    else:  # the fast paths are on, so the probe's refusing fast path runs
        assert done.returncode != 0 and "a fast path ran" in done.stderr


class FakeLauncher:
    """What the launch fast path reads of a loaded kernel."""

    kinds: list[str] = []
    slots: list[Any] = []


def test_plain_mode_launches_take_the_plain_bind_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """No fast launch entry is made in plain mode: every launch binds the plain way."""
    monkeypatch.setattr(jit_module, "kernel_args", lambda compiled, bound: [])
    compiled = SimpleNamespace(binary=SimpleNamespace(load=FakeLauncher, checks=None))
    args, meta = (1, 2, 3, 4), {"BLOCK": 128}  # integers: keys the binder accepts
    bound = vector_add.bind(args, meta)
    cache = jit_module.FastLaunchCache(vector_add)
    with speed.fast_paths_enabled(False):
        cache.remember(args, meta, bound, compiled)
        assert cache.entries == {}
    with speed.fast_paths_enabled(True):
        cache.remember(args, meta, bound, compiled)
        assert len(cache.entries) == 1


class PointerLike:
    """A tensor-like argument: its class has ``data_ptr`` and ``dtype``."""

    dtype = "float32"

    def __init__(self, address: int) -> None:
        self.address = address

    def data_ptr(self) -> int:
        return self.address


def test_the_launch_key_sorts_arguments_by_kind() -> None:
    """The key tells apart what specialization does; each type's kind is looked up once."""
    key = jit_module._runtime_key
    assert key(PointerLike(64)) == (PointerLike, "float32", True)
    assert key(PointerLike(72)) == (PointerLike, "float32", False)  # 16-byte alignment
    assert jit_module._ARG_KINDS[PointerLike] == "tensor"
    # An instance attribute counts too, asked of each value (the kind is the type's).
    odd = SimpleNamespace(data_ptr=lambda: 32, dtype="int8")
    assert key(odd) == (SimpleNamespace, "int8", True)
    assert jit_module._ARG_KINDS[SimpleNamespace] == "other"
    with pytest.raises(jit_module._FullPath):  # NumPy arrays are copied: the full path
        key(np.zeros(4))
    with pytest.raises(jit_module._FullPath):
        key(SimpleNamespace(dtype="int8"))  # the same type, without data_ptr
    assert key(7) == (False, False) and key(32) == (False, True) and key(1) == (True, False)
