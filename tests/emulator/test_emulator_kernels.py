"""Whole kernels, written as IR text, run by the emulator against NumPy references.

Sizes are deliberately not multiples of the block size, so masks matter.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from emulator_helpers import run, vector_add_ir

VECTOR_ADD = vector_add_ir(128)  # noqa: E501


@pytest.mark.parametrize("serial", [False, True])
def test_vector_add(serial: bool) -> None:
    rng = np.random.default_rng(0)
    n = 1000
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    out = np.full(n, -7.0, dtype=np.float32)
    run(VECTOR_ADD, (8,), [x, y, out, n], serial=serial)
    np.testing.assert_array_equal(out, x + y)


def test_vector_add_large_grid_is_fast() -> None:
    n = 100_000 * 128 - 77
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    t0 = time.perf_counter()
    run(VECTOR_ADD, (100_000,), [x, y, out, n])
    elapsed = time.perf_counter() - t0
    np.testing.assert_array_equal(out, x + y)
    assert elapsed < 10.0, f"10^5 programs took {elapsed:.1f} s"


SOFTMAX = """tt.func @softmax(%in_ptr: ptr<f32>, %out_ptr: ptr<f32>, %stride: i32, %n_cols: i32) {
  %row = tt.get_program_id() {axis = 0} : i32
  %row_start = arith.mul(%row, %stride) : i32
  %cols = tt.make_range() {end = 128, start = 0} : tensor<128xi32>
  %ncs = tt.splat(%n_cols) : tensor<128xi32>
  %mask = arith.cmp(%cols, %ncs) {pred = "lt"} : tensor<128xi1>
  %rs = tt.splat(%row_start) : tensor<128xi32>
  %offs = arith.add(%rs, %cols) : tensor<128xi32>
  %ip = tt.splat(%in_ptr) : tensor<128xptr<f32>>
  %ia = tt.addptr(%ip, %offs) : tensor<128xptr<f32>>
  %ninf = arith.constant() {value = -inf} : tensor<128xf32>
  %x = tt.load(%ia, %mask, %ninf) : tensor<128xf32>
  %m = tt.reduce(%x) {axis = 0} : f32 {
  ^(%a: f32, %b: f32):
    %mx = arith.max(%a, %b) : f32
    tt.reduce_return(%mx)
  }
  %ms = tt.splat(%m) : tensor<128xf32>
  %z = arith.sub(%x, %ms) : tensor<128xf32>
  %e = math.exp(%z) : tensor<128xf32>
  %d = tt.reduce(%e) {axis = 0} : f32 {
  ^(%a2: f32, %b2: f32):
    %s2 = arith.add(%a2, %b2) : f32
    tt.reduce_return(%s2)
  }
  %ds = tt.splat(%d) : tensor<128xf32>
  %y = arith.div(%e, %ds) : tensor<128xf32>
  %op = tt.splat(%out_ptr) : tensor<128xptr<f32>>
  %oa = tt.addptr(%op, %offs) : tensor<128xptr<f32>>
  tt.store(%oa, %y, %mask)
  tt.return()
}
"""


def test_row_softmax() -> None:
    rng = np.random.default_rng(1)
    rows, cols = 37, 100
    x = rng.standard_normal((rows, cols), dtype=np.float32) * 5
    out = np.zeros_like(x)
    run(SOFTMAX, (rows,), [x, out, cols, cols])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


ROW_SUM_LOOP = """tt.func @row_sum(%in_ptr: ptr<f32>, %out_ptr: ptr<f32>, %n_cols: i32) {
  %row = tt.get_program_id() {axis = 0} : i32
  %row_start = arith.mul(%row, %n_cols) : i32
  %c0 = arith.constant() {value = 0} : i32
  %cb = arith.constant() {value = 64} : i32
  %cols = tt.make_range() {end = 64, start = 0} : tensor<64xi32>
  %zero = arith.constant() {value = 0.0} : tensor<64xf32>
  %acc = scf.for(%c0, %n_cols, %cb, %zero) : tensor<64xf32> {
  ^(%k: i32, %acc_in: tensor<64xf32>):
    %ks = tt.splat(%k) : tensor<64xi32>
    %col = arith.add(%ks, %cols) : tensor<64xi32>
    %ncs = tt.splat(%n_cols) : tensor<64xi32>
    %mask = arith.cmp(%col, %ncs) {pred = "lt"} : tensor<64xi1>
    %rs = tt.splat(%row_start) : tensor<64xi32>
    %offs = arith.add(%rs, %col) : tensor<64xi32>
    %ip = tt.splat(%in_ptr) : tensor<64xptr<f32>>
    %ia = tt.addptr(%ip, %offs) : tensor<64xptr<f32>>
    %x = tt.load(%ia, %mask) : tensor<64xf32>
    %acc_out = arith.add(%acc_in, %x) : tensor<64xf32>
    scf.yield(%acc_out)
  }
  %total = tt.reduce(%acc) {axis = 0} : f32 {
  ^(%a: f32, %b: f32):
    %s = arith.add(%a, %b) : f32
    tt.reduce_return(%s)
  }
  %op = tt.addptr(%out_ptr, %row) : ptr<f32>
  tt.store(%op, %total)
  tt.return()
}
"""


def test_for_loop_accumulation() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((9, 300), dtype=np.float32)
    out = np.zeros(9, dtype=np.float32)
    run(ROW_SUM_LOOP, (9,), [x, out, 300])
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5, atol=1e-5)


TRIANGLE = """tt.func @triangle(%out_ptr: ptr<i32>) {
  %pid = tt.get_program_id() {axis = 0} : i32
  %c0 = arith.constant() {value = 0} : i32
  %c1 = arith.constant() {value = 1} : i32
  %c2 = arith.constant() {value = 2} : i32
  %hi = arith.mul(%pid, %c2) : i32
  %acc = scf.for(%c1, %hi, %c2, %c0) : i32 {
  ^(%i: i32, %acc_in: i32):
    %acc_out = arith.add(%acc_in, %i) : i32
    scf.yield(%acc_out)
  }
  %op = tt.addptr(%out_ptr, %pid) : ptr<i32>
  tt.store(%op, %acc)
  tt.return()
}
"""


def test_for_loop_with_per_program_trip_counts() -> None:
    out = np.full(50, -1, dtype=np.int32)
    run(TRIANGLE, (50,), [out])
    expected = [sum(range(1, 2 * p, 2)) for p in range(50)]  # = p^2
    np.testing.assert_array_equal(out, expected)


IF_KERNEL = """tt.func @if_kernel(%x_ptr: ptr<f32>, %out_ptr: ptr<f32>) {
  %pid = tt.get_program_id() {axis = 0} : i32
  %c2 = arith.constant() {value = 2} : i32
  %c0 = arith.constant() {value = 0} : i32
  %c16 = arith.constant() {value = 16} : i32
  %rem = arith.rem(%pid, %c2) : i32
  %even = arith.cmp(%rem, %c0) {pred = "eq"} : i1
  %start = arith.mul(%pid, %c16) : i32
  %r = tt.make_range() {end = 16, start = 0} : tensor<16xi32>
  %s = tt.splat(%start) : tensor<16xi32>
  %offs = arith.add(%s, %r) : tensor<16xi32>
  %xp = tt.splat(%x_ptr) : tensor<16xptr<f32>>
  %xa = tt.addptr(%xp, %offs) : tensor<16xptr<f32>>
  %x = tt.load(%xa) : tensor<16xf32>
  %y = scf.if(%even) : tensor<16xf32> {
  ^():
    %two = arith.constant() {value = 2.0} : tensor<16xf32>
    %d = arith.mul(%x, %two) : tensor<16xf32>
    scf.yield(%d)
  } {
  ^():
    %one = arith.constant() {value = 1.0} : tensor<16xf32>
    %p = arith.add(%x, %one) : tensor<16xf32>
    scf.yield(%p)
  }
  %op = tt.splat(%out_ptr) : tensor<16xptr<f32>>
  %oa = tt.addptr(%op, %offs) : tensor<16xptr<f32>>
  tt.store(%oa, %y)
  tt.return()
}
"""


def test_divergent_if() -> None:
    x = np.arange(7 * 16, dtype=np.float32)
    out = np.zeros_like(x)
    run(IF_KERNEL, (7,), [x, out])
    even = (np.arange(7 * 16) // 16) % 2 == 0
    np.testing.assert_array_equal(out, np.where(even, x * 2, x + 1))


COLLATZ = """tt.func @collatz(%out_ptr: ptr<i32>) {
  %pid = tt.get_program_id() {axis = 0} : i32
  %c0 = arith.constant() {value = 0} : i32
  %c1 = arith.constant() {value = 1} : i32
  %c2 = arith.constant() {value = 2} : i32
  %c3 = arith.constant() {value = 3} : i32
  %n0 = arith.add(%pid, %c1) : i32
  %n, %steps = scf.while(%n0, %c0) : i32, i32 {
  ^(%nb: i32, %sb: i32):
    %go = arith.cmp(%nb, %c1) {pred = "ne"} : i1
    scf.condition(%go, %nb, %sb)
  } {
  ^(%na: i32, %sa: i32):
    %r = arith.rem(%na, %c2) : i32
    %is_even = arith.cmp(%r, %c0) {pred = "eq"} : i1
    %half = arith.div(%na, %c2) : i32
    %t = arith.mul(%na, %c3) : i32
    %t1 = arith.add(%t, %c1) : i32
    %next = arith.select(%is_even, %half, %t1) : i32
    %s1 = arith.add(%sa, %c1) : i32
    scf.yield(%next, %s1)
  }
  %op = tt.addptr(%out_ptr, %pid) : ptr<i32>
  tt.store(%op, %steps)
  tt.return()
}
"""


def _collatz_steps(n: int) -> int:
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@pytest.mark.parametrize("serial", [False, True])
def test_while_with_divergent_trip_counts(serial: bool) -> None:
    out = np.zeros(40, dtype=np.int32)
    run(COLLATZ, (40,), [out], serial=serial)
    np.testing.assert_array_equal(out, [_collatz_steps(p + 1) for p in range(40)])


HISTOGRAM = """tt.func @histogram(%x_ptr: ptr<i32>, %hist_ptr: ptr<i32>, %n: i32) {
  %pid = tt.get_program_id() {axis = 0} : i32
  %c = arith.constant() {value = 64} : i32
  %start = arith.mul(%pid, %c) : i32
  %r = tt.make_range() {end = 64, start = 0} : tensor<64xi32>
  %s = tt.splat(%start) : tensor<64xi32>
  %offs = arith.add(%s, %r) : tensor<64xi32>
  %ns = tt.splat(%n) : tensor<64xi32>
  %mask = arith.cmp(%offs, %ns) {pred = "lt"} : tensor<64xi1>
  %xp = tt.splat(%x_ptr) : tensor<64xptr<i32>>
  %xa = tt.addptr(%xp, %offs) : tensor<64xptr<i32>>
  %bins = tt.load(%xa, %mask) : tensor<64xi32>
  %hp = tt.splat(%hist_ptr) : tensor<64xptr<i32>>
  %ha = tt.addptr(%hp, %bins) : tensor<64xptr<i32>>
  %one = arith.constant() {value = 1} : tensor<64xi32>
  %old = tt.atomic_rmw(%ha, %one, %mask) {kind = "add", sem = "acq_rel"} : tensor<64xi32>
  tt.return()
}
"""


@pytest.mark.parametrize("n_bins", [3, 16])
def test_histogram_with_duplicate_addresses(n_bins: int) -> None:
    rng = np.random.default_rng(3)
    n = 5000
    x = rng.integers(0, n_bins, n, dtype=np.int32)
    hist = np.zeros(n_bins, dtype=np.int32)
    run(HISTOGRAM, (-(-n // 64),), [x, hist, n])
    np.testing.assert_array_equal(hist, np.bincount(x, minlength=n_bins))


TICKETS = """tt.func @tickets(%counter_ptr: ptr<i32>, %out_ptr: ptr<i32>) {
  %pid = tt.get_program_id() {axis = 0} : i32
  %one = arith.constant() {value = 1} : i32
  %old = tt.atomic_rmw(%counter_ptr, %one) {kind = "add", sem = "acq_rel"} : i32
  %op = tt.addptr(%out_ptr, %pid) : ptr<i32>
  tt.store(%op, %old)
  tt.return()
}
"""


def test_atomic_add_returns_old_values_in_grid_order() -> None:
    counter = np.array([10], dtype=np.int32)
    out = np.zeros(300, dtype=np.int32)
    run(TICKETS, (300,), [counter, out])
    np.testing.assert_array_equal(out, 10 + np.arange(300))
    assert counter[0] == 310


LANE_ATOMICS = """tt.func @lanes(%buf_ptr: ptr<f32>, %old_ptr: ptr<f32>) {
  %pid = tt.get_program_id() {axis = 0} : i32
  %r = tt.make_range() {end = 8, start = 0} : tensor<8xi32>
  %c3 = arith.constant() {value = 3} : tensor<8xi32>
  %slot = arith.rem(%r, %c3) : tensor<8xi32>
  %bp = tt.splat(%buf_ptr) : tensor<8xptr<f32>>
  %ba = tt.addptr(%bp, %slot) : tensor<8xptr<f32>>
  %rf = arith.cast(%r) : tensor<8xf32>
  %pf = arith.cast(%pid) : f32
  %pfs = tt.splat(%pf) : tensor<8xf32>
  %k = arith.constant() {value = 0.1} : tensor<8xf32>
  %t = arith.mul(%pfs, %k) : tensor<8xf32>
  %v = arith.add(%rf, %t) : tensor<8xf32>
  %old = tt.atomic_rmw(%ba, %v) {kind = "KIND", sem = "acq_rel"} : tensor<8xf32>
  %c8 = arith.constant() {value = 8} : i32
  %start = arith.mul(%pid, %c8) : i32
  %s = tt.splat(%start) : tensor<8xi32>
  %offs = arith.add(%s, %r) : tensor<8xi32>
  %op = tt.splat(%old_ptr) : tensor<8xptr<f32>>
  %oa = tt.addptr(%op, %offs) : tensor<8xptr<f32>>
  tt.store(%oa, %old)
  tt.return()
}
"""


@pytest.mark.parametrize("kind", ["add", "max", "min", "xchg"])
def test_atomic_old_values_follow_sequential_order(kind: str) -> None:
    programs = 70  # 70 * 8 / 3 > 32 lanes per address: exercises the long-run path too
    buf = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    old = np.zeros(programs * 8, dtype=np.float32)
    run(LANE_ATOMICS.replace("KIND", kind), (programs,), [buf, old], serial=False)
    mem = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    expected = np.zeros_like(old)
    fn = {"add": np.add, "max": np.fmax, "min": np.fmin, "xchg": lambda a, b: b}[kind]
    for p in range(programs):
        for lane in range(8):
            v = np.float32(lane) + np.float32(p) * np.float32(0.1)
            expected[p * 8 + lane] = mem[lane % 3]
            mem[lane % 3] = fn(mem[lane % 3], v)
    np.testing.assert_array_equal(old, expected)
    np.testing.assert_array_equal(buf, mem)


SPIN_LOCK = """tt.func @locked_increment(%lock_ptr: ptr<i32>, %counter_ptr: ptr<i32>, %seen_ptr: ptr<i32>) {
  %pid = tt.get_program_id() {axis = 0} : i32
  %c0 = arith.constant() {value = 0} : i32
  %c1 = arith.constant() {value = 1} : i32
  %tries = scf.while(%c0) : i32 {
  ^(%t: i32):
    %old = tt.atomic_cas(%lock_ptr, %c0, %c1) {sem = "acquire"} : i32
    %busy = arith.cmp(%old, %c0) {pred = "ne"} : i1
    scf.condition(%busy, %t)
  } {
  ^(%t2: i32):
    %t3 = arith.add(%t2, %c1) : i32
    scf.yield(%t3)
  }
  %count = tt.load(%counter_ptr) : i32
  %sp = tt.addptr(%seen_ptr, %pid) : ptr<i32>
  tt.store(%sp, %count)
  %next = arith.add(%count, %c1) : i32
  tt.store(%counter_ptr, %next)
  %released = tt.atomic_rmw(%lock_ptr, %c0) {kind = "xchg", sem = "release"} : i32
  tt.return()
}
"""  # noqa: E501


def test_spin_lock_with_atomic_cas_runs_serially() -> None:
    from emulator_helpers import module

    from minitriton.emulator import serial_reason

    assert serial_reason(module(SPIN_LOCK)) is not None
    lock = np.zeros(1, dtype=np.int32)
    counter = np.zeros(1, dtype=np.int32)
    seen = np.full(200, -1, dtype=np.int32)
    run(SPIN_LOCK, (200,), [lock, counter, seen])
    assert counter[0] == 200 and lock[0] == 0
    np.testing.assert_array_equal(seen, np.arange(200))


CAS = """tt.func @cas(%ptr: ptr<i32>, %out_ptr: ptr<i32>) {
  %pid = tt.get_program_id() {axis = 0} : i32
  %c2 = arith.constant() {value = 2} : i32
  %cmp = arith.rem(%pid, %c2) : i32
  %c100 = arith.constant() {value = 100} : i32
  %val = arith.add(%pid, %c100) : i32
  %old = tt.atomic_cas(%ptr, %cmp, %val) {sem = "acq_rel"} : i32
  %op = tt.addptr(%out_ptr, %pid) : ptr<i32>
  tt.store(%op, %old)
  tt.return()
}
"""


def test_atomic_cas_returns_old_values() -> None:
    mem = np.array([1], dtype=np.int32)
    out = np.zeros(6, dtype=np.int32)
    run(CAS, (6,), [mem, out])
    # p0 expects 0, sees 1: no swap; p1 expects 1: swaps in 101; later ones never match.
    np.testing.assert_array_equal(out, [1, 1, 101, 101, 101, 101])
    assert mem[0] == 101


ARGMAX = """tt.func @argmax(%x_ptr: ptr<f32>, %out_ptr: ptr<i32>) {
  %row = tt.get_program_id() {axis = 0} : i32
  %c32 = arith.constant() {value = 32} : i32
  %start = arith.mul(%row, %c32) : i32
  %r = tt.make_range() {end = 32, start = 0} : tensor<32xi32>
  %s = tt.splat(%start) : tensor<32xi32>
  %offs = arith.add(%s, %r) : tensor<32xi32>
  %xp = tt.splat(%x_ptr) : tensor<32xptr<f32>>
  %xa = tt.addptr(%xp, %offs) : tensor<32xptr<f32>>
  %x = tt.load(%xa) : tensor<32xf32>
  %best, %idx = tt.reduce(%x, %r) {axis = 0} : f32, i32 {
  ^(%va: f32, %ia: i32, %vb: f32, %ib: i32):
    %gt = arith.cmp(%va, %vb) {pred = "gt"} : i1
    %eq = arith.cmp(%va, %vb) {pred = "eq"} : i1
    %lt = arith.cmp(%ia, %ib) {pred = "lt"} : i1
    %tie = arith.and(%eq, %lt) : i1
    %take_a = arith.or(%gt, %tie) : i1
    %v = arith.select(%take_a, %va, %vb) : f32
    %i = arith.select(%take_a, %ia, %ib) : i32
    tt.reduce_return(%v, %i)
  }
  %op = tt.addptr(%out_ptr, %row) : ptr<i32>
  tt.store(%op, %idx)
  tt.return()
}
"""


def test_argmax_returns_first_index_on_ties() -> None:
    rng = np.random.default_rng(4)
    x = rng.integers(0, 4, (25, 32)).astype(np.float32)  # many ties
    out = np.zeros(25, dtype=np.int32)
    run(ARGMAX, (25,), [x, out])
    np.testing.assert_array_equal(out, np.argmax(x, axis=1))


SCAN = """tt.func @scan(%x_ptr: ptr<i32>, %out_ptr: ptr<i32>) {
  %row = tt.get_program_id() {axis = 0} : i32
  %c64 = arith.constant() {value = 64} : i32
  %start = arith.mul(%row, %c64) : i32
  %r = tt.make_range() {end = 64, start = 0} : tensor<64xi32>
  %s = tt.splat(%start) : tensor<64xi32>
  %offs = arith.add(%s, %r) : tensor<64xi32>
  %xp = tt.splat(%x_ptr) : tensor<64xptr<i32>>
  %xa = tt.addptr(%xp, %offs) : tensor<64xptr<i32>>
  %x = tt.load(%xa) : tensor<64xi32>
  %y = tt.scan(%x) {axis = 0, reverse = REVERSE} : tensor<64xi32> {
  ^(%a: i32, %b: i32):
    %t = arith.OP(%a, %b) : i32
    tt.scan_return(%t)
  }
  %op = tt.splat(%out_ptr) : tensor<64xptr<i32>>
  %oa = tt.addptr(%op, %offs) : tensor<64xptr<i32>>
  tt.store(%oa, %y)
  tt.return()
}
"""


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("op", ["add", "sub"])
def test_scan(op: str, reverse: bool) -> None:
    rng = np.random.default_rng(5)
    x = rng.integers(-1000, 1000, (5, 64), dtype=np.int32)
    out = np.zeros_like(x)
    text = SCAN.replace("OP", op).replace("REVERSE", "true" if reverse else "false")
    run(text, (5,), [x, out])
    # sub is not associative, so Hillis-Steele differs from a left fold; a - b - c ...
    # in tree order still has a closed form only for add: check add exactly, sub by hand.
    # A reverse scan is Triton's flip, scan, flip: the running value stays on the left.
    src = x[:, ::-1] if reverse else x
    if op == "add":
        expected = np.cumsum(src, axis=1, dtype=np.int32)
    else:
        expected = _hillis_steele(src, lambda a, b: a - b)
    if reverse:
        expected = expected[:, ::-1]
    np.testing.assert_array_equal(out, expected)


def _hillis_steele(x: np.ndarray, fn) -> np.ndarray:  # noqa: ANN001
    acc = x.copy()
    d = 1
    while d < x.shape[1]:
        acc = np.concatenate([acc[:, :d], fn(acc[:, :-d], acc[:, d:])], axis=1)
        d *= 2
    return acc


SORT = """tt.func @sort(%x_ptr: ptr<f32>, %out_ptr: ptr<f32>) {
  %r = tt.make_range() {end = 32, start = 0} : tensor<32xi32>
  %r8 = tt.make_range() {end = 8, start = 0} : tensor<8xi32>
  %c32 = arith.constant() {value = 32} : tensor<8xi32>
  %rows = arith.mul(%r8, %c32) : tensor<8xi32>
  %rows2 = tt.expand_dims(%rows) {axis = 1} : tensor<8x1xi32>
  %cols2 = tt.expand_dims(%r) {axis = 0} : tensor<1x32xi32>
  %rb = tt.broadcast(%rows2) : tensor<8x32xi32>
  %cb = tt.broadcast(%cols2) : tensor<8x32xi32>
  %offs = arith.add(%rb, %cb) : tensor<8x32xi32>
  %xp = tt.splat(%x_ptr) : tensor<8x32xptr<f32>>
  %xa = tt.addptr(%xp, %offs) : tensor<8x32xptr<f32>>
  %x = tt.load(%xa) : tensor<8x32xf32>
  %y = tt.sort(%x) {descending = DESC, dim = 1} : tensor<8x32xf32>
  %op = tt.splat(%out_ptr) : tensor<8x32xptr<f32>>
  %oa = tt.addptr(%op, %offs) : tensor<8x32xptr<f32>>
  tt.store(%oa, %y)
  tt.return()
}
"""


@pytest.mark.parametrize("descending", [False, True])
def test_sort(descending: bool) -> None:
    rng = np.random.default_rng(6)
    x = rng.standard_normal((8, 32)).astype(np.float32)
    out = np.zeros_like(x)
    run(SORT.replace("DESC", "true" if descending else "false"), (1,), [x, out])
    expected = np.sort(x, axis=1)
    np.testing.assert_array_equal(out, expected[:, ::-1] if descending else expected)


DOT = """tt.func @dot(%a_ptr: ptr<T>, %b_ptr: ptr<T>, %c_ptr: ptr<f32>) {
  %r = tt.make_range() {end = 16, start = 0} : tensor<16xi32>
  %c16 = arith.constant() {value = 16} : tensor<16xi32>
  %rows = arith.mul(%r, %c16) : tensor<16xi32>
  %rows2 = tt.expand_dims(%rows) {axis = 1} : tensor<16x1xi32>
  %cols2 = tt.expand_dims(%r) {axis = 0} : tensor<1x16xi32>
  %rb = tt.broadcast(%rows2) : tensor<16x16xi32>
  %cb = tt.broadcast(%cols2) : tensor<16x16xi32>
  %offs = arith.add(%rb, %cb) : tensor<16x16xi32>
  %ap = tt.splat(%a_ptr) : tensor<16x16xptr<T>>
  %aa = tt.addptr(%ap, %offs) : tensor<16x16xptr<T>>
  %a = tt.load(%aa) : tensor<16x16xT>
  %bp = tt.splat(%b_ptr) : tensor<16x16xptr<T>>
  %ba = tt.addptr(%bp, %offs) : tensor<16x16xptr<T>>
  %b = tt.load(%ba) : tensor<16x16xT>
  %acc = arith.constant() {value = 1.0} : tensor<16x16xf32>
  %c = tt.dot(%a, %b, %acc) {input_precision = "ieee"} : tensor<16x16xf32>
  %cp = tt.splat(%c_ptr) : tensor<16x16xptr<f32>>
  %ca = tt.addptr(%cp, %offs) : tensor<16x16xptr<f32>>
  tt.store(%ca, %c)
  tt.return()
}
"""


@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_dot(dtype: str) -> None:
    rng = np.random.default_rng(7)
    np_dtype = np.float32 if dtype == "f32" else np.float16
    a = rng.standard_normal((16, 16)).astype(np_dtype)
    b = rng.standard_normal((16, 16)).astype(np_dtype)
    c = np.zeros((16, 16), dtype=np.float32)
    run(DOT.replace("T", dtype), (1,), [a, b, c])
    expected = a.astype(np.float64) @ b.astype(np.float64) + 1.0
    np.testing.assert_allclose(c, expected.astype(np.float32), rtol=1e-6)
