"""A failed emulator launch loses nothing: the arrays are exactly as before it."""

from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.emulator import EmulatorError, schedule


@triton.jit
def store_then_fail(out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs.to(tl.float32) + 1.0)  # every program stores
    bad = tl.where(pid == 1, offs + n, offs)  # program 1 then reads past the end
    tl.store(out_ptr + offs, tl.load(out_ptr + bad) * 2.0)


@triton.jit
def locked_store_then_fail(out_ptr, lock_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.store(out_ptr + offs, offs.to(tl.float32) + 1.0)
    tl.atomic_xchg(lock_ptr, 0)
    bad = tl.where(pid == 2, offs + n, offs)
    tl.store(out_ptr + offs, tl.load(out_ptr + bad))


@triton.jit
def assert_fails(out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs.to(tl.float32))
    tl.device_assert(tl.program_id(0) < 2, "program 2 is not allowed")


def test_batched_launch_that_fails_leaves_the_output_untouched() -> None:
    out = np.full(64, 7.0, np.float32)
    before = out.copy()
    with pytest.raises(EmulatorError):
        store_then_fail[(4,)](out, 64, BLOCK=16, backend="emulator")
    np.testing.assert_array_equal(out, before)


def test_serial_launch_that_fails_leaves_every_array_untouched() -> None:
    compiled = locked_store_then_fail.warmup(
        np.zeros(64, np.float32), np.zeros(1, np.int32), 64, BLOCK=16, grid=(4,)
    )
    assert schedule.serial_reason(compiled.module) is not None  # it runs one program at a time
    out = np.full(64, 7.0, np.float32)
    lock = np.zeros(1, np.int32)
    with pytest.raises(EmulatorError):
        locked_store_then_fail[(4,)](out, lock, 64, BLOCK=16, backend="emulator")
    np.testing.assert_array_equal(out, np.full(64, 7.0, np.float32))
    np.testing.assert_array_equal(lock, [0])


def test_an_assert_failure_leaves_the_output_untouched() -> None:
    out = np.full(64, -1.0, np.float32)
    with pytest.raises(EmulatorError):
        assert_fails[(4,)](out, BLOCK=16, backend="emulator", debug=True)
    np.testing.assert_array_equal(out, np.full(64, -1.0, np.float32))


def test_an_interrupt_leaves_the_output_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    out = np.full(64, 3.0, np.float32)
    real = schedule.run_batched

    def interrupted(interp, total):  # noqa: ANN001, ANN202
        real(interp, total)  # every store lands, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(schedule, "run_batched", interrupted)
    with pytest.raises(KeyboardInterrupt):
        assert_fails[(2,)](out, BLOCK=16, backend="emulator")
    np.testing.assert_array_equal(out, np.full(64, 3.0, np.float32))


def test_a_strided_view_is_restored_and_its_gaps_untouched() -> None:
    base = np.full(128, 5.0, np.float32)
    view = base[::2]
    with pytest.raises(EmulatorError):
        store_then_fail[(4,)](view, 128, BLOCK=16, backend="emulator")
    np.testing.assert_array_equal(base, np.full(128, 5.0, np.float32))


def test_a_successful_launch_still_writes() -> None:
    out = np.zeros(32, np.float32)
    assert_fails[(2,)](out, BLOCK=16, backend="emulator", debug=True)
    np.testing.assert_array_equal(out, np.arange(32, dtype=np.float32))
