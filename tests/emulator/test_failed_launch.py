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
    with pytest.raises(KeyboardInterrupt):  # debug: the assert runs after the store
        assert_fails[(2,)](out, BLOCK=16, backend="emulator", debug=True)
    np.testing.assert_array_equal(out, np.full(64, 3.0, np.float32))


@triton.jit
def store_last(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x + 1.0, mask=offs < n)


@triton.jit
def store_then_compute(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))
    tl.store(x_ptr + offs, tl.load(out_ptr + offs) * 2.0)


def module_of(kernel, *args, grid, **constexprs):  # noqa: ANN001, ANN003, ANN201
    return kernel.warmup(*args, grid=grid, **constexprs).module


def test_only_a_last_store_in_one_batch_needs_no_undo(monkeypatch: pytest.MonkeyPatch) -> None:
    x, out = np.zeros(64, np.float32), np.zeros(64, np.float32)
    last = module_of(store_last, x, out, 64, BLOCK=16, grid=(4,))
    assert schedule.fails_before_writing(last, (4, 1, 1))
    assert not schedule.fails_before_writing(
        module_of(store_then_compute, x, out, BLOCK=16, grid=(4,)), (4, 1, 1)
    )
    assert not schedule.fails_before_writing(
        module_of(store_then_fail, out, 64, BLOCK=16, grid=(4,)), (4, 1, 1)
    )
    assert not schedule.fails_before_writing(
        module_of(assert_fails, out, BLOCK=16, grid=(4,), debug=True), (4, 1, 1)
    )
    monkeypatch.setattr(schedule, "CHUNK_ELEMENTS", 32)  # two programs a batch
    assert not schedule.fails_before_writing(last, (4, 1, 1))
    assert schedule.fails_before_writing(last, (2, 1, 1))


def test_a_last_store_that_fails_writes_nothing() -> None:
    out = np.full(64, 4.0, np.float32)
    with pytest.raises(EmulatorError, match="out-of-bounds tt.load"):
        store_last[(4,)](np.zeros(40, np.float32), out, 64, BLOCK=16, backend="emulator")
    np.testing.assert_array_equal(out, np.full(64, 4.0, np.float32))


def test_a_last_store_completes_through_ctrl_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """Such a launch takes no copy: Ctrl-C during its one store comes after the store."""
    from minitriton.emulator import rows

    real = rows.complete_despite_interrupt

    def interrupt_first_step(steps):  # noqa: ANN001, ANN202
        calls = [0]

        def first() -> None:
            calls[0] += 1
            steps[0]()
            if calls[0] == 1:
                raise KeyboardInterrupt  # Ctrl-C right after the first write

        real([first, *steps[1:]])

    import minitriton.emulator.ops.memory as memory
    import minitriton.emulator.ops.speed as speed

    # The store's semantics, and its fast path (unless the emulator runs plain).
    monkeypatch.setattr(memory, "complete_despite_interrupt", interrupt_first_step)
    monkeypatch.setattr(speed, "complete_despite_interrupt", interrupt_first_step)
    x = np.arange(40, dtype=np.float32)
    out = np.full(40, 4.0, np.float32)
    with pytest.raises(KeyboardInterrupt):
        store_last[(3,)](x, out, 40, BLOCK=16, backend="emulator")
    np.testing.assert_array_equal(out, x + 1.0)  # complete: the edge row too


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
