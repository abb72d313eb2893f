"""The checks: races, uninitialized reads, index overflow, device_assert; silence."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minitriton.emulator import (
    CheckError,
    EmulatorError,
    checked_launch,
    checking,
    empty,
    uninitialized,
)
from minitriton.emulator.debug.checks import CheckOptions
from tests.debugger import buggy_kernels as bk
from tests.debugger.debug_kernels import run_scale, sum_rows_kernel
from tests.kernels.vector_add import add_kernel

REPO_ROOT = Path(__file__).resolve().parents[2]


def launch(kernel, grid, *args, **kwargs) -> None:  # noqa: ANN001 - test helper
    kernel[grid](*args, backend="emulator", **kwargs)


# ---------------------------------------------------------------- races


def test_race_two_programs_store_the_same_elements() -> None:
    x = np.arange(16, dtype=np.float32)
    with pytest.raises(CheckError) as info, checking():
        launch(bk.same_block_kernel, (4,), x, np.zeros(16, np.float32), 16, BLOCK=4)
    text = str(info.value)
    assert "buggy_kernels.py:13:5: error: data race: tt.store to 'out_ptr' overwrites what " in text
    assert "program (0, 0, 0) stored in program (1, 0, 0)" in text
    assert "offsets 0, 1, ... at lanes 0, 1, ... (4 lanes)" in text
    assert info.value.pid == (1, 0, 0)


def test_race_program_reads_what_another_stores() -> None:
    with pytest.raises(CheckError) as info, checking():
        launch(bk.chain_kernel, (4,), np.zeros(16, np.float32), BLOCK=4)
    text = str(info.value)
    assert "data race: tt.store to 'x_ptr' overwrites what program (1, 0, 0) read" in text
    assert "buggy_kernels.py:20:12" in text  # where the other program read


def test_race_found_in_serial_order_too() -> None:
    """One program at a time (as the debugger runs them): the read comes second."""
    compiled = bk.chain_kernel.warmup(
        np.zeros(16, np.float32), BLOCK=4, grid=(4,), backend="emulator"
    )
    from minitriton.emulator import Interpreter
    from minitriton.emulator.debug.checks import Checker
    from minitriton.emulator.schedule import run_grid

    with pytest.raises(CheckError) as info:
        interp = Interpreter(
            compiled.module, [np.zeros(16, np.float32)], (4,), listeners=[Checker()]
        )
        run_grid(interp, serial=True)
    assert "tt.load from 'x_ptr' reads what program (0, 0, 0) stored" in str(info.value)
    assert info.value.pid == (1, 0, 0)


def test_same_value_stores_and_atomics_are_not_races() -> None:
    hist = np.zeros(8, np.int32)
    data = np.arange(64, dtype=np.int32) % 8
    with checking():
        launch(bk.histogram_kernel, (4,), data, hist, 64, BLOCK=16)
    np.testing.assert_array_equal(hist, np.full(8, 8))


def test_correct_kernels_are_silent() -> None:
    x = np.arange(100, dtype=np.float32)
    out = empty(100)
    with checking():
        launch(add_kernel, (4,), x, x, out, 100, BLOCK_SIZE=32)
        run_scale(10, 4)
        rows = np.arange(24, dtype=np.float32).reshape(3, 8)
        sums = empty(3)
        launch(sum_rows_kernel, (3,), rows, sums, 8, BLOCK=4)
    np.testing.assert_array_equal(out, 2 * x)
    np.testing.assert_array_equal(sums, rows.sum(axis=1))


# ---------------------------------------------------------------- uninitialized memory


def test_uninitialized_read_of_an_empty_output() -> None:
    x = np.arange(16, dtype=np.float32)
    with pytest.raises(CheckError) as info, checking():
        launch(bk.accumulate_kernel, (4,), x, empty(16), 16, BLOCK=4)
    text = str(info.value)
    assert (
        "buggy_kernels.py:29:11: error: read of uninitialized memory: tt.load from 'out_ptr'"
        in text
    )
    assert "in program (0, 0, 0)" in text
    assert "'out_ptr' was allocated uninitialized (minitriton.emulator.empty)" in text


def test_host_writes_initialize_poisoned_memory() -> None:
    x = np.arange(16, dtype=np.float32)
    out = empty(16)
    out[:8] = 0.0  # the host wrote half of it
    with checking():
        launch(bk.accumulate_kernel, (2,), x, out, 8, BLOCK=4)
    with pytest.raises(CheckError, match="offsets 8, 9, ... at lanes 0, 1, ..."), checking():
        launch(bk.accumulate_kernel, (4,), x, out, 16, BLOCK=4)


def test_uninitialized_patterns_per_dtype() -> None:
    f = empty(4)
    assert np.isnan(f).all()  # a stray read shows up as NaN as well
    i = uninitialized(np.zeros(4, np.int32))
    assert (i == np.int32(0x7FA5A5A5)).all()
    with pytest.raises(ValueError):
        uninitialized(np.zeros((4, 4), np.float32)[:, 0])


def test_poison_a_parameter_for_one_launch() -> None:
    x = np.arange(16, dtype=np.float32)
    compiled = bk.accumulate_kernel.warmup(x, np.zeros(16, np.float32), 16, BLOCK=4, grid=(4,),
                                           backend="emulator")  # fmt: skip
    checked_launch(compiled.module, (4,), [x, np.zeros(16, np.float32), 16])  # not poisoned
    with pytest.raises(CheckError, match="'out_ptr' is poisoned for this launch"):
        checked_launch(compiled.module, (4,), [x, np.zeros(16, np.float32), 16], poison=["out_ptr"])


# ---------------------------------------------------------------- overflow


def test_overflow_in_offset_arithmetic() -> None:
    x = np.arange(16, dtype=np.float32)
    with pytest.raises(CheckError) as info, checking():
        launch(bk.row_offset_kernel, (4,), x, np.zeros(16, np.float32), 2**30, BLOCK=4)
    text = str(info.value)
    assert "buggy_kernels.py:36:13: error: integer overflow in arith.mul" in text
    assert "in program (2, 0, 0)" in text
    assert "2 * 1073741824 = 2147483648 does not fit in int32 (it wraps to -2147483648)" in text


def test_no_overflow_in_64_bits() -> None:
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    with checking():
        launch(bk.row_offset64_kernel, (4,), x, out, 2**30, BLOCK=4)
    np.testing.assert_array_equal(out, np.tile(x[:4], 4))


def test_checks_switch_off_one_by_one() -> None:
    x = np.arange(16, dtype=np.float32)
    with checking(overflow=False), pytest.raises(EmulatorError, match="out-of-bounds"):
        launch(bk.row_offset_kernel, (4,), x, np.zeros(16, np.float32), 2**30, BLOCK=4)
    with checking(races=False):
        launch(bk.same_block_kernel, (4,), x, np.zeros(16, np.float32), 16, BLOCK=4)
    with checking(uninitialized=False):
        launch(bk.accumulate_kernel, (4,), x, empty(16), 16, BLOCK=4)


def test_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.arange(16, dtype=np.float32)
    monkeypatch.setenv("MINITRITON_CHECKS", "races")
    with pytest.raises(CheckError, match="data race"):
        launch(bk.same_block_kernel, (4,), x, np.zeros(16, np.float32), 16, BLOCK=4)
    launch(bk.accumulate_kernel, (4,), x, empty(16), 16, BLOCK=4)  # uninit is off
    assert CheckOptions.parse("all") == CheckOptions()
    with pytest.raises(ValueError, match="unknown check 'racse'"):
        CheckOptions.parse("racse")


def test_device_assert_shows_the_failing_values() -> None:
    x = np.arange(16, dtype=np.float32) - 3
    with pytest.raises(EmulatorError) as info:
        launch(bk.positive_kernel, (4,), x, 16, BLOCK=4, debug=True)
    text = str(info.value)
    assert "device assertion failed: x must be positive in program (0, 0, 0)" in text
    assert "lhs (x): -3.0, -2.0, -1.0, ..." in text
    launch(bk.positive_kernel, (4,), x, 16, BLOCK=4)  # not in debug mode: not checked


# ---------------------------------------------------------------- the whole end-to-end suite


CHECK_MESSAGES = (
    "data race",
    "uninitialized memory",
    "integer overflow",
    "changes the kernel's results",
)


@pytest.mark.heavy
def test_end_to_end_suite_is_silent_under_checks_and_pass_checking() -> None:
    """Every e2e kernel (tests/e2e, kernels of tests/kernels) runs with all checks on and
    the pass checker after every launch: none may report anything."""
    env = dict(os.environ, MINITRITON_CHECKS="all,passes", PYTHONPATH=str(REPO_ROOT))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "emulator",
         "tests/e2e"],
        capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=1200,
    )  # fmt: skip
    assert " passed" in result.stdout, result.stdout[-3000:]
    found = [m for m in CHECK_MESSAGES if m in result.stdout]
    assert not found, result.stdout[-5000:]
