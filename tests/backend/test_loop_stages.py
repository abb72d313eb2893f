"""``tl.range(..., num_stages=N)``: a loop's own pipelining depth, as in Triton.

The hint travels as the ``scf.for`` attribute ``num_stages`` and replaces the
launch option's ``num_stages`` for that loop in the ``software-pipeline``
pass: ``1`` (or ``0``) leaves the loop unpipelined, ``N >= 2`` gives it a
ring of ``N`` buffers whatever the launch option says.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl
from minitriton.compiler import CompileOptions, compile_kernel
from minitriton.diagnostics import CompileError
from minitriton.ir import parse_module, print_module
from minitriton.signature import kernel_params, parse_signature


@triton.jit
def staged_matmul(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr, LOOP_STAGES: tl.constexpr):
    """C (BLOCK x BLOCK) = A (BLOCK x K) @ B (K x BLOCK), row-major, K a multiple of 32."""
    rows = tl.arange(0, BLOCK)
    ks = tl.arange(0, 32)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in tl.range(0, K, 32, num_stages=LOOP_STAGES):
        a = tl.load(a_ptr + rows[:, None] * K + (k + ks)[None, :])
        b = tl.load(b_ptr + (k + ks)[:, None] * BLOCK + rows[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * BLOCK + rows[None, :], acc)


def _rings(ttgir: str) -> set[str]:
    """The depths of the rings in ``ttgir`` (not the loop's own ``num_stages`` hint)."""
    return set(re.findall(r"(?<!num_)stages = (\d+)", ttgir))


def _compile(loop_stages: int, launch_stages: int, arch: str = "sm_90a"):
    sig = f"*fp16:16, *fp16:16, *fp32:16, i32:16, 64, {loop_stages}"
    specs = parse_signature(sig, kernel_params(staged_matmul.fn))
    options = CompileOptions(num_warps=4, num_stages=launch_stages, arch=arch)
    return compile_kernel(staged_matmul.source, specs, options, stop_after="ptx")


def test_the_hint_is_an_attribute_of_the_loop_and_round_trips() -> None:
    module = _compile(2, 3).module
    text = print_module(module)
    assert "{num_stages = 2}" in text
    assert print_module(parse_module(text)) == text


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize(("loop", "launch"), [(2, 4), (4, 2), (3, 1)])
def test_the_loops_depth_replaces_the_launch_options(loop: int, launch: int, arch: str) -> None:
    assert _rings(_compile(loop, launch, arch).asm["ttgir"]) == {str(loop)}


@pytest.mark.parametrize("loop", [0, 1])
def test_one_stage_or_none_leaves_the_loop_unpipelined(loop: int) -> None:
    kernel = _compile(loop, 3)
    assert _rings(kernel.asm["ttgir"]) == set() and "cp.async" not in kernel.asm["ptx"]
    assert _rings(_compile(3, 3).asm["ttgir"]) == {"3"}  # the same kernel, pipelined


@pytest.mark.parametrize("loop", [1, 2])
def test_the_emulator_gives_the_same_numbers(loop: int) -> None:
    rng = np.random.default_rng(loop)
    k = 96
    a = rng.standard_normal((64, k)).astype(np.float16)
    b = rng.standard_normal((k, 64)).astype(np.float16)
    c = np.full((64, 64), np.nan, dtype=np.float32)
    staged_matmul[(1,)](a, b, c, k, BLOCK=64, LOOP_STAGES=loop, backend="emulator")
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-3)


@triton.jit
def bad_stages(x_ptr, N):
    for i in tl.range(0, N, num_stages=2.5):
        tl.store(x_ptr + i, i)


@triton.jit
def bad_unroll(x_ptr, N):
    for i in tl.range(0, N, loop_unroll_factor=0):
        tl.store(x_ptr + i, i)


@pytest.mark.parametrize(
    ("kernel", "words", "instead"),
    [
        (bad_stages, "num_stages must be a compile-time int >= 0, got 2.5", "num_stages=3"),
        (bad_unroll, "loop_unroll_factor must be a compile-time int >= 1, got 0",
         "loop_unroll_factor=2"),
    ],
)  # fmt: skip
def test_a_loop_hint_that_is_not_a_fitting_int_is_located(
    kernel: Any, words: str, instead: str
) -> None:
    specs = parse_signature("*i32, i32", kernel_params(kernel.fn))
    with pytest.raises(CompileError) as info:
        compile_kernel(kernel.source, specs, CompileOptions())
    text = str(info.value)
    assert words in text
    assert "test_loop_stages.py:" in text and "^" in text and instead in text


@pytest.mark.gpu
@pytest.mark.parametrize(("loop", "launch"), [(1, 3), (2, 1), (4, 3)])
def test_the_gpu_gives_the_same_numbers(loop: int, launch: int) -> None:
    from minitriton.backend import gpu_available

    if not gpu_available():
        pytest.skip("needs an NVIDIA GPU and cuda-python")
    rng = np.random.default_rng(loop)
    k = 256
    a = rng.standard_normal((64, k)).astype(np.float16)
    b = rng.standard_normal((k, 64)).astype(np.float16)
    c = np.full((64, 64), np.nan, dtype=np.float32)
    compiled = staged_matmul[(1,)](
        a, b, c, k, BLOCK=64, LOOP_STAGES=loop, num_stages=launch, backend="gpu"
    )
    assert _rings(compiled.asm["ttgir"]) == (set() if loop < 2 else {str(loop)})
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c, want, rtol=1e-2, atol=1e-2)
