"""Debug mode without a GPU: provenance, the checked PTX, extents and the record's lanes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minitriton.backend.debug_mode import extent
from minitriton.backend.layouts import blocked, default_params
from minitriton.backend.lower.debug import Site
from minitriton.backend.provenance import UNKNOWN, Provenance
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.signature import spec_for_value

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.kernels import debug_mode as K  # noqa: E402

F32 = np.zeros(64, np.float32)


def build(kernel, args, debug: bool, stop_after: str = "ptx"):
    specs = [spec_for_value(p.name, v, p.is_constexpr) for p, v in zip(kernel.params, args)]
    options = CompileOptions(debug=debug, arch="sm_90a")
    return compile_kernel(kernel.source, specs, options, stop_after=stop_after)


def test_provenance_follows_arguments_and_gives_up_at_mixed_merges():
    compiled = build(K.pick_pointer, [F32, F32, F32, 2, 3, 16], False, "ir-opt")
    func = compiled.module.kernel
    prov = Provenance(func)
    x_ptr, y_ptr, out_ptr = func.body.args[:3]
    assert [prov.of(a) for a in (x_ptr, y_ptr, out_ptr)] == [0, 1, 2]
    loads = [op for op in func.walk() if op.name == "tt.load"]
    stores = [op for op in func.walk() if op.name == "tt.store"]
    # p is x_ptr or y_ptr (an scf.if merge): unknown; q moves through a loop: still x_ptr.
    assert sorted(prov.of(op.operands[0]) for op in loads) == [UNKNOWN, 0]
    assert prov.of(stores[0].operands[0]) == 2


def test_debug_adds_hidden_parameters_and_plain_ptx_has_no_checks():
    args = [F32, 8, 16, False]
    plain = build(K.store_past_end, args, False).asm["ptx"]
    checked = build(K.store_past_end, args, True).asm["ptx"]
    assert "record" not in plain and "atom" not in plain
    assert "store_past_end_param_2" not in plain  # out_ptr and n only
    # Then out_ptr's (lo, size) and the record: five parameters in all.
    assert "store_past_end_param_4" in checked and "store_past_end_param_5" not in checked
    assert re.search(r"atom\.[a-z.]*cas\.b64", checked)  # the record's claim
    # The same kernel without debug compiles to the same text as before any debug build.
    assert build(K.store_past_end, args, False).asm["ptx"] == plain


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize("name", ["store_past_end", "tile_copy", "check_positive"])
def test_checked_ptx_assembles(tmp_path: Path, name: str):
    args = {
        "store_past_end": [F32, 8, 16, False],
        "tile_copy": [F32, F32, 4, 6, 4, 8, False],
        "check_positive": [F32, 10, 16],
    }[name]
    ptx = tmp_path / "k.ptx"
    ptx.write_text(build(getattr(K, name), args, True).asm["ptx"])
    done = subprocess.run(["ptxas", "-arch=sm_90a", str(ptx), "-o", str(tmp_path / "k.o")])
    assert done.returncode == 0


class _Cai:
    def __init__(self, ptr: int, shape, strides, typestr: str = "<f4") -> None:
        self.__cuda_array_interface__ = {
            "shape": shape, "strides": strides, "typestr": typestr, "data": (ptr, False),
            "version": 3,
        }  # fmt: skip


def test_extents_of_device_arrays():
    assert extent(_Cai(4096, (8,), None), 4096) == (4096, 32)
    assert extent(_Cai(4096, (4, 3), (48, 4)), 4096) == (4096, 3 * 48 + 12)
    # A negative stride reaches below the data pointer.
    assert extent(_Cai(4096, (4,), (-4,)), 4096) == (4096 - 12, 16)
    assert extent(_Cai(4096, (0, 5), None), 4096) == (4096, 0)
    assert extent(12345, 12345) == (0, (1 << 64) - 1)  # a raw address: unknown extent
    assert extent(_Cai(4096, (8,), None), 4096) != (4096, 36)


@pytest.mark.parametrize("shape", [(16,), (4, 8), (64, 64)])
def test_record_slots_map_back_to_every_lane_once(shape):
    layout = blocked(default_params(shape, 4, 4), shape)
    site = Site("access", "tt.load", None, shape, 0, 4, 1, layout, 128)  # type: ignore[arg-type]
    lanes = [site.lane(slot) for slot in range(site.slots)]
    # Each element once per thread that holds it (replicas hold copies).
    assert set(lanes) == set(range(int(np.prod(shape))))
    if int(np.prod(shape)) >= 128 * layout.num_regs:
        assert sorted(lanes) == list(range(int(np.prod(shape))))


def _record_for(site_index: int, site: Site, lane: int, addr: int, table) -> np.ndarray:
    """A record as the device leaves it after one failing group (the one holding ``lane``)."""
    from minitriton.backend.lower.debug import HEADER_WORDS, SLOT_WORDS

    words = np.zeros(table.record_words, np.uint64)
    words[0] = site_index + 1  # program 0
    slot = next(s for s in range(site.slots) if s % site.vec == 0 and site.lane(s) == lane)
    words[HEADER_WORDS + SLOT_WORDS * slot : HEADER_WORDS + SLOT_WORDS * (slot + 1)] = [
        1, slot, addr, 0,
    ]  # fmt: skip
    return words


@pytest.mark.parametrize(
    ("size", "detail"),
    [
        (32, "offsets 8, 9, ... at lanes 8, 9, ... (4 lanes out of bounds)"),
        (40, "offsets 10, 11 at lanes 10, 11 (2 lanes out of bounds)"),  # the group straddles
    ],
)
def test_a_recorded_group_reports_only_its_elements_outside(size, detail):
    from minitriton.backend.debug_mode import decode

    table = build(K.store_past_end, [F32, 8, 16, False], True).binary.checks
    site = table.sites[0]
    assert site.vec == 4 and site.op == "tt.store"
    base = 1 << 20
    words = _record_for(0, site, 8, base + 32, table)
    err = decode(table, words, (1, 1, 1), {0: (base, base, size)})
    text = str(err)
    assert f"out-of-bounds tt.store to 'out_ptr' ({size // 4} elements of fp32)" in text
    assert "in program (0, 0, 0)" in text and detail in text
    assert "tl.store(out_ptr + offs, offs.to(tl.float32))" in text


class _FakeKeys:
    """Page-locked key words, as a deferred launch sees them: None until the copy lands."""

    def __init__(self, words: dict[int, int | None], broken: bool = False) -> None:
        self.words = words
        self.broken = broken
        self.waited: list[int] = []

    def peek(self, i: int) -> int | None:
        return self.words[i]

    def wait(self, i: int, stream, kernel: str) -> int:
        if self.broken:
            raise RuntimeError("the driver is gone")
        self.waited.append(i)
        self.words[i] = self.words[i] or 0
        return self.words[i]


class _FakeLauncher:
    name = "k"

    def __init__(self, keys: _FakeKeys) -> None:
        self.keys = keys
        self.settled: list[tuple[int, int]] = []

    def settle(self, launch, key: int) -> None:
        self.settled.append((launch.number, key))
        if key:
            raise ValueError(f"launch {launch.number} failed")


def _queue(monkeypatch, launcher, indices):
    from minitriton.backend import debug_mode

    queue = debug_mode.deque(
        debug_mode._InFlight(launcher, i, (1, 1, 1), {}, None) for i in indices
    )
    monkeypatch.setattr(debug_mode, "_in_flight", queue)
    return debug_mode, queue


def test_deferred_reports_stop_at_the_first_launch_still_running(monkeypatch):
    launcher = _FakeLauncher(_FakeKeys({1: 0, 2: 0, 3: None, 4: 0}))
    debug_mode, queue = _queue(monkeypatch, launcher, [1, 2, 3, 4])
    debug_mode.report_deferred()
    assert launcher.settled == [(1, 0), (2, 0)]
    assert [q.number for q in queue] == [3, 4]  # 4 waits behind 3: the stream runs them in order
    debug_mode.report_deferred(wait=True)
    assert launcher.settled[2:] == [(3, 0), (4, 0)] and not queue
    assert launcher.keys.waited == [3]


def test_deferred_reports_raise_the_first_error_once_and_keep_the_rest(monkeypatch):
    launcher = _FakeLauncher(_FakeKeys({1: 0, 2: 7, 3: 9, 4: 0}))
    debug_mode, queue = _queue(monkeypatch, launcher, [1, 2, 3, 4])
    with pytest.raises(ValueError, match="launch 2 failed"):
        debug_mode.report_deferred()
    assert [q.number for q in queue] == [3, 4]
    with pytest.raises(ValueError, match="launch 3 failed"):
        debug_mode.report_deferred()
    debug_mode.report_deferred()
    assert not queue


def test_deferred_reports_wait_for_one_only_when_asked(monkeypatch):
    launcher = _FakeLauncher(_FakeKeys({1: None, 2: None}))
    debug_mode, queue = _queue(monkeypatch, launcher, [1, 2])
    debug_mode.report_deferred(wait=True, one=True)
    assert launcher.settled == [(1, 0)] and [q.number for q in queue] == [2]


def test_a_driver_error_while_waiting_leaves_nothing_queued(monkeypatch):
    """Else the report at exit would wait for the same launch for ever."""
    launcher = _FakeLauncher(_FakeKeys({1: None}, broken=True))
    debug_mode, queue = _queue(monkeypatch, launcher, [1])
    with pytest.raises(RuntimeError):
        debug_mode.report_deferred(wait=True)
    assert not queue
    debug_mode._report_at_exit()  # nothing left: returns at once


def test_the_report_at_exit_prints_every_error(monkeypatch, capsys):
    launcher = _FakeLauncher(_FakeKeys({1: 5, 2: 0, 3: 6}))
    debug_mode, queue = _queue(monkeypatch, launcher, [1, 2, 3])
    debug_mode._report_at_exit()
    err = capsys.readouterr().err
    assert err.count("minitriton: a deferred debug-mode launch failed:") == 2
    assert "launch 1 failed" in err and "launch 3 failed" in err and not queue


def _record_lanes(
    table, site_index: int, lanes: list[int], base: int, offset_of, program: int = 0
) -> np.ndarray:
    """A record of a failing ``program`` at ``site_index``: the groups holding ``lanes``.

    ``offset_of(lane)`` is the lane's element offset into the array, as the kernel computes it.
    """
    from minitriton.backend.lower.debug import HEADER_WORDS, SITE_BITS, SLOT_WORDS

    site = table.sites[site_index]
    words = np.zeros(table.record_words, np.uint64)
    words[0] = (program << SITE_BITS) | (site_index + 1)
    for lane in lanes:
        slot = next(
            s for s in range(0, site.slots, site.vec)
            if lane in [site.lane(s, k) for k in range(site.vec)]
        )  # fmt: skip
        addr = base + offset_of(site.lane(slot, 0)) * site.elem_bytes
        words[HEADER_WORDS + SLOT_WORDS * slot : HEADER_WORDS + SLOT_WORDS * (slot + 1)] = [
            1, slot, addr, 0,
        ]  # fmt: skip
    return words


def _emulator_text(kernel, *args, grid=(1,), **meta) -> str:
    with pytest.raises(Exception) as info:
        kernel[grid](*args, backend="emulator", debug=True, **meta)
    assert type(info.value).__name__ == "EmulatorError"
    return str(info.value)


def _decoded(
    kernel, args, meta, op: str, lanes: list[int], elements: int, ints, offset_of=None, arg=None,
    grid=(1, 1, 1), program=0,
):  # fmt: skip
    """The GPU's report of a record in which ``lanes`` of ``op`` fell outside their array."""
    from minitriton.backend.debug_mode import decode, int_values

    table = build(kernel, [*args, *meta.values()], True).binary.checks
    index = next(
        i for i, s in enumerate(table.sites) if s.op == op and arg in (None, s.arg)
    )  # fmt: skip
    base = 1 << 20
    words = _record_lanes(table, index, lanes, base, offset_of or (lambda lane: lane), program)
    bases = {table.sites[index].arg: (base, base, 4 * elements)}
    assert int_values(table, list(args)) == ints
    return str(decode(table, words, grid, bases, None, ints))


def test_a_gpu_report_suggests_the_emulators_mask_for_a_whole_named_offset():
    # x_ptr + offs, unmasked: the record's offsets are offs itself, and n reads as its bound.
    out = np.zeros(8, np.float32)
    meta = {"BLOCK": 16, "MASKED": False}
    lanes = list(range(8, 16))
    got = _decoded(K.store_past_end, (out, 8), meta, "tt.store", lanes, 8, [("n", 8)])
    assert got == _emulator_text(K.store_past_end, out, 8, **meta)
    assert got.endswith("help: mask=offs < n")


def test_a_gpu_report_says_which_lane_the_mask_left_out():
    out = np.zeros(8, np.float32)
    meta = {"BLOCK": 16, "SHIFT": 3}
    got = _decoded(K.store_before_start, (out, 8), meta, "tt.store", [0, 1, 2], 8, [("n", 8)],
                   lambda lane: lane - 3)  # fmt: skip
    assert got == _emulator_text(K.store_before_start, out, 8, **meta)
    assert got.endswith("help: the mask did not cover lane 0 (offset -3); use mask=offs >= 0")


def test_a_load_report_names_the_bound_parameter_of_the_launch():
    x, out = np.arange(10, dtype=np.float32), np.zeros(16, np.float32)
    meta = {"BLOCK": 16, "MASKED": False}
    lanes = list(range(10, 16))
    got = _decoded(K.load_past_end, (x, out, 10), meta, "tt.load", lanes, 10, [("n", 10)])
    want = _emulator_text(K.load_past_end, x, out, 10, **meta)
    assert got == want and got.endswith("help: mask=offs < n")


def test_a_named_part_of_an_offset_gets_no_help_on_the_gpu():
    # x_ptr + rows * N + cols: the record holds offsets into x, not the values of cols,
    # so the GPU says no more than it knows; the emulator suggests the mask.
    x, out = np.arange(24, dtype=np.float32).reshape(4, 6), np.zeros((4, 8), np.float32)
    meta = {"BM": 4, "BN": 8, "COLS": False}
    got = _decoded(K.tile_copy, (x, out, 4, 6), meta, "tt.load", [30, 31], 24,
                   [("M", 4), ("N", 6)], lambda lane: lane // 8 * 6 + lane % 8)  # fmt: skip
    want = _emulator_text(K.tile_copy, x, out, 4, 6, **meta).splitlines()
    assert want[-1].startswith("help: ") and "cols" in want[-1]
    assert got.splitlines() == want[:-1]


def test_a_masked_access_past_a_short_array_bounds_the_mask_by_its_length():
    # K.add's x is 100 elements short of n: the mask offs < n let lanes 132.. of program 3
    # through; n does not bound them, the array's length does.
    x, y, out = np.ones(900, np.float32), np.ones(1000, np.float32), np.zeros(1000, np.float32)
    got = _decoded(K.add, (x, y, out, 1000), {"BLOCK": 256}, "tt.load", list(range(132, 232)),
                   900, [("n", 1000)], lambda lane: 768 + lane, 0, (4, 1, 1), 3)  # fmt: skip
    assert got == _emulator_text(K.add, x, y, out, 1000, grid=(4,), BLOCK=256)
    assert got.endswith(
        "help: the mask did not cover lane 132 (offset 900); "
        "use mask=offs < N, N at most 900 (the length of 'x_ptr')"
    )
