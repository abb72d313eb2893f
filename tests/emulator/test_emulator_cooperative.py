"""Programs that wait for a later program finish on the emulator (cooperative scheduling)."""

from __future__ import annotations

import numpy as np

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator.cooperative import spin_ops


@triton.jit
def wait_for_the_next(flags_ptr, out_ptr, n):
    pid = tl.program_id(0)
    if pid < n - 1:  # program pid waits until program pid + 1 has written
        while tl.atomic_add(flags_ptr + pid + 1, 0) == 0:
            pass
        tl.store(out_ptr + pid, tl.load(out_ptr + pid + 1) + 1)
    else:
        tl.store(out_ptr + pid, 100)
    tl.atomic_xchg(flags_ptr + pid, 1)


def test_a_chain_of_waits_on_later_programs_finishes() -> None:
    flags = np.zeros(16, dtype=np.int32)
    out = np.zeros(16, dtype=np.int32)
    wait_for_the_next[(16,)](flags, out, 16, backend="emulator")
    np.testing.assert_array_equal(out, 100 + np.arange(16)[::-1])
    np.testing.assert_array_equal(flags, 1)


@triton.jit
def last_program_releases(flag_ptr, out_ptr):
    pid = tl.program_id(0)
    if pid == tl.num_programs(0) - 1:
        tl.store(out_ptr + pid, 7)
        tl.atomic_xchg(flag_ptr, 1)
    else:
        while tl.load(flag_ptr, volatile=True) == 0:  # a volatile load in the condition
            pass
        tl.store(out_ptr + pid, tl.load(out_ptr + tl.num_programs(0) - 1) * 2)


def test_a_volatile_load_spin_on_the_last_program() -> None:
    flag = np.zeros(1, dtype=np.int32)
    out = np.zeros(5, dtype=np.int32)
    last_program_releases[(5,)](flag, out, backend="emulator")
    np.testing.assert_array_equal(out, [14, 14, 14, 14, 7])


@triton.jit
def locked_sum(lock_ptr, total_ptr, x_ptr):
    pid = tl.program_id(0)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.store(total_ptr, tl.load(total_ptr) + tl.load(x_ptr + pid))
    tl.atomic_xchg(lock_ptr, 0)


def test_a_lock_each_program_takes_and_releases_still_works() -> None:
    lock = np.zeros(1, dtype=np.int32)
    total = np.zeros(1, dtype=np.float32)
    x = np.arange(32, dtype=np.float32)
    locked_sum[(32,)](lock, total, x, backend="emulator")
    assert total[0] == x.sum() and lock[0] == 0


def test_spin_ops_are_atomics_in_loops_and_loads_in_conditions() -> None:
    def spinning(kernel, *args):  # noqa: ANN001, ANN002, ANN202
        compiled = kernel.warmup(*args, grid=(1,), backend="emulator")
        return sorted(
            op.name for op in compiled.module.walk() if id(op) in spin_ops(compiled.module)
        )

    i32 = np.zeros(4, dtype=np.int32)
    assert spinning(wait_for_the_next, i32, i32, 4) == ["tt.atomic_rmw"]
    assert spinning(last_program_releases, i32, i32) == ["tt.load"]
    assert spinning(locked_sum, i32, np.zeros(1, np.float32), np.zeros(1, np.float32)) == [
        "tt.atomic_cas"
    ]
