"""Races the detector once missed: atomics against plain stores, different locks, one store."""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator import CheckError, checking


@triton.jit
def atomic_then_store(counter_ptr):
    pid = tl.program_id(0)
    if pid == 0:
        tl.atomic_add(counter_ptr, 1)
    else:
        tl.store(counter_ptr, 5)


@triton.jit
def store_then_atomic(counter_ptr):
    pid = tl.program_id(0)
    if pid == 0:
        tl.store(counter_ptr, 5)
    else:
        tl.atomic_add(counter_ptr, 1)


@triton.jit
def atomics_only(counter_ptr):
    tl.atomic_add(counter_ptr, 1)


@triton.jit
def locked_update(x_ptr, locks_ptr, WHICH_LOCK: tl.constexpr):
    pid = tl.program_id(0)
    lock = locks_ptr + (pid if WHICH_LOCK == "own" else 0)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(x_ptr, tl.load(x_ptr) + 1)
    tl.atomic_xchg(lock, 0)


@triton.jit
def lanes_collide(out_ptr, SAME: tl.constexpr):
    offs = tl.arange(0, 16)
    values = offs * 0 if SAME else offs
    tl.store(out_ptr + offs // 4, values)  # four lanes per element


def run(kernel, grid, *args, **kwargs) -> None:  # noqa: ANN001 - test helper
    with checking():
        kernel[grid](*args, backend="emulator", **kwargs)


@pytest.mark.parametrize(
    ("kernel", "message"),
    [
        (atomic_then_store, "data race: tt.store to 'counter_ptr' overwrites what program (0, 0, 0)"
         " updated"),
        (store_then_atomic, "data race: tt.atomic_rmw updates 'counter_ptr' where program (0, 0, 0)"
         " stored plainly"),
    ],
)  # fmt: skip
def test_an_atomic_and_a_plain_store_in_two_programs(kernel, message: str) -> None:  # noqa: ANN001
    with pytest.raises(CheckError) as info:
        run(kernel, (2,), np.zeros(1, np.int32))
    assert message in str(info.value)
    assert "in program (1, 0, 0)" in str(info.value)


def test_atomics_alone_are_not_races() -> None:
    counter = np.zeros(1, np.int32)
    run(atomics_only, (8,), counter)
    assert counter[0] == 8


def test_updates_under_different_locks_race() -> None:
    with pytest.raises(CheckError) as info:
        run(locked_update, (2,), np.zeros(1, np.float32), np.zeros(2, np.int32), WHICH_LOCK="own")
    assert "stored while holding a different lock" in str(info.value)


def test_updates_under_one_lock_do_not_race() -> None:
    x = np.zeros(1, np.float32)
    run(locked_update, (4,), x, np.zeros(2, np.int32), WHICH_LOCK="shared")
    assert x[0] == 4


def test_lanes_of_one_store_writing_different_values() -> None:
    with pytest.raises(CheckError) as info:
        run(lanes_collide, (1,), np.zeros(4, np.int32), SAME=False)
    text = str(info.value)
    assert "data race: lanes of one tt.store to 'out_ptr' store different values" in text
    assert "which lane's value lands is unspecified" in text


def test_lanes_of_one_store_writing_one_value_are_fine() -> None:
    run(lanes_collide, (1,), np.ones(4, np.int32), SAME=True)


@triton.jit
def message_passing(flag_ptr, payload_ptr, out_ptr, SEM: tl.constexpr):
    if tl.program_id(0) == 0:
        tl.atomic_poll(flag_ptr, 1, sem=SEM)
        tl.store(out_ptr, tl.load(payload_ptr))
    else:
        tl.store(payload_ptr, 42)
        tl.atomic_xchg(flag_ptr, 1, sem="release")


def test_an_acquiring_poll_orders_the_writers_stores_before_its_loads() -> None:
    flag, payload, out = (np.zeros(1, np.int32) for _ in range(3))
    run(message_passing, (2,), flag, payload, out, SEM="acquire")
    assert out[0] == 42


def test_a_relaxed_poll_orders_nothing() -> None:
    flag, payload, out = (np.zeros(1, np.int32) for _ in range(3))
    with pytest.raises(CheckError) as info:
        run(message_passing, (2,), flag, payload, out, SEM="relaxed")
    assert "data race: tt.load from 'payload_ptr' reads what program (1, 0, 0) stored" in str(
        info.value
    )
