"""Located run-time errors, device print/assert, calls, listeners and the API."""

from __future__ import annotations

import numpy as np
import pytest
from emulator_helpers import fake_source, module, run, vector_add_ir

from minitriton.emulator import EmulatorError, Interpreter, Listener, ProgramState, launch
from minitriton.ir.core import Operation

KERNEL_PY = """import minitriton as triton
import minitriton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK
    offsets = block_start + tl.arange(0, BLOCK)
    mask = offsets < n
    # the caller passes n larger than the arrays:
    # every lane past the end of x is out of bounds.
    # load:
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
"""

OOB_IR = vector_add_ir(
    1024, ('loc("kernel.py":14:9)', 'loc("kernel.py":15:9)', 'loc("kernel.py":16:5)')
)

OOB_LOAD_TEXT = """\
kernel.py:14:9: error: out-of-bounds tt.load from 'x_ptr' (98432 elements of fp32) in program (96, 0, 0)
        x = tl.load(x_ptr + offsets, mask=mask)
            ^
  offsets 98432, 98433, ... at lanes 128, 129, ... (896 lanes out of bounds)
help: the mask did not cover lane 128 (offset 98432); use mask=offsets < N, N at most 98432 (the length of 'x_ptr')"""  # noqa: E501


@pytest.mark.parametrize("serial", [False, True])
def test_out_of_bounds_load_exact_text(serial: bool) -> None:
    fake_source("kernel.py", KERNEL_PY)
    n = 98432
    x, y = np.zeros(n, np.float32), np.zeros(n, np.float32)
    out = np.zeros(n, np.float32)
    with pytest.raises(EmulatorError) as info:
        run(OOB_IR, (97,), [x, y, out, 97 * 1024], serial=serial)
    assert str(info.value) == OOB_LOAD_TEXT
    assert info.value.pid == (96, 0, 0)
    assert info.value.diagnostic.loc.line == 14


def test_out_of_bounds_store_names_the_store_buffer() -> None:
    fake_source("kernel.py", KERNEL_PY)
    x, y = np.zeros(2048, np.float32), np.zeros(2048, np.float32)
    out = np.zeros(1030, np.float32)
    with pytest.raises(EmulatorError) as info:
        run(OOB_IR, (2,), [x, y, out, 2048])
    assert str(info.value) == (
        "kernel.py:16:5: error: out-of-bounds tt.store to 'out_ptr' (1030 elements of fp32) "
        "in program (1, 0, 0)\n"
        "        tl.store(out_ptr + offsets, x + y, mask=mask)\n"
        "        ^\n"
        "  offsets 1030, 1031, ... at lanes 6, 7, ... (1018 lanes out of bounds)\n"
        "help: the mask did not cover lane 6 (offset 1030); "
        "use mask=offsets < N, N at most 1030 (the length of 'out_ptr')"
    )


def test_masked_lanes_are_never_checked_or_read() -> None:
    n = 1000  # the arrays end exactly at n: masked lanes would be out of bounds
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    run(OOB_IR, (1,), [x, y, out, n])
    np.testing.assert_array_equal(out, x + 1)


SCALAR_LOAD = """tt.func @k(%x_ptr: ptr<i32>, %out_ptr: ptr<i32>, %i: i32) {
  %p = tt.addptr(%x_ptr, %i) : ptr<i32>
  %v = tt.load(%p) : i32
  tt.store(%out_ptr, %v)
  tt.return()
}
"""


def test_negative_scalar_offset_is_out_of_bounds() -> None:
    with pytest.raises(EmulatorError) as info:
        run(SCALAR_LOAD, (1,), [np.zeros(4, np.int32), np.zeros(1, np.int32), -1])
    text = str(info.value)
    assert "out-of-bounds tt.load from 'x_ptr' (4 elements of int32) in program (0, 0, 0)" in text
    assert text.endswith("  offset -1\nhelp: mask=i >= 0")


def test_argument_dtype_mismatch_is_located() -> None:
    with pytest.raises(EmulatorError, match="argument 'x_ptr' expects a NumPy array of int32"):
        run(SCALAR_LOAD, (1,), [np.zeros(4, np.float32), np.zeros(1, np.int32), 0])


PRINT = """tt.func @k(%x_ptr: ptr<f32>) {
  %pid = tt.get_program_id() {axis = 0} : i32
  %c4 = arith.constant() {value = 4} : i32
  %start = arith.mul(%pid, %c4) : i32
  %r = tt.make_range() {end = 4, start = 0} : tensor<4xi32>
  %s = tt.splat(%start) : tensor<4xi32>
  %offs = arith.add(%s, %r) : tensor<4xi32>
  %xp = tt.splat(%x_ptr) : tensor<4xptr<f32>>
  %xa = tt.addptr(%xp, %offs) : tensor<4xptr<f32>>
  %x = tt.load(%xa) : tensor<4xf32>
  tt.print(%x) {hex = false, prefix = "x: "}
  tt.print(%pid, %offs) {hex = true, prefix = "ids: "}
  tt.return()
}
"""


def test_print_once_per_program_in_grid_order(capsys: pytest.CaptureFixture[str]) -> None:
    x = np.arange(12, dtype=np.float32) / 2
    run(PRINT, (3,), [x])
    assert capsys.readouterr().out == (
        "pid (0, 0, 0) x: [0.0, 0.5, 1.0, 1.5]\n"
        "pid (0, 0, 0) ids: 0x00000000 [0x00000000, 0x00000001, 0x00000002, 0x00000003]\n"
        "pid (1, 0, 0) x: [2.0, 2.5, 3.0, 3.5]\n"
        "pid (1, 0, 0) ids: 0x00000001 [0x00000004, 0x00000005, 0x00000006, 0x00000007]\n"
        "pid (2, 0, 0) x: [4.0, 4.5, 5.0, 5.5]\n"
        "pid (2, 0, 0) ids: 0x00000002 [0x00000008, 0x00000009, 0x0000000a, 0x0000000b]\n"
    )


ASSERT = """tt.func @k(%x_ptr: ptr<f32>) {
  %pid = tt.get_program_id() {axis = 0} : i32
  %c8 = arith.constant() {value = 8} : i32
  %start = arith.mul(%pid, %c8) : i32
  %r = tt.make_range() {end = 8, start = 0} : tensor<8xi32>
  %s = tt.splat(%start) : tensor<8xi32>
  %offs = arith.add(%s, %r) : tensor<8xi32>
  %xp = tt.splat(%x_ptr) : tensor<8xptr<f32>>
  %xa = tt.addptr(%xp, %offs) : tensor<8xptr<f32>>
  %x = tt.load(%xa) : tensor<8xf32>
  %limit = arith.constant() {value = 20.0} : tensor<8xf32>
  %ok = arith.cmp(%x, %limit) {pred = "lt"} : tensor<8xi1>
  tt.assert(%ok) {message = "x < 20"} loc("assert.py":3:5)
  tt.return()
}
"""


def test_assert_reports_failing_lanes_and_values_in_debug_mode() -> None:
    fake_source("assert.py", "def k(x_ptr):\n    x = ...\n    tl.device_assert(x < 20, 'x < 20')\n")
    x = np.arange(32, dtype=np.float32)
    run(ASSERT, (4,), [x])  # debug off: a no-op
    with pytest.raises(EmulatorError) as info:
        run(ASSERT, (4,), [x], debug=True)
    assert str(info.value) == (
        "assert.py:3:5: error: device assertion failed: x < 20 in program (2, 0, 0)\n"
        "        tl.device_assert(x < 20, 'x < 20')\n"
        "        ^\n"
        "  false at lanes 4, 5, 6, ... (4 lanes of 8)\n"
        "  lhs (x): 20.0, 21.0, 22.0, ...\n"
        "  rhs (limit): 20.0, 20.0, 20.0, ..."
    )


CALL = """tt.func private @twice(%v: tensor<16xi32>) -> (tensor<16xi32>) {
  %t = arith.add(%v, %v) : tensor<16xi32>
  tt.return(%t)
}
tt.func @k(%out_ptr: ptr<i32>) {
  %pid = tt.get_program_id() {axis = 0} : i32
  %c16 = arith.constant() {value = 16} : i32
  %start = arith.mul(%pid, %c16) : i32
  %r = tt.make_range() {end = 16, start = 0} : tensor<16xi32>
  %s = tt.splat(%start) : tensor<16xi32>
  %offs = arith.add(%s, %r) : tensor<16xi32>
  %y = tt.call(%offs) {callee = "twice"} : tensor<16xi32>
  %op = tt.splat(%out_ptr) : tensor<16xptr<i32>>
  %oa = tt.addptr(%op, %offs) : tensor<16xptr<i32>>
  tt.store(%oa, %y)
  tt.return()
}
"""


def test_call_of_private_helper() -> None:
    out = np.zeros(48, np.int32)
    run(CALL, (3,), [out])
    np.testing.assert_array_equal(out, 2 * np.arange(48))


POINTER_IF = """tt.func @k(%a_ptr: ptr<i32>, %b_ptr: ptr<i32>) {
  %pid = tt.get_program_id() {axis = 0} : i32
  %c2 = arith.constant() {value = 2} : i32
  %c0 = arith.constant() {value = 0} : i32
  %rem = arith.rem(%pid, %c2) : i32
  %even = arith.cmp(%rem, %c0) {pred = "eq"} : i1
  %base = scf.if(%even) : ptr<i32> {
  ^():
    scf.yield(%a_ptr)
  } {
  ^():
    scf.yield(%b_ptr)
  }
  %p = tt.addptr(%base, %pid) : ptr<i32>
  %v = tt.load(%p) : i32
  %v1 = arith.add(%v, %pid) : i32
  tt.store(%p, %v1)
  tt.return()
}
"""


def test_programs_choosing_different_buffers_fall_back_to_serial() -> None:
    a, b = np.full(6, 100, np.int32), np.full(6, 200, np.int32)
    run(POINTER_IF, (6,), [a, b])
    np.testing.assert_array_equal(a, [100, 100, 102, 100, 104, 100])
    np.testing.assert_array_equal(b, [200, 201, 200, 203, 200, 205])


class Recorder(Listener):
    def __init__(self) -> None:
        self.before: list[str] = []
        self.after: list[str] = []
        self.states: list[ProgramState] = []

    def will_execute_op(self, op: Operation, state: ProgramState) -> None:
        self.before.append(op.name)

    def did_execute_op(self, op: Operation, state: ProgramState, results: list) -> None:
        self.after.append(op.name)
        self.states.append(state)


def test_run_one_program_op_by_op_with_listeners() -> None:
    out = np.zeros(48, np.int32)
    rec = Recorder()
    interp = Interpreter(module(CALL), [out], (3, 1, 1), listeners=[rec])
    state = interp.run_program((1, 0, 0))
    np.testing.assert_array_equal(out[16:32], 2 * np.arange(16, 32))
    assert out[:16].sum() == 0 and out[32:].sum() == 0
    assert sorted(rec.before) == sorted(rec.after)  # nested ops finish inside tt.call
    assert rec.before[:3] == ["tt.get_program_id", "arith.constant", "arith.mul"]
    assert "tt.call" in rec.before and "arith.add" in rec.before
    snap = state.snapshot()
    assert int(snap["pid"]) == 1
    np.testing.assert_array_equal(snap["offs"], np.arange(16, 32))


def test_launch_api_signature() -> None:
    out = np.zeros(32, np.int32)
    launch(module(CALL), (2, 1, 1), [out])
    np.testing.assert_array_equal(out, 2 * np.arange(32))


BF16_SUM = """tt.func @k(%x_ptr: ptr<bf16>, %out_ptr: ptr<bf16>) {
  %r = tt.make_range() {end = 64, start = 0} : tensor<64xi32>
  %xp = tt.splat(%x_ptr) : tensor<64xptr<bf16>>
  %xa = tt.addptr(%xp, %r) : tensor<64xptr<bf16>>
  %x = tt.load(%xa) : tensor<64xbf16>
  %s = tt.reduce(%x) {axis = 0} : bf16 {
  ^(%a: bf16, %b: bf16):
    %t = arith.add(%a, %b) : bf16
    tt.reduce_return(%t)
  }
  tt.store(%out_ptr, %s)
  tt.return()
}
"""


def test_bf16_reduction_rounds_after_every_add() -> None:
    from minitriton.emulator.values import bf16_to_f32, f32_to_bf16

    rng = np.random.default_rng(8)
    x = f32_to_bf16(rng.standard_normal(64).astype(np.float32))
    out = np.zeros(1, np.uint16)
    run(BF16_SUM, (1,), [x, out])
    level = bf16_to_f32(x)
    while level.size > 1:  # the same pairwise tree, rounding to bf16 at each add
        level = bf16_to_f32(f32_to_bf16(level[0::2] + level[1::2]))
    assert out[0] == f32_to_bf16(level)[0]


def test_every_ir_op_has_semantics() -> None:
    from minitriton.emulator import SEMANTICS
    from minitriton.ir import OP_REGISTRY

    missing = [
        name
        for name, cls in OP_REGISTRY.items()
        if cls not in SEMANTICS
        and not cls.is_terminator
        and name != "tt.func"
        # Ops the GPU backend makes for itself (shared-memory rings, async dots).
        and not getattr(cls, "backend_only", False)
    ]
    assert missing == []
