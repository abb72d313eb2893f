"""A K-major B on the ``mma.sync`` path: pipelined into a transposed ring tile (no GPU).

Attention's ``k`` (read through a block pointer of order ``(0, 1)``, or with
pointers that run along K, or ``tl.trans`` of a load) is copied with
``cp.async`` into a ring tile stored one row per ``n``, and its fragments
come back with ``ldmatrix`` without ``.trans``.

The fragment addressing is checked lane by lane: the code generator's own
``ldmatrix`` address computation is run on Python integers for every lane
and warp, the addresses are fed to a model of ``ldmatrix`` (PTX ISA: lane
``8 j + r`` gives row ``r`` of matrix ``j``; without ``.trans`` thread ``t``
gets word ``t % 4`` of row ``t / 4``, with it the two 16-bit elements of
column ``t / 4`` in rows ``2 (t % 4)`` and ``2 (t % 4) + 1``), and what each
lane receives must be the elements the ``mma.sync`` B fragment tables put
there. The row-major ``.trans`` path, which runs on the GPU, passes the same
model, so the model itself is checked.
"""

from __future__ import annotations

import re

import pytest
from llvmlite import ir

from minitriton.backend.layouts import MmaParams, dot_operand_layout, mma_instr_k, mma_layout
from minitriton.backend.lower import mma as mma_lowering
from minitriton.backend.lower.mma import Staged, _tile_counts, staged_fragments
from minitriton.backend.mma_plan import MmaDot
from minitriton.backend.shared_layout import MmaTile, ring_tile
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.ir.ttgir_text import readable
from minitriton.signature import kernel_params, parse_signature
from tests.backend.test_mma_lowering import assemble, build
from tests.backend.test_mma_pipeline import loop_lines
from tests.kernels import dot_kernels

BITS = {"f16": 16, "tf32": 32, "s8": 8}


# ------------------------------------------------------------------ the lane model


def _int(x: object) -> int:
    return x.constant if isinstance(x, ir.Constant) else x  # type: ignore[return-value]


class _IntBuilder:
    """The few ``IRBuilder`` methods of the address code, on Python integers."""

    def add(self, a, b):  # noqa: ANN001, ANN201
        return _int(a) + _int(b)

    def mul(self, a, b):  # noqa: ANN001, ANN201
        return _int(a) * _int(b)

    def and_(self, a, b):  # noqa: ANN001, ANN201
        return _int(a) & _int(b)

    def or_(self, a, b):  # noqa: ANN001, ANN201
        return _int(a) | _int(b)

    def xor(self, a, b):  # noqa: ANN001, ANN201
        return _int(a) ^ _int(b)

    def shl(self, a, b):  # noqa: ANN001, ANN201
        return _int(a) << _int(b)

    def lshr(self, a, b):  # noqa: ANN001, ANN201
        return _int(a) >> _int(b)


class _Lane:
    """One lane of one warp: a stand-in lowering context with integer "registers"."""

    def __init__(self, lane: int, warp: int) -> None:
        self.b = _IntBuilder()
        self.lane, self.warp = lane, warp
        self.calls: list[tuple[int, int, bool]] = []

    def cached(self, key, make):  # noqa: ANN001, ANN201
        return make(self.b)


def _recorded_ldmatrix(ctx, staged, at, n, trans):  # noqa: ANN001, ANN201
    """Record each ``ldmatrix``'s address instead of emitting it."""
    row, col, more_rows = at
    assert more_rows % 8 == 0
    off = staged.tile.emit_offset(ctx.b, row, col)
    ctx.calls.append((off + more_rows * staged.tile.cols * staged.tile.eb, n, trans))
    return [(len(ctx.calls) - 1, m) for m in range(n)]


def _fragments(lanes: list[_Lane], read) -> list:  # noqa: ANN001
    """``read(lane)`` for every lane, each ``ldmatrix`` recorded (:func:`_recorded_ldmatrix`)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mma_lowering, "_ldmatrix", _recorded_ldmatrix)
        return [read(lane) for lane in lanes]


def _mma_dot(kind: str, wpc: tuple[int, int], k: int, n: int) -> MmaDot:
    params = MmaParams(wpc)
    bits = BITS[kind]
    m = 16 * wpc[0]
    a = dot_operand_layout(params, 0, bits, (m, k))
    b = dot_operand_layout(params, 1, bits, (k, n))
    return MmaDot(kind, params, a, b, mma_layout(params, (m, n)))


def _received(tile: MmaTile, addrs: list[int], t: int, call: tuple, m: int) -> list:
    """The 4 bytes lane ``t`` gets in register ``m`` of an ``ldmatrix`` (byte addresses)."""
    _, n, trans = call
    assert m < n
    if not trans:
        return [addrs[8 * m + t // 4] + 4 * (t % 4) + q for q in range(4)]
    rows = (2 * (t % 4), 2 * (t % 4) + 1)
    return [addrs[8 * m + r] + 2 * (t // 4) + q for r in rows for q in range(2)]


def _byte_owners(tile: MmaTile, kn) -> dict[int, tuple]:  # noqa: ANN001
    """Byte address -> (k, n, byte in element) of a tile holding a K x N block."""
    owners = {}
    for k in range(kn[0]):
        for n in range(kn[1]):
            off = tile.offset(n, k) if tile.contig == 0 else tile.offset(k, n)
            for q in range(tile.eb):
                owners[off + q] = (k, n, q)
    return owners


def _warp_n(mma: MmaDot, warp: int) -> int:
    return sum(b[1] for bit, b in enumerate(mma.b.warp_bases) if warp >> bit & 1)


def _check_b_fragments(mma: MmaDot, tile: MmaTile, kn: tuple[int, int]) -> int:
    """Every lane's B registers against the fragment table; returns the registers checked."""
    kw, eb = 32 // mma.bits, mma.bits // 8
    owners = _byte_owners(tile, kn)
    staged = Staged(mma, 1, tile, 0)
    steps, tiles = _tile_counts(mma, 1)
    wn = mma.params.wpc[1]
    checked = 0
    for warp in range(mma.params.wpc[0] * wn):
        for ki in range(steps):
            lanes = [_Lane(t, warp) for t in range(32)]
            frags = _fragments(lanes, lambda lane, ki=ki: staged_fragments(lane, staged, ki, tiles))
            for t in range(32):
                for ni, regs in frags[t].items():
                    assert len(regs) == 2
                    for r, (ci, m) in enumerate(regs):
                        addrs = [lane.calls[ci][0] for lane in lanes]
                        got = [owners[a] for a in _received(tile, addrs, t, lanes[t].calls[ci], m)]
                        # PTX ISA: b_r holds kw K-consecutive elements of column g = t / 4.
                        k0 = ki * mma_instr_k(mma.bits) + kw * (t % 4) + 4 * kw * r
                        n = _warp_n(mma, warp) + ni * 8 * wn + t // 4
                        want = [(k0 + q // eb, n, q % eb) for q in range(4)]
                        assert got == want, (warp, ki, t, ni, r)
                        checked += 1
    return checked


CASES = [("f16", (4, 1), 64, 64), ("f16", (2, 2), 32, 128), ("f16", (1, 2), 16, 16),
         ("tf32", (4, 1), 32, 64), ("tf32", (2, 2), 16, 32), ("s8", (4, 1), 64, 64),
         ("s8", (2, 2), 128, 32)]  # fmt: skip


@pytest.mark.parametrize(("kind", "wpc", "k", "n"), CASES)
def test_k_major_b_fragments_match_the_mma_tables(kind, wpc, k, n):
    mma = _mma_dot(kind, wpc, k, n)
    tile = ring_tile((k, n), mma.bits // 8, 0)
    assert (tile.rows, tile.cols, tile.contig) == (n, k, 0)
    assert _check_b_fragments(mma, tile, (k, n)) > 0


@pytest.mark.parametrize(("wpc", "k", "n"), [((4, 1), 64, 64), ((2, 2), 32, 128)])
def test_the_model_accepts_the_row_major_trans_path(wpc, k, n):
    # The row-major ring tile, read with ldmatrix.trans (the path run on the GPU).
    mma = _mma_dot("f16", wpc, k, n)
    assert _check_b_fragments(mma, ring_tile((k, n), 2, 1), (k, n)) > 0


def test_the_model_rejects_a_k_major_tile_read_as_row_major():
    # The same bytes read with the row-major code (ldmatrix.trans) land in the wrong places.
    mma = _mma_dot("f16", (4, 1), 64, 64)
    k_major = ring_tile((64, 64), 2, 0)
    as_row_major = MmaTile(64, 64, 2, 1)
    owners = _byte_owners(k_major, (64, 64))
    lanes = [_Lane(t, 0) for t in range(32)]
    row_major = Staged(mma, 1, as_row_major, 0)
    frags = _fragments(lanes, lambda lane: mma_lowering._ldmatrix_b(lane, row_major, 0, 2))
    wrong = 0
    for t in range(32):
        ci, m = frags[t][0][0]
        addrs = [lane.calls[ci][0] for lane in lanes]
        got = [owners[a] for a in _received(k_major, addrs, t, lanes[t].calls[ci], m)]
        wrong += got != [(2 * (t % 4) + q // 2, t // 4, q % 2) for q in range(4)]
    assert wrong == 32


@pytest.mark.parametrize(("k", "eb"), [(16, 2), (32, 2), (64, 2), (128, 2), (32, 4), (64, 1)])
def test_k_major_tile_keeps_ldmatrix_conflict_free(k, eb):
    # One ldmatrix phase reads 8 consecutive n rows of one 16-byte K unit: 8 bank groups.
    tile = ring_tile((k, 64), eb, 0)
    for n0 in range(0, 64, 8):
        for kk in range(0, k, tile.unit):
            assert len({tile.offset(n0 + r, kk) // 16 % 8 for r in range(8)}) == 8
    assert "order=[0, 1]" in tile.describe()


# ------------------------------------------------------------------ compiled kernels

CHAINED = "*fp16:16, *fp16:16, *fp16:16, *fp32:16, i32:16, 64, 64, 64"
KT_SIG = ("*{t}:16, *{t}:16, *fp32:16, i32:16, i32:16, i32:16, i32:16, i32:1, "
          "i32:1, i32:16, i32:16, i32:1, 64, 64, 32, \"tf32\"")  # fmt: skip


def _attention(stage: int, arch: str = "sm_80"):
    from tests.kernels.fused_attention import _attn_fwd

    strides = ", ".join(["i32:16", "i32:16", "i32:16", "1"] * 4)
    sig = f"*fp16:16, *fp16:16, *fp16:16, fp32, *fp32:16, *fp16:16, {strides}, i32, i32, i32:16, "
    specs = parse_signature(sig + f"64, 64, 64, {stage}", kernel_params(_attn_fwd.fn))
    options = CompileOptions(num_warps=4, num_stages=3, arch=arch)
    return compile_kernel(_attn_fwd.source, specs, options, stop_after="ptx")


def _non_trans_b_loads(ptx: str) -> int:
    return len(re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x[24]\.shared\.b16", ptx))


@pytest.mark.parametrize("stage", [1, 3])
def test_attention_on_sm80_pipelines_k_and_v(stage):
    k = _attention(stage)
    ttgir, ptx = k.asm["ttgir"], k.asm["ptx"]
    loops = 2 if stage == 3 else 1  # causal: the off-band and the on-band loop
    allocs = [x for x in ttgir.splitlines() if "ttg.local_alloc" in x]
    assert len(allocs) == 2 * loops  # a ring for k and one for v per loop
    assert sum("contig = 0" in x and "order=[0, 1]" in x for x in allocs) == loops  # k
    assert sum("contig = 1" in x and "order=[1, 0]" in x for x in allocs) == loops  # v
    assert ttgir.count("ttg.local_load") == 2 * loops and "tt.load(%k" not in ttgir
    assert "cp.async.cg.shared.global" in ptx and "cp.async.wait_group 1;" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx  # v, row-major
    # k's B fragments are plain ldmatrix in the loop (q's A fragments are read before it).
    for body in ptx.split("cp.async.wait_group 1;")[1 : 1 + loops]:
        assert _non_trans_b_loads(body.split("cp.async.wait_group 0;")[0]) > 0
    assert "mma.sync.aligned.m16n8k16" in ptx


@pytest.mark.parametrize("stage", [1, 3])
def test_masked_attention_on_sm80_pipelines_k_and_v(stage):
    # Plain pointers and masks from tl.multiple_of(start_n, BLOCK_N): the hint is recomputed
    # for the prefetched iteration like the rest of the pointers.
    from tests.kernels.attention_masked import attn_fwd_masked

    strides = ", ".join(["i32:16", "i32:16", "i32:16", "1"] * 4)
    sig = f"*fp16:16, *fp16:16, *fp16:16, fp32, *fp32:16, *fp16:16, {strides}, i32, i32, i32, "
    specs = parse_signature(sig + f"64, 64, 64, {stage}", kernel_params(attn_fwd_masked.fn))
    options = CompileOptions(num_warps=4, num_stages=3, arch="sm_80")
    k = compile_kernel(attn_fwd_masked.source, specs, options, stop_after="ptx")
    loops = 2 if stage == 3 else 1
    ttgir = k.asm["ttgir"]
    assert ttgir.count("ttg.local_alloc") == 2 * loops and ttgir.count("contig = 0, d") == loops
    assert "tt.hint" in ttgir.split("scf.for")[0]  # cloned into the prologue's copies


def test_attention_sm80_ttgir_golden(golden):
    golden(readable(_attention(1).asm["ttgir"]), "fused_attention_64_sm80_pipelined.ttgir")


def test_k_major_b_reads_no_trans_matrices():
    # A K-major B in the chained dot: its ring is read with x4 ldmatrix, no .trans; v's with .trans.
    k = build(dot_kernels.chained_dot_kernel, CHAINED)
    lines = loop_lines(k.ttgir)
    loop = lines.index(next(x for x in lines if "scf.for" in x))
    body = [x.split("(")[0].split("= ")[-1] for x in lines[loop + 1 :]]
    assert body[:5] == ["ttg.async_wait", "tt.barrier", "ttg.async_copy_global_to_local",
                        "ttg.async_copy_global_to_local", "ttg.async_commit_group"]  # fmt: skip
    # 64x64 B, 4 warps along M: 8 n8 tiles per warp -> 4 x4 per k16 step, 4 steps: 16 of each.
    # q (A) is read once before the loop: 4 m16 tiles x 4 steps... of which one per warp.
    loop_ptx = k.ptx.split("cp.async.wait_group 1;")[1]
    assert loop_ptx.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 16  # v
    assert _non_trans_b_loads(loop_ptx) == 16  # k


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_k_major_b_matmul_is_pipelined(dtype, tmp_path):
    # dot_kernel with stride_bk = 1: B K-major in memory.
    k = build(dot_kernels.dot_kernel, KT_SIG.format(t=dtype))
    assert "contig = 0" in k.ttgir and "order=[0, 1]" in k.ttgir
    assert "cp.async.cg.shared.global" in k.ptx and "mma.sync" in k.ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.trans" not in k.ptx  # A plain, B K-major: plain
    assert "cvt.rna" not in k.ptx  # fp32 bits go to the tensor cores as Triton gives them
    assert " 0 bytes spill stores" in assemble(k, tmp_path)


def test_trans_of_a_load_is_pipelined_on_sm80(tmp_path):
    # tl.dot(a, tl.trans(b)): the transpose sinks into the load, which becomes a K-major ring.
    sig = ("*fp16:16, *fp16:16, *fp32:16, i32:16, i32:16, i32:16, i32:16, i32:1, "
           "i32:16, i32:1, i32:16, i32:1, 64, 64, 32")  # fmt: skip
    k = build(dot_kernels.dot_bt_kernel, sig)
    assert "tt.trans" not in k.ttgir and "contig = 0" in k.ttgir
    assert "cp.async.cg.shared.global" in k.ptx and "ldmatrix" in k.ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.trans" not in k.ptx
    assert " 0 bytes spill stores" in assemble(k, tmp_path)


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_120"])
@pytest.mark.parametrize("stage", [1, 3])
def test_ptxas_accepts_pipelined_attention(arch, stage, tmp_path):
    k = _attention(stage, arch)

    class _K:  # what assemble() reads
        ptx = k.asm["ptx"]

    _K.arch = arch
    assert "cp.async" in _K.ptx
    assert " 0 bytes spill stores" in assemble(_K, tmp_path)


def test_one_stage_keeps_attention_unpipelined():
    k = build(dot_kernels.chained_dot_kernel, CHAINED, num_stages=1)
    assert "cp.async" not in k.ptx and "ttg.local_load" not in k.ttgir
