"""Batching: chunks, multi-dimensional grids, per-program shapes and the serial choice."""

from __future__ import annotations

import numpy as np
import pytest
from emulator_helpers import module, run
from test_emulator_kernels import COLLATZ, TICKETS, VECTOR_ADD

from minitriton.emulator import schedule, serial_reason


@pytest.fixture
def tiny_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Force many small chunks (a few programs each)."""
    monkeypatch.setattr(schedule, "CHUNK_ELEMENTS", 300)


def test_chunks_give_the_same_result(tiny_chunks: None) -> None:
    n = 5000
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    run(VECTOR_ADD, (40,), [x, x, out, n])
    np.testing.assert_array_equal(out, 2 * x)


def test_atomics_keep_grid_order_across_chunks(tiny_chunks: None) -> None:
    counter = np.zeros(1, np.int32)
    out = np.zeros(100, np.int32)
    run(TICKETS, (100,), [counter, out])
    np.testing.assert_array_equal(out, np.arange(100))


def test_while_loop_across_chunks(tiny_chunks: None) -> None:
    out = np.zeros(30, np.int32)
    run(COLLATZ, (30,), [out])
    assert out[26] == 111  # 27 takes 111 steps


GRID_IDS = """tt.func @ids(%out_ptr: ptr<i32>) {
  %x = tt.get_program_id() {axis = 0} : i32
  %y = tt.get_program_id() {axis = 1} : i32
  %z = tt.get_program_id() {axis = 2} : i32
  %nx = tt.get_num_programs() {axis = 0} : i32
  %ny = tt.get_num_programs() {axis = 1} : i32
  %zy = arith.mul(%z, %ny) : i32
  %zyy = arith.add(%zy, %y) : i32
  %row = arith.mul(%zyy, %nx) : i32
  %lin = arith.add(%row, %x) : i32
  %c100 = arith.constant() {value = 100} : i32
  %code0 = arith.mul(%z, %c100) : i32
  %c10 = arith.constant() {value = 10} : i32
  %code1 = arith.mul(%y, %c10) : i32
  %code2 = arith.add(%code0, %code1) : i32
  %code = arith.add(%code2, %x) : i32
  %p = tt.addptr(%out_ptr, %lin) : ptr<i32>
  tt.store(%p, %code)
  tt.return()
}
"""


def test_three_dimensional_grid() -> None:
    out = np.zeros(4 * 3 * 2, np.int32)
    run(GRID_IDS, (4, 3, 2), [out])
    z, y, x = np.meshgrid(range(2), range(3), range(4), indexing="ij")
    np.testing.assert_array_equal(out, (100 * z + 10 * y + x).reshape(-1))


REDUCE_2D = """tt.func @k(%x_ptr: ptr<f32>, %rows_ptr: ptr<f32>, %cols_ptr: ptr<f32>) {
  %pid = tt.get_program_id() {axis = 0} : i32
  %c128 = arith.constant() {value = 128} : i32
  %base = arith.mul(%pid, %c128) : i32
  %r8 = tt.make_range() {end = 8, start = 0} : tensor<8xi32>
  %r16 = tt.make_range() {end = 16, start = 0} : tensor<16xi32>
  %c16 = arith.constant() {value = 16} : tensor<8xi32>
  %rows = arith.mul(%r8, %c16) : tensor<8xi32>
  %rows2 = tt.expand_dims(%rows) {axis = 1} : tensor<8x1xi32>
  %cols2 = tt.expand_dims(%r16) {axis = 0} : tensor<1x16xi32>
  %rb = tt.broadcast(%rows2) : tensor<8x16xi32>
  %cb = tt.broadcast(%cols2) : tensor<8x16xi32>
  %local = arith.add(%rb, %cb) : tensor<8x16xi32>
  %bs = tt.splat(%base) : tensor<8x16xi32>
  %offs = arith.add(%local, %bs) : tensor<8x16xi32>
  %xp = tt.splat(%x_ptr) : tensor<8x16xptr<f32>>
  %xa = tt.addptr(%xp, %offs) : tensor<8x16xptr<f32>>
  %x = tt.load(%xa) : tensor<8x16xf32>
  %by_row = tt.reduce(%x) {axis = 1} : tensor<8xf32> {
  ^(%a: f32, %b: f32):
    %s = arith.add(%a, %b) : f32
    tt.reduce_return(%s)
  }
  %by_col = tt.reduce(%x) {axis = 0} : tensor<16xf32> {
  ^(%a2: f32, %b2: f32):
    %m = arith.max(%a2, %b2) : f32
    tt.reduce_return(%m)
  }
  %c8 = arith.constant() {value = 8} : i32
  %rbase = arith.mul(%pid, %c8) : i32
  %rbs = tt.splat(%rbase) : tensor<8xi32>
  %roffs = arith.add(%rbs, %r8) : tensor<8xi32>
  %rp = tt.splat(%rows_ptr) : tensor<8xptr<f32>>
  %ra = tt.addptr(%rp, %roffs) : tensor<8xptr<f32>>
  tt.store(%ra, %by_row)
  %c16s = arith.constant() {value = 16} : i32
  %cbase = arith.mul(%pid, %c16s) : i32
  %cbs = tt.splat(%cbase) : tensor<16xi32>
  %coffs = arith.add(%cbs, %r16) : tensor<16xi32>
  %cp = tt.splat(%cols_ptr) : tensor<16xptr<f32>>
  %ca = tt.addptr(%cp, %coffs) : tensor<16xptr<f32>>
  tt.store(%ca, %by_col)
  tt.return()
}
"""


def test_reductions_along_each_axis_of_a_batched_2d_block() -> None:
    x = np.random.default_rng(9).integers(-50, 50, (5, 8, 16)).astype(np.float32)
    rows, cols = np.zeros((5, 8), np.float32), np.zeros((5, 16), np.float32)
    run(REDUCE_2D, (5,), [x, rows, cols])
    np.testing.assert_array_equal(rows, x.sum(axis=2))
    np.testing.assert_array_equal(cols, x.max(axis=1))


SCALAR_MASKED = """tt.func @k(%x_ptr: ptr<f32>, %out_ptr: ptr<f32>, %n: i32) {
  %pid = tt.get_program_id() {axis = 0} : i32
  %inside = arith.cmp(%pid, %n) {pred = "lt"} : i1
  %p = tt.addptr(%x_ptr, %pid) : ptr<f32>
  %other = arith.constant() {value = -1.0} : f32
  %v = tt.load(%p, %inside, %other) : f32
  %q = tt.addptr(%out_ptr, %pid) : ptr<f32>
  tt.store(%q, %v)
  tt.return()
}
"""


@pytest.mark.parametrize("serial", [False, True])
def test_masked_scalar_load_with_other(serial: bool) -> None:
    x = np.array([5.0, 6.0, 7.0], np.float32)
    out = np.zeros(6, np.float32)
    run(SCALAR_MASKED, (6,), [x, out, 3], serial=serial)
    np.testing.assert_array_equal(out, [5, 6, 7, -1, -1, -1])


ATOMIC_IN_WHILE = """tt.func @k(%flag_ptr: ptr<i32>) {
  %c0 = arith.constant() {value = 0} : i32
  %r = scf.while(%c0) : i32 {
  ^(%t: i32):
    %v = tt.atomic_rmw(%flag_ptr, %c0) {kind = "add", sem = "acquire"} : i32
    %wait = arith.cmp(%v, %c0) {pred = "eq"} : i1
    scf.condition(%wait, %t)
  } {
  ^(%t2: i32):
    scf.yield(%t2)
  }
  tt.return()
}
"""


def test_serial_reasons() -> None:
    assert serial_reason(module(VECTOR_ADD)) is None
    assert serial_reason(module(TICKETS)) is None  # atomic_add alone batches fine
    assert "scf.while" in (serial_reason(module(ATOMIC_IN_WHILE)) or "")
    flag = np.ones(1, np.int32)
    run(ATOMIC_IN_WHILE, (3,), [flag])  # flag set: every program leaves at once
