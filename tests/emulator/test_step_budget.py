"""The emulator's step budget: ``max_steps=`` and ``MINITRITON_MAX_STEPS``.

A step is one op executed by one program, so the budget gives the same
verdict on any machine, and a batch of programs counts each of them.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator import EmulatorError
from minitriton.launch_checks import LaunchError


@triton.jit
def loop_forever(out_ptr, n):
    tl.store(out_ptr, 2.0)
    i = 0
    while i < n:  # i never changes
        i = i * 1
    tl.store(out_ptr, 1.0)


@triton.jit
def count_to(out_ptr, n):
    pid = tl.program_id(0)
    total = 0.0
    for _i in range(n):
        total += 1.0
    tl.store(out_ptr + pid, total)


@triton.jit
def spin_forever(lock_ptr, out_ptr):
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:  # the lock is never released
        pass
    tl.store(out_ptr, 1.0)


def test_an_endless_loop_runs_out_of_steps() -> None:
    out = np.zeros(1, np.float32)
    with pytest.raises(EmulatorError) as info:
        loop_forever[(1,)](out, 5, backend="emulator", max_steps=10_000)
    message = str(info.value)
    assert "error: kernel 'loop_forever' ran past its step budget of 10,000 steps" in message
    assert "in program (0, 0, 0)" in message
    assert re.search(r"i = i \* 1|while i < n", message)
    assert "raise max_steps= (or MINITRITON_MAX_STEPS)" in message
    assert "Traceback" not in message
    np.testing.assert_array_equal(out, [0.0])  # the store before the loop is undone


def test_a_spin_lock_runs_out_of_steps() -> None:
    lock, out = np.ones(1, np.int32), np.zeros(1, np.float32)
    with pytest.raises(EmulatorError, match="ran past its step budget of 5,000 steps"):
        spin_forever[(2,)](lock, out, backend="emulator", max_steps=5_000)


def test_the_step_budget_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINITRITON_MAX_STEPS", "2_000")
    with pytest.raises(EmulatorError, match="step budget of 2,000 steps"):
        loop_forever[(1,)](np.zeros(1, np.float32), 5, backend="emulator")


def test_the_keyword_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINITRITON_MAX_STEPS", "10")
    out = np.zeros(1, np.float32)
    count_to[(1,)](out, 3, backend="emulator", max_steps=100_000)
    np.testing.assert_array_equal(out, [3.0])


def test_every_program_of_a_batch_counts() -> None:
    """One program (about 60 steps) fits in 100; 16 programs run together need 16 times that."""
    out = np.zeros(16, np.float32)
    count_to[(1,)](out, 50, backend="emulator", max_steps=100)
    assert out[0] == 50.0
    with pytest.raises(EmulatorError, match="step budget of 100 steps"):
        count_to[(16,)](out, 50, backend="emulator", max_steps=100)
    with pytest.raises(EmulatorError, match="step budget of 50 steps"):
        count_to[(1,)](out, 50, backend="emulator", max_steps=50)  # a step per iteration
    count_to[(16,)](out, 50, backend="emulator", max_steps=16 * 100)
    np.testing.assert_array_equal(out, np.full(16, 50.0, np.float32))


@pytest.mark.parametrize("value", ["many", "0", "-3", "1.5"])
def test_a_bad_step_budget_in_the_environment(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("MINITRITON_MAX_STEPS", value)
    with pytest.raises(LaunchError, match="kernel 'loop_forever': MINITRITON_MAX_STEPS="):
        loop_forever[(1,)](np.zeros(1, np.float32), 0, backend="emulator")


@pytest.mark.parametrize("value", [0, -1, 1.5, "5", True])
def test_a_bad_max_steps_keyword(value: object) -> None:
    with pytest.raises(LaunchError, match="kernel 'loop_forever': max_steps="):
        loop_forever[(1,)](np.zeros(1, np.float32), 0, backend="emulator", max_steps=value)


def test_a_kernel_parameter_named_max_steps_is_an_argument() -> None:
    @triton.jit
    def fill(out_ptr, max_steps):
        tl.store(out_ptr, max_steps + 0.0)

    out = np.zeros(1, np.float32)
    fill[(1,)](out, max_steps=7, backend="emulator")
    assert out[0] == 7.0


@triton.jit
def row_sums(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(out_ptr + pid, tl.sum(tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK)), axis=0))


def test_a_combiner_counts_its_programs_not_its_pairs() -> None:
    # 4 programs reduce 1024 values each: the combiner runs once per level of the tree (10)
    # for the 4 programs, however many pairs each run combines (4 x 1023 steps per op if
    # each pair counted).
    x = np.ones(4 * 1024, np.float32)
    out = np.zeros(4, np.float32)
    row_sums[(4,)](x, out, BLOCK=1024, backend="emulator", max_steps=400)
    np.testing.assert_array_equal(out, [1024.0] * 4)
    with pytest.raises(EmulatorError, match="step budget of 40 steps"):
        row_sums[(4,)](x, out, BLOCK=1024, backend="emulator", max_steps=40)
