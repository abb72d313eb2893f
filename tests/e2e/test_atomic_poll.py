"""``tl.atomic_poll`` on both backends, its PTX, and the mistakes it refuses.

The emulator runs a kernel that polls cooperatively (programs give way
while they wait), so a program can wait for a later one, and a wait that
nothing can end is a located error instead of a hang.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from minitriton.diagnostics import CompileError, UserError
from tests.e2e.ptxas_check import assemble, needs_ptxas
from tests.kernels import atomic_poll as K


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64])
@pytest.mark.parametrize(("sem", "scope"), [("relaxed", "cta"), ("acquire", "gpu"),
                                            ("acquire", "sys")])  # fmt: skip
def test_a_flag_that_already_holds_the_value_ends_the_wait(
    backend: str, dtype: type, sem: str, scope: str
) -> None:
    flag = np.ones(1, dtype=dtype)
    out = np.zeros(1, dtype=dtype)
    K.poll_then_store[(1,)](flag, out, 1, SEM=sem, SCOPE=scope, backend=backend)
    assert out[0] == 1


@pytest.mark.parametrize(("initial", "expected"), [(1, True), (0, False)])
def test_a_timeout_of_zero_reads_once(backend: str, initial: int, expected: bool) -> None:
    flag = np.full(1, initial, dtype=np.int32)
    out = np.zeros(1, dtype=bool)
    out[0] = not expected
    K.poll_with_timeout[(1,)](flag, out, 0, backend=backend)
    assert bool(out[0]) is expected


def test_a_program_waits_for_a_later_one(backend: str) -> None:
    flag, payload, out = (np.zeros(1, dtype=np.int32) for _ in range(3))
    K.wait_for_a_later_program[(2,)](flag, payload, out, backend=backend)
    assert (flag[0], out[0]) == (1, 42)


def test_a_chain_of_programs_each_waiting_for_the_next(backend: str) -> None:
    flags = np.zeros(12, dtype=np.int32)
    out = np.zeros(12, dtype=np.int32)
    K.relay[(12,)](flags, out, 12, backend=backend)
    np.testing.assert_array_equal(out, np.arange(12, 0, -1))
    np.testing.assert_array_equal(flags, 1)


def test_a_timeout_does_not_end_a_wait_that_another_program_ends(backend: str) -> None:
    flag = np.zeros(1, dtype=np.int64)
    out = np.zeros(1, dtype=bool)
    K.wait_or_give_up[(2,)](flag, out, 10**12, backend=backend)
    assert out[0] and flag[0] == 7


def test_a_wait_nothing_can_end_is_an_error_on_the_emulator() -> None:
    flag = np.zeros(1, dtype=np.int32)
    out = np.zeros(1, dtype=np.int32)
    with pytest.raises(UserError) as info:
        K.poll_then_store[(3,)](flag, out, 1, SEM="acquire", SCOPE="gpu", backend="emulator")
    text = str(info.value)
    assert "atomic_poll.py:" in text and "tl.atomic_poll(flag, expected_value" in text
    assert "waits forever: 'flag' holds 0, not 1" in text
    assert "timeout_ns" in text
    assert out[0] == 0


def test_with_a_timeout_the_emulator_gives_up_when_nothing_can_end_the_wait() -> None:
    flag = np.zeros(1, dtype=np.int32)
    out = np.ones(1, dtype=bool)
    K.poll_with_timeout[(4,)](flag, out, 10**15)  # would take days on a GPU
    assert not out[0]


@pytest.mark.parametrize(
    ("kernel", "message"),
    [
        (K.poll_a_block, "atomic_poll only supports a pointer to a scalar"),
        (K.poll_floats, "atomic_poll only supports integer elements with width {16, 32, 64}"),
        (K.poll_with_release, "atomic_poll only supports acquire and relaxed semantics"),
        (K.poll_with_negative_timeout, "atomic_poll timeout_ns must be non-negative"),
        (K.poll_for_a_block, "Expected value argument cannot be block type"),
    ],
)
def test_mistakes_are_located_errors_in_triton_words(kernel: object, message: str) -> None:
    dtype = np.float32 if kernel is K.poll_floats else np.int32
    with pytest.raises(CompileError) as info:
        kernel[(1,)](np.ones(4, dtype=dtype))  # type: ignore[index]
    assert message in str(info.value) and "atomic_poll.py:" in str(info.value)


@needs_ptxas
@pytest.mark.parametrize(
    ("arch", "fence"), [("sm_90a", "fence.acquire"), ("sm_80", "fence.acq_rel")]
)
def test_the_ptx_is_one_relaxed_load_in_a_loop_and_a_fence(
    arch: str, fence: str, tmp_path: Path
) -> None:
    ptx = assemble(K.poll_then_store, "*i16, *i16, i32, 'acquire', 'cta'", arch, tmp_path).ptx
    assert ptx.count("ld.relaxed.cta.global.b16") == 1
    assert ptx.count(f"{fence}.cta;") == 1 and "%globaltimer" not in ptx
    relaxed = assemble(K.poll_then_store, "*i64, *i64, i32, 'relaxed', 'sys'", arch, tmp_path).ptx
    assert relaxed.count("ld.relaxed.sys.global.b64") == 1 and "fence" not in relaxed


@needs_ptxas
def test_a_timeout_reads_the_global_timer_before_and_in_the_loop(tmp_path: Path) -> None:
    ptx = assemble(K.poll_with_timeout, "*i32, *i1, i32", "sm_90a", tmp_path).ptx
    assert ptx.count("ld.relaxed.gpu.global.b32") == 1
    assert ptx.count("%globaltimer") == 2 and ptx.count("fence.acquire.gpu;") == 1
