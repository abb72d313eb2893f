"""Tutorial 06's attention forward on ``wgmma`` (sm_90a): what its inner loop costs, without a GPU.

Two things made the loop a third longer than Triton's on an H200, and each
has a check here:

* ``exp2`` on fp32 is ``ex2.approx.ftz.f32``, as in Triton: without ``.ftz``
  ptxas wraps each ``ex2`` in a compare and two multiplies for subnormals;
* every operand of a ``wgmma`` group (``P``'s registers, the descriptors) is
  computed before the group's ``wgmma.fence``: otherwise ptxas injects a
  ``warpgroup.arrive`` before each instruction whose registers were written
  after it (its note C7519), serializing the group.
"""

from __future__ import annotations

import functools
import re
from types import SimpleNamespace

import pytest

from minitriton.backend.layouts import BlockedParams, blocked
from minitriton.backend.lower.wgmma import register_steps
from minitriton.backend.shared_layout import SharedTile
from minitriton.backend.tma import UNBOUNDED
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.jit import base_jit_function
from minitriton.signature import kernel_params, parse_signature
from tests.backend.test_mma_lowering import assemble, build
from tests.kernels import tc_kernels

STRIDES = ", ".join(["i32:16, i32:16, i32:16, i32:1"] * 4)


@functools.cache
def attention(head_dim: int, stage: int, tma: bool = False):
    """The kernel for sm_90a: K and V by ``cp.async`` (``MINITRITON_TMA=0``) or by TMA."""
    warps, block_n = (4, 64) if head_dim == 64 else (8, 128)
    sig = (f"*fp16:16, *fp16:16, *fp16:16, fp32, *fp32:16, *fp16:16, {STRIDES}, i32, i32, "
           f"4096, {head_dim}, 128, {block_n}, {stage}")  # fmt: skip
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MINITRITON_TMA", "1" if tma else "0")
        return build(tc_kernels._attn_fwd, sig, arch="sm_90a", num_warps=warps)


CASES = [(64, 1), (128, 3)]  # D=64 non-causal, D=128 causal (two loops)


@pytest.mark.parametrize(("head_dim", "stage"), CASES)
def test_exp2_flushes_subnormals_as_triton(head_dim: int, stage: int) -> None:
    ptx = attention(head_dim, stage).ptx
    assert "ex2.approx.ftz.f32" in ptx
    assert "ex2.approx.f32" not in ptx


@pytest.mark.parametrize("tma", [False, True])
@pytest.mark.parametrize(("head_dim", "stage"), CASES)
def test_no_fence_is_injected_into_wgmma_groups(
    tmp_path, head_dim: int, stage: int, tma: bool
) -> None:
    k = attention(head_dim, stage, tma)
    assert "wgmma.mma_async" in k.ptx
    report = assemble(k, tmp_path)
    assert "C7519" not in report and "warpgroup.arrive is injected" not in report
    assert " 0 bytes spill stores" in report


def _loop_body(ttgir: str) -> str:
    """The text of the first ``scf.for`` body, up to its ``scf.yield``."""
    start = ttgir.index("scf.for(")
    return ttgir[start : ttgir.index("scf.yield", start)]


def _attention_64(monkeypatch: pytest.MonkeyPatch, defer: str) -> str:
    monkeypatch.setenv("MINITRITON_DEFER_LAST_DOT", defer)
    monkeypatch.setenv("MINITRITON_TMA", "0")  # the cp.async schedule
    sig = (f"*fp16:16, *fp16:16, *fp16:16, fp32, *fp32:16, *fp16:16, {STRIDES}, i32, i32, "
           "4096, 64, 128, 64, 1")  # fmt: skip
    return _loop_body(build(tc_kernels._attn_fwd, sig, arch="sm_90a", num_warps=4).ttgir)


def test_the_second_dot_stays_in_flight_across_the_back_edge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``acc = tl.dot(p, v, acc)`` is waited for in the next iteration, as in Triton."""
    body = _attention_64(monkeypatch, "1")
    dots = [line for line in body.splitlines() if "ttng.warp_group_dot(" in line]
    waits = [line for line in body.splitlines() if "ttng.warp_group_dot_wait(" in line]
    assert len(dots) == 2 and len(waits) == 2
    # One wait follows Q @ K; the other waits for the carried accumulator; none follows P @ V.
    pv = body.index(dots[1])
    assert all(body.index(w) < pv for w in waits)
    # The refill comes after P @ V and a barrier, at the end of the body.
    assert body.rindex("tt.barrier()") > pv and body.index("async_copy_global_to_local") > pv


def test_switched_off_every_dot_is_waited_for_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``MINITRITON_DEFER_LAST_DOT=0``, the synchronous schedule waits for each dot."""
    body = _attention_64(monkeypatch, "0")
    lines = body.splitlines()
    dots = [i for i, line in enumerate(lines) if "ttng.warp_group_dot(" in line]
    assert len(dots) == 2
    assert all("warp_group_dot_wait" in lines[i + 1] for i in dots)
    assert body.index("async_copy_global_to_local") < body.index("ttng.warp_group_dot(")


def _copy_bases(ptx: str) -> list[str]:
    """For each ``cp.async`` into shared memory, the register its address adds a constant to."""
    adds = dict(re.findall(r"add\.s32\s+(%r\d+), (%r\d+), -?\d+;", ptx))
    dests = re.findall(r"cp\.async\.cg\.shared\.global \[(%r\d+)\]", ptx)
    return [adds.get(d, d) for d in dests]


@pytest.mark.parametrize(("head_dim", "stage"), CASES)
def test_a_loads_copies_share_one_shared_address(head_dim: int, stage: int) -> None:
    # Each thread copies K's (and V's) tile in 16-byte pieces whose swizzled addresses lie
    # at fixed distances: one address register plus immediates, as in Triton's loop.
    bases = _copy_bases(attention(head_dim, stage).ptx)
    per_load = 4 if head_dim == 64 else 8  # 16-byte pieces per thread: K or V block / threads
    assert len(bases) % per_load == 0
    for i in range(0, len(bases), per_load):
        assert len(set(bases[i : i + per_load])) == 1, bases[i : i + per_load]


def test_register_steps_are_exact() -> None:
    # The steps the copies use are checked over every thread against the swizzle itself.
    tile = SharedTile.make((64, 64), 1, 2)
    assert tile is not None
    layout = blocked(BlockedParams((1, 8), (4, 8), (4, 1), (1, 0)), (64, 64))
    steps = register_steps(tile, layout, 8, (0, 1))
    assert [s for s in steps if s is not None] == [0, 2048, 4096, 6144]
    # Rows 1 apart land in another swizzle phase: no single distance for every thread.
    narrow = blocked(BlockedParams((2, 8), (4, 8), (4, 1), (1, 0)), (64, 64))
    assert register_steps(tile, narrow, 8, (0, 1))[8] is None


def test_block_pointer_tiles_step_in_64_bits() -> None:
    # A thread copies K's and V's tiles in 8 or 16 pieces of 16 bytes: each piece's global
    # address is the first one's plus a step, so a loop holds at most one 64-bit multiply
    # per tile (none where LLVM strength-reduces it), not one per piece.
    for head_dim, stage in CASES:
        loops = _loops(attention(head_dim, stage).ptx)
        wide = [len(re.findall(r"mul\.lo\.s64|mul\.wide\.s32", body)) for body in loops]
        assert loops and max(wide) <= 2, wide


def _loops(ptx: str) -> list[str]:
    """The PTX of every loop: from a label to a branch back to it."""
    lines = ptx.splitlines()
    labels = {m.group(1): i for i, line in enumerate(lines) if (m := re.match(r"(\$L\w+):", line))}
    bodies = []
    for i, line in enumerate(lines):
        m = re.search(r"\bbra(?:\.uni)?\s+(\$L\w+);", line)
        if m and labels.get(m.group(1), i) < i:
            bodies.append("\n".join(lines[labels[m.group(1)] : i]))
    return bodies


# ---------------------------------------------------------------- K and V by TMA (the default)

#: Argument numbers of stride_qz, stride_qh, K's row stride stride_kn and V's stride_vk.
_QZ, _QH, _KN, _VK = 6, 7, 12, 16


@pytest.mark.parametrize(("head_dim", "stage"), CASES)
def test_k_and_v_come_by_tma_through_4d_maps(head_dim: int, stage: int) -> None:
    # Q + off_z * stride_qz + off_h * stride_qh is one head of a (Z, H, N, D) tensor: the
    # two products are the maps' third and fourth dimensions. The loads are unmasked (no
    # boundary_check), so every dimension is unbounded.
    k = attention(head_dim, stage, tma=True)
    block_n = 64 if head_dim == 64 else 128
    # Causal attention's second loop reads K and V through the first loop's two maps.
    assert [(m["base"], m["strides"]) for m in k.tma] == [
        (1, [["arg", _KN], ["arg", _QZ], ["arg", _QH]]),
        (2, [["arg", _VK], ["arg", _QZ], ["arg", _QH]]),
    ]
    assert all(m["dims"] == [UNBOUNDED] * 4 for m in k.tma)
    # K^T's tile is (D, BLOCK_N) with D contiguous, V's (BLOCK_N, D): boxes of 64 columns
    # (128 bytes, the swizzle's width) by BLOCK_N rows, one head.
    assert all(m["box"] == [64, block_n, 1, 1] for m in k.tma)
    assert "cp.async.bulk.tensor.4d" in k.ptx and "cp.async.cg" not in k.ptx


def test_one_elected_lane_issues_a_stage() -> None:
    # Each stage: one elect.sync, whose lane (in warp 0) arrives on the barrier and copies.
    ptx = attention(64, 1, tma=True).ptx
    stages = ptx.count("mbarrier.arrive.expect_tx")
    assert stages >= 2 and ptx.count("elect.sync") == stages
    assert "%tid.x, 0;" not in ptx.replace("setp.eq.s32", "setp.eq.b32")


@pytest.mark.parametrize("tma", [False, True])
def test_the_first_product_does_not_read_the_accumulator(tma: bool) -> None:
    # Q @ K starts from zero: its first wgmma of each 64-row block has scale-d 0, so its
    # registers need no zeroing (ptxas did not always see the zeros: 64 moves a loop).
    ptx = attention(64, 1, tma).ptx
    first = re.findall(r"wgmma\.mma_async[^;]*, 0, 1, 1, 0, 0;", ptx)
    accumulating = re.findall(r"wgmma\.mma_async[^;]*, 1, 1, 1, 0, 0;", ptx)
    assert len(first) == 2 and len(accumulating) == 6  # prologue + loop; 4 K steps of 16


def _attention_ptx(monkeypatch: pytest.MonkeyPatch, defer: str | None, block_n: int = 128):
    if defer is None:
        monkeypatch.delenv("MINITRITON_DEFER_LAST_DOT", raising=False)
    else:
        monkeypatch.setenv("MINITRITON_DEFER_LAST_DOT", defer)
    sig = (f"*fp16:16, *fp16:16, *fp16:16, fp32, *fp32:16, *fp16:16, {STRIDES}, i32, i32, "
           f"4096, 64, 128, {block_n}, 3")  # fmt: skip
    return build(tc_kernels._attn_fwd, sig, arch="sm_90a", num_warps=8)


def test_by_default_both_schedules_are_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    # Unset, the kernel leaves P @ V in flight and keeps the other schedule beside it, for
    # the launcher to take where it fits more programs per multiprocessor.
    auto = _attention_ptx(monkeypatch, None)
    deferred, waited = _attention_ptx(monkeypatch, "1"), _attention_ptx(monkeypatch, "0")
    assert deferred.ptx != waited.ptx
    assert (auto.ptx, auto.alt_ptx, auto.alt_shared) == (deferred.ptx, waited.ptx, waited.shared)
    assert deferred.alt_ptx == "" and waited.alt_ptx == ""


def test_a_lone_accumulating_dot_has_one_schedule() -> None:
    # Tutorial 03's loop keeps one group in flight anyway: nothing to choose.
    sig = "*fp16:16, *fp16:16, *fp16:16, 4096, 4096, 4096, " + ", ".join(["i32:16, i32:1"] * 3)
    k = build(tc_kernels.matmul_kernel, sig + ", 128, 128, 64, 8", arch="sm_90a")
    assert "wgmma.mma_async" in k.ptx and k.alt_ptx == ""


@pytest.mark.parametrize("tma", [False, True])
def test_the_slot_is_carried_by_cp_async_loops_and_computed_by_tma_loops(tma: bool) -> None:
    # cp.async: no division by S = 3 per iteration, the slot counts 0, 1, 2, 0, ... as an
    # iter arg. TMA: slot and barrier phase from the iteration number (k % S, k / S % 2),
    # which ptxas scheduled faster for attention's D=128 loop on an H200.
    ttgir = attention(64, 1, tma).ttgir
    header = next(line for line in ttgir.splitlines() if line.strip().startswith("^(%start_n"))
    assert ("%slot: i32" in header) != tma and "%phase" not in header
    body = _loop_body(ttgir)
    assert ("arith.rem" in body) == tma and ("arith.div" in body) == tma
    if tma:
        wait = re.search(r"ttng\.wait_barrier\((%\w+), (%\w+)\)", body)
        assert wait is not None
        slot, phase = wait.groups()
        assert re.search(rf"{slot} = arith\.rem\(%\w+, %\w+\)", body)
        assert re.search(rf"{phase} = arith\.rem\(%\w+, %\w+\)", body)


def test_no_second_schedule_where_shared_memory_allows_one_program(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # D=128 with BLOCK_N = 64: the rings take 131 KB, so one program fits a multiprocessor
    # whatever the registers: the in-flight schedule wins the tie, nothing else is compiled.
    monkeypatch.delenv("MINITRITON_DEFER_LAST_DOT", raising=False)
    sig = (f"*fp16:16, *fp16:16, *fp16:16, fp32, *fp32:16, *fp16:16, {STRIDES}, i32, i32, "
           "4096, 128, 128, 64, 1")  # fmt: skip
    k = build(tc_kernels._attn_fwd, sig, arch="sm_90a", num_warps=8)
    assert k.shared > (228 << 10) // 2 and k.alt_ptx == ""
    monkeypatch.setenv("MINITRITON_DEFER_LAST_DOT", "1")
    assert build(tc_kernels._attn_fwd, sig, arch="sm_90a", num_warps=8).ptx == k.ptx


def test_maxnreg_caps_the_registers_of_both_schedules(tmp_path) -> None:
    """``maxnreg=`` (Triton's launch option) becomes ``.maxnreg``; ptxas keeps to it.

    Causal D=64 with 8 warps needs more than 128 registers a thread in either
    schedule, so one program fits a multiprocessor; capped at 128, two do.
    """
    sig = (f"*fp16:16, *fp16:16, *fp16:16, fp32, *fp32:16, *fp16:16, {STRIDES}, i32, i32, "
           "4096, 64, 128, 128, 3")  # fmt: skip
    jit = base_jit_function(tc_kernels._attn_fwd)
    specs = parse_signature(sig, kernel_params(jit.fn))

    def registers(options: CompileOptions) -> list[int]:
        binary = compile_kernel(jit.source, specs, options, stop_after="ptx").binary
        schedules = [binary.ptx] + ([binary.alt_ptx] if binary.alt_ptx else [])
        used = []
        for ptx in schedules:
            caps = re.findall(r"^\.maxnreg (\d+)$", ptx, re.M)
            assert caps == ([str(options.maxnreg)] if options.maxnreg else [])
            report = assemble(SimpleNamespace(ptx=ptx, arch=binary.arch), tmp_path)
            used.append(int(re.search(r"Used (\d+) registers", report).group(1)))
        return used

    free = registers(CompileOptions(num_warps=8, arch="sm_90a"))
    assert min(free) > 128
    assert max(registers(CompileOptions(num_warps=8, arch="sm_90a", maxnreg=128))) <= 128
