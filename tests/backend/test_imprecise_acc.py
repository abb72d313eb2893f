"""``max_num_imprecise_acc`` on ``wgmma`` (sm_90a), without a GPU.

An fp8 dot with an fp32 result sums its products in the tensor cores with
fewer bits than fp32. With ``max_num_imprecise_acc = L``, each run of
instructions covering L products along K writes fresh registers, is waited
for and is added to the accumulator: one ``add.f32`` per accumulator register
and run, the count Triton's own test reads from the PTX.
"""

from __future__ import annotations

import re

import pytest

from minitriton.compiler import compile_kernel
from minitriton.ir.parser import parse_module
from minitriton.ir.printer import print_module
from minitriton.jit import base_jit_function
from minitriton.signature import kernel_params, parse_signature
from tests.backend.test_mma_lowering import assemble, build
from tests.kernels import dot_kernels

WARPS = 8


def signature(tile: tuple[int, int, int], limit: object, b_k_major: bool, dtype: str) -> str:
    bm, bn, bk = tile
    b_strides = "i32:1, i32:16" if b_k_major else "i32:16, i32:1"
    return (f"*{dtype}:16, *{dtype}:16, *fp32:16, i32:16, i32:16, i32:16, i32:16, i32:1, "
            f"{b_strides}, i32:16, i32:1, {bm}, {bn}, {bk}, {limit}")  # fmt: skip


def compiled(tile, limit, b_k_major=True, dtype="fp8e4nv"):  # noqa: ANN001, ANN201
    sig = signature(tile, limit, b_k_major, dtype)
    return build(dot_kernels.imprecise_fp8_dot_kernel, sig, arch="sm_90a", num_warps=WARPS)


@pytest.mark.parametrize("b_k_major", [True, False], ids=["pipelined", "restaged"])
@pytest.mark.parametrize(
    "tile, limit",
    [((128, 256, 128), 32), ((128, 256, 128), 64), ((128, 256, 128), 128), ((64, 64, 64), 64),
     ((64, 64, 64), 32), ((128, 128, 128), 0)],
)  # fmt: skip
def test_one_add_per_register_and_run(tile, limit, b_k_major) -> None:
    bm, bn, bk = tile
    k = compiled(tile, limit, b_k_major)
    runs = bk // max(limit, 32)  # a limit under one instruction's K (32) adds after each
    assert k.ptx.count("add.f32") == bm * bn // (32 * WARPS) * runs  # Triton's formula
    assert "k32.f32.e4m3.e4m3" in k.ptx


@pytest.mark.parametrize("dtype, limit", [("fp8e4nv", "None"), ("fp16", 32)])
def test_no_split_without_a_limit_or_for_16_bit_inputs(dtype: str, limit: str) -> None:
    k = compiled((128, 128, 64), limit, True, dtype)
    assert "add.f32" not in k.ptx and "add.rn.f32" not in k.ptx
    assert "max_num_imprecise_acc" not in k.ttgir


def test_the_limit_is_an_attribute_that_round_trips() -> None:
    jit = base_jit_function(dot_kernels.imprecise_fp8_dot_kernel)
    specs = parse_signature(signature((64, 64, 64), 32, True, "fp8e4nv"), kernel_params(jit.fn))
    module = compile_kernel(jit.source, specs, stop_after="ir-opt").module
    text = print_module(module)
    assert re.search(r"tt\.dot\(.*\{.*max_num_imprecise_acc = 32", text), text
    assert print_module(parse_module(text)) == text
    ttgir = compiled((64, 64, 64), 32).ttgir
    assert re.search(r"ttng\.warp_group_dot\(.*max_num_imprecise_acc = 32", ttgir), ttgir


def test_the_split_waits_for_each_run_and_assembles_without_spills(tmp_path) -> None:
    k = compiled((128, 128, 128), 32)
    body = k.ptx[k.ptx.index("wgmma.fence") :]
    # Four runs of one instruction: each is committed and waited for before its adds.
    for run in re.split(r"wgmma\.fence\.sync\.aligned;", body)[1:5]:
        assert run.count("wgmma.mma_async") == 1
        assert run.index("wgmma.wait_group.sync.aligned 0") < run.index("add.f32")
    report = assemble(k, tmp_path)
    assert " 0 bytes spill stores" in report, report
