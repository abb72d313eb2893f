"""Plain launches drop each value after its last use; tools that watch keep them all."""

from __future__ import annotations

import numpy as np
from emulator_helpers import module
from test_emulator_kernels import COLLATZ

from minitriton.emulator import Interpreter, Listener, launch
from minitriton.emulator.liveness import dead_after


def names(values) -> list[str]:  # noqa: ANN001
    return sorted(v.name_hint or "?" for v in values)


def test_values_die_after_their_last_use_and_loop_inputs_after_the_loop():
    kernel = module(COLLATZ).kernel
    ops = kernel.body.block.ops
    dead = dict(zip((op.name for op in ops), dead_after(kernel.body.block)))
    # The constants are read inside the loop: they live until scf.while ends;
    # its unused result %n dies at once.
    assert names(dead["scf.while"]) == ["c0", "c1", "c2", "c3", "n", "n0"]
    assert names(dead["tt.store"]) == ["op", "steps"]
    assert "pid" in names(dead["tt.addptr"]) and "out_ptr" in names(dead["tt.addptr"])
    body = ops[ops.index(next(o for o in ops if o.name == "scf.while"))].regions[1].block
    inner = dict(zip((op.name for op in body.ops), dead_after(body)))
    assert names(inner["arith.select"]) == ["half", "is_even", "t1"]
    assert names(inner["arith.mul"]) == ["na"]  # its last reader in the body


class Keeper(Listener):
    """Sees every op, so the interpreter keeps every value."""

    def __init__(self) -> None:
        self.states = []

    def did_execute_op(self, op, state, results) -> None:  # noqa: ANN001
        self.states.append(state)


def test_launches_free_values_and_give_the_same_results():
    out, watched = np.zeros(40, dtype=np.int32), np.zeros(40, dtype=np.int32)
    launch(module(COLLATZ), (40, 1, 1), [out])
    keeper = Keeper()
    launch(module(COLLATZ), (40, 1, 1), [watched], listeners=[keeper])
    np.testing.assert_array_equal(out, watched)
    assert out[26] == 111  # 27 takes 111 steps
    kept = keeper.states[-1].env
    assert {"pid", "c1", "n0", "steps"} <= {v.name_hint for v in kept}


def test_run_program_keeps_values_for_the_debugger():
    interp = Interpreter(module(COLLATZ), [np.zeros(4, dtype=np.int32)], (4, 1, 1))
    state = interp.run_program((2, 0, 0))
    assert int(state.value_of(next(v for v in state.env if v.name_hint == "steps"))) == 7


def test_a_freeing_run_keeps_no_dead_value():
    out = np.zeros(4, dtype=np.int32)
    interp = Interpreter(module(COLLATZ), [out], (4, 1, 1))
    interp.free_dead_values = True
    state = interp.run_batch(np.array([[i, 0, 0] for i in range(4)]))
    assert state.env == {}  # every value of the kernel's block died by tt.return
    np.testing.assert_array_equal(out, [0, 1, 7, 2])
