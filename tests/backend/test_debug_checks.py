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
