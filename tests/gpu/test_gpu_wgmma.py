"""Hopper tensor cores: ``wgmma``, the pipelined K loop and the epilogue.

The PTX tests need no GPU (llvmlite only; ``ptxas`` where it is on PATH).
The ``gpu`` tests run the kernels on an sm_90 GPU against NumPy, with fresh
random data and a poisoned output (every element must be written).
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.backend import GPUKernel, gpu_available, load_kernel
from minitriton.backend.driver import _loaded_usage, _programs_per_sm, device_arch, fullest
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.signature import kernel_params, parse_signature


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
              stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              BLOCK_K: tl.constexpr, INT_ACC: tl.constexpr, OUT_F16: tl.constexpr):  # fmt: skip
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    if INT_ACC:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    if OUT_F16:
        tl.store(c_ptrs, acc.to(tl.float16), mask=c_mask)
    else:
        tl.store(c_ptrs, acc, mask=c_mask)


_TYPES = {"fp16": "fp16", "bf16": "bf16", "tf32": "fp32", "int8": "i8"}


def _compile(
    kind: str, bm: int, bn: int, bk: int, warps: int, stages: int, arch="sm_90", a_m_major=False
):
    t = _TYPES[kind]
    out = "i32" if kind == "int8" else "fp32"
    a_strides = "1, i32:16" if a_m_major else "i32:16, 1"
    sig = (
        f"*{t}:16, *{t}:16, *{out}:16, i32:16, i32:16, i32:16, {a_strides}, i32:16, 1, "
        f"i32:16, 1, {bm}, {bn}, {bk}, {int(kind == 'int8')}, 0"
    )
    specs = parse_signature(sig, kernel_params(mm_kernel.fn))
    options = CompileOptions(num_warps=warps, num_stages=stages, arch=arch)
    return compile_kernel(mm_kernel.source, specs, options, stop_after="ptx")


def _ptxas(ptx: str, tmp_path) -> str:
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    cmd = ["ptxas", "-v", "-arch=sm_90a", str(path), "-o", str(tmp_path / "k.cubin")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


def test_fp16_dot_uses_pipelined_wgmma():
    k = _compile("fp16", 128, 128, 64, 4, 3)
    ttgir, ptx = k.asm["ttgir"], k.asm["ptx"]
    assert "nvidia_mma<versionMajor=3, warpsPerCTA=[4, 1], instrShape=[16, 128, 16]>" in ttgir
    for op in ("ttg.local_alloc", "ttg.async_copy_global_to_local", "ttg.async_wait() {num = 1}",
               "ttng.warp_group_dot", "ttng.warp_group_dot_wait", "ttg.local_dealloc"):  # fmt: skip
        assert op in ttgir, op
    assert "tt.dot" not in ttgir
    assert ".target sm_90a" in ptx
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in ptx
    assert "cp.async.cg.shared.global" in ptx and "cp.async.wait_group 1" in ptx
    assert "wgmma.wait_group.sync.aligned 1" in ptx


def test_descriptors_come_from_a_warp_index_every_lane_shares():
    # The warpgroup's row of tiles comes from the warp index read from lane 0: ptxas then
    # keeps the descriptors in uniform registers instead of copying them there (R2UR) for
    # every wgmma. The thread-index path (tid >> 5 alone) left them in ordinary registers.
    ptx = _compile("fp16", 128, 128, 64, 8, 3).asm["ptx"]
    shfl = re.search(r"shfl\.sync\.idx\.b32 (%r\d+), (%r\d+), 0, 31, -1;", ptx)
    assert shfl is not None
    uses = re.findall(rf"\b\w[\w.]*\s+%r\d+, [^;]*{shfl.group(1)}\b", ptx[shfl.end() :])
    assert uses  # its warpgroup's offsets into the tiles


def test_num_stages_sets_the_ring_depth():
    two = _compile("fp16", 128, 128, 64, 4, 2)
    four = _compile("fp16", 128, 128, 64, 4, 4)
    assert "stages = 2" in two.asm["ttgir"] and "ttg.async_wait() {num = 0}" in two.asm["ttgir"]
    assert "stages = 4" in four.asm["ttgir"] and "cp.async.wait_group 2" in four.asm["ptx"]


@pytest.mark.parametrize(
    ("kind", "instr"),
    [("bf16", "m64n128k16.f32.bf16.bf16"), ("tf32", "k8.f32.tf32.tf32"), ("int8", "k32.s32.s8.s8")],
)
def test_other_operand_types_use_wgmma(kind, instr):
    k = _compile(kind, 128, 128, 64, 4, 3)
    assert instr in k.asm["ptx"]
    pipelined = "ttng.warp_group_dot" in k.asm["ttgir"]
    assert pipelined == (kind == "bf16")  # tf32/int8 stage B K-major through registers


@pytest.mark.parametrize("kind", ["fp16", "bf16"])
@pytest.mark.parametrize(("bm", "bn", "warps"), [(128, 256, 8), (64, 128, 4)])
def test_an_m_major_a_is_copied_by_cp_async_and_read_transposed(kind, bm, bn, warps):
    # ``x.T @ y``: A's tiles run along M in memory. They go into M-major rings as they
    # lie (no ld.global in the loop), read by wgmma with tnspA = 1, or on mma.sync
    # with ldmatrix.trans for A as well as for the row-major B.
    hopper = _compile(kind, bm, bn, 64, warps, 3, a_m_major=True).asm
    assert "transposed=true" in hopper["ttgir"]
    assert "ld.global" not in hopper["ptx"] and "cp.async.cg.shared.global" in hopper["ptx"]
    instrs = re.findall(r"wgmma\.mma_async[^;]*?, (\d), (\d), (\d), (\d), (\d);", hopper["ptx"])
    assert instrs and set(instrs) == {("1", "1", "1", "1", "1")}  # scale-d, scales, tnspA, tnspB
    row_major = _compile(kind, bm, bn, 64, warps, 3).asm["ptx"]
    assert set(re.findall(r", (\d), (\d);", row_major)) >= {("0", "1")}
    ampere = _compile(kind, bm, bn, 64, warps, 3, arch="sm_80", a_m_major=True).asm["ptx"]
    assert "ld.global" not in ampere and "mma.sync" in ampere
    plain = _compile(kind, bm, bn, 64, warps, 3, arch="sm_80").asm["ptx"]
    trans = "ldmatrix.sync.aligned.m8n8.x4.trans"
    assert ampere.count(trans) > plain.count(trans) and "x4.shared" not in ampere


def test_sm80_takes_the_mma_sync_path():
    k = _compile("fp16", 128, 128, 64, 4, 3, arch="sm_80")
    assert "wgmma.mma_async" not in k.asm["ptx"] and "mma.sync" in k.asm["ptx"]
    assert "versionMajor=2" in k.asm["ttgir"] and "versionMajor=3" not in k.asm["ttgir"]
    assert ".target sm_80" in k.asm["ptx"]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize(
    ("kind", "bm", "bn", "bk", "warps"),
    [("fp16", 128, 128, 64, 4), ("fp16", 128, 256, 64, 8), ("bf16", 64, 64, 32, 4),
     ("tf32", 128, 128, 32, 8), ("int8", 128, 128, 64, 4), ("fp16-at", 128, 256, 64, 8),
     ("bf16-at", 64, 128, 64, 4)],
)  # fmt: skip
def test_ptxas_accepts_without_spills(kind, bm, bn, bk, warps, tmp_path):
    a_m_major = kind.endswith("-at")  # A M-major in memory: read with tnspA
    kernel = _compile(kind.removesuffix("-at"), bm, bn, bk, warps, 3, a_m_major=a_m_major)
    report = _ptxas(kernel.asm["ptx"], tmp_path)
    assert "0 bytes spill stores" in report, report


# ------------------------------------------------------------------ on the GPU


def _inputs(kind: str, m: int, n: int, k: int):
    import torch

    if kind == "int8":
        a = torch.randint(-128, 128, (m, k), dtype=torch.int8, device="cuda")
        b = torch.randint(-128, 128, (k, n), dtype=torch.int8, device="cuda")
        return a, b, (a.double() @ b.double()).to(torch.int32)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "tf32": torch.float32}[kind]
    a = torch.randn((m, k), device="cuda").to(dtype)
    b = torch.randn((k, n), device="cuda").to(dtype)
    return a, b, a.double() @ b.double()


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs an NVIDIA GPU and cuda-python")
@pytest.mark.parametrize(
    ("kind", "m", "n", "k", "bm", "bn", "bk", "warps", "stages"),
    [
        ("fp16", 256, 256, 512, 128, 128, 64, 4, 3),  # pipelined, no tails
        ("fp16", 200, 136, 80, 128, 256, 64, 8, 3),  # M, N edges and a K tail (K % 16 == 0)
        ("fp16", 130, 72, 72, 64, 64, 32, 4, 4),  # K % 16 != 0: the register-staged path
        ("fp16", 256, 512, 256, 64, 256, 32, 4, 2),
        ("bf16", 256, 256, 192, 128, 128, 64, 8, 3),
        ("tf32", 192, 160, 96, 64, 64, 32, 4, 3),
        ("int8", 128, 192, 160, 128, 64, 64, 4, 3),
        ("fp16", 128, 128, 64, 128, 128, 64, 4, 4),  # one iteration, fewer than the stages
        ("fp16-bt", 256, 128, 192, 128, 128, 64, 8, 3),  # B K-major in memory
    ],
)
def test_wgmma_matmul_matches_reference(kind, m, n, k, bm, bn, bk, warps, stages):
    torch = pytest.importorskip("torch")
    transposed_b = kind.endswith("-bt")
    kind = kind.removesuffix("-bt")
    a, b, ref = _inputs(kind, m, n, k)
    if transposed_b:
        b = b.t().contiguous().t()  # the same values, column-major
    out_t = torch.int32 if kind == "int8" else torch.float32
    c = torch.full((m, n), -7777, dtype=out_t, device="cuda")  # poison: all must be written
    grid = (triton.cdiv(m, bm), triton.cdiv(n, bn))
    mm_kernel[grid](a, b, c, m, n, k, a.stride(0), 1, b.stride(0), b.stride(1), n, 1,
                    BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, INT_ACC=int(kind == "int8"), OUT_F16=0,
                    num_warps=warps, num_stages=stages, backend="gpu")  # fmt: skip
    torch.cuda.synchronize()
    if kind == "int8":
        assert torch.equal(c, ref)
        return
    err = (torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref)).item()
    assert err < {"tf32": 3e-3, "bf16": 1e-2, "fp16": 2e-3}[kind], err


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs an NVIDIA GPU and cuda-python")
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize(
    ("kind", "b_k_major", "m", "n", "k", "bm", "bn", "bk", "warps"),
    [
        ("fp16", False, 256, 256, 512, 128, 256, 64, 8),  # tutorial 03's Hopper config
        ("fp16", True, 256, 256, 192, 128, 128, 64, 4),  # both operands transposed
        ("bf16", False, 200, 136, 80, 128, 64, 32, 4),  # edges and a K tail
        ("fp16", False, 192, 128, 256, 64, 128, 64, 4),  # one warpgroup along M
    ],
)
def test_an_m_major_a_is_pipelined_and_matches_reference(
    arch, kind, b_k_major, m, n, k, bm, bn, bk, warps
):
    """``x.T @ y``: A's M-major tiles are copied as they lie and read transposed."""
    torch = pytest.importorskip("torch")
    a, b, ref = _inputs(kind, m, n, k)
    a = a.t().contiguous().t()  # the same values, column-major
    if b_k_major:
        b = b.t().contiguous().t()
    c = torch.full((m, n), -7777.0, device="cuda")
    grid = (triton.cdiv(m, bm), triton.cdiv(n, bn))
    mm_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), n, 1,
                    BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, INT_ACC=0, OUT_F16=0,
                    num_warps=warps, num_stages=3, arch=arch, backend="gpu")  # fmt: skip
    torch.cuda.synchronize()
    err = (torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref)).item()
    assert err < {"bf16": 1e-2, "fp16": 2e-3}[kind], err


def _attention(stage: int):
    from tests.kernels.fused_attention import _attn_fwd

    strides = ", ".join(["i32:16", "i32:16", "i32:16", "1"] * 4)
    sig = f"*fp16:16, *fp16:16, *fp16:16, fp32, *fp32:16, *fp16:16, {strides}, i32, i32, i32:16, "
    specs = parse_signature(sig + f"64, 128, 64, {stage}", kernel_params(_attn_fwd.fn))
    options = CompileOptions(num_warps=4, num_stages=3)
    return compile_kernel(_attn_fwd.source, specs, options, stop_after="ptx")


@pytest.mark.parametrize("stage", [1, 3])
def test_attention_is_pipelined_with_p_in_registers(stage):
    k = _attention(stage)
    ttgir, ptx = k.asm["ttgir"], k.asm["ptx"]
    loops = 2 if stage == 3 else 1  # causal: the off-band and the on-band loop
    # q is staged once, not per step; causal's on-band loop reads the off-band loop's copy.
    assert ttgir.count("ttg.local_store(%q)") == 1
    # Per loop: Q @ K waited for at once, P @ V waited for in the next iteration and
    # after the loop (the deferred schedule, the default).
    assert ttgir.count("ttng.warp_group_dot_wait") == 3 * loops
    assert "a = -1" in ttgir  # P feeds the second dot from registers
    assert "contig = 0" in ttgir  # K is read K-major (coalesced), staged without tnspB
    assert "tt.dot" not in ttgir and "tt.load(%q" not in ttgir.split("scf.for")[1]
    a_regs = re.compile(r"wgmma\.mma_async\S+ \{[^}]*\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}")
    assert a_regs.search(ptx)
    assert re.search(r"wgmma\.mma_async\S+ \{[^}]*\}, %rd\d+, %rd\d+, 0, 1, 1, 0, 0;", ptx)  # Q @ K


def test_the_fullest_candidate_wins_and_the_first_on_a_tie():
    assert fullest([1, 2]) == 1
    assert fullest([2, 1]) == 0
    assert fullest([2, 2, 1]) == 0
    assert fullest([1, 3, 3]) == 1


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs an NVIDIA GPU and cuda-python")
def test_the_launcher_keeps_the_schedule_that_fits_more_programs(monkeypatch):
    # D=64 with 8 warps and BLOCK_N = 128: the schedule that leaves P @ V in flight needs
    # more registers; where that costs programs per multiprocessor, the other one runs.
    from tests.kernels.tc_kernels import _attn_fwd

    monkeypatch.delenv("MINITRITON_DEFER_LAST_DOT", raising=False)
    strides = ", ".join(["i32:16, i32:16, i32:16, i32:1"] * 4)
    sig = f"*fp16:16, *fp16:16, *fp16:16, fp32, *fp32:16, *fp16:16, {strides}, i32, i32, "
    specs = parse_signature(sig + "4096, 64, 128, 128, 1", kernel_params(_attn_fwd.fn))
    options = CompileOptions(num_warps=8, num_stages=3)
    compiled = compile_kernel(_attn_fwd.source, specs, options, stop_after="ptx").binary
    assert compiled.alt_ptx
    chosen = GPUKernel.of(compiled).load().func
    name, warps = compiled.name, compiled.num_warps
    candidates = [(compiled.ptx, compiled.shared), (compiled.alt_ptx, compiled.alt_shared)]
    funcs = [load_kernel(ptx, name, shared, warps) for ptx, shared in candidates]
    counts = [_programs_per_sm(f, name, 32 * warps, shared)
              for f, (_, shared) in zip(funcs, candidates)]  # fmt: skip
    assert _regs(chosen) == _regs(funcs[fullest(counts)])
    if device_arch().startswith("sm_90"):  # an H200: 155 registers against 126
        assert counts[1] > counts[0] and _regs(funcs[0]) > _regs(funcs[1])


def _regs(func):
    return _loaded_usage(func, "_attn_fwd", 0, 256).registers


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs an NVIDIA GPU and cuda-python")
def test_maxnreg_caps_a_launched_kernel_and_keeps_its_results():
    # Causal D=64 with 8 warps: more than 128 registers a thread unless capped.
    torch = pytest.importorskip("torch")
    from tests.kernels.tc_kernels import _attn_fwd

    z, h, n, d = 1, 2, 512, 64
    q, k, v = (torch.randn((z, h, n, d), device="cuda", dtype=torch.float16) for _ in range(3))
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    regs = {}
    for cap in (None, 128):
        o = torch.full_like(q, float("nan"))
        m = torch.empty((z * h, n), device="cuda", dtype=torch.float32)
        compiled = _attn_fwd[(n // 128, z * h)](
            q, k, v, d**-0.5, m, o, *q.stride(), *k.stride(), *v.stride(), *o.stride(),
            z, h, N_CTX=n, HEAD_DIM=d, BLOCK_M=128, BLOCK_N=128, STAGE=3, num_warps=8,
            num_stages=3, maxnreg=cap, backend="gpu",
        )  # fmt: skip
        torch.cuda.synchronize()
        torch.testing.assert_close(o, ref, atol=1e-2, rtol=0)
        regs[cap] = compiled.n_regs
    assert regs[128] <= 128 < regs[None]


def test_prepared_kernels_verify():
    from minitriton.backend.prepare import prepare_kernel
    from minitriton.ir.verifier import verify_module

    for k in (_compile("fp16", 128, 128, 64, 4, 3), _attention(3)):
        copy, *_ = prepare_kernel(k.module, 4, "sm_90", 3)
        verify_module(copy)  # the ring, copy and async-dot ops check their operands
        assert "ttng.warp_group_dot" in {op.name for op in copy.kernel.walk()}


def test_dumped_ttgir_parses_back_and_verifies_every_backend_op(monkeypatch):
    from minitriton.ir import parse_module, verify_module
    from minitriton.ir.core import OP_REGISTRY
    from tests.kernels.tma_matmul import desc_matmul, ws_desc_matmul

    sig = "tensordesc<fp16[128, 64]>:16, tensordesc<fp16[128, 64]>:16, "
    sig += "tensordesc<fp16[128, 128]>:16, i32:16, i32:16, i32:16, 128, 128, 64"
    specs = parse_signature(sig, desc_matmul.params)
    options = CompileOptions(num_warps=8, num_stages=3)
    monkeypatch.setenv("MINITRITON_TMA_STORES", "1")  # its epilogue's TMA store too
    monkeypatch.setenv("MINITRITON_CACHE", "0")
    tma = compile_kernel(desc_matmul.source, specs, options, stop_after="ptx")
    monkeypatch.delenv("MINITRITON_TMA_STORES")
    monkeypatch.setenv("MINITRITON_WARP_SPECIALIZE", "1")  # the split's ops too
    specs = parse_signature(sig + ", 1", ws_desc_matmul.params)
    ws = compile_kernel(ws_desc_matmul.source, specs, options, stop_after="ptx")
    kernels = [_compile("fp16", 128, 128, 64, 4, 3), _compile("fp16", 128, 128, 32, 4, 3, "sm_80")]
    seen = set()
    for k in (*kernels, _attention(3), tma, ws):
        module = parse_module(k.asm["ttgir"], "k.ttgir")
        verify_module(module)  # each op's declared signature and its own rules
        seen |= {op.name for op in module.kernel.walk()}
    backend = {name for name in OP_REGISTRY if name.startswith(("ttg.", "ttng."))}
    assert backend and backend - seen == set()


def test_backend_ops_reject_wrong_operands():
    from minitriton.backend.ops import WarpGroupDotWaitOp
    from minitriton.ir.core import VerifyError

    with pytest.raises(VerifyError, match="expects 1 operands, got 0"):
        WarpGroupDotWaitOp([], [], {"pendings": 0}).verify()


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
def test_attention_assembles_without_spills(tmp_path):
    assert "0 bytes spill stores" in _ptxas(_attention(1).asm["ptx"], tmp_path)
